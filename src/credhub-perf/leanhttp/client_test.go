package leanhttp

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load/idleconn"
)

// testServer answers every request on a connection with a 2-byte body.
type testServer struct {
	host, port       string
	accepted, closed atomic.Int64 // connections
}

// server starts a testServer; closeAfter > 0 closes each connection after
// that many answers, without saying so (as an idle timeout would).
func server(t *testing.T, closeAfter int) *testServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	srv := &testServer{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			srv.accepted.Add(1)
			go func() {
				defer srv.closed.Add(1)
				defer c.Close()
				br := bufio.NewReader(c)
				for k := 1; ; k++ {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
						return
					}
					if k == closeAfter {
						return
					}
				}
			}()
		}
	}()
	srv.host, srv.port, _ = net.SplitHostPort(l.Addr().String())
	return srv
}

func send(ctx context.Context, s *Sender, replayable bool) Outcome {
	q := Request{Raw: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Start: time.Now(), Replayable: replayable}
	q.Deadline = q.Start.Add(5 * time.Second)
	var o Outcome
	for try := 0; s.RoundTrip(ctx, &q, &o, try == 0); try++ {
	}
	return o
}

// TestRoundTripKeepAlive: a Sender's requests share its connection; only
// the first dials, and each reports its phases.
func TestRoundTripKeepAlive(t *testing.T) {
	for _, portable := range []bool{false, true} {
		srv := server(t, 0)
		s := New(Config{Hostname: srv.host, Port: srv.port, Timeout: 5 * time.Second, KeepAlive: true, PortableIO: portable}).NewSender(nil)
		for i := range 3 {
			o := send(context.Background(), s, true)
			if o.Err != nil || o.Status != 200 || o.BytesIn != 2 {
				t.Fatalf("portable %v, request %d: %+v", portable, i, o)
			}
			if dialled := o.DNSDial > 0; dialled != (i == 0) {
				t.Fatalf("portable %v, request %d: DNSDial %v", portable, i, o.DNSDial)
			}
		}
		if n := srv.accepted.Load(); n != 1 {
			t.Fatalf("portable %v: %d connections, want 1", portable, n)
		}
		s.CloseConn()
	}
}

// TestRoundTripServerClosedIdle: on a connection the server closed while
// it idled, a request net/http would replay is sent once more on a new
// connection; one it would not fails, in the phase the close showed in.
func TestRoundTripServerClosedIdle(t *testing.T) {
	for _, portable := range []bool{false, true} {
		for _, replayable := range []bool{true, false} {
			srv := server(t, 1)
			s := New(Config{Hostname: srv.host, Port: srv.port, Timeout: 5 * time.Second, KeepAlive: true, PortableIO: portable}).NewSender(nil)
			if o := send(context.Background(), s, replayable); o.Err != nil {
				t.Fatal(o.Err)
			}
			for deadline := time.Now().Add(5 * time.Second); srv.closed.Load() == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			o := send(context.Background(), s, replayable)
			switch {
			case replayable && (o.Err != nil || o.Status != 200 || srv.accepted.Load() != 2):
				t.Fatalf("portable %v: replayable request not sent again: %+v, %d connections", portable, o, srv.accepted.Load())
			case !replayable && (o.Err == nil || !idleconn.PeerClosed(o.Err) || (o.Op != "read" && o.Op != "write")):
				t.Fatalf("portable %v: unreplayable request: op %q, err %v; want a read or write failure of a closed connection", portable, o.Op, o.Err)
			}
			s.CloseConn()
		}
	}
}
