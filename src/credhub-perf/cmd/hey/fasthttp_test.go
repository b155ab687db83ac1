package main

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// -fast-http is opt-in and says on stderr when net/http sends anyway (-h2);
// the run itself is the same either way.
func TestFastHTTPFlag(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	var hits atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	for _, c := range []struct {
		name   string
		h2     bool
		args   []string
		stderr string // "" = nothing on stderr
	}{
		{"default", false, nil, ""},
		{"lean", false, []string{"-fast-http"}, ""},
		{"h2", true, []string{"-fast-http", "-h2"}, "-fast-http: net/http sends instead: HTTP/2 is sent by net/http"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := loadtest.NewMTLSServer(t, p, h, true, c.h2)
			hits.Store(0)
			args := append([]string{"-n", "8", "-c", "2", "-cert", p.ClientCert, "-key", p.ClientKey, "-cacert", p.CAFile}, c.args...)
			code, out, errs := heyRun(t, nil, append(args, srv.URL)...)
			if code != 0 || hits.Load() != 8 || !strings.Contains(out, "[200]\t8 responses") {
				t.Fatalf("exit %d, %d hits\n%s\n%s", code, hits.Load(), out, errs)
			}
			if (c.stderr == "") != (errs == "") || !strings.Contains(errs, c.stderr) || strings.Count(errs, "\n") > 1 {
				t.Fatalf("stderr %q, want one line containing %q (or nothing)", errs, c.stderr)
			}
		})
	}
}
