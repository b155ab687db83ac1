package load

import (
	"context"
	"time"
)

// notConnected is the error of an open-loop request that waited for a
// connection (one given back, or a dial token to open its own) until its
// schedule + the client's timeout and was not sent: its latency, counted
// from its schedule, is past the timeout whatever the server does. Without
// the bound a server that accepts connections and never completes a
// handshake holds hey -rate 10000 -c 256 -z 3s -t 3 for over 120 s: a few
// dials at a time, each to its timeout, and every other request waiting
// its turn.
const notConnected = "not sent: waited the timeout for a connection"

// dueWait bounds an open-loop request's wait for a connection: at, its
// schedule + the client's timeout, on the engine's clock (zero: no
// bound). A request that finds a connection idle, or a dial token free,
// never arms it: the deadline costs a clock reading only once a request
// has waited, and a timer (the worker's, reused) only while it waits for a
// dial token.
type dueWait struct {
	clk Clock // nil: the system clock
	at  time.Time
	// timer: the system clock's, kept by the worker across requests.
	timer *time.Timer
	// stop ends a test clock's wait (armed: a goroutine per wait).
	stop context.CancelFunc
}

// passed: the deadline has come.
func (d *dueWait) passed() bool {
	if d == nil || d.at.IsZero() {
		return false
	}
	if d.clk == nil {
		return !time.Now().Before(d.at)
	}
	return !d.clk.Now().Before(d.at)
}

// bound shortens a wait of p to end at the deadline at the latest.
func (d *dueWait) bound(p time.Duration) time.Duration {
	if d == nil || d.at.IsZero() {
		return p
	}
	var left time.Duration
	if d.clk == nil {
		left = time.Until(d.at)
	} else {
		left = d.at.Sub(d.clk.Now())
	}
	return max(min(p, left), 0)
}

// arm returns a channel that fires at the deadline (nil, which blocks a
// select for ever, when there is none); disarm must follow. On a test
// clock the wait is a Waiter's where the clock has one: a simulated clock
// must not run to a request's deadline because it waits.
func (d *dueWait) arm(ctx context.Context) <-chan time.Time {
	if d == nil || d.at.IsZero() {
		return nil
	}
	if d.clk == nil {
		return armTimer(&d.timer, time.Until(d.at)).C // stopped and drained by disarm
	}
	wctx, cancel := context.WithCancel(ctx)
	d.stop = cancel
	fired := make(chan time.Time)
	at, clk := d.at, d.clk
	go func() {
		waitUntil(wctx, clk, at)
		close(fired) // also when stopped: the caller has stopped looking
	}()
	return fired
}

// disarm ends what arm started.
func (d *dueWait) disarm() {
	if d == nil || d.at.IsZero() {
		return
	}
	if d.clk == nil {
		stopTimer(d.timer)
		return
	}
	if d.stop != nil {
		d.stop()
		d.stop = nil
	}
}

// deadline is the request's I/O deadline on the system clock (zero:
// none): the client's timeout from start, its send; in open loop on the
// system clock its schedule + the timeout when that is sooner (ioDue), so
// that a request which waited for a connection, or was taken up late, ends
// by then all the same. On a test clock I/O deadlines stay real time
// from the send: the test's clock may be anywhere.
func (w *worker) deadline(start time.Time) time.Time {
	to := w.e.opts.Timeout
	if to <= 0 {
		return time.Time{}
	}
	d := start.Add(to)
	if !w.ioDue.IsZero() && w.ioDue.Before(d) {
		d = w.ioDue
	}
	return d
}
