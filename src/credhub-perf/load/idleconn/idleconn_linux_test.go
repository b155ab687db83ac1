package idleconn

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// pair is a loopback TCP connection: the client's end with its probe, and
// the server's.
func pair(t *testing.T) (client net.Conn, p *Probe, srv net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv = <-accepted
	if srv == nil {
		t.Fatal("no connection accepted")
	}
	t.Cleanup(func() { client.Close(); srv.Close() })
	p = NewProbe(client)
	if p == nil {
		t.Fatal("no probe of a TCP connection")
	}
	return client, p, srv
}

// eventually waits for Alive to say want (the peer's bytes or FIN are on
// their way over loopback).
func eventually(t *testing.T, what string, c net.Conn, p *Probe, br *bufio.Reader, want bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); Alive(c, p, br) != want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: Alive is %v, want %v", what, !want, want)
		}
	}
}

// TestAlive: an open idle connection is alive; one the server closed, or
// on which the server sent bytes no request asked for, is not; bytes
// already buffered by the reader over it make it unusable too.
func TestAlive(t *testing.T) {
	c, p, _ := pair(t)
	if !Alive(c, p, nil) {
		t.Fatal("an open idle connection looked closed")
	}
	br := bufio.NewReader(c)
	if !Alive(c, p, br) {
		t.Fatal("an open idle connection with an empty reader looked closed")
	}

	c, p, srv := pair(t)
	srv.Close()
	eventually(t, "after the server's close", c, p, nil, false)

	c, p, srv = pair(t)
	if _, err := srv.Write([]byte("HTTP/1.1 408 Request Timeout\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "with a server's goodbye waiting", c, p, nil, false)
	br = bufio.NewReader(c)
	if _, err := br.Peek(1); err != nil {
		t.Fatal(err)
	}
	if Alive(c, nil, br) {
		t.Fatal("bytes buffered in the reader: alive")
	}
}
