package load_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// closer is a loopback mTLS (or plain) HTTP/1.1 server that closes connections on
// the test's word, as a load balancer's or Tomcat's idle timeout does:
// the first `early` connections right after their handshake, and, on
// killIdle, every connection not serving a request. Each close is a TLS
// close_notify then a FIN, reported only once the client's kernel has
// acknowledged the FIN (finAcked): the client's next look at the socket
// sees it, without a sleep or a race.
type closer struct {
	*httptest.Server
	early    int64
	accepted atomic.Int64
	closed   chan struct{} // one per early close, once acknowledged
	arrived  atomic.Int64  // requests that reached the handler
	// dropFirst: the handler closes the connection of the first request
	// it reads, without an answer (a server that died with it).
	dropFirst bool
	mu        sync.Mutex
	conns     map[net.Conn]http.ConnState
	changed   chan struct{} // a connection changed state (buffered: 1)
}

func newCloser(t *testing.T, p *loadtest.PKI, early int64, dropFirst bool) *closer {
	t.Helper()
	return startCloser(t, p, early, dropFirst, false)
}

// startCloser is newCloser; plain: HTTP without TLS (early must be 0).
func startCloser(t *testing.T, p *loadtest.PKI, early int64, dropFirst, plain bool) *closer {
	t.Helper()
	c := &closer{early: early, dropFirst: dropFirst, closed: make(chan struct{}, 16), conns: map[net.Conn]http.ConnState{}, changed: make(chan struct{}, 1)}
	c.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if c.arrived.Add(1) == 1 && c.dropFirst {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
		}
	}))
	c.TLS = &tls.Config{Certificates: []tls.Certificate{p.ServerPair}, ClientCAs: p.CAPool, ClientAuth: tls.RequireAndVerifyClientCert}
	c.Listener = &earlyCloser{Listener: c.Listener, c: c, t: t}
	c.Config.ConnState = func(nc net.Conn, st http.ConnState) {
		c.mu.Lock()
		if st == http.StateClosed || st == http.StateHijacked {
			delete(c.conns, nc)
		} else {
			c.conns[nc] = st
		}
		c.mu.Unlock()
		select {
		case c.changed <- struct{}{}:
		default:
		}
	}
	if plain {
		c.Start()
	} else {
		c.StartTLS()
	}
	t.Cleanup(c.Close)
	return c
}

// earlyCloser is the listener under the server's TLS: it takes the first
// c.early connections itself, and closes each right after its handshake.
type earlyCloser struct {
	net.Listener
	c *closer
	t *testing.T
}

func (l *earlyCloser) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.c.accepted.Add(1) > l.c.early {
			return nc, nil
		}
		go func() {
			tc := tls.Server(nc, l.c.TLS)
			if err := tc.Handshake(); err != nil {
				l.t.Errorf("early close: handshake: %v", err)
				_ = nc.Close()
				return
			}
			closeAcked(l.t, tc)
			l.c.closed <- struct{}{}
			_, _ = io.Copy(io.Discard, nc) // what the client sends on it is never answered
			_ = nc.Close()
		}()
	}
}

// killIdle waits until want connections are not serving a request (the
// server marks one idle after its answer left, so maybe after the client
// read it), closes them as closeAcked, and returns how many it closed.
// goodbye, if set, is written on each first (as servers that answer an
// idle timeout with a 408 do).
func (c *closer) killIdle(t *testing.T, goodbye string, want int) int {
	t.Helper()
	hang := time.After(30 * time.Second) // a hang guard, not a tolerance
	var idle []net.Conn
	for {
		idle = idle[:0]
		c.mu.Lock()
		for tc, st := range c.conns {
			if st == http.StateNew || st == http.StateIdle {
				idle = append(idle, tc)
			}
		}
		c.mu.Unlock()
		if len(idle) >= want {
			break
		}
		select {
		case <-c.changed:
		case <-hang:
			t.Fatalf("%d connections idle at the server within 30 s, want %d", len(idle), want)
		}
	}
	for _, nc := range idle {
		if goodbye != "" {
			_, _ = nc.Write([]byte(goodbye))
		}
		closeAcked(t, nc)
	}
	return len(idle)
}

// closeAcked sends nc's close_notify (over TLS) and FIN and waits until
// the peer's kernel acknowledged the FIN (TCP_INFO's state past
// FIN_WAIT1), so the FIN, and what was written before it, is in the
// client's socket. The server's reading side stays open: it reads what
// the client sends until the client closes.
func closeAcked(t *testing.T, nc net.Conn) {
	t.Helper()
	if tc, ok := nc.(*tls.Conn); ok {
		_ = tc.CloseWrite() // close_notify
		nc = tc.NetConn()
	}
	tcp := nc.(*net.TCPConn)
	_ = tcp.CloseWrite() // FIN
	rc, err := tcp.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // a hang guard, not a tolerance
	for {
		var state byte
		var info [256]byte
		size := uint32(len(info))
		err := rc.Control(func(fd uintptr) {
			_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
				uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&size)), 0)
			if e == 0 {
				state = info[0] // tcpi_state
			}
		})
		if err != nil {
			// The server closed it: it read the client's close, which
			// came after the client read our FIN.
			return
		}
		// FIN_WAIT2 (5), TIME_WAIT (6), CLOSE (7): our FIN was acknowledged.
		if state >= 5 && state <= 7 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client never acknowledged the server's FIN (TCP state %d)", state)
		}
		time.Sleep(100 * time.Microsecond) // polling the kernel, not timing the test
	}
}

// TestStashedConnClosedAfterHandshake: a connection dialled before the
// step's clock that the server closed right after its handshake costs the
// step no failure, with either client and either method: the look at the
// socket before the request drops it and the request dials. Without the
// look (the retry alone, as on systems without it), a GET is sent again
// on a new connection, and a POST, which net/http would not replay, fails
// and is not sent again.
func TestStashedConnClosedAfterHandshake(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		for _, method := range []string{"GET", "POST"} {
			for _, check := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/check=%v", method, check), func(t *testing.T) {
					defer load.UseAliveCheck(check)()
					if !check {
						// What systems without the look run: no sockConn
						// either (whose held send, on Linux, waits for the
						// answer's readiness: a FIN that came before it
						// wakes nothing, and the look is what catches it).
						defer load.UseRawSock(false)()
					}
					srv := newCloser(t, p, 1, false)
					now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
					clk := loadtest.NewFakeClock(now)
					at := now.Add(time.Second)
					opts := mtlsOpts(p, true)
					opts.FastHTTP = !force
					results, done := clockRun(t, clk, opts, load.Template{Method: method, URL: srv.URL + "/x", Body: "{}"},
						load.Step{Concurrency: 2, Rate: 4, Requests: 1, StartAt: at, RunStart: now})
					// The pacer waits for the step's start; the connection
					// dialled before it is closed by then.
					recv(t, clk.Sleeping, "pacer sleep")
					recv(t, srv.closed, "the server's close after the handshake")
					clk.Set(at)
					r := recv(t, results, "result")
					if err := recv(t, done, "end of step"); err != nil {
						t.Fatal(err)
					}
					replays := check || method == "GET"
					switch {
					case replays && r.Err != "":
						t.Fatalf("the request failed on the connection the server closed: %+v", r)
					case replays && srv.arrived.Load() != 1:
						t.Fatalf("%d requests reached the server, want 1", srv.arrived.Load())
					case replays && r.DNSDial == 0:
						t.Fatalf("the request reports no dial, yet the only connection before it was closed: %+v", r)
					case !replays && (r.Err == "" || r.Status != 0):
						t.Fatalf("a POST on a closed connection succeeded without the look: %+v", r)
					case !replays && (srv.arrived.Load() != 0 || srv.accepted.Load() != 1):
						t.Fatalf("a POST was sent again: %d arrived, %d connections", srv.arrived.Load(), srv.accepted.Load())
					}
				})
			}
		}
	})
}

// TestKeepConnsAfterServerClosedIdle: the step after a KeepConns step
// (a warm-up) finds every connection it kept closed by the server (an idle
// timeout between the steps) and records no failure: the dead ones are
// dropped, none is counted a dial. A POST too with the lean client (with
// net/http a POST can still meet a kept connection its own pool has not
// yet seen closed; net/http's race, left to it). The same when the server
// says goodbye with a 408 before it closes: those bytes are no answer to
// the next request.
func TestKeepConnsAfterServerClosedIdle(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		methods := []string{"GET", "POST"}
		if force {
			methods = methods[:1]
		}
		const goodbye = "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
		for _, tc := range []struct {
			name, goodbye string
			plain         bool
		}{
			{"FIN", "", false},
			{"408", goodbye, false},
			{"plain/FIN", "", true},
			{"plain/408", goodbye, true},
		} {
			for _, method := range methods {
				t.Run(tc.name+"/"+method, func(t *testing.T) {
					srv := startCloser(t, p, 0, false, tc.plain)
					opts := mtlsOpts(p, true)
					opts.FastHTTP = !force
					e, err := load.New(opts, load.Template{Method: method, URL: srv.URL + "/x", Body: "{}"})
					if err != nil {
						t.Fatal(err)
					}
					defer e.CloseIdle()
					// 10^6 requests/s: four connections dialled before the
					// step, one used; the others wait in the pool (the stash).
					warm := load.Step{Concurrency: 4, Rate: 1e6, Requests: 1, KeepConns: true}
					if err := e.Run(context.Background(), warm, load.Discard); err != nil {
						t.Fatal(err)
					}
					if n := srv.killIdle(t, tc.goodbye, 4); n != 4 {
						t.Fatalf("the server closed %d kept connections, want the 4 dialled before the warm-up", n)
					}
					var c collect
					if err := e.Run(context.Background(), load.Step{Concurrency: 4, Rate: 1e6, Requests: 8}, &c); err != nil {
						t.Fatal(err)
					}
					if len(c.res) != 8 {
						t.Fatalf("%d results, want 8", len(c.res))
					}
					for _, r := range c.res {
						if r.Err != "" || r.Status != 200 {
							t.Fatalf("a request after the server closed the kept connections failed: %+v", r)
						}
					}
				})
			}
		}
	})
}

// TestNoReplayOfUnsafeRequest: a server that reads a request on a
// connection dialled before the step's clock and closes it without an
// answer gets a GET once more, on a new connection (what net/http does on
// its reused connections; the lost time is in the row: DNS+dialup within
// the latency), and a POST never twice: the failure is recorded.
func TestNoReplayOfUnsafeRequest(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		for _, method := range []string{"GET", "POST"} {
			t.Run(method, func(t *testing.T) {
				srv := newCloser(t, p, 0, true)
				opts := mtlsOpts(p, true)
				opts.FastHTTP = !force
				res := run(t, opts, load.Template{Method: method, URL: srv.URL + "/x", Body: "{}"},
					load.Step{Concurrency: 1, Rate: 1e6, Requests: 1})
				if len(res) != 1 {
					t.Fatalf("%d results, want 1", len(res))
				}
				r := res[0]
				if method == "POST" {
					if r.Err == "" || srv.arrived.Load() != 1 {
						t.Fatalf("POST: %d arrived at the server, want 1 (not replayed) and a failure: %+v", srv.arrived.Load(), r)
					}
					return
				}
				if r.Err != "" || r.Status != 200 || srv.arrived.Load() != 2 {
					t.Fatalf("GET: %d arrived at the server, want 2 (sent again once) and a success: %+v", srv.arrived.Load(), r)
				}
				if r.DNSDial == 0 || r.DNSDial+r.ReqWrite+r.RespDelay+r.RespRead > r.Latency {
					t.Fatalf("GET sent again: the new connection's dial and the lost time should be in its phases, within its latency: %+v", r)
				}
			})
		}
	})
}

// TestClosedLoopServerClosedIdle: in a closed loop paced by QPS, a worker's
// own connection closed by the server while the worker waited for its
// next slot costs no failure: the lean client looks at it before sending
// and dials anew (a POST too); net/http's idle pool sees the close itself
// (GET only: a POST could meet the close before its read loop has).
func TestClosedLoopServerClosedIdle(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		methods := []string{"GET", "POST"}
		if force {
			methods = methods[:1]
		}
		for _, method := range methods {
			t.Run(method, func(t *testing.T) {
				srv := newCloser(t, p, 0, false)
				start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
				clk := loadtest.NewFakeClock(start)
				opts := mtlsOpts(p, true)
				opts.FastHTTP = !force
				results, done := clockRun(t, clk, opts, load.Template{Method: method, URL: srv.URL + "/x", Body: "{}"},
					load.Step{Concurrency: 1, QPS: 1, Requests: 2})
				if r := recv(t, results, "first result"); r.Err != "" {
					t.Fatalf("first request: %+v", r)
				}
				due := recv(t, clk.Sleeping, "worker sleep")
				if n := srv.killIdle(t, "", 1); n != 1 {
					t.Fatalf("the server closed %d idle connections, want the worker's 1", n)
				}
				clk.Set(due)
				if r := recv(t, results, "second result"); r.Err != "" || r.Status != 200 || r.DNSDial == 0 {
					t.Fatalf("the request after the server closed the worker's connection should dial anew and succeed: %+v", r)
				}
				if err := recv(t, done, "end of step"); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
}
