// Package capacity models how many requests K CredHub instances of a
// known speed serve at once, so that credhub-sim saturates where a real
// deployment would.
package capacity

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Model emulates K CredHub instances of a known speed, each with N
// cores and one write lock. Real CredHub (Spring Boot on Tomcat) serves
// reads on many threads at once, bounded by its CPUs, while set and
// generate are @Synchronized on the singleton controller, so one JVM
// writes one credential at a time. Here any request occupies one core of
// one instance for a drawn service time (the real work runs inside it,
// the core sleeps off the remainder), and a write also holds its
// instance's write lock for that time. So the plateau is K*N / mean
// service time for reads and K / mean write service time for writes; with
// N = 1 the lock never binds and the model is the plain M/M/K queue.
//
// Requests wait in one FIFO queue, as if behind a load balancer that knows
// which instances can take them: a request goes to any instance with a
// free core, a write only to one whose write lock is also free. A write
// waiting for a lock does not hold up the reads behind it (in Tomcat the
// blocked writer parks a thread, not a CPU), but each class is served in
// arrival order and a freed core goes to the earliest waiter that can use
// it, so writes are not starved by a stream of reads. Among eligible
// instances the one with the most free cores wins (least connections),
// which spreads reads and leaves each instance's lock reachable.
//
// Each core and each write lock keeps a virtual clock (when its last
// request's service time ended). A request starts at the latest of its
// arrival and the clocks of what it holds, rather than at the moment it
// got them, so under saturation the timer overshoot of one sleep (or real
// work longer than a short draw) is paid back by the next, and the
// plateaus hold even on a busy machine.
//
// By default each instance and the database have cores of their own;
// SetMachine puts them all on one machine's cores instead (machine.go).
type Model struct {
	readMean, writeMean time.Duration
	exp                 bool
	warm                warmup
	pause               pauses

	clock Clock
	rngMu sync.Mutex
	rng   *rand.Rand // nil: the global source (SetSeed)

	mu        sync.Mutex
	instances []*instance // nil: unlimited, every request is served at once
	queue     []*waiter   // arrival order

	cores   int       // per instance
	started time.Time // when the model began keeping time (Utilisation)
	db      *database // nil: the database is never the limit (SetDatabase)
	machine *machine  // nil: each resource has its own cores (SetMachine)
}

// Clock is the model's time source: arrivals, service times' ends and the
// warm-up curve. The default is the system clock; tests of the plateaus
// give a virtual one (VirtualClock) so that what they measure is the
// model, not how fast the machine runs the requests.
type Clock interface {
	Now() time.Time
	// SleepUntil returns once Now() >= t (true, at once when it already
	// is) or ctx is done first (false).
	SleepUntil(ctx context.Context, t time.Time) bool
}

// queueWatcher is a Clock told how many requests wait in the queue (for
// a core or a write lock): blocked as surely as a sleeping one, so a
// virtual clock may move on while they wait.
type queueWatcher interface {
	Queued(delta int)
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) SleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// SetClock makes the model keep time on clk (nil: the system clock). Call
// it before serving and before SetWarmup.
func (c *Model) SetClock(clk Clock) {
	if clk == nil {
		clk = systemClock{}
	}
	c.clock = clk
	c.started = clk.Now()
}

// Now is the model's time.
func (c *Model) Now() time.Time { return c.clock.Now() }

// SetSeed makes the exponential service times a reproducible sequence
// (tests); by default they come from the global source.
func (c *Model) SetSeed(seed uint64) {
	c.rngMu.Lock()
	c.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c.rngMu.Unlock()
}

func (c *Model) queued(delta int) {
	if w, ok := c.clock.(queueWatcher); ok {
		w.Queued(delta)
	}
}

type instance struct {
	busy     atomic.Int64 // nanoseconds of CPU service completed (Utilisation)
	free     []*core      // cores not in service; LIFO, so a busy core is reused at once
	locked   bool
	lockFree time.Time // virtual clock of the write lock
}

type core struct {
	free time.Time // virtual clock: end of its last request's service time
}

// waiter is one request waiting for, or holding, a core (and, for a
// write, its instance's lock). ready is closed once inst and core are set.
type waiter struct {
	write bool
	ready chan struct{}
	inst  *instance
	core  *core
}

// New builds the model: workers instances (0 = unlimited) of cores
// cores each; writeMean 0 means writes take readMean too.
func New(workers, cores int, readMean, writeMean time.Duration, dist string) (*Model, error) {
	if workers < 0 {
		return nil, fmt.Errorf("-workers %d must be 0 (unlimited) or more", workers)
	}
	if cores < 1 {
		return nil, fmt.Errorf("-cores %d must be 1 or more", cores)
	}
	if cores > 1 && workers == 0 {
		return nil, fmt.Errorf("-cores %d needs -workers K (the number of instances); with -workers 0 nothing is limited", cores)
	}
	if readMean < 0 {
		return nil, fmt.Errorf("-service-time %v must not be negative", readMean)
	}
	if writeMean < 0 {
		return nil, fmt.Errorf("-write-service-time %v must not be negative", writeMean)
	}
	if writeMean == 0 {
		writeMean = readMean
	}
	c := &Model{readMean: readMean, writeMean: writeMean, clock: systemClock{}, cores: cores, started: time.Now()}
	switch dist {
	case "", "fixed":
	case "exponential", "exp":
		c.exp = true
	default:
		return nil, fmt.Errorf("-service-dist %q is not fixed or exponential", dist)
	}
	for i := 0; i < workers; i++ {
		in := &instance{}
		for j := 0; j < cores; j++ {
			in.free = append(in.free, &core{})
		}
		c.instances = append(c.instances, in)
	}
	return c, nil
}

// sample draws one request's service time at time now.
func (c *Model) sample(write bool, now time.Time) time.Duration {
	mean := c.readMean
	if write {
		mean = c.writeMean
	}
	if mean <= 0 {
		return 0
	}
	mean = time.Duration(float64(mean) * c.warm.factor(now))
	if !c.exp {
		return mean
	}
	c.rngMu.Lock()
	defer c.rngMu.Unlock()
	if c.rng != nil {
		return time.Duration(c.rng.ExpFloat64() * float64(mean))
	}
	return time.Duration(rand.ExpFloat64() * float64(mean))
}

// warmup models a JVM that has just started: the JIT compiler has not yet
// compiled the hot paths, caches and connection pools are cold, so every
// service time is longer. The stretch starts at factor K and falls along
//
//	f(t) = 1 + (K-1) * (1 - t/D)^2   for 0 <= t < D,   f(t) = 1 after D
//
// (t counted from the server's start): steep at first, as the hottest
// methods compile within seconds, then flattening into the long tail of
// rarer paths, and exactly normal from D on. Measured CredHub 2.15 after a
// deploy: p50 of a get 19.6 ms at first, 4.0 ms two minutes later.
type warmup struct {
	start    time.Time
	duration time.Duration
	factor0  float64 // K; <= 1 means no warm-up
}

// SetWarmup starts the warm-up curve at start.
func (c *Model) SetWarmup(start time.Time, d time.Duration, k float64) error {
	switch {
	case k == 0 && d == 0:
		return nil
	case math.IsNaN(k) || k < 1:
		return fmt.Errorf("-warmup-factor %g must be 1 or more (how many times longer service times are at start)", k)
	case d < 0:
		return fmt.Errorf("-warmup-time %v must not be negative", d)
	case k > 1 && d == 0:
		return fmt.Errorf("-warmup-factor %g needs -warmup-time D (how long the warm-up lasts)", k)
	case k > 1 && c.readMean == 0 && c.writeMean == 0:
		return fmt.Errorf("-warmup-factor %g stretches the capacity model's service times; add -service-time", k)
	}
	c.warm = warmup{start: start, duration: d, factor0: k}
	return nil
}

func (w warmup) factor(now time.Time) float64 {
	if w.factor0 <= 1 || w.duration <= 0 {
		return 1
	}
	t := now.Sub(w.start)
	if t < 0 {
		t = 0
	}
	if t >= w.duration {
		return 1
	}
	left := 1 - float64(t)/float64(w.duration)
	return 1 + (w.factor0-1)*left*left
}

// pick returns the instance that can take a request now, or nil; c.mu is
// held.
func (c *Model) pick(write bool) *instance {
	var best *instance
	for _, in := range c.instances {
		if len(in.free) == 0 || (write && in.locked) {
			continue
		}
		if best == nil || len(in.free) > len(best.free) {
			best = in
		}
	}
	return best
}

// grant hands w a core of in (and its lock, for a write); c.mu is held.
func (c *Model) grant(w *waiter, in *instance) {
	w.inst = in
	w.core = in.free[len(in.free)-1]
	in.free = in.free[:len(in.free)-1]
	if w.write {
		in.locked = true
	}
	close(w.ready)
}

// grantQueued hands a queued waiter its capacity: it stops waiting in the
// queue as it is granted, before it runs, so a virtual clock does not
// move on past the start of its service. c.mu is held.
func (c *Model) grantQueued(w *waiter, in *instance) {
	c.queued(-1)
	c.grant(w, in)
}

// acquire waits in the queue until w holds a core; false means ctx ended
// first and w holds nothing.
func (c *Model) acquire(ctx context.Context, w *waiter) bool {
	c.mu.Lock()
	// Every waiter already queued was offered all free capacity when it
	// arrived or when capacity was freed, so none of them can use what is
	// free now: taking it does not jump the queue.
	if in := c.pick(w.write); in != nil {
		c.grant(w, in)
		c.mu.Unlock()
		return true
	}
	c.queue = append(c.queue, w)
	c.queued(1)
	c.mu.Unlock()
	select {
	case <-w.ready:
		return true
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-w.ready:
		// Granted while giving up: hand it on without serving.
		c.releaseLocked(w)
	default:
		for i, q := range c.queue {
			if q == w {
				c.queue = append(c.queue[:i], c.queue[i+1:]...)
				c.queued(-1)
				break
			}
		}
	}
	return false
}

func (c *Model) release(w *waiter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseLocked(w)
}

// releaseLocked frees w's core (and lock) and offers the capacity to the
// queue in arrival order; c.mu is held.
func (c *Model) releaseLocked(w *waiter) {
	w.inst.free = append(w.inst.free, w.core)
	if w.write {
		w.inst.locked = false
	}
	kept := c.queue[:0]
	for i, q := range c.queue {
		if in := c.pick(q.write); in != nil {
			c.grantQueued(q, in)
			continue
		}
		kept = append(kept, q)
		if !c.anyFree() {
			kept = append(kept, c.queue[i+1:]...)
			break
		}
	}
	clear(c.queue[len(kept):]) // no stale pointers keep served waiters alive
	c.queue = kept
}

func (c *Model) anyFree() bool {
	for _, in := range c.instances {
		if len(in.free) > 0 {
			return true
		}
	}
	return false
}

// Serve runs fn within the model; false means the client went away while
// queued or in service, and nothing should be written. write marks the
// requests CredHub serialises per instance (set, generate, regenerate).
func (c *Model) Serve(ctx context.Context, write bool, fn func()) bool {
	arrival := c.clock.Now()
	start := arrival
	var w *waiter
	if c.instances != nil {
		w = &waiter{write: write, ready: make(chan struct{})}
		if !c.acquire(ctx, w) {
			return false
		}
		// The clocks belong to whoever holds the core or lock; the queue's
		// mutex orders one holder's writes before the next one's reads.
		if w.core.free.After(start) {
			start = w.core.free
		}
		if write && w.inst.lockFree.After(start) {
			start = w.inst.lockFree
		}
	}
	cpu := c.sample(write, arrival)
	var target time.Time
	if c.machine != nil {
		target = c.machine.run(start, cpu, c.pause.shift)
	} else {
		target = c.pause.shift(start, cpu)
	}
	if w != nil {
		// The clocks advance by exactly the drawn time even when the real
		// work overruns it: short draws that the work exceeded are paid
		// back by later long ones, keeping the mean exact.
		w.core.free = target
		if write {
			w.inst.lockFree = target
		}
	}
	fn()
	ok := c.clock.SleepUntil(ctx, target)
	if w != nil {
		c.release(w)
		if ok {
			// On a shared machine the wait for its cores is not the
			// instance's CPU: its busy time is what it ran.
			spent := target.Sub(start)
			if c.machine != nil {
				spent = cpu
			}
			w.inst.busy.Add(int64(spent))
		}
	}
	if !ok || c.db == nil {
		return ok
	}
	return c.db.serve(ctx, c.clock, target, c.machine)
}
