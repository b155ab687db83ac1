package load

import (
	"context"
	"runtime"
	"time"
)

// Clock is the engine's time source: when a step starts and ends, when each
// open-loop request is due, and the Start and Latency of every Result. Tests
// pass one they control (ClientOptions.Clock) so schedule logic runs without
// sleeps; nil is the system clock. Phase timings (DNSDial, ReqWrite, ...)
// are durations of real I/O and always come from the system clock.
type Clock interface {
	Now() time.Time
	// SleepUntil returns once Now() >= t (true) or ctx is done (false).
	SleepUntil(ctx context.Context, t time.Time) bool
}

// Waiter is a Clock that tells a request's wait for a connection (bounded
// by a deadline, while other requests are in flight) from a sleep: a
// simulated clock runs to the next deadline only when the run's own
// goroutines sleep, not when a request waits.
type Waiter interface {
	WaitUntil(ctx context.Context, t time.Time) bool
}

// System is the system clock, the default wherever a Clock is taken
// (ramp's runs, their warm-up, rendezvous and waits between testers). An
// engine given System treats it as nil: it keeps the precise open-loop
// pacer and one clock reading per request for its Start and phases.
var System Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) SleepUntil(ctx context.Context, t time.Time) bool {
	var timer *time.Timer
	ok := sleepUntil(ctx, &timer, t)
	if timer != nil {
		timer.Stop()
	}
	return ok
}

// Sleep waits d on clock c; false when ctx ended first.
func Sleep(ctx context.Context, c Clock, d time.Duration) bool {
	return c.SleepUntil(ctx, c.Now().Add(d))
}

// sleepUntil waits for t on the system clock with a Go timer, which can
// wake up to about a millisecond late: good enough for a step's start and
// hey -q pacing, not for open-loop sends (see waker).
func sleepUntil(ctx context.Context, timer **time.Timer, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-armTimer(timer, d).C:
		return true
	case <-ctx.Done():
		return false
	}
}

// armTimer sets the caller's reusable timer (made on first use) to fire in
// d. The timer must be stopped and drained (stopTimer) or have fired and
// been read: a Reset then carries no stale expiry.
func armTimer(timer **time.Timer, d time.Duration) *time.Timer {
	if *timer == nil {
		*timer = time.NewTimer(d)
	} else {
		(*timer).Reset(d)
	}
	return *timer
}

// waitUntil waits on a test clock until t: as a Waiter where the clock is
// one, so that a simulated clock does not run to a request's deadline
// because the request waits; else as a sleep.
func waitUntil(ctx context.Context, clk Clock, t time.Time) {
	if w, ok := clk.(Waiter); ok {
		w.WaitUntil(ctx, t)
	} else {
		clk.SleepUntil(ctx, t)
	}
}

// spinBefore is how long before a send the open-loop pacer stops sleeping
// and polls the clock, yielding to other goroutines in between. It covers
// the wake-up latency of a precise kernel timer on an idle VM (about 35 µs
// measured: docs/design.md), so a request leaves within a few microseconds
// of its schedule, while a pacer that sleeps between requests spins at
// most this long per request (5 % of a core at 1,000 requests/s). Requests
// closer together than this are paced by the kernel timer alone.
const spinBefore = 50 * time.Microsecond

// waker puts the open-loop pacer to sleep until a request is due.
type waker interface {
	// until returns when t has come (true) or ctx is done (false).
	until(ctx context.Context, t time.Time) bool
	// near is until without the spin: it returns up to the kernel
	// timer's margin before t (wakeMargin), for a pacer that hands the
	// request over then and leaves the wait for t to the worker (handEarly).
	near(ctx context.Context, t time.Time) bool
	close()
}

// spinShare bounds the spin: at most 1/spinShare of the time between
// requests. The pacer spins only when requests are at least spinMinGap
// apart; closer together the kernel timer alone wakes it: about 35-40 µs
// late at the median on an idle VM, within the project's target
// (sched-lag p50 < 100 µs, docs/benchmarks.md), where a spin before each
// of 8,600 requests/s takes 43 % of the tester's core (the CPU its sends
// and reads need at that rate).
const (
	spinShare  = 10
	spinMinGap = spinShare * spinBefore
)

// wakeMargin is how early the pacer's kernel timer is set before a send:
// the longest of its last 16 wake-ups' lateness plus a quarter, at least
// spinBefore and at most gap/spinShare and maxEarly. Why adaptive: on an idle VM a
// timer wakes 35-40 µs late, but at 80 requests/s (the CPU idle between
// sends, its wake-up slower) the median send with a fixed 50 µs spin left
// 112 µs late on a quiet machine: the spin did not cover it.
type wakeMargin struct {
	late [16]time.Duration
	n    int
	gap  time.Duration // the step's interval between requests
}

func (m *wakeMargin) note(late time.Duration) {
	m.late[m.n%len(m.late)] = late
	m.n++
}

func (m *wakeMargin) early() time.Duration {
	var worst time.Duration
	for _, d := range m.late[:min(m.n, len(m.late))] {
		worst = max(worst, d)
	}
	return min(max(worst+worst/4, spinBefore), m.gap/spinShare, maxEarly)
}

// maxEarly caps the spin whatever the gap: while the pacer spins the
// runtime does not poll the network (a yielding goroutine is always
// runnable, and Go looks for network readiness only when nothing is), so
// a response arriving then is read when the spin ends.
const maxEarly = 4 * spinBefore

// newWaker returns the pacer's waker for clock c: the test's clock as it
// is, or for the system clock a precise kernel timer (Linux: timerfd) that
// ends early (wakeMargin), followed by a short spin, when requests are at
// least spinMinGap apart (gap: the step's interval).
func newWaker(ctx context.Context, c Clock, gap time.Duration) waker {
	if c != nil {
		return clockWaker{c: c}
	}
	if w := newTimerfdWaker(ctx, gap); w != nil {
		return w
	}
	return &goTimerWaker{}
}

// clockWaker paces on a test's clock; lead is how early its near wakes
// (zero unless a test sets Engine.hooks.handLead).
type clockWaker struct {
	c    Clock
	lead time.Duration
}

func (w clockWaker) until(ctx context.Context, t time.Time) bool {
	return w.c.SleepUntil(ctx, t)
}
func (w clockWaker) near(ctx context.Context, t time.Time) bool {
	return w.c.SleepUntil(ctx, t.Add(-w.lead))
}
func (clockWaker) close() {}

// goTimerWaker is the portable fallback: Go's timers fire up to about a
// millisecond late (the runtime's poller waits in whole milliseconds), so
// sends are that late too.
type goTimerWaker struct{ t *time.Timer }

func (w *goTimerWaker) until(ctx context.Context, t time.Time) bool {
	return sleepUntil(ctx, &w.t, t)
}
func (w *goTimerWaker) near(ctx context.Context, t time.Time) bool {
	return w.until(ctx, t)
}
func (w *goTimerWaker) close() {}

// spinUntil polls the system clock until t, letting other goroutines (the
// workers sending and reading) run in between.
func spinUntil(ctx context.Context, t time.Time) bool {
	for time.Now().Before(t) {
		if ctx.Err() != nil {
			return false
		}
		runtime.Gosched()
	}
	return ctx.Err() == nil
}
