package credhub

import (
	"crypto/rsa"
	"crypto/tls"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/internal/testpki"
	"github.com/credhub-perf/credhub-perf/tlsclient"
)

// The API client's TLS is tlsclient's (the load engine's rules and
// errors), without the fast signer: it makes a handful of handshakes.
func TestNewBuildsTLSThroughTLSClient(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, testpki.ECDSA, "credhub client test CA")
	caFile := testpki.WriteCerts(t, filepath.Join(dir, "ca.crt"), ca.DER())
	cert, key := ca.Issue(t, testpki.Spec{CommonName: "api-client", Key: testpki.FixedRSAKey(t, "rsa2048-1")}).Write(t, dir, "client")

	if _, err := New(Options{URL: "https://credhub.test:8844", TLS: tlsclient.Options{CertFile: cert}}); err == nil || !strings.Contains(err.Error(), "without its key") {
		t.Fatalf("certificate without key: %v", err)
	}
	c, err := New(Options{URL: "https://credhub.test:8844", TLS: tlsclient.Options{CertFile: cert, KeyFile: key, CAFile: caFile, FastRSA: true}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.hc.Transport.(*http.Transport).TLSClientConfig
	if cfg.MinVersion != tls.VersionTLS12 || cfg.RootCAs == nil || c.subject != "CN=api-client" {
		t.Fatalf("MinVersion %x, roots %v, subject %q", cfg.MinVersion, cfg.RootCAs != nil, c.subject)
	}
	if _, ok := cfg.Certificates[0].PrivateKey.(*rsa.PrivateKey); !ok {
		t.Fatalf("API client key is %T, want crypto/rsa's even with FastRSA", cfg.Certificates[0].PrivateKey)
	}
}
