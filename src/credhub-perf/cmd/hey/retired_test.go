package main

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// -fast-rsa is retired: any form of it is one line saying what changed,
// exit status 2, and no request reaches the server.
func TestFastRSARetired(t *testing.T) {
	var hits atomic.Int64
	srv := loadtest.NewMTLSServer(t, loadtest.NewPKI(t, loadtest.RSA), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }), false, false)
	for _, args := range [][]string{{"-fast-rsa"}, {"-fast-rsa=false"}, {"-n", "4", "-c", "1", "--fast-rsa=true"}} {
		code, out, errs := heyRun(t, nil, append(args, srv.URL)...)
		if code != 2 || out != "" || hits.Load() != 0 || strings.Count(errs, "\n") != 1 ||
			!strings.HasPrefix(errs, "hey: -fast-rsa was removed: Go's crypto/rsa signs every TLS handshake") {
			t.Errorf("%v: exit %d, %d hits, stdout %q, stderr %q", args, code, hits.Load(), out, errs)
		}
	}
}
