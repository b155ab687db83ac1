package loadtest

import (
	"context"
	"sync"
	"time"
)

// FakeClock is a load.Clock that moves only when the test says so, so
// schedule logic is tested without sleeps or tolerances. SleepUntil blocks
// until Set moves the clock to or past its deadline (or its context ends)
// and announces each blocking sleep on Sleeping.
type FakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters map[chan struct{}]time.Time
	// Sleeping receives the deadline of every SleepUntil that blocks.
	Sleeping chan time.Time
}

// NewFakeClock returns a clock reading now.
func NewFakeClock(now time.Time) *FakeClock {
	return &FakeClock{now: now, waiters: map[chan struct{}]time.Time{}, Sleeping: make(chan time.Time, 1024)}
}

// Now is the clock's reading.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// SleepUntil returns true once the clock reads t or later, false when ctx
// ends first.
func (c *FakeClock) SleepUntil(ctx context.Context, t time.Time) bool {
	c.mu.Lock()
	if !t.After(c.now) {
		c.mu.Unlock()
		return ctx.Err() == nil
	}
	done := make(chan struct{})
	c.waiters[done] = t
	c.mu.Unlock()
	c.Sleeping <- t
	select {
	case <-done:
		return ctx.Err() == nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.waiters, done)
		c.mu.Unlock()
		return false
	}
}

// Set moves the clock to t (never backwards) and wakes the sleepers whose
// deadline has come.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	for done, d := range c.waiters {
		if !d.After(c.now) {
			close(done)
			delete(c.waiters, done)
		}
	}
}
