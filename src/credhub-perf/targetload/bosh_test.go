package targetload

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const vitalsJSON = `{"Tables":[{"Content":"vms","Header":{"instance":"Instance","cpu_user":"CPU\nUser"},"Rows":[
{"instance":"credhub/0a1b","process_state":"running","cpu_user":"61.5%","cpu_sys":"9.0%","cpu_wait":"0.1%","memory_usage":"45% (1.2 GB)"},
{"instance":"credhub/2c3d","process_state":"running","cpu_user":"50%","cpu_sys":"10%","memory_usage":"40% (1.0 GB)"},
{"instance":"database/4e5f","process_state":"running","cpu_user":"90.0%","cpu_sys":"5.0%","memory_usage":"weird"},
{"instance":"uaa/0","cpu_user":"99%","cpu_sys":"1%"}]}],"Blocks":null,"Lines":["Using environment 'x'","Succeeded"]}`

// standIn writes an executable bosh stand-in running script.
func standIn(t *testing.T, script string) string {
	p := filepath.Join(t.TempDir(), "bosh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

var groups = map[string][]string{"credhub": {CredHub}, "database": {Database}}

func TestBoshSourceReadsVitals(t *testing.T) {
	out := filepath.Join(t.TempDir(), "vitals.json")
	os.WriteFile(out, []byte(vitalsJSON), 0o644)
	args := filepath.Join(t.TempDir(), "args")
	b := &BoshSource{Command: standIn(t, `echo "$@ secret=$BOSH_CLIENT_SECRET" > `+args+`; cat `+out), Deployment: "cf", Groups: groups, Env: []string{"BOSH_CLIENT_SECRET=s3cret"}}
	rs, w := b.Read(context.Background())
	if len(w) > 0 || len(rs) != 3 {
		t.Fatalf("readings %+v warnings %q", rs, w)
	}
	if rs[0].Resource != CredHub || rs[0].Instance != "credhub/0a1b" || rs[0].Share != 0.705 || rs[0].Window != VitalsWindow || rs[0].RSSBytes != 1.2e9 {
		t.Errorf("credhub/0 = %+v", rs[0])
	}
	if rs[2].Resource != Database || rs[2].Share != 0.95 || rs[2].RSSBytes != -1 {
		t.Errorf("database = %+v (memory unreadable must be unknown, not 0)", rs[2])
	}
	got, _ := os.ReadFile(args)
	if strings.TrimSpace(string(got)) != "-d cf vms --vitals --json secret=s3cret" {
		t.Errorf("bosh called with %q: want the secret in its environment only", got)
	}
}

func TestBoshSourceHostile(t *testing.T) {
	cases := map[string]struct{ script, want string }{
		"refuses":  {`echo "Director responded with non-successful status code '401'" >&2; exit 1`, "failed (exit status 1): Director responded with non-successful status code '401'"},
		"not json": {`echo hello`, "not bosh's JSON"},
		"no table": {`echo '{"Tables":[]}'`, "no table"},
		"bogus":    {`echo '{"Tables":[{"Rows":[{"instance":"credhub/0","cpu_user":"NaN%","cpu_sys":"1%"},{"instance":"database/0","cpu_user":"140%","cpu_sys":"20%"}]}]}'`, "not usable"},
	}
	for name, c := range cases {
		b := &BoshSource{Command: standIn(t, c.script), Deployment: "cf", Groups: groups}
		rs, w := b.Read(context.Background())
		if len(rs) != 0 || len(w) == 0 || !strings.Contains(strings.Join(w, "|"), c.want) {
			t.Errorf("%s: readings %+v warnings %q, want one containing %q", name, rs, w, c.want)
		}
		for _, l := range w {
			if strings.Contains(l, "\n") {
				t.Errorf("%s: warning of several lines %q", name, l)
			}
		}
	}
}

func TestBoshSourceHangingCallTimesOut(t *testing.T) {
	// The stand-in and a child of it hold stdout open: the call must still
	// end at its timeout.
	b := &BoshSource{Command: standIn(t, "sleep 60 & sleep 60"), Deployment: "cf", Groups: groups, Timeout: 300 * time.Millisecond}
	began := time.Now()
	rs, w := b.Read(context.Background())
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("a hanging bosh held the read for %s", took)
	}
	if len(rs) != 0 || len(w) != 1 || !strings.Contains(w[0], "did not answer within 300ms") {
		t.Errorf("readings %+v warnings %q", rs, w)
	}
}
