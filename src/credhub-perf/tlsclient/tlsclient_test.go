package tlsclient

import (
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/internal/testpki"
)

// fixture is a CA, a server certificate and a client certificate for the
// committed key rsa2048-0 (logged by FixedRSAKey), plus an ECDSA client.
type fixture struct {
	ca                 *testpki.CA
	caFile             string
	server             tls.Certificate
	rsaCert, rsaKey    string
	ecdsaCert, ecdsaKy string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{ca: testpki.NewCA(t, testpki.ECDSA, "tlsclient test CA")}
	f.caFile = testpki.WriteCerts(t, filepath.Join(dir, "ca.crt"), f.ca.DER())
	srv := f.ca.Issue(t, testpki.Spec{CommonName: "server", Server: true})
	f.server = tls.Certificate{Certificate: [][]byte{srv.DER()}, PrivateKey: srv.Key}
	key := testpki.FixedRSAKey(t, "rsa2048-0")
	f.rsaCert, f.rsaKey = f.ca.Issue(t, testpki.Spec{CommonName: "rsa-client", Key: key}).Write(t, dir, "rsa-client")
	f.ecdsaCert, f.ecdsaKy = f.ca.Issue(t, testpki.Spec{CommonName: "ecdsa-client"}).Write(t, dir, "ecdsa-client")
	return f
}

// handshake runs one mutual-TLS handshake of cfg against a server that
// requires a client certificate from f's CA (and at most maxVersion), and
// returns the client subject the server saw.
func (f *fixture) handshake(t *testing.T, cfg *tls.Config, maxVersion uint16) (string, error) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(f.ca.Cert)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{f.server}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MaxVersion: maxVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seen := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			seen <- ""
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
		if tc.Handshake() != nil || len(tc.ConnectionState().PeerCertificates) == 0 {
			seen <- ""
			return
		}
		seen <- tc.ConnectionState().PeerCertificates[0].Subject.CommonName
		_, _ = io.Copy(io.Discard, tc)
	}()
	d := &net.Dialer{Timeout: 10 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", ln.Addr().String(), cfg)
	if err != nil {
		<-seen
		return "", err
	}
	// TLS 1.3 servers check the client certificate after the client's
	// handshake returns: a round trip makes the server's verdict known.
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = c.Write([]byte("x"))
	c.Close()
	return <-seen, nil
}

// The client key stays crypto/rsa's own: no wrapper signs for it.
func TestDefaultIsCryptoRSA(t *testing.T) {
	f := newFixture(t)
	c, err := Build(Options{CertFile: f.rsaCert, KeyFile: f.rsaKey, CAFile: f.caFile, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.TLS.Certificates[0].PrivateKey.(*rsa.PrivateKey); !ok {
		t.Fatalf("default key is %T, want crypto/rsa's *rsa.PrivateKey", c.TLS.Certificates[0].PrivateKey)
	}
	if c.TLS.MinVersion != tls.VersionTLS12 || c.Subject != "CN=rsa-client" {
		t.Fatalf("MinVersion %x, subject %q", c.TLS.MinVersion, c.Subject)
	}
	if cn, err := f.handshake(t, c.TLS, 0); err != nil || cn != "rsa-client" {
		t.Fatalf("handshake: server saw %q, err %v", cn, err)
	}
}

// Both clients share Build, so the TLS 1.2 floor holds for both: a server
// that speaks at most TLS 1.1 is refused.
func TestRefusesTLS11(t *testing.T) {
	f := newFixture(t)
	c, err := Build(Options{CertFile: f.ecdsaCert, KeyFile: f.ecdsaKy, CAFile: f.caFile, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.handshake(t, c.TLS, tls.VersionTLS11); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("a TLS 1.1 server: %v, want a protocol version failure", err)
	}
}

// Hostile and mistaken files: one clear error naming the file, never a
// panic or a silent half-configured client.
func TestBadFiles(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pem")
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte("-----BEGIN CERTIFICATE-----\nnot base64 !!\n-----END CERTIFICATE-----\n\x00\xff"), 0o600); err != nil {
		t.Fatal(err)
	}
	expired, expiredKey := f.ca.Issue(t, testpki.Spec{CommonName: "old", NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour)}).Write(t, dir, "expired")
	future, futureKey := f.ca.Issue(t, testpki.Spec{CommonName: "new", NotBefore: time.Now().Add(time.Hour), NotAfter: time.Now().Add(48 * time.Hour)}).Write(t, dir, "future")
	// Both spellings of a passphrase-protected key: PKCS#8 and legacy PEM.
	pkcs8Enc := filepath.Join(dir, "pkcs8-encrypted.key")
	legacyEnc := filepath.Join(dir, "legacy-encrypted.key")
	if err := os.WriteFile(pkcs8Enc, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte("0123456789abcdef")}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(legacyEnc, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-256-CBC,00112233445566778899AABBCCDDEEFF"}, Bytes: []byte("0123456789abcdef")}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"expired cert", Options{CertFile: expired, KeyFile: expiredKey}, "client certificate " + expired + " expired at "},
		{"not yet valid cert", Options{CertFile: future, KeyFile: futureKey}, "client certificate " + future + " is not yet valid: valid from "},
		{"PKCS#8 encrypted key", Options{CertFile: f.rsaCert, KeyFile: pkcs8Enc}, "is an encrypted key (passphrase-protected)"},
		{"legacy encrypted key", Options{CertFile: f.rsaCert, KeyFile: legacyEnc}, "is an encrypted key (passphrase-protected)"},
		{"cert without key", Options{CertFile: f.rsaCert}, "without its key"},
		{"key without cert", Options{KeyFile: f.rsaKey}, "without its certificate"},
		{"missing cert", Options{CertFile: "/nonexistent.crt", KeyFile: f.rsaKey}, "reading client certificate"},
		{"missing key", Options{CertFile: f.rsaCert, KeyFile: "/nonexistent.key"}, "reading client key"},
		{"mismatch", Options{CertFile: f.rsaCert, KeyFile: f.ecdsaKy}, "do not match"},
		{"cert is not PEM", Options{CertFile: empty, KeyFile: f.rsaKey}, "contains no PEM certificate"},
		{"cert is junk", Options{CertFile: junk, KeyFile: f.rsaKey}, "contains no PEM certificate"},
		{"key is a cert", Options{CertFile: f.rsaCert, KeyFile: f.rsaCert}, "no PEM private key"},
		{"empty CA", Options{CAFile: empty}, "contains no PEM certificates"},
		{"junk CA", Options{CAFile: junk}, "contains no PEM certificates"},
		{"missing CA", Options{CAFile: "/nonexistent-ca.crt"}, "reading CA file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Build(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || c != nil {
				t.Fatalf("got %v, %v; want an error containing %q", c, err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}
