//go:build !linux

package leanhttp

import (
	"net"
	"time"

	"github.com/credhub-perf/credhub-perf/load/idleconn"
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
	probe   idleconn.Probe
}

// wrapSock never wraps here (whatever Config.PortableIO says): the client
// then uses the connection as dialled.
func wrapSock(net.Conn, *sockConn, bool) *sockConn { return nil }

// flush: nothing is ever held here.
func (c *sockConn) flush() error { return nil }

// held: nothing is ever held here.
func (c *sockConn) held() bool { return false }

// deadlineBy and abort are never called here (there is no sockConn): the
// client sets its connections' deadlines directly.
func (c *sockConn) deadlineBy(time.Time, time.Duration) {}
func (c *sockConn) abort()                              {}
