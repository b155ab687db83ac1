package idleconn

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// Probe looks at the socket under an idle keep-alive connection
// without blocking and without taking anything from it (Alive): one
// recvfrom(MSG_PEEK|MSG_DONTWAIT) system call. Its callbacks are made
// once, with the probe, so a look does not allocate.
type Probe struct {
	rc     syscall.RawConn
	peekFn func(uintptr)
	readFn func(uintptr)
	b      [1]byte
	rbuf   []byte
	n      int
	errno  syscall.Errno
	// draining: the connection's reads go to ReadNow (the wrapper under
	// crypto/tls checks Draining), while Alive lets crypto/tls take
	// records the server sent after its handshake.
	draining bool
}

// NewProbe is a probe of c's socket; nil when c has none (not TCP).
func NewProbe(c net.Conn) *Probe {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &Probe{}
	p.Init(rc)
	return p
}

// Init binds p to rc, making its callbacks on first use.
func (p *Probe) Init(rc syscall.RawConn) {
	p.rc, p.draining = rc, false
	if p.peekFn != nil {
		return
	}
	p.peekFn = func(fd uintptr) {
		for {
			r, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&p.b[0])), 1,
				syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
			if e != syscall.EINTR {
				p.n, p.errno = int(r), e
				return
			}
		}
	}
	p.readFn = func(fd uintptr) {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p.rbuf[0])), uintptr(len(p.rbuf)))
			if e != syscall.EINTR {
				p.n, p.errno = int(r), e
				return
			}
		}
	}
}

// peek says what the socket holds: nothing yet (the peer may still send),
// bytes, or the peer's end (FIN or reset).
func (p *Probe) peek() peekState {
	if p == nil || p.rc == nil {
		return peekUnknown
	}
	if err := p.rc.Control(p.peekFn); err != nil {
		return peekClosed // closed here
	}
	switch {
	case p.errno == syscall.EAGAIN:
		return peekEmpty
	case p.errno != 0 || p.n == 0:
		return peekClosed
	}
	return peekData
}

// ReadNow reads what the socket holds without waiting: errWouldBlock when
// it holds nothing (and the peer has not closed it).
func (p *Probe) ReadNow(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	p.rbuf = b
	err := p.rc.Control(p.readFn)
	p.rbuf = nil
	switch {
	case err != nil:
		return 0, err
	case p.errno == syscall.EAGAIN:
		return 0, errWouldBlock
	case p.errno != 0:
		return 0, p.errno
	case p.n == 0:
		return 0, io.EOF
	}
	return p.n, nil
}
