// Command null-server is the HTTPS target of `make bench`: it answers every
// request with 200 and a small fixed body, so the figures measure the load
// generators and TLS, never an application. It is stdlib only so the bench
// needs nothing but a Go toolchain.
//
//	null-server -gen-certs DIR
//	null-server -cert DIR/server.crt -key DIR/server.key [-client-ca DIR/ca.crt]
//	            [-listen 127.0.0.1:0] [-addr-file FILE] [-resumption] [-mlkem]
//	            [-servers N -service-time D]
//
// With -client-ca the server requires and verifies a client certificate
// (mTLS); without it, it is server-auth-only TLS (for peers such as wrk and
// rakyll/hey that cannot present one). On SIGTERM or SIGINT it prints one
// line of counters to stderr, which the bench uses to check that a
// "keep-alive off" run really did one handshake per request, and the mean
// time its handler took per request (handled_mean_us), so the open-loop
// bench can subtract the server's own share from a generator's latency.
//
// With -service-time D it is an M/M/c station instead of a null server: N
// servers (-servers), exponentially distributed service times of mean D,
// requests waiting in line for a free server. Its handling time then
// includes the wait and the service; its capacity is N/D requests/s. It
// also reports the servers' mean occupancy per request (served_mean_us: D
// plus the timers' overshoot and the hand-off to a waiting request), the S
// of a queueing model of the run, and a request's mean time at the station
// (station_mean_us: its wait for a server and its service), which taken
// from a client's response time leaves the time spent outside the station.
package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// classicGroups are the key exchanges CredHub's Java server offers.
var classicGroups = []tls.CurveID{tls.X25519, tls.CurveP256, tls.CurveP384}

// body is small and fixed: generators differ in how they read bodies, and a
// large one would measure copying instead of request handling.
var body = []byte("ok\n")

type counters struct {
	requests   atomic.Int64
	conns      atomic.Int64
	handshakes atomic.Int64
	resumed    atomic.Int64
	// handledNS is the sum of the handler's wall time over all requests.
	handledNS atomic.Int64
	// servedNS is the sum of the time requests held one of the station's
	// servers (-service-time): from the moment a server was theirs to its
	// release, so the service times as slept with the timers' overshoot
	// and, for a request that waited, the hand-off from the request before
	// (a server freed is not yet working on the next one until that
	// goroutine runs). That occupancy is what sets the station's capacity
	// (N over its mean), the S a queueing model of the run must use.
	servedNS atomic.Int64
	// stationNS is the sum of the time requests spent at the station: from
	// asking for a server to releasing it (the wait in line and the
	// service), without the HTTP handling around it.
	stationNS atomic.Int64

	// groups counts handshakes per negotiated key-exchange group, so the
	// bench can show that every tool did the same key exchange.
	mu     sync.Mutex
	groups map[tls.CurveID]int64
}

func (c *counters) addGroup(id tls.CurveID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.groups == nil {
		c.groups = map[tls.CurveID]int64{}
	}
	c.groups[id]++
}

// groupList renders the per-group counts as name:count pairs, most used first.
func (c *counters) groupList() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]tls.CurveID, 0, len(c.groups))
	for id := range c.groups {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return c.groups[ids[i]] > c.groups[ids[j]] })
	parts := make([]string, 0, len(ids))
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf("%s:%d", id, c.groups[id]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("null-server", flag.ContinueOnError)
	genCerts := fs.String("gen-certs", "", "write ca/server/client RSA-2048 certificates and keys into `DIR` and exit")
	certFile := fs.String("cert", "", "server certificate `PEM` file")
	keyFile := fs.String("key", "", "server private key `PEM` file")
	clientCA := fs.String("client-ca", "", "CA `PEM` file; when set, a client certificate signed by it is required (mTLS)")
	listen := fs.String("listen", "127.0.0.1:0", "listen `address`")
	addrFile := fs.String("addr-file", "", "write the base URL to `FILE` once listening")
	resumption := fs.Bool("resumption", false, "allow TLS session resumption (off by default so every new connection is a full handshake)")
	mlkem := fs.Bool("mlkem", false, "also accept Go's hybrid post-quantum key exchange (X25519MLKEM768); off by default, as CredHub's Java server offers only classic groups")
	servers := fs.Int("servers", 4, "with -service-time: the station's `N` servers")
	serviceTime := fs.Duration("service-time", 0, "mean exponential service `time` per request (M/M/c station); 0 answers at once")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *serviceTime < 0 || *servers < 1 {
		fmt.Fprintln(os.Stderr, "null-server: -service-time must not be negative and -servers must be at least 1")
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "null-server: unexpected argument %q; all options are flags (see -h)\n", fs.Arg(0))
		return 2
	}
	if *genCerts != "" {
		if err := writeCerts(*genCerts); err != nil {
			fmt.Fprintf(os.Stderr, "null-server: %v\n", err)
			return 1
		}
		return 0
	}
	if *certFile == "" || *keyFile == "" {
		fmt.Fprintln(os.Stderr, "null-server: -cert and -key are required (create them with: null-server -gen-certs DIR)")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	o := options{listen: *listen, certFile: *certFile, keyFile: *keyFile, clientCA: *clientCA, addrFile: *addrFile, resumption: *resumption, mlkem: *mlkem, servers: *servers, serviceTime: *serviceTime}
	st, err := serve(ctx, o, func(url, mode string) {
		fmt.Printf("null-server listening on %s (%s)\n", url, mode)
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "null-server: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "null-server stats: requests=%d conns=%d handshakes=%d resumed=%d groups=%s handled_mean_us=%.1f served_mean_us=%.1f station_mean_us=%.1f\n",
		st.Requests, st.Conns, st.Handshakes, st.Resumed, st.Groups, st.HandledMeanUS, st.ServedMeanUS, st.StationMeanUS)
	return 0
}

type options struct {
	listen, certFile, keyFile, clientCA, addrFile string
	resumption, mlkem                             bool
	servers                                       int
	serviceTime                                   time.Duration
}

// stats is what the server counted between start and shutdown.
type stats struct {
	Requests, Conns, Handshakes, Resumed int64
	Groups                               string
	HandledMeanUS                        float64 // mean handler time per request, µs
	ServedMeanUS                         float64 // mean time a request held a station server, µs (0 without -service-time)
	StationMeanUS                        float64 // mean time a request waited for and held a server, µs (0 without -service-time)
}

// serve runs until ctx is done, calling ready once it accepts connections.
func serve(ctx context.Context, o options, ready func(url, mode string)) (stats, error) {
	cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return stats{}, fmt.Errorf("load server certificate %s and key %s: %w", o.certFile, o.keyFile, err)
	}
	var c counters
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		// HTTP/1.1 only: every peer in the bench speaks it, and an h2
		// upgrade by some of them would compare different protocols.
		NextProtos:             []string{"http/1.1"},
		SessionTicketsDisabled: !o.resumption,
		// CredHub (Java JSSE) negotiates X25519; Go would pick the ML-KEM
		// hybrid with clients that offer it, and then peers would be
		// compared on different key exchanges.
		CurvePreferences: classicGroups,
		VerifyConnection: func(cs tls.ConnectionState) error {
			c.handshakes.Add(1)
			c.addGroup(cs.CurveID)
			if cs.DidResume {
				c.resumed.Add(1)
			}
			return nil
		},
	}
	if o.mlkem {
		cfg.CurvePreferences = nil // Go's defaults, ML-KEM hybrid first
	}
	mode := "server-auth TLS"
	if o.clientCA != "" {
		pemBytes, err := os.ReadFile(o.clientCA)
		if err != nil {
			return stats{}, fmt.Errorf("read client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return stats{}, fmt.Errorf("client CA %s holds no PEM certificate; pass the ca.crt written by -gen-certs", o.clientCA)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		mode = "mTLS"
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return stats{}, fmt.Errorf("listen on %s: %w", o.listen, err)
	}
	// station holds the free servers, each carrying when it was last
	// released: a request that waited for one holds it from that moment.
	var station chan time.Time
	if o.serviceTime > 0 {
		station = make(chan time.Time, o.servers)
		for range o.servers {
			station <- time.Time{}
		}
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			began := time.Now()
			c.requests.Add(1)
			// Drain the request body so a keep-alive connection stays usable
			// for generators that send one.
			_, _ = io.Copy(io.Discard, r.Body)
			h := w.Header()
			h["Content-Type"] = []string{"text/plain"}
			h["Content-Length"] = []string{"3"}
			if station != nil {
				asked := time.Now()
				freed := <-station // wait for a free server
				held := freed
				if held.Before(asked) {
					held = asked // it was free before this request asked
				}
				time.Sleep(time.Duration(mrand.ExpFloat64() * float64(o.serviceTime)))
				now := time.Now()
				c.servedNS.Add(int64(now.Sub(held)))
				c.stationNS.Add(int64(now.Sub(asked)))
				station <- now
			}
			_, _ = w.Write(body)
			// The response leaves on Flush; count the write in the server's share.
			w.(http.Flusher).Flush()
			c.handledNS.Add(int64(time.Since(began)))
		}),
		TLSConfig: cfg,
		// An empty map disables the automatic HTTP/2 of net/http.
		TLSNextProto:      map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       60 * time.Second,
		// Generators cut connections at the end of a timed run; those
		// handshake and read errors are expected and would only add noise.
		ErrorLog: log.New(io.Discard, "", 0),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				c.conns.Add(1)
			}
		},
	}

	url := "https://" + ln.Addr().String()
	if o.addrFile != "" {
		// Write then rename so a reader polling for the file never sees it half written.
		tmp := o.addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(url+"\n"), 0o644); err != nil {
			return stats{}, fmt.Errorf("write address file: %w", err)
		}
		if err := os.Rename(tmp, o.addrFile); err != nil {
			return stats{}, fmt.Errorf("write address file: %w", err)
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	ready(url, mode)
	select {
	case err := <-errc:
		return stats{}, fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	st := stats{Requests: c.requests.Load(), Conns: c.conns.Load(), Handshakes: c.handshakes.Load(), Resumed: c.resumed.Load(), Groups: c.groupList()}
	if st.Requests > 0 {
		st.HandledMeanUS = float64(c.handledNS.Load()) / float64(st.Requests) / 1e3
		st.ServedMeanUS = float64(c.servedNS.Load()) / float64(st.Requests) / 1e3
		st.StationMeanUS = float64(c.stationNS.Load()) / float64(st.Requests) / 1e3
	}
	return st, nil
}

// writeCerts writes the same file names as `credhub-sim certs --out DIR`
// (ca.crt ca.key server.crt server.key client.crt client.key) so either can
// feed the bench. RSA-2048 because that is what the handshake figures
// are about and what CredHub deployments commonly use.
func writeCerts(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create certificate directory: %w", err)
	}
	now := time.Now()
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "null-server bench CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("parse CA certificate: %w", err)
	}
	if err := writePair(dir, "ca", caDER, caKey); err != nil {
		return err
	}
	leaves := []struct {
		name string
		tmpl *x509.Certificate
	}{
		{"server", &x509.Certificate{
			Subject:     pkix.Name{CommonName: "localhost"},
			DNSNames:    []string{"localhost"},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}},
		{"client", &x509.Certificate{
			Subject:     pkix.Name{CommonName: "bench-client"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}},
	}
	for _, l := range leaves {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return fmt.Errorf("generate %s key: %w", l.name, err)
		}
		l.tmpl.SerialNumber = serial()
		l.tmpl.NotBefore = now.Add(-time.Hour)
		l.tmpl.NotAfter = now.Add(365 * 24 * time.Hour)
		l.tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		der, err := x509.CreateCertificate(rand.Reader, l.tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return fmt.Errorf("create %s certificate: %w", l.name, err)
		}
		if err := writePair(dir, l.name, der, key); err != nil {
			return err
		}
	}
	return nil
}

func writePair(dir, name string, der []byte, key *rsa.PrivateKey) error {
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), certPEM, 0o644); err != nil {
		return fmt.Errorf("write %s certificate: %w", name, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode %s key: %w", name, err)
	}
	keyPath := filepath.Join(dir, name+".key")
	// Remove first: WriteFile keeps the mode of an existing file, and an
	// older, wider-open key file must not stay readable by others.
	if err := os.Remove(keyPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("replace %s key: %w", name, err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return fmt.Errorf("write %s key: %w", name, err)
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		// crypto/rand failing means the system has no entropy source; no
		// certificate can be made safely then.
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return n
}
