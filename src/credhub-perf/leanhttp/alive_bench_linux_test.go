package leanhttp

import (
	"net"
	"testing"
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
