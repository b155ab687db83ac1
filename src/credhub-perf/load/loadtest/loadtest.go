// Package loadtest provides test fixtures for the load engine and the tools
// built on it: a throwaway PKI (CA, server and client certificates, RSA or
// ECDSA) and HTTPS servers that require client certificates and count TLS
// handshakes.
package loadtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// KeyType selects the key algorithm of generated certificates.
type KeyType string

// Key types.
const (
	RSA   KeyType = "rsa"
	ECDSA KeyType = "ecdsa"
)

// PKI is a CA with a server and a client certificate written to files.
type PKI struct {
	Dir                               string
	CAFile, ServerCert, ServerKey     string
	ClientCert, ClientKey, ClientName string
	CAPool                            *x509.CertPool
	ServerPair                        tls.Certificate
}

// NewPKI generates a CA, a server certificate for 127.0.0.1/localhost and a
// client certificate with common name "perf-client", in t.TempDir().
func NewPKI(t testing.TB, kt KeyType) *PKI {
	t.Helper()
	dir := t.TempDir()
	p := &PKI{Dir: dir, ClientName: "perf-client"}
	caKey := newKey(t, kt)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "loadtest CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p.CAPool = x509.NewCertPool()
	p.CAPool.AddCert(caCert)
	p.CAFile = writePEM(t, dir, "ca.crt", "CERTIFICATE", caDER)

	issue := func(name string, serial int64, usage x509.ExtKeyUsage, server bool) (string, string, tls.Certificate) {
		key := newKey(t, kt)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
			tmpl.DNSNames = []string{"localhost", "credhub.test"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		cf := writePEM(t, dir, name+".crt", "CERTIFICATE", der)
		kf := writePEM(t, dir, name+".key", "PRIVATE KEY", keyDER)
		pair, err := tls.LoadX509KeyPair(cf, kf)
		if err != nil {
			t.Fatal(err)
		}
		return cf, kf, pair
	}
	p.ServerCert, p.ServerKey, p.ServerPair = issue("server", 2, x509.ExtKeyUsageServerAuth, true)
	p.ClientCert, p.ClientKey, _ = issue(p.ClientName, 3, x509.ExtKeyUsageClientAuth, false)
	return p
}

func newKey(t testing.TB, kt KeyType) crypto.Signer {
	t.Helper()
	var k crypto.Signer
	var err error
	if kt == RSA {
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Server is an HTTPS test server that requires and verifies client
// certificates and counts full TLS handshakes.
type Server struct {
	*httptest.Server
	handshakes atomic.Int64
}

// Handshakes is the number of TLS handshakes the server has started.
func (s *Server) Handshakes() int64 { return s.handshakes.Load() }

// NewMTLSServer starts h behind TLS that requires a client certificate
// signed by p's CA. requireClient=false asks for none (server-auth TLS).
// configure, if given, adjusts the http.Server before it starts (changing
// it afterwards would race with the serving goroutines).
func NewMTLSServer(t testing.TB, p *PKI, h http.Handler, requireClient bool, http2 bool, configure ...func(*http.Server)) *Server {
	t.Helper()
	s := &Server{Server: httptest.NewUnstartedServer(h)}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{p.ServerPair},
		ClientCAs:    p.CAPool,
		MinVersion:   tls.VersionTLS12,
	}
	if requireClient {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		s.handshakes.Add(1)
		return nil, nil
	}
	s.TLS = cfg
	// Refused handshakes are what some tests are about; keep them quiet.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.EnableHTTP2 = http2
	for _, f := range configure {
		f(s.Config)
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// CountConns makes a server count the connections it accepts, for
// NewMTLSServer's configure argument.
func CountConns(n *atomic.Int64) func(*http.Server) {
	return func(s *http.Server) {
		s.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				n.Add(1)
			}
		}
	}
}
