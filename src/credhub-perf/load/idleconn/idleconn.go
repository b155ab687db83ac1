// Package idleconn tells whether an idle keep-alive connection can still
// carry a request, and whether a request that failed on one the server
// closed may be sent again. Both HTTP clients of package load use it: the
// lean client (leanhttp) for its idle connections, net/http's open-loop
// gate for the connections it dialled before a step.
//
// A keep-alive connection that idled may have been closed by the server
// meanwhile: a load balancer's or Tomcat's idle timeout between steps, or
// a server that closes right after the handshake. A request sent on it
// fails, and for a connection dialled before the step's clock net/http
// does not retry (it sees a new connection, not a reused one), so the CSV
// would record a failure the server never saw. Two defences, both as
// net/http's own pool has them:
//   - Alive, before an idle connection is handed to a request: one
//     non-blocking peek at the socket (Linux; elsewhere no look is
//     possible). It catches every connection the server closed before
//     the request, whatever the request's method.
//   - one retry on a fresh connection for what the look cannot see: a
//     close that crosses the request on the wire, and systems without the
//     look. Only for requests net/http would replay itself (Replayable),
//     and only after an error that says the peer closed the connection
//     (PeerClosed).
package idleconn

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
)

// peekState is what a look at an idle connection's socket found.
type peekState int

const (
	peekUnknown peekState = iota // no look possible (not Linux, not TCP)
	peekEmpty                    // nothing to read, no FIN: open
	peekData                     // bytes to read
	peekClosed                   // FIN or reset from the peer
)

// errWouldBlock: a read found nothing to read (Probe.ReadNow). Temporary,
// so crypto/tls does not keep it as the connection's error.
var errWouldBlock = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "nothing to read yet" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// Alive says whether the idle connection nc (p: the probe of its socket,
// nil for none; br: the reader over it, if any) can carry a request. With
// no look possible it says yes (the retry covers it).
//
// Bytes waiting on an idle HTTP/1.1 connection mean it is unusable (a
// server's goodbye such as a 408, or garbage), with one exception: over
// TLS 1.3 the server sends its session tickets after the handshake
// (with client certificates, after reading the client's last flight, so
// they arrive once the client's handshake is over) and every record is
// opaque on the wire. crypto/tls then reads what is there, through
// ReadNow (the connection under the tls.Conn must send its reads there
// while p.Draining()): it handles tickets itself and gets errWouldBlock
// once the socket is empty; anything else it returns (application data,
// EOF after a close_notify alert, an error) means the connection is done.
func Alive(nc net.Conn, p *Probe, br *bufio.Reader) bool {
	if br != nil && br.Buffered() > 0 {
		return false
	}
	switch p.peek() {
	case peekUnknown, peekEmpty:
		return true
	case peekClosed:
		return false
	}
	tc, ok := nc.(*tls.Conn)
	if !ok {
		return false
	}
	var b [1]byte
	p.draining = true
	n, err := tc.Read(b[:])
	p.draining = false
	return n == 0 && errors.Is(err, errWouldBlock)
}

// Draining: the connection's reads must go to ReadNow (Alive lets
// crypto/tls take records the server sent after its handshake).
func (p *Probe) Draining() bool { return p.draining }

// Replayable is net/http's rule for sending a request again on another
// connection after its first failed with nothing back (Request's
// isReplayable): a method without side effects, or a request marked with
// an idempotency key (hasHeader tells whether the request has a header).
// CredHub's PUT (set: a new version each time) and POST (interpolate,
// generate) are not.
func Replayable(method string, hasHeader func(string) bool) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return hasHeader("Idempotency-Key") || hasHeader("X-Idempotency-Key")
}

// PeerClosed: err says the peer closed the connection under the request
// (EOF, reset, broken pipe).
func PeerClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
