package ramp

import (
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/rsasign"
)

// meta.json says which code signed the client's RSA handshakes: crypto/rsa
// unless tester.fast_rsa asks for rsasign and this CPU can run it; a
// fast_rsa that could not be honoured is noted in meta.json and the log.
func TestMetaRecordsRSASigner(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.RSA)
	srv := loadtest.NewMTLSServer(t, p, newFake(), true, false)
	for _, fast := range []bool{false, true} {
		c := fakeConfig(t, p, srv.URL)
		c.Keepalive = false
		c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 1, Step: 1, Requests: 20}
		c.Tester.FastRSA = fast
		code, out, log := execute(t, c, false)
		if code != 0 {
			t.Fatalf("fast_rsa %v: exit %d\n%s\n%s", fast, code, out, log)
		}
		meta, err := results.ReadMeta(runDirs(t, c.OutputDir)[0])
		if err != nil {
			t.Fatal(err)
		}
		want, note := rsasign.StdName, ""
		if fast && rsasign.Available() {
			want = rsasign.FastName
		} else if fast {
			note = "IFMA"
		}
		if meta.FastRSA != fast || meta.RSASigner != want || (note == "") != (meta.RSASignerNote == "") || !strings.Contains(meta.RSASignerNote, note) {
			t.Fatalf("fast_rsa %v: meta fast_rsa %v, rsa_signer %q, note %q; want %q (note %q)", fast, meta.FastRSA, meta.RSASigner, meta.RSASignerNote, want, note)
		}
		if logged := strings.Contains(log, "tester.fast_rsa: crypto/rsa signs"); logged != (note != "") {
			t.Fatalf("fast_rsa %v: fallback logged %v, want %v\n%s", fast, logged, note != "", log)
		}
	}
}
