package leanhttp

import (
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"

	"github.com/credhub-perf/credhub-perf/load/idleconn"
)

// sockConn is the TCP connection under TLS (or under the bufio reader for
// plain HTTP). While hold is set it keeps written bytes and sends them from
// inside the next Read, after the runtime has armed read readiness, and then
// waits for the response without first trying a read that would only fail
// with EAGAIN. That saves one system call per request, which on loopback is
// a measurable share of the generator's CPU.
type sockConn struct {
	*net.TCPConn
	rc      syscall.RawConn
	pending []byte
	hold    bool
	// wroteAt: when the bytes written last went out (a phase stamp:
	// monoNow when from inside a read); zero while some are held.
	wroteAt time.Time

	// State of one raw read, kept here so the callback does not allocate.
	readFn        func(uintptr) bool
	rbuf          []byte
	rn            int
	rerr          error
	sent, partial bool

	probe idleconn.Probe // the look at the socket before an idle reuse (Conn.Alive)

	deadline lazyDeadline // the request's deadline (deadline_linux.go)
}

// maxHold bounds what is held: a larger request may not fit the socket
// buffer in one write and goes out the ordinary way.
const maxHold = 32 << 10

// wrapSock wraps c, or returns nil when c is not TCP or raw is false
// (Config.PortableIO). A spare sockConn (one whose connection is closed)
// is reused, so that a connection per request does not allocate the
// held-bytes buffer and read callback anew.
func wrapSock(c net.Conn, spare *sockConn, raw bool) *sockConn {
	tcp, ok := c.(*net.TCPConn)
	if !ok || !raw {
		return nil
	}
	rc, err := tcp.SyscallConn()
	if err != nil {
		return nil
	}
	sc := spare
	if sc == nil {
		sc = &sockConn{}
		sc.readFn = sc.sendThenRead
	}
	sc.TCPConn, sc.rc = tcp, rc
	sc.probe.Init(rc)
	sc.pending = sc.pending[:0]
	sc.hold = false
	sc.wroteAt = time.Time{}
	sc.deadline.reset()
	return sc
}

func (c *sockConn) Write(p []byte) (int, error) {
	if c.hold && len(c.pending)+len(p) <= maxHold {
		c.pending = append(c.pending, p...)
		c.wroteAt = time.Time{}
		return len(p), nil
	}
	if err := c.flush(); err != nil {
		return 0, err
	}
	n, err := c.write(p)
	c.wroteAt = time.Now()
	return n, err
}

// deadlineBy makes t (zero: none) the request's deadline, moving the
// socket's only when needed (lazyDeadline).
func (c *sockConn) deadlineBy(t time.Time, slack time.Duration) {
	c.deadline.by(t, slack, c.TCPConn)
}

// abort makes the socket's I/O fail now and for good (Sender.Abort).
func (c *sockConn) abort() { c.deadline.abort(c.TCPConn) }

// held: written bytes wait to go out from inside the next Read.
func (c *sockConn) held() bool { return len(c.pending) > 0 }

// flush sends held bytes the ordinary (blocking) way.
func (c *sockConn) flush() error {
	if len(c.pending) == 0 {
		return nil
	}
	_, err := c.write(c.pending)
	c.pending = c.pending[:0]
	c.wroteAt = time.Now()
	return err
}

// write writes p the ordinary (blocking) way, on past a socket deadline
// that came before the request's (lazyDeadline.early).
func (c *sockConn) write(p []byte) (int, error) {
	n, err := c.TCPConn.Write(p)
	for err != nil && n < len(p) && c.deadline.early(err, c.TCPConn) {
		var m int
		m, err = c.TCPConn.Write(p[n:])
		n += m
	}
	return n, err
}

// Read reads through the raw connection even with nothing held: a read
// system call made the runtime's way (entersyscall) wakes the runtime's
// monitor thread when it sleeps, and the monitor then polls every 20 µs
// and hands the P to another thread when a call seems slow; on a
// generator that idles between the server's answers that costs several
// context switches per request.
func (c *sockConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.probe.Draining() {
		return c.probe.ReadNow(p)
	}
	// With nothing held, "sent" starts true and the callback reads at once.
	c.rbuf, c.rn, c.rerr, c.sent, c.partial = p, 0, nil, len(c.pending) == 0, false
	err := c.rc.Read(c.readFn)
	for err != nil && c.deadline.early(err, c.TCPConn) {
		// Where it stopped: held bytes not yet sent (c.sent) are sent.
		err = c.rc.Read(c.readFn)
	}
	c.rbuf = nil
	if c.partial {
		if err := c.flush(); err != nil {
			return 0, wrapOp("write", c, err)
		}
		n, err := c.TCPConn.Read(p)
		for err != nil && n == 0 && c.deadline.early(err, c.TCPConn) {
			n, err = c.TCPConn.Read(p)
		}
		return n, err
	}
	if err != nil {
		return 0, err // deadline or closed connection, already wrapped
	}
	if c.rerr != nil {
		return 0, wrapOp("read", c, c.rerr)
	}
	if c.rn == 0 {
		return 0, io.EOF
	}
	return c.rn, nil
}

// sendThenRead is the raw read callback: first send the held bytes and ask
// to wait for readability, then read.
func (c *sockConn) sendThenRead(fd uintptr) bool {
	if !c.sent {
		c.sent = true
		for len(c.pending) > 0 {
			m, err := rawWrite(fd, c.pending)
			if err == syscall.EINTR {
				continue
			}
			if err == syscall.EAGAIN {
				c.partial = true
				return true
			}
			if err != nil {
				c.rerr = err
				c.pending = c.pending[:0]
				return true
			}
			// Keep the buffer's start so its capacity is reused.
			n := copy(c.pending, c.pending[m:])
			c.pending = c.pending[:n]
		}
		c.wroteAt = monoNow()
		// Read readiness was armed before the write, so the response
		// cannot slip past: wait for it.
		return false
	}
	for {
		c.rn, c.rerr = rawRead(fd, c.rbuf)
		if c.rerr != syscall.EINTR {
			break
		}
	}
	return c.rerr != syscall.EAGAIN
}

func wrapOp(op string, c *sockConn, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// Close tries to send anything held before closing. A TLS close_notify is
// held too, but crypto/tls sets the write deadline to "now" right after
// writing it, so the flush fails at once and the alert is dropped: the
// server sees the FIN alone. HTTP/1.1 framing makes that harmless, and with
// keep-alive off the server has closed its side first (it answered
// Connection: close), so the alert would only draw a reset.
func (c *sockConn) Close() error {
	c.hold = false
	_ = c.flush()
	return c.TCPConn.Close()
}

// rawWrite and rawRead skip the runtime's syscall bookkeeping: on a
// non-blocking socket they return at once, and without entersyscall the
// scheduler's monitor never sees the worker thread "blocked" in a write and
// hands its P to another thread, which on a busy generator costs a thread
// wake-up and two context switches each time.
func rawWrite(fd uintptr, p []byte) (int, error) {
	r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawRead(fd uintptr, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
