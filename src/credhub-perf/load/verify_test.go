package load

import (
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/internal/testpki"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// handshakeServer accepts TLS connections on loopback with cert and
// completes the handshake on each; it stands in for servers the
// loadtest fixtures cannot fake (a stolen chain with the wrong key).
func handshakeServer(t *testing.T, cert tls.Certificate, maxVersion uint16) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{cert},
		MaxVersion:   maxVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_ = c.(*tls.Conn).Handshake()
				// Let the client finish reading before the close.
				_, _ = c.Read(make([]byte, 1))
				c.Close()
			}()
		}
	}()
	return ln.Addr().String()
}

func dialTLS(addr string, cfg *tls.Config) error {
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	return c.Close()
}

// verifying returns a client config for p's CA that verifies serverName
// through a chainVerifier, and the count of full verifications.
func verifying(p *loadtest.PKI, serverName string) (*tls.Config, *chainVerifier, *atomic.Int64) {
	cfg := &tls.Config{RootCAs: p.CAPool, ServerName: serverName, MinVersion: tls.VersionTLS12}
	v := installChainVerifier(cfg)
	misses := &atomic.Int64{}
	v.onMiss = func() { misses.Add(1) }
	return cfg, v, misses
}

func TestChainVerifiedOnce(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	addr := handshakeServer(t, p.ServerPair, 0)
	cfg, _, misses := verifying(p, "127.0.0.1")
	for i := 0; i < 5; i++ {
		if err := dialTLS(addr, cfg); err != nil {
			t.Fatalf("handshake %d: %v", i, err)
		}
	}
	if m := misses.Load(); m != 1 {
		t.Fatalf("5 handshakes with one chain: %d full verifications, want 1", m)
	}
	// Another name is another key, even for the same chain.
	cfg.ServerName = "credhub.test"
	if err := dialTLS(addr, cfg); err != nil {
		t.Fatal(err)
	}
	if m := misses.Load(); m != 2 {
		t.Fatalf("new server name: %d full verifications, want 2", m)
	}
}

func TestWrongCAFailsEveryConnection(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	other := loadtest.NewPKI(t, loadtest.ECDSA)
	addr := handshakeServer(t, p.ServerPair, 0)
	cfg, _, misses := verifying(other, "127.0.0.1")
	for i := 0; i < 4; i++ {
		err := dialTLS(addr, cfg)
		if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
			t.Fatalf("handshake %d with the wrong CA: %v, want unknown authority", i, err)
		}
	}
	if m := misses.Load(); m != 4 {
		t.Fatalf("failed verifications must not be cached: %d full verifications for 4 handshakes", m)
	}

	// Through the engine, with a handshake per request: every request
	// fails, not only the first.
	e, err := New(ClientOptions{TLS: TLSOptions{CAFile: other.CAFile}, Timeout: 10 * time.Second},
		Template{URL: "https://" + addr + "/"})
	if err != nil {
		t.Fatal(err)
	}
	var failed, total int
	err = e.Run(context.Background(), Step{Concurrency: 2, Requests: 6}, SinkFunc(func(r *Result) {
		total++
		if strings.Contains(r.Err, "unknown authority") {
			failed++
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if total != 6 || failed != 6 {
		t.Fatalf("wrong CA through the engine: %d of %d requests failed verification, want 6 of 6", failed, total)
	}
}

func TestHostnameMismatchFails(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	addr := handshakeServer(t, p.ServerPair, 0)
	cfg, _, _ := verifying(p, "127.0.0.1")
	if err := dialTLS(addr, cfg); err != nil {
		t.Fatal(err)
	}
	// The chain is cached for 127.0.0.1; it must not pass for a name the
	// certificate does not hold.
	cfg.ServerName = "example.invalid"
	for i := 0; i < 2; i++ {
		err := dialTLS(addr, cfg)
		if err == nil || !strings.Contains(err.Error(), "example.invalid") {
			t.Fatalf("handshake %d with a name not in the certificate: %v", i, err)
		}
	}
}

// A server that presents a chain already verified and cached, but does not
// hold its private key, must fail: crypto/tls checks the handshake
// signature even with InsecureSkipVerify.
func TestCachedChainWithoutItsKeyFails(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	real := handshakeServer(t, p.ServerPair, 0)
	stolenKey := testpki.NewKey(t, testpki.ECDSA)
	stolen := tls.Certificate{Certificate: p.ServerPair.Certificate, PrivateKey: stolenKey}
	for _, tc := range []struct {
		name string
		max  uint16
	}{{"TLS1.3", 0}, {"TLS1.2", tls.VersionTLS12}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, misses := verifying(p, "127.0.0.1")
			if err := dialTLS(real, cfg); err != nil {
				t.Fatal(err)
			}
			impostor := handshakeServer(t, stolen, tc.max)
			for i := 0; i < 2; i++ {
				err := dialTLS(impostor, cfg)
				if err == nil || !strings.Contains(err.Error(), "signature") {
					t.Fatalf("impostor handshake %d: %v, want a signature failure", i, err)
				}
			}
			if m := misses.Load(); m != 1 {
				t.Fatalf("the impostor's chain should have been a cache hit: %d full verifications", m)
			}
		})
	}
}

func TestCachedChainExpires(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	addr := handshakeServer(t, p.ServerPair, 0)
	cfg, v, misses := verifying(p, "127.0.0.1")
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	v.now = func() time.Time { return time.Unix(0, now.Load()) }
	for i := 0; i < 3; i++ {
		if err := dialTLS(addr, cfg); err != nil {
			t.Fatal(err)
		}
	}
	// The fixtures' certificates are valid for 24 hours.
	now.Add(int64(25 * time.Hour))
	for i := 0; i < 2; i++ {
		err := dialTLS(addr, cfg)
		if err == nil || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("handshake %d after expiry: %v, want expired", i, err)
		}
	}
	if m := misses.Load(); m != 3 {
		t.Fatalf("%d full verifications, want 1 before expiry and 1 per handshake after", m)
	}
}

func TestChangedRootsDropCache(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	other := loadtest.NewPKI(t, loadtest.ECDSA)
	addr := handshakeServer(t, p.ServerPair, 0)
	cfg, _, _ := verifying(p, "127.0.0.1")
	if err := dialTLS(addr, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.RootCAs = other.CAPool
	if err := dialTLS(addr, cfg); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Fatalf("cached chain accepted after the roots changed: %v", err)
	}
}

func TestInsecureVerifiesNothing(t *testing.T) {
	cfg, err := buildTLSConfig(TLSOptions{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.InsecureSkipVerify || cfg.VerifyConnection != nil || cfg.VerifyPeerCertificate != nil {
		t.Fatal("-insecure must skip verification entirely")
	}
	cfg, err = buildTLSConfig(TLSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.VerifyConnection == nil {
		t.Fatal("without -insecure the chain verifier must be installed")
	}
}
