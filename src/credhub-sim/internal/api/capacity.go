package api

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// capacity emulates K server instances of a known speed: at most K requests
// are in service at once, the rest wait in FIFO order (Go wakes goroutines
// blocked on a channel in arrival order), and each request occupies its
// slot for a drawn service time. The real work runs inside that time; the
// slot sleeps off the remainder.
//
// Each slot keeps a virtual clock (when its last request's service time
// ended). A request starts at max(its arrival, that clock) rather than at
// the moment it got the slot, so under saturation the timer overshoot of
// one sleep (or real work longer than a short draw) is paid back by the
// next, and the plateau is K / mean service time even on a busy machine.
type capacity struct {
	slots chan *slot
	mean  time.Duration
	exp   bool
}

type slot struct {
	free time.Time
}

func newCapacity(workers int, mean time.Duration, dist string) (*capacity, error) {
	if workers < 0 {
		return nil, fmt.Errorf("-workers %d must be 0 (unlimited) or more", workers)
	}
	if mean < 0 {
		return nil, fmt.Errorf("-service-time %v must not be negative", mean)
	}
	c := &capacity{mean: mean}
	switch dist {
	case "", "fixed":
	case "exponential", "exp":
		c.exp = true
	default:
		return nil, fmt.Errorf("-service-dist %q is not fixed or exponential", dist)
	}
	if workers > 0 {
		c.slots = make(chan *slot, workers)
		for i := 0; i < workers; i++ {
			c.slots <- &slot{}
		}
	}
	return c, nil
}

func (c *capacity) sample() time.Duration {
	if c.mean <= 0 {
		return 0
	}
	if !c.exp {
		return c.mean
	}
	return time.Duration(rand.ExpFloat64() * float64(c.mean))
}

// serve runs fn within the model; false means the client went away while
// queued or in service, and nothing should be written.
func (c *capacity) serve(ctx context.Context, fn func()) bool {
	arrival := time.Now()
	var sl *slot
	if c.slots != nil {
		select {
		case sl = <-c.slots:
		case <-ctx.Done():
			return false
		}
		defer func() { c.slots <- sl }()
	}
	start := arrival
	if sl != nil && sl.free.After(start) {
		start = sl.free
	}
	target := start.Add(c.sample())
	fn()
	if sl != nil {
		// The slot's clock advances by exactly the drawn time even when
		// the real work overran it: short draws that the work exceeded
		// are paid back by later long ones, keeping the mean exact.
		sl.free = target
	}
	if d := time.Until(target); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
