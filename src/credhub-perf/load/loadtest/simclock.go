package loadtest

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"
)

// SimClock is a load.Clock for tests of whole runs (seed, warm-up, steps,
// rendezvous) against a fake target: simulated time, moved by the run
// itself and never by the machine's speed.
//
//   - Each request the target serves through Handler takes its service
//     time: the clock moves on by it as the request is answered.
//   - When every actor (a goroutine that runs a tester: NewSimClock's
//     count, Join and Leave) sleeps on the clock, nothing else can happen
//     before the earliest wake-up, so the clock jumps there.
//
// A served request never carries the clock past a sleeper's deadline: the
// sleeper wakes at its deadline exactly. So a run of several hours of
// schedule takes as long as its requests do, and what a test checks on
// the clock (a step's slot, a warm-up's windows, a rendezvous timeout)
// holds exactly, however slow or busy the machine.
//
// Several actors share the clock, so their relative progress is not
// exact: work between requests (a step's new TLS connections, writing a
// step's files) takes no simulated time but real time, during which the
// other actors' requests move the clock on. An actor the host runs late,
// as on a busy machine, thus starts a step or reads a message a simulated
// tenth of a second or more after another, as a tester on a busy VM would;
// a test must allow for that between actors, not only within one.
type SimClock struct {
	mu       sync.Mutex
	now      time.Time
	actors   int
	sleepers []*simSleeper
}

type simSleeper struct {
	at   time.Time
	wake chan struct{}
	// passive: a wait with a deadline (WaitUntil), not an actor's sleep:
	// it does not count towards every actor asleep.
	passive bool
}

// NewSimClock returns a clock reading start, with actors actors.
func NewSimClock(start time.Time, actors int) *SimClock {
	return &SimClock{now: start, actors: actors}
}

// Now is the simulated time.
func (c *SimClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// SleepUntil returns once the clock reads t (true) or ctx ends (false).
func (c *SimClock) SleepUntil(ctx context.Context, t time.Time) bool {
	return c.sleep(ctx, t, false)
}

// WaitUntil is SleepUntil for a wait bounded by a deadline inside a run
// (the engine's requests waiting for a connection, load.Waiter): the clock
// does not run to its deadline because it waits, only once every actor
// sleeps too. Counted as an actor's sleep, a worker's wait let the clock
// race ahead of the requests in flight (real time) by one wait after
// another: a warm-up's requests read 6 s late.
func (c *SimClock) WaitUntil(ctx context.Context, t time.Time) bool {
	return c.sleep(ctx, t, true)
}

func (c *SimClock) sleep(ctx context.Context, t time.Time, passive bool) bool {
	if ctx.Err() != nil {
		return false // and no jump for a sleep that never starts
	}
	c.mu.Lock()
	if !t.After(c.now) {
		c.mu.Unlock()
		return true
	}
	s := &simSleeper{at: t, wake: make(chan struct{}), passive: passive}
	c.sleepers = append(c.sleepers, s)
	c.jumpIfIdle()
	c.mu.Unlock()
	select {
	case <-s.wake:
		return ctx.Err() == nil
	case <-ctx.Done():
		c.mu.Lock()
		for i, o := range c.sleepers {
			if o == s {
				c.sleepers = append(c.sleepers[:i], c.sleepers[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
		return false
	}
}

// Advance moves the clock on by d, or to the earliest sleeper's deadline
// when that comes first, and wakes whoever is due.
func (c *SimClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	to := c.now.Add(d)
	c.sortSleepers()
	if len(c.sleepers) > 0 && c.sleepers[0].at.Before(to) {
		to = c.sleepers[0].at
	}
	c.set(to)
}

// Join adds an actor (a tester started later); Leave removes one (a
// tester that finished), which may leave every other actor asleep.
func (c *SimClock) Join() {
	c.mu.Lock()
	c.actors++
	c.mu.Unlock()
}

func (c *SimClock) Leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.actors--
	c.jumpIfIdle()
}

// Handler serves h and moves the clock on by service(r) for each request
// as it is answered; nil service is 1 ms a request.
func (c *SimClock) Handler(h http.Handler, service func(*http.Request) time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		d := time.Millisecond
		if service != nil {
			d = service(r)
		}
		c.Advance(d)
	})
}

// jumpIfIdle: every actor asleep, so time runs to the earliest actor's
// wake-up; the waits (WaitUntil) due before it end on the way, late. A
// wait's deadline alone never moves the clock: a wait woken at its own
// deadline that then ended without a sleep left every actor asleep with
// nothing to move the clock (a ramp test hung). Called with c.mu held.
func (c *SimClock) jumpIfIdle() {
	active := 0
	var to time.Time
	for _, s := range c.sleepers {
		if !s.passive {
			if active == 0 || s.at.Before(to) {
				to = s.at
			}
			active++
		}
	}
	if active == 0 || active < c.actors {
		return
	}
	c.set(to)
}

func (c *SimClock) sortSleepers() {
	sort.SliceStable(c.sleepers, func(i, j int) bool { return c.sleepers[i].at.Before(c.sleepers[j].at) })
}

// set moves the clock to t (never back) and wakes the sleepers due.
func (c *SimClock) set(t time.Time) {
	if t.After(c.now) {
		c.now = t
	}
	c.sortSleepers()
	n := 0
	for n < len(c.sleepers) && !c.sleepers[n].at.After(c.now) {
		close(c.sleepers[n].wake)
		n++
	}
	c.sleepers = c.sleepers[n:]
}
