//go:build !linux

package load

import (
	"net"
	"time"
)

// sockConn holds back request bytes and sends them from inside the read
// that waits for the response, with raw read and write system calls
// (sock_linux.go). Those calls, and the runtime behaviour that makes them
// pay, were measured on Linux only; elsewhere the lean client writes and
// reads the TCP connection the ordinary way: the same requests and
// timings, one more system call per request.
type sockConn struct {
	net.Conn
	hold    bool
	wroteAt time.Time
	probe   liveProbe
}

// wrapSock never wraps here (whatever rawSock says): fast.go then uses
// the connection as dialled.
func wrapSock(net.Conn, *sockConn) *sockConn { return nil }

// liveProbe looks at an idle connection's socket on Linux (sock_linux.go).
// Elsewhere there is no look: alive takes every idle connection as open,
// and a request that finds one closed is sent once more if net/http would
// replay it (alive.go).
type liveProbe struct{ draining bool }

func newLiveProbe(net.Conn) *liveProbe { return nil }

func (p *liveProbe) peek() peekState { return peekUnknown }

func (p *liveProbe) readNow([]byte) (int, error) { return 0, errWouldBlock }
