package leanhttp

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// hangingServer answers the first `answer` requests of each connection,
// then reads on without answering, until the test ends.
func hangingServer(t *testing.T, answer int) (host, port string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for k := 1; ; k++ {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					if k > answer {
						<-done
						return
					}
					if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
						return
					}
				}
			}()
		}
	}()
	host, port, _ = net.SplitHostPort(l.Addr().String())
	return host, port
}

// TestLazyDeadlineExact: on a sockConn the socket's deadline moves only
// now and then (lazyDeadline), yet a request the server never answers
// still fails at its own deadline, not at the earlier one the socket
// still had from the request before it.
func TestLazyDeadlineExact(t *testing.T) {
	const timeout = 400 * time.Millisecond // slack: timeout/deadlineSlack = 50 ms
	host, port := hangingServer(t, 1)
	s := New(Config{Hostname: host, Port: port, Timeout: timeout, KeepAlive: true}).NewSender(nil)
	defer s.CloseConn()
	raw := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	q := Request{Raw: raw, Start: time.Now()}
	q.Deadline = q.Start.Add(timeout)
	var o Outcome
	if s.RoundTrip(context.Background(), &q, &o, false); o.Err != nil || o.Status != 200 {
		t.Fatalf("first request: %+v", o)
	}
	if s.Conn().sc == nil {
		t.Skip("no sockConn")
	}
	// Within the slack of the first request's deadline: the socket keeps it.
	time.Sleep(20 * time.Millisecond)
	q = Request{Raw: raw, Start: time.Now()}
	q.Deadline = q.Start.Add(timeout)
	armed := s.Conn().sc.deadline.armed
	o = Outcome{}
	s.RoundTrip(context.Background(), &q, &o, false)
	took := time.Since(q.Start)
	if got := s.conn.sc.deadline.armed; got.Equal(armed) || !got.Equal(q.Deadline) {
		t.Fatalf("the socket's deadline should have been kept for the request, then moved to its deadline when the old one fired: %v, then %v, want %v", armed, got, q.Deadline)
	}
	if !errors.Is(o.Err, os.ErrDeadlineExceeded) || o.Op != "read" {
		t.Fatalf("unanswered request: op %q, err %v; want a read past its deadline", o.Op, o.Err)
	}
	if took < timeout {
		t.Fatalf("unanswered request failed after %v, before its timeout %v", took, timeout)
	}
}

// TestLazyDeadlineAbort: Abort fails a request in flight at once, and the
// socket's deadline, earlier than the request's, is not moved back when
// it fires.
func TestLazyDeadlineAbort(t *testing.T) {
	host, port := hangingServer(t, 0)
	s := New(Config{Hostname: host, Port: port, Timeout: time.Minute, KeepAlive: true}).NewSender(nil)
	defer s.CloseConn()
	q := Request{Raw: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Start: time.Now()}
	q.Deadline = q.Start.Add(time.Minute)
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.Abort()
	}()
	var o Outcome
	s.RoundTrip(context.Background(), &q, &o, false)
	if took := time.Since(q.Start); o.Err == nil || took > 10*time.Second {
		t.Fatalf("aborted request: %+v after %v; want a failure at once", o, took)
	}
}
