package ramp

import (
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
)

// meta.json says which client sent the requests: net/http unless
// tester.fast_http asks for the lean client; with target.http2 net/http
// sends anyway, which meta.json and the log note.
func TestMetaRecordsHTTPClient(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	for _, tc := range []struct {
		fast, h2   bool
		want, note string
	}{
		{false, false, load.StdHTTPName, ""},
		{true, false, load.FastHTTPName, ""},
		{false, true, load.StdHTTPName, ""},
		{true, true, load.StdHTTPName, "HTTP/2"},
	} {
		srv := loadtest.NewMTLSServer(t, p, newFake(), true, tc.h2)
		c := fakeConfig(t, p, srv.URL)
		c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 2, Step: 1, Requests: 20}
		c.Tester.FastHTTP = tc.fast
		c.Target.HTTP2 = tc.h2
		code, out, log := execute(t, c, false)
		if code != 0 {
			t.Fatalf("fast_http %v h2 %v: exit %d\n%s\n%s", tc.fast, tc.h2, code, out, log)
		}
		meta := resultstest.Meta(t, runDirs(t, c.OutputDir)[0])
		if meta.FastHTTP != tc.fast || meta.HTTPClient != tc.want || (tc.note == "") != (meta.HTTPClientNote == "") || !strings.Contains(meta.HTTPClientNote, tc.note) {
			t.Fatalf("fast_http %v h2 %v: meta fast_http %v, http_client %q, note %q; want %q (note %q)",
				tc.fast, tc.h2, meta.FastHTTP, meta.HTTPClient, meta.HTTPClientNote, tc.want, tc.note)
		}
		if logged := strings.Contains(log, "tester.fast_http: net/http sends"); logged != (tc.note != "") {
			t.Fatalf("fast_http %v h2 %v: fallback logged %v, want %v\n%s", tc.fast, tc.h2, logged, tc.note != "", log)
		}
	}
}
