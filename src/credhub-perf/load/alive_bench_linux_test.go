package load

import (
	"net"
	"testing"
)

// BenchmarkAliveLook is the look at an idle connection's socket before a
// reuse (alive: one recvfrom(MSG_PEEK|MSG_DONTWAIT)), on an open loopback
// TCP connection with nothing to read, through the lean client's sockConn:
//
//	go test -run X -bench AliveLook -benchmem ./load
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
	sc := wrapSock(nc, nil)
	if sc == nil {
		b.Skip("no sockConn")
	}
	c := &fconn{nc: sc, sc: sc}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if !c.alive() {
			b.Fatal("an open connection looked closed")
		}
	}
}
