// Package loadtest provides test fixtures for the load engine and the tools
// built on it: a throwaway PKI (testpki's CA, server and client
// certificates, RSA or ECDSA) and HTTPS servers that require client
// certificates and count TLS handshakes.
package loadtest

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/credhub-perf/credhub-perf/internal/testpki"
)

// The PKI of these fixtures is testpki's, the one certificate maker of
// the module's tests; loadtest keeps its names so callers need not change.
type (
	KeyType = testpki.KeyType
	PKI     = testpki.PKI
)

// Key types.
const (
	RSA   = testpki.RSA
	ECDSA = testpki.ECDSA
)

// NewPKI is testpki.NewPKI.
func NewPKI(t testing.TB, kt KeyType) *PKI { return testpki.NewPKI(t, kt) }

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
