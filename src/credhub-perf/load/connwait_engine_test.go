package load_test

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// stuckListener is a loopback mutual-TLS server that serves h on the
// first connection it accepts and, on every later one, accepts and never
// answers: a handshake on it waits for ever (until its deadline).
type stuckListener struct {
	net.Listener
	first chan net.Conn
	mu    sync.Mutex
	held  []net.Conn
	heldc chan struct{} // a word per connection held
	done  chan struct{}
}

func newStuckListener(t *testing.T, p *loadtest.PKI, h http.Handler) *stuckListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stuckListener{Listener: ln, first: make(chan net.Conn, 1), heldc: make(chan struct{}, 1024), done: make(chan struct{})}
	go func() {
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if n == 0 {
				s.first <- c
				continue
			}
			s.mu.Lock()
			s.held = append(s.held, c)
			s.mu.Unlock()
			s.heldc <- struct{}{}
		}
	}()
	srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
	cfg := &tls.Config{Certificates: []tls.Certificate{p.ServerPair}, ClientCAs: p.CAPool, ClientAuth: tls.RequireAndVerifyClientCert}
	go func() { _ = srv.Serve(tls.NewListener(oneConn{s}, cfg)) }()
	t.Cleanup(func() {
		close(s.done)
		_ = ln.Close()
		_ = srv.Close()
		s.dropHeld()
	})
	return s
}

// dropHeld closes the connections held so far: their handshakes fail.
func (s *stuckListener) dropHeld() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.held {
		_ = c.Close()
	}
	s.held = nil
}

func (s *stuckListener) URL() string { return "https://" + s.Addr().String() }

// oneConn is the listener the HTTP server serves: the first connection.
type oneConn struct{ s *stuckListener }

func (l oneConn) Accept() (net.Conn, error) {
	select {
	case c := <-l.s.first:
		return c, nil
	case <-l.s.done:
		return nil, net.ErrClosed
	}
}
func (l oneConn) Close() error   { return nil }
func (l oneConn) Addr() net.Addr { return l.s.Addr() }

// TestOpenLoopConnectionWaitBounded: an open-loop request that waits for a
// connection ends, failed and not sent, at its schedule + the client's
// timeout on the engine's clock, whatever the server does; its latency
// counts from its schedule, its sched-lag is how late a worker took it up.
// The server answers the step's one warm connection, holds the first
// request on it, and then accepts connections and never completes a
// handshake: requests 1-29, all taken up at 29 ms, wait for the warm
// connection back, then one dials (and hangs) and the rest wait again.
// With the clock at request 15's deadline, requests 1-15 end; at request
// 29's, the rest of them but the one dialling. Unbounded, they would wait
// as long as the server held the step (hey -rate 10000 -c 256 -z 3s -t 3
// against such a server: over 120 s). With either HTTP client.
func TestOpenLoopConnectionWaitBounded(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		arrived := make(chan struct{}, 1)
		release := make(chan struct{})
		srv := newStuckListener(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			<-release
		}))
		t.Cleanup(func() {
			select {
			case <-release:
			default:
				close(release)
			}
		})
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clk := loadtest.NewFakeClock(start)
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		const ms, timeout = time.Millisecond, 10 * time.Second
		opts.Timeout = timeout // I/O deadlines stay real time on a test clock: far off
		results, done := clockRun(t, clk, opts, load.Template{URL: srv.URL()}, load.Step{Concurrency: 64, Rate: 1000, Duration: 30 * ms})
		recv(t, arrived, "request 0 at the server")
		if got := recv(t, clk.Sleeping, "pacer sleep"); !got.Equal(start.Add(ms)) {
			t.Fatalf("pacer slept until %v, want 1ms", got.Sub(start))
		}
		clk.Set(start.Add(29 * ms))
		// Each of requests 1-29 waits a dial's time (2 ms before any is
		// timed) for the warm connection back.
		for i := 1; i <= 29; i++ {
			if got := recv(t, clk.Sleeping, "wait for a connection"); !got.Equal(start.Add(31 * ms)) {
				t.Fatalf("a request waited until %v, want 31ms", got.Sub(start))
			}
		}
		check := func(r load.Result, at time.Time) {
			t.Helper()
			sched := r.Start.Sub(start)
			if r.Err != "not sent: waited the timeout for a connection" || r.Status != 0 ||
				r.Latency != at.Sub(r.Start) || r.SchedLag != 29*ms-sched || r.DNSDial != 0 {
				t.Fatalf("request at %v: %+v; want not sent, latency %v, sched-lag %v", sched, r, at.Sub(r.Start), 29*ms-sched)
			}
		}
		seen := map[time.Duration]bool{}
		ta := start.Add(15*ms + timeout)
		clk.Set(ta)
		for range 15 {
			r := recv(t, results, "result at request 15's deadline")
			if s := r.Start.Sub(start); s < ms || s > 15*ms || seen[s] {
				t.Fatalf("at request 15's deadline, request at %v ended: %+v", s, r)
			}
			check(r, ta)
			seen[r.Start.Sub(start)] = true
		}
		tb := start.Add(29*ms + timeout)
		clk.Set(tb)
		for range 13 {
			r := recv(t, results, "result at request 29's deadline")
			if s := r.Start.Sub(start); s <= 15*ms || s > 29*ms || seen[s] {
				t.Fatalf("at request 29's deadline, request at %v ended: %+v", s, r)
			}
			check(r, tb)
			seen[r.Start.Sub(start)] = true
		}
		// Request 0 is answered; the one dialling fails as its handshake
		// does (or, net/http's, is handed request 0's connection back).
		recv(t, srv.heldc, "the dial at the server")
		srv.dropHeld()
		close(release)
		for range 2 {
			r := recv(t, results, "result")
			s := r.Start.Sub(start)
			switch {
			case s == 0 && (r.Status != 200 || r.Err != ""):
				t.Fatalf("request 0: %+v, want answered", r)
			case s != 0 && (seen[s] || r.Err == "not sent: waited the timeout for a connection"):
				t.Fatalf("request at %v: %+v, want the one dialling", s, r)
			}
			seen[s] = true
		}
		if err := recv(t, done, "end of step"); err != nil {
			t.Fatal(err)
		}
	})
}
