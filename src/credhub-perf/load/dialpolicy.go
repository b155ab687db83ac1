package load

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// dialPolicy is what decides, for an open-loop request that finds no idle
// keep-alive connection, whether to dial or wait for one given back
// (needDial): the lean client's pool and net/http's (stdGate) share it.
type dialPolicy struct {
	clk    Clock // nil: the system clock
	mu     sync.Mutex
	lent   int           // requests in flight: holding a connection or dialling
	handed uint64        // connections that came back to waiting requests, ever
	rate   float64       // the step's requests/s
	warmT  time.Duration // the warm dial's time
	// stallEnd: when the tester was last seen back from a stall
	// (noteStall); latencies of requests sent before are not used.
	stallEnd time.Time
	// stallDial: a request dials for needDial's "stall" (one at a time:
	// decide).
	stallDial bool
	dialT     recent // the step's dials (DNS+dialup)
	lat       recent // requests on a warm connection (waits before it excluded)
	// floor: the least latency of the step's requests on a warm
	// connection (0: none yet), what the server takes at best.
	floor time.Duration
	// testerShort: the tester is short of CPU, as the pacer last saw it
	// (noteTester); written by the pacer alone.
	testerShort atomic.Bool
}

// firstPatience is the dial time assumed before any dial of the pool has
// been timed: about one mutual-TLS handshake with an RSA-2048 key on an
// idle tester.
const firstPatience = 2 * time.Millisecond

// slowBack: a request dials rather than waits when the busy connections
// come back, on average, more than a dial's time / slowBack apart (a slow
// server: waiting would put most of a handshake's time into its latency,
// and the step needs more connections anyway).
const slowBack = 4

// maxDials: handshakes are CPU-bound, so more in flight than the tester
// has cores only delays them all.
func maxDials() int { return max(2*runtime.GOMAXPROCS(0), 4) }

// recent keeps the last few samples of a duration, each with when its
// request was sent. Its median, not a mean: the generator or the server
// losing the CPU for a few milliseconds inflates every request in flight
// at once, and a mean would then make the pool expect slow requests (and
// dial) for the next several.
type recent struct {
	s  [8]time.Duration
	at [8]time.Time
	n  int
}

func (r *recent) add(at time.Time, d time.Duration) {
	r.s[r.n%len(r.s)] = d
	r.at[r.n%len(r.s)] = at
	r.n++
}

// from copies into t the samples of requests sent at or after since.
func (r *recent) from(since time.Time, t *[len(recent{}.s)]time.Duration) int {
	k := 0
	for i := range min(r.n, len(r.s)) {
		if !r.at[i].Before(since) {
			t[k] = r.s[i]
			k++
		}
	}
	return k
}

// median of the samples of requests sent at or after since (the upper one
// of an even count); 0 when none.
func (r *recent) median(since time.Time) time.Duration {
	var t [len(recent{}.s)]time.Duration
	k := r.from(since, &t)
	for i := 1; i < k; i++ {
		for j := i; j > 0 && t[j] < t[j-1]; j-- {
			t[j], t[j-1] = t[j-1], t[j]
		}
	}
	return t[k/2]
}

// predialWith dials, through one, the connections a step needs before its
// clock: the first (whose time is warmT), then the rest of predial's count
// one after another, each timed as a dial of the step (noteDial). Why
// timed: with no dial on the step's clock, no dial time is known once the
// first response is back, so the patience would fall to firstPatience
// (2 ms) where dials take 3-10 ms on a loaded tester, and a short pause of
// the server would send requests to dial (measured with net/http at 2,768
// req/s: untimed, a median of 14.5 handshakes where 4 were dialled before
// the clock; timed, 4 in 5 of 6 runs). Why one after another: together,
// on a one-core tester, each dial's time would be their sum. The first
// dial is not a dial time: it also verified the server's chain, once per
// engine.
func (p *dialPolicy) predialWith(e *Engine, concurrency int, one func() bool) {
	real, at := e.begin()
	if !one() {
		return
	}
	d := e.since(real, at) // on the engine's clock, as the waits
	p.mu.Lock()
	p.warmT = d
	rate := p.rate
	p.mu.Unlock()
	for range predial(rate, d, concurrency) - 1 {
		real, at := e.begin()
		if !one() {
			return
		}
		if d := e.since(real, at); d > 0 { // 0: a test's clock that did not move
			p.noteDial(d)
		}
	}
}

// maxPredial bounds the connections dialled before a step's clock: the
// project's target is at most the step's peak in flight + 4 connections
// (docs/benchmarks.md), and a step that needs more dials them as its
// requests show the need.
const maxPredial = 4

// predial is how many connections to dial before a step's clock: the
// requests that come due at rate during one handshake (warm: the warm
// dial's time), at least 1, at most maxPredial and concurrency. Each of
// those requests would wait for a connection dialled on the step's clock;
// a step with less than one request per handshake gains nothing from a
// second connection (10 req/s: 1; 640 req/s with 2.5 ms handshakes: 2;
// 13,800 req/s: 4).
func predial(rate float64, warm time.Duration, concurrency int) int {
	k := math.Ceil(rate * warm.Seconds())
	if !(k >= 1) { // NaN too
		k = 1
	}
	return int(min(k, maxPredial, float64(max(concurrency, 1))))
}

// noteDial records a dial's time (DNS+dialup).
func (p *dialPolicy) noteDial(d time.Duration) {
	p.mu.Lock()
	p.dialT.add(time.Time{}, d)
	p.mu.Unlock()
}

// noteLatency records the latency of a warm request sent at at (the
// engine's clock), sched-lag and its wait for a connection excluded.
func (p *dialPolicy) noteLatency(at time.Time, d time.Duration) {
	p.mu.Lock()
	p.lat.add(at, d)
	if p.floor == 0 || d < p.floor {
		p.floor = d
	}
	p.mu.Unlock()
}

// stallLate: a send this late means the tester lost the CPU (or its
// pacer could not run) for longer than a fast request takes.
const stallLate = time.Millisecond

// noteStall records that the pacer woke at now, a stall of the tester
// just ended. The latencies of requests sent before it are not used
// again: their responses may have sat unread during the stall, so they
// measure the tester, not the server, and a pool sized by them after a
// stall would dial for a server that was never slow (measured: a step at
// 400 req/s against the null server opened 31 connections, sends 0.75 s
// late).
func (p *dialPolicy) noteStall(now time.Time) {
	p.mu.Lock()
	p.stallEnd = now
	p.mu.Unlock()
}

// noteTester records whether the tester is short of CPU (the pacer's
// judgement: testerShort in engine.go). While it is, decide lets only a
// request with nothing in flight dial.
//
// Why: a tester short of CPU reads every response late. Every latency it
// measures grows, nothing seems to come back within a dial's time, and
// the connections in flight look too few for the rate (needDial's
// "stall" and "short"), but each handshake takes 1-2 ms of the CPU it
// lacks, on the core that also sends: the requests due next leave later
// still, and it is the connections in flight that clear the queue as
// the tester catches up. Measured against the null server at 6,100
// req/s with the net/http default at 80-86 % of its one core (quiet
// machine), without this rule: 2 runs of 6 dialled 73 and 93
// connections, for "short" and "stall", and sent requests up to 90-190
// ms late; the other 4 kept their 4 connections, sched-lag p99 75-91 us.
func (p *dialPolicy) noteTester(short bool) {
	if p.testerShort.Load() != short {
		p.testerShort.Store(short)
	}
}

// patience is how long a request waits for a connection given back
// before it asks again whether to dial: a dial's expected time (the
// median of the step's dials). Before the first of them, and while no
// request has come back on a warm connection, the warm dial's time:
// the step's first response on the warm connection can take longer than
// a handshake on an idle machine (the server finishes its side of that
// handshake then), and the requests due meanwhile should not dial for it.
// Called with p.mu held.
func (p *dialPolicy) patience() time.Duration {
	if d := p.dialT.median(time.Time{}); d > 0 {
		return d
	}
	if p.lat.n == 0 && p.warmT > 0 {
		return p.warmT
	}
	return firstPatience
}

// decide is needDial on the policy's figures, with the wait before asking
// again (a dial's time) and the count of connections handed over so far.
// While one request dials for needDial's "stall", the others that find
// nothing back wait (and ask again after a dial's time). When every busy
// connection stops answering at once, the server (or the path to it) has
// most likely stalled as a whole: a new connection's handshake waits for
// it too, and each costs the tester 1-2 ms of CPU on the core that sends.
// Were every request that waited a dial's time to take a dial token (four
// in flight), then against the null server at 13,800 req/s a 10 ms pause
// of the server's core would be followed by 9-48 handshakes and 800-2,000
// requests sent up to 70 ms late (measured). One dial still frees a
// request stuck behind the only connection.
// Called with p.mu held.
func (p *dialPolicy) decide(waited, stalled bool) (why string, patience time.Duration, seen uint64) {
	patience = p.patience()
	why = needDial(p.lent, patience, p.lat.median(p.stallEnd), p.floor, p.rate, waited, stalled)
	if why == "stall" && p.stallDial {
		why = "" // one at a time
	}
	if why != "idle" && p.testerShort.Load() {
		why = "" // the tester catches up on the connections it has (noteTester)
	}
	return why, patience, p.handed
}

// claimStallDial: a request holding a dial token for needDial's "stall"
// dials only if nothing has been handed over since seen either (the server
// is back: the queue clears without it) and no other request dials for a
// stall (one at a time: decide); true makes it that request, until its
// dial ends (stallDial back to false).
func (p *dialPolicy) claimStallDial(seen uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.handed != seen || p.stallDial {
		return false
	}
	p.stallDial = true
	return true
}

// needDial says why a request that found no idle connection should dial
// rather than wait for a busy one ("": wait, up to a dial's time, then
// ask again). busy: requests in flight (holding a connection or
// dialling); dial: a dial's expected time; med: the median of recent
// latencies on a warm connection, least: the least of the step's (0:
// none yet); rate: the step's requests/s; waited: the request has waited
// a dial's time;
// stalled: and nothing came back to any request meanwhile.
//   - "idle": nothing in flight, nothing can come back;
//   - "slow": the busy connections come back, on average, more than
//     dial/slowBack apart (a slow server: waiting would put most of a
//     handshake's time into the request's latency, and the step needs
//     more connections anyway);
//   - "stall": nothing came back within a dial's time (a stalled server,
//     or a request stuck on the only connection);
//   - "short": after a dial's time, the connections in flight cannot
//     carry the offered rate: fewer than twice rate x the step's least
//     latency (Little's law, with room for the rate's bursts).
//
// Not a reason: how many requests wait. After the tester or the server
// lost the CPU for a few milliseconds dozens of requests are due at once;
// the busy connections of a fast server clear them in a few
// milliseconds, and dialling for them (every request that waited a
// dial's time dialling) feeds on itself: each handshake is 1-2 ms of the
// tester's CPU, on the core that also sends, so it delays the requests
// due next, which wait and dial in turn. The least latency,
// not the median, sizes the need: a tester short of CPU reads every
// response late, which the median would count as a slower server. The
// step's least, not that of the last few requests: a tester short of CPU
// for longer than a few requests' time reads all of them late, and the
// least of 8 would then dial for it too (at 6,100 req/s against the null
// server, 8 requests are 1.3 ms; sized by the last 8, runs dialled 50-100
// connections, mostly for "short"). A server that slows down for good is
// "slow" (the median) or "stall".
func needDial(busy int, dial, med, least time.Duration, rate float64, waited, stalled bool) string {
	switch {
	case busy == 0:
		return "idle"
	case med/time.Duration(busy) > dial/slowBack:
		return "slow"
	case stalled:
		return "stall"
	case waited && float64(busy) < 2*rate*least.Seconds():
		return "short"
	}
	return ""
}

// waitFor waits up to d on the engine's clock (clk; nil: the system clock,
// with the caller's reusable timer), and no later than due's deadline
// (nil: none), for a value from ch.
func waitFor[T any](ctx context.Context, clk Clock, timer **time.Timer, ch <-chan T, d time.Duration, due *dueWait) (T, bool) {
	var zero T
	if clk == nil {
		t := armTimer(timer, due.bound(d)) // stopped and drained below
		select {
		case v := <-ch:
			stopTimer(t)
			return v, true
		case <-t.C:
		case <-ctx.Done():
			stopTimer(t)
		}
		return zero, false
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	expired := make(chan struct{})
	deadline := clk.Now().Add(d)
	if due != nil && !due.at.IsZero() && due.at.Before(deadline) {
		// The deadline itself, not the time left to it when the wait was
		// decided: the clock may have moved on since.
		deadline = due.at
	}
	go func() {
		waitUntil(wctx, clk, deadline)
		close(expired)
	}()
	select {
	case v := <-ch:
		return v, true
	case <-expired:
	case <-ctx.Done():
	}
	return zero, false
}

// stopTimer stops t and drains an expiry that raced with the stop, so
// the next Reset starts clean (go.mod's go 1.22: timer channels keep a
// value sent before Stop).
func stopTimer(t *time.Timer) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
}
