package credhub

import (
	"context"
	"crypto/rsa"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/internal/testpki"
	"github.com/credhub-perf/credhub-perf/tlsclient"
)

// The API client's TLS is tlsclient's (the load engine's rules and
// errors); its client key stays crypto/rsa's.
func TestNewBuildsTLSThroughTLSClient(t *testing.T) {
	dir := t.TempDir()
	ca := testpki.NewCA(t, testpki.ECDSA, "credhub client test CA")
	caFile := testpki.WriteCerts(t, filepath.Join(dir, "ca.crt"), ca.DER())
	cert, key := ca.Issue(t, testpki.Spec{CommonName: "api-client", Key: testpki.FixedRSAKey(t, "rsa2048-1")}).Write(t, dir, "client")

	if _, err := New(Options{URL: "https://credhub.test:8844", TLS: tlsclient.Options{CertFile: cert}}); err == nil || !strings.Contains(err.Error(), "without its key") {
		t.Fatalf("certificate without key: %v", err)
	}
	c, err := New(Options{URL: "https://credhub.test:8844", TLS: tlsclient.Options{CertFile: cert, KeyFile: key, CAFile: caFile}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := c.hc.Transport.(*http.Transport).TLSClientConfig
	if cfg.MinVersion != tls.VersionTLS12 || cfg.RootCAs == nil || c.subject != "CN=api-client" {
		t.Fatalf("MinVersion %x, roots %v, subject %q", cfg.MinVersion, cfg.RootCAs != nil, c.subject)
	}
	if _, ok := cfg.Certificates[0].PrivateKey.(*rsa.PrivateKey); !ok {
		t.Fatalf("API client key is %T, want crypto/rsa's", cfg.Certificates[0].PrivateKey)
	}
}

// A call that fails with a 5xx and then succeeds is retried, and the
// caller hears of the retry (setup and cleanup log it): the success alone
// would hide a target that fails now and then. A 4xx is not retried.
func TestRetriesAreReported(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Query().Get("name") == "/missing":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"The request could not be completed because the credential does not exist or you do not have sufficient authorization."}`))
		case calls.Add(1) == 1:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":"database is locked"}`))
		default:
			_, _ = w.Write([]byte(`{"data":[{"value":{"password":"x"}}]}`))
		}
	}))
	defer srv.Close()
	type retry struct {
		err     string
		attempt int
		wait    time.Duration
	}
	var heard []retry
	c, err := New(Options{URL: srv.URL, Retrying: func(err error, attempt int, wait time.Duration) {
		heard = append(heard, retry{err.Error(), attempt, wait})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetJSON(context.Background(), "/perf/cred"); err != nil {
		t.Fatalf("GET after one 500: %v", err)
	}
	if len(heard) != 1 || heard[0].attempt != 1 || heard[0].wait != 100*time.Millisecond ||
		!strings.Contains(heard[0].err, "500") || !strings.Contains(heard[0].err, "database is locked") {
		t.Fatalf("retries heard: %+v; want one, attempt 1, naming the 500 and its message", heard)
	}
	if _, err := c.GetJSON(context.Background(), "/missing"); !IsNotFound(err) || len(heard) != 1 {
		t.Fatalf("404: %v, %d retries heard; want not found, no retry", err, len(heard))
	}
}
