package main

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/rsasign"
)

// -fast-rsa is opt-in and says on stderr when crypto/rsa signs anyway;
// the run itself is the same either way.
func TestFastRSAFlag(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.RSA)
	q := loadtest.NewPKI(t, loadtest.ECDSA)
	var hits atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	rsaNote := "-fast-rsa: crypto/rsa signs instead: this CPU has no AVX-512 IFMA"
	if rsasign.Available() {
		rsaNote = ""
	}
	for _, c := range []struct {
		name   string
		pki    *loadtest.PKI
		args   []string
		stderr string // "" = nothing on stderr
	}{
		{"default", p, nil, ""},
		{"RSA key", p, []string{"-fast-rsa"}, rsaNote},
		{"ECDSA key", q, []string{"-fast-rsa"}, "-fast-rsa: crypto/rsa signs instead: the client key is ECDSA, not RSA"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := loadtest.NewMTLSServer(t, c.pki, h, true, false)
			hits.Store(0)
			args := append([]string{"-n", "8", "-c", "2", "-disable-keepalive", "-cert", c.pki.ClientCert, "-key", c.pki.ClientKey, "-cacert", c.pki.CAFile}, c.args...)
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
