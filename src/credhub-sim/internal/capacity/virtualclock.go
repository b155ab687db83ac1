package capacity

import (
	"context"
	"sort"
	"sync"
	"time"
)

// VirtualClock is a Clock for tests of the plateaus: it moves only when
// every client (an actor: Join, Leave) waits on the model, its request
// queued or sleeping out its service time, and then jumps to the earliest
// end of a service time. A client sending, being served its real work or
// reading a response holds time still. So a throughput measured on it is
// the model's, exactly, however slowly the machine runs the requests (the
// race detector, other work on the machine); the real-time plateaus are
// for a quiet machine.
//
// Each client must have at most one request in the model at a time (a
// closed loop), and all clients must Join before the first one sends.
type VirtualClock struct {
	mu       sync.Mutex
	now      time.Time
	actors   int
	queued   int
	sleepers []*virtualSleeper
}

type virtualSleeper struct {
	at   time.Time
	wake chan struct{}
}

// NewVirtualClock returns a clock reading start, with no actors.
func NewVirtualClock(start time.Time) *VirtualClock {
	return &VirtualClock{now: start}
}

// Now is the virtual time.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// SleepUntil returns once the clock reads t (true) or ctx ends (false).
func (c *VirtualClock) SleepUntil(ctx context.Context, t time.Time) bool {
	c.mu.Lock()
	if !t.After(c.now) {
		c.mu.Unlock()
		return true
	}
	s := &virtualSleeper{at: t, wake: make(chan struct{})}
	c.sleepers = append(c.sleepers, s)
	c.jumpIfIdle()
	c.mu.Unlock()
	select {
	case <-s.wake:
		return true
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, o := range c.sleepers {
		if o == s {
			c.sleepers = append(c.sleepers[:i], c.sleepers[i+1:]...)
			c.jumpIfIdle()
			return false
		}
	}
	return true // woken as ctx ended: its service time is over
}

// Queued counts requests waiting in the model's queue (the model calls it
// with its lock held, as they enter and leave the queue).
func (c *VirtualClock) Queued(delta int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queued += delta
	c.jumpIfIdle()
}

// Join adds a client.
func (c *VirtualClock) Join() {
	c.mu.Lock()
	c.actors++
	c.mu.Unlock()
}

// Leave removes a client that will send no more requests, which may leave
// every other client waiting.
func (c *VirtualClock) Leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.actors--
	c.jumpIfIdle()
}

// jumpIfIdle: every client waits on the model, so nothing happens before
// the earliest service time ends: time runs to it, and the requests due
// then wake. c.mu is held.
func (c *VirtualClock) jumpIfIdle() {
	if len(c.sleepers) == 0 || len(c.sleepers)+c.queued < c.actors {
		return
	}
	sort.SliceStable(c.sleepers, func(i, j int) bool { return c.sleepers[i].at.Before(c.sleepers[j].at) })
	if at := c.sleepers[0].at; at.After(c.now) {
		c.now = at
	}
	n := 0
	for n < len(c.sleepers) && !c.sleepers[n].at.After(c.now) {
		close(c.sleepers[n].wake)
		n++
	}
	c.sleepers = c.sleepers[n:]
}
