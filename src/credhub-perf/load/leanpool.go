package load

import (
	"context"
	"time"

	"github.com/credhub-perf/credhub-perf/leanhttp"
)

// connPool holds idle keep-alive connections shared by open-loop workers
// of the lean client (leanhttp.Conn). Last in, first out: the busiest few
// connections stay warm and the rest stay idle (and may be closed by the
// server: acquire looks at an idle one before lending it, Conn.Alive), so
// a step opens about as many connections as it has requests in flight, at
// most Concurrency.
//
// When no connection is idle, a request waits for one another request
// gives back, and dials only for a reason needDial names: nothing in
// flight, a slow server, nothing back for a dial's time, or too few
// connections in flight for the offered rate. The number of requests
// waiting is not one (needDial says why). Dial tokens bound the
// handshakes in flight when dials are needed.
type connPool struct {
	dialPolicy
	idle []*leanhttp.Conn
	// waiting: requests registered for a connection given back (under
	// mu). A request gives its connection to one of them through handoff,
	// buffered for every worker, so the hand-over is decided under mu and
	// cannot be lost between a request deciding to wait and its wait.
	waiting int
	handoff chan *leanhttp.Conn
	dials   chan struct{} // tokens: handshakes in flight
}

func newConnPool(dials int, clk Clock, rate float64, workers int) *connPool {
	return &connPool{dialPolicy: dialPolicy{clk: clk, rate: rate}, handoff: make(chan *leanhttp.Conn, workers), dials: make(chan struct{}, dials)}
}

// forWorkers makes room in handoff for a step's workers (between steps:
// nothing waits, nothing is in it).
func (p *connPool) forWorkers(n int) {
	if cap(p.handoff) < n {
		p.handoff = make(chan *leanhttp.Conn, n)
	}
}

// warm dials connections into the pool before the step's clock starts
// (they are among the step's handshakes), so the step's first requests
// find them instead of dialling while other requests come due. A pool kept
// from the previous step (Step.KeepConns) with a connection idle needs
// none. A failed dial is left to the requests, which record the error.
//
// How many: first one, whose time is the warm dial's (warmT; not a dial
// time for the step's figures: it also verified the server's chain, once
// per engine), then predial(rate, warmT, concurrency) in all. Why before
// the clock: a handshake is 1-2 ms of the tester's CPU on each side;
// dialled on the step's clock, on a tester with one core, they starve the
// pacer, the backlog reads as a short pool and more are dialled (measured
// at 13,800 req/s against the null server: 9-22 connections where 3 carry
// it, and 570-2,160 requests up to 32 ms late in the step's first 40-160
// ms).
func (p *connPool) warm(ctx context.Context, e *Engine, concurrency int) {
	p.mu.Lock()
	n := len(p.idle)
	p.mu.Unlock()
	if n > 0 {
		return
	}
	p.predialWith(e, concurrency, func() bool { return p.warmOne(ctx, e) })
}

// warmOne dials one connection into the pool; false when the dial failed.
func (p *connPool) warmOne(ctx context.Context, e *Engine) bool {
	real, _ := e.begin()
	var deadline time.Time // as a request's from its send (worker.deadline)
	if to := e.opts.Timeout; to > 0 {
		deadline = real.Add(to)
	}
	c, err := e.lean.client.NewSender(nil).Dial(ctx, new(leanhttp.Outcome), real, deadline)
	if err != nil {
		return false
	}
	// Send the held last handshake flight now rather than with the first
	// request, so the server checks the client's certificate before the
	// step instead of while its first requests are due.
	if err := c.Flush(); err != nil {
		c.Close()
		return false
	}
	p.mu.Lock()
	p.idle = append(p.idle, c)
	p.mu.Unlock()
	return true
}

// acquire returns an idle or freed connection, or nil with a function to
// call once the request's own dial has ended (nil too when ctx ended, or
// when due, the bound of its wait, passed: due.passed() tells). Every
// acquire that got one or the other is paired with a release. timer is
// the caller's reusable wait timer (system clock only).
func (p *connPool) acquire(ctx context.Context, timer **time.Timer, due *dueWait) (*leanhttp.Conn, func()) {
	waited, stalled := false, false
	for looked := false; ; looked = true {
		// Only a request that waited can be past its deadline here: the
		// pacer hands none over that late (job).
		if looked && due.passed() {
			return nil, nil
		}
		p.mu.Lock()
		if n := len(p.idle); n > 0 {
			c := p.idle[n-1]
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
			p.lent++
			p.mu.Unlock()
			if leanAlive(c) {
				return c, nil
			}
			// The server closed it while it idled: dropped, not a dial
			// of the step; the request looks again.
			c.Close()
			p.unlend()
			continue
		}
		why, dial, seen := p.decide(waited, stalled)
		p.waiting++
		p.mu.Unlock()
		if why != "" {
			c, done := p.dialOrHandoff(ctx, due)
			if done == nil || why != "stall" {
				return c, done
			}
			if p.claimStallDial(seen) {
				return c, func() {
					p.mu.Lock()
					p.stallDial = false
					p.mu.Unlock()
					done()
				}
			}
			p.unlend()
			done()
			stalled = false
			continue
		}
		c, ok := waitFor(ctx, p.clk, timer, p.handoff, dial, due)
		if !ok {
			c, ok = p.unwait()
		}
		if ok {
			p.lend(true)
			return c, nil
		}
		if ctx.Err() != nil || due.passed() {
			return nil, nil
		}
		p.mu.Lock()
		waited, stalled = true, p.handed == seen
		p.mu.Unlock()
	}
}

// unwait ends a request's registration as waiting, unless a connection was
// handed to it meanwhile (then it takes it).
func (p *connPool) unwait() (*leanhttp.Conn, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case c := <-p.handoff:
		return c, true
	default:
		p.waiting--
		return nil, false
	}
}

// dialOrHandoff takes whichever comes first: a connection given back or a
// dial token, up to due (then neither: due.passed()). The caller
// registered as waiting.
func (p *connPool) dialOrHandoff(ctx context.Context, due *dueWait) (*leanhttp.Conn, func()) {
	got := func(c *leanhttp.Conn, token bool) (*leanhttp.Conn, func()) {
		if !token {
			p.lend(true)
			return c, nil
		}
		if c, ok := p.unwait(); ok {
			<-p.dials // handed one meanwhile: no dial
			p.lend(true)
			return c, nil
		}
		p.lend(false)
		return nil, func() { <-p.dials }
	}
	if ctx.Err() == nil { // else not a random pick against a free token
		select {
		case c := <-p.handoff:
			return got(c, false)
		case p.dials <- struct{}{}:
			return got(nil, true)
		default:
		}
		// Every dial token is taken (each dial bounded by its own
		// request's deadline): wait, up to this request's.
		fired := due.arm(ctx)
		select {
		case c := <-p.handoff:
			due.disarm()
			return got(c, false)
		case p.dials <- struct{}{}:
			due.disarm()
			return got(nil, true)
		case <-fired:
		case <-ctx.Done():
		}
		due.disarm()
	}
	if c, ok := p.unwait(); ok {
		p.lend(true)
		return c, nil
	}
	return nil, nil
}

// lend counts a request that got a dial token, or (handed) a connection
// another request handed over: that loan passes on (the giver does not
// end it), so the count of requests in flight never dips to 0 while the
// connection changes hands, which needDial would read as nothing in flight
// and dial a spare connection for.
func (p *connPool) lend(handed bool) {
	p.mu.Lock()
	if handed {
		p.handed++
	} else {
		p.lent++
	}
	p.mu.Unlock()
}

func (p *connPool) unlend() {
	p.mu.Lock()
	p.lent--
	p.mu.Unlock()
}

// release ends a request's loan: c, if still open, goes to a waiting
// request (which takes the loan over) or back to the pool.
func (p *connPool) release(c *leanhttp.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !c.Open() {
		p.lent--
		return
	}
	if p.waiting > 0 {
		// A request waits: the loan is its. handoff has room for every
		// worker, so the send does not block.
		p.waiting--
		p.handoff <- c
		return
	}
	p.lent--
	p.idle = append(p.idle, c)
}

func (p *connPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.idle {
		c.Close()
	}
	p.idle = nil
}

// borrow takes the most recently used idle connection, or waits for a
// freed one or a dial token (then the request dials its own); false when
// the request waited until its deadline (w.due) for either.
func (w *worker) borrow(ctx context.Context, p *connPool) bool {
	c, done := p.acquire(ctx, &w.wait, &w.due)
	w.dialDone = done
	w.onLoan = c != nil || done != nil
	w.lean.Use(c)
	return w.onLoan || ctx.Err() != nil || !w.due.passed()
}

// giveBack ends the worker's loan, returning a still-open connection.
func (w *worker) giveBack(p *connPool) {
	if !w.onLoan {
		return // ctx ended while it waited: nothing was lent
	}
	w.onLoan = false
	p.release(w.lean.Take())
}
