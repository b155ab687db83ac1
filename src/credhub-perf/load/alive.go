package load

import (
	"bufio"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
)

// A keep-alive connection that idled may have been closed by the server
// meanwhile: a load balancer's or Tomcat's idle timeout between steps
// (Step.KeepConns), or a server that closes right after the handshake. A
// request sent on it fails, and for a connection dialled before the step's
// clock net/http does not retry (it sees a new connection, not a reused
// one), so the CSV would record a failure the server never saw. Two
// defences, both as net/http's own pool has them:
//   - alive, before an idle connection is handed to a request (the lean
//     pool's idle ones, a lean worker's own, net/http's stash): one
//     non-blocking peek at the socket. It catches every connection the
//     server closed before the request, whatever the request's method.
//   - one retry on a fresh connection (the lean client's roundTrip, the
//     gate's again for net/http) for what the look cannot see: a close
//     that crosses the request on the wire, and systems without the look.
//     Only for requests net/http would replay itself (replayable).

// aliveCheck: alive looks at idle connections; tests turn it off to see
// the retry alone cover what it would have caught.
var aliveCheck = true

// peekState is what a look at an idle connection's socket found.
type peekState int

const (
	peekUnknown peekState = iota // no look possible (not Linux, not TCP)
	peekEmpty                    // nothing to read, no FIN: open
	peekData                     // bytes to read
	peekClosed                   // FIN or reset from the peer
)

// errWouldBlock: a read found nothing to read (readNow). Temporary, so
// crypto/tls does not keep it as the connection's error.
var errWouldBlock = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "nothing to read yet" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// alive says whether the idle connection nc (p: the probe of its socket;
// br: the reader over it, if any) can carry a request. With no look
// possible it says yes (the retry covers it).
//
// Bytes waiting on an idle HTTP/1.1 connection mean it is unusable (a
// server's goodbye such as a 408, or garbage), with one exception: over
// TLS 1.3 the server sends its session tickets after the handshake
// (with client certificates, after reading the client's last flight, so
// they arrive once the client's handshake is over) and every record is
// opaque on the wire. crypto/tls then reads what is there, through
// readNow: it handles tickets itself and returns errWouldBlock once the
// socket is empty; anything else it returns (application data, EOF after
// a close_notify alert, an error) means the connection is done.
func alive(nc net.Conn, p *liveProbe, br *bufio.Reader) bool {
	if !aliveCheck {
		return true
	}
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

// replayable is net/http's rule for sending a request again on another
// connection after its first failed with nothing back (Request's
// isReplayable): a method without side effects, or a request marked with
// an idempotency key. CredHub's PUT (set: a new version each time) and
// POST (interpolate, generate) are not.
func replayable(method string, hasHeader func(string) bool) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return hasHeader("Idempotency-Key") || hasHeader("X-Idempotency-Key")
}

// replayableTemplate: replayable for the requests of e's template (the
// lean client; header names as the template spells them).
func (e *Engine) replayableTemplate() bool {
	return replayable(e.method, func(name string) bool {
		for i := range e.headers {
			if strings.EqualFold(e.headers[i].name, name) {
				return true
			}
		}
		return false
	})
}
