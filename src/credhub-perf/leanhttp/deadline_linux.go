package leanhttp

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"
)

// lazyDeadline bounds a request's I/O on a sockConn without moving the
// socket's deadline for every request. Moving it (net.Conn.SetDeadline)
// takes the poller's lock and re-sorts the runtime's timer heap: about
// 1.5 % of the lean client's CPU at 50,000 requests/s, to move by a few
// microseconds a deadline of seconds. So the socket's deadline ("armed")
// moves only when it lies after the request's ("due"), or more than the
// slack before it; a deadline armed before the request's that fires while
// the request's has not passed is moved to the request's and the I/O goes
// on (early). A request therefore times out exactly at its own deadline,
// as with a SetDeadline per request; only a request still in flight past
// its timeout less the slack pays for a second move.
//
// due and armed belong to the worker's goroutine (RoundTrip, and the
// reads and writes under it). Sender.Abort, from another goroutine, sets
// the socket's deadline in the past through abort, under mu, after which
// nothing is moved any more: an abort is never undone by an early fire.
type lazyDeadline struct {
	due, armed time.Time
	slack      time.Duration
	mu         sync.Mutex
	aborted    bool // under mu
}

// reset readies the deadline for a new connection, whose socket has none
// set by it (a dial's handshake deadline is set directly).
func (d *lazyDeadline) reset() {
	d.due, d.armed = time.Time{}, time.Time{}
	d.mu.Lock()
	d.aborted = false
	d.mu.Unlock()
}

// by makes due (zero: none) the request's deadline, moving the socket's
// (tc's) when it lies after due or more than slack before it.
func (d *lazyDeadline) by(due time.Time, slack time.Duration, tc *net.TCPConn) {
	d.due, d.slack = due, slack
	if due.IsZero() {
		return
	}
	if d.armed.IsZero() || d.armed.After(due) || due.Sub(d.armed) > slack {
		d.arm(due, tc)
	}
}

// early: err is the socket's deadline, which came before the request's
// own, and that has not passed yet: the socket's deadline is moved to it
// (true: do the I/O again). False for any other error, and after an abort.
func (d *lazyDeadline) early(err error, tc *net.TCPConn) bool {
	if d.due.IsZero() || !errors.Is(err, os.ErrDeadlineExceeded) || time.Until(d.due) <= 0 {
		return false
	}
	return d.arm(d.due, tc)
}

// arm sets the socket's deadline to t, unless the connection was aborted
// (false).
func (d *lazyDeadline) arm(t time.Time, tc *net.TCPConn) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.aborted {
		return false
	}
	_ = tc.SetDeadline(t)
	d.armed = t
	return true
}

// abort makes the socket's I/O fail now and for good (Sender.Abort).
func (d *lazyDeadline) abort(tc *net.TCPConn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.aborted = true
	_ = tc.SetDeadline(time.Unix(1, 0))
}
