package targetload

import (
	"strings"
	"testing"
	"time"
)

func TestParseSimReport(t *testing.T) {
	rs, w := ParseSimReport([]byte(`{"now_s":12.5,"instances":[{"name":"instance 1","cores":2,"busy_s":3},{"name":"instance 2","cores":2,"busy_s":4}],"database":{"name":"database","cores":1,"busy_s":9}}`))
	if len(w) > 0 || len(rs) != 3 || rs[2].Resource != Database || rs[2].Busy != 9*time.Second || rs[0].Cores != 2 || rs[0].At != time.Unix(12, 5e8) {
		t.Fatalf("%+v %q", rs, w)
	}
	for body, want := range map[string]string{
		`<html>`:                     "not its JSON",
		`{"now_s":-1}`:               "not a time",
		`{"now_s":1,"instances":[]}`: "models no instances",
		`{"now_s":1,"instances":[{"name":"i","cores":0,"busy_s":1}]}`:  "not usable",
		`{"now_s":1,"instances":[{"name":"i","cores":1,"busy_s":-1}]}`: "not usable",
		`{"now_s":1e400}`: "not its JSON",
		`{"now_s":1,"instances":[{"name":"i","cores":1,"busy_s":1,"machine":"nowhere"}],"machines":[]}`:                                         "is not among its machines",
		`{"now_s":1,"instances":[{"name":"i","cores":1,"busy_s":1,"machine":"m"}],"machines":[{"name":"m","cores":0,"busy_s":1}]}`:              "machine m reports cores 0",
		`{"now_s":1,"instances":[{"name":"i","cores":1,"busy_s":1,"machine":"m"}],"machines":[{"name":"m","cores":1,"busy_s":1,"steal_s":-2}]}`: "not usable",
	} {
		rs, w := ParseSimReport([]byte(body))
		if strings.Contains(body, "machine") {
			// The instance is still read; its machine is not.
			if len(rs) != 1 || rs[0].Machine != "" || !strings.Contains(strings.Join(w, "|"), want) {
				t.Errorf("%s: %+v %q, want %q", body, rs, w, want)
			}
			continue
		}
		if len(rs) != 0 || !strings.Contains(strings.Join(w, "|"), want) {
			t.Errorf("%s: %+v %q, want %q", body, rs, w, want)
		}
	}
}
