package leanhttp

import (
	"context"
	"net"
	"testing"
	"time"
)

// BenchmarkAliveLook is the look at an idle connection's socket before a
// reuse (Conn.Alive: one recvfrom(MSG_PEEK|MSG_DONTWAIT)), on an open
// loopback TCP connection with nothing to read, through the sockConn:
//
//	go test -run X -bench AliveLook -benchmem ./leanhttp
func BenchmarkAliveLook(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	if srv := <-accepted; srv != nil {
		defer srv.Close()
	}
	sc := wrapSock(nc, nil, true)
	if sc == nil {
		b.Skip("no sockConn")
	}
	c := &Conn{nc: sc, sc: sc}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if !c.Alive() {
			b.Fatal("an open connection looked closed")
		}
	}
}

// TestAliveRecent: a connection whose last response began less than
// `recent` ago is taken as it is (no look at its socket), even one the
// server has closed since; past that it is looked at, and the close seen.
func TestAliveRecent(t *testing.T) {
	srv := server(t, 1) // closes after its answer, without saying so
	s := New(Config{Hostname: srv.host, Port: srv.port, Timeout: 5 * time.Second, KeepAlive: true}).NewSender(nil)
	defer s.CloseConn()
	if o := send(context.Background(), s, true); o.Err != nil || o.Status != 200 {
		t.Fatalf("request: %+v", o)
	}
	for deadline := time.Now().Add(5 * time.Second); srv.closed.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	c := s.Conn()
	if c.sc == nil {
		t.Skip("no sockConn")
	}
	now := time.Now()
	if !c.AliveRecent(now, time.Hour) {
		t.Fatal("a connection answered within `recent` was looked at")
	}
	for deadline := now.Add(5 * time.Second); c.AliveRecent(time.Now(), 0); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a connection the server closed, answered longer than `recent` ago, looks alive")
		}
	}
}
