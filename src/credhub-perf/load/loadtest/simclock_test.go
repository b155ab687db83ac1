package loadtest

import (
	"context"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// With one of two actors asleep time stands still; when the other sleeps
// too it jumps to the earlier wake-up, exactly.
func TestSimClockJumpsWhenEveryActorSleeps(t *testing.T) {
	c := NewSimClock(t0, 2)
	woke := make(chan time.Time, 2)
	go func() {
		c.SleepUntil(context.Background(), t0.Add(3*time.Second))
		woke <- c.Now()
	}()
	waitSleepers(t, c, 1)
	if !c.Now().Equal(t0) {
		t.Fatalf("the clock moved to %v with an actor awake", c.Now().Sub(t0))
	}
	if !c.SleepUntil(context.Background(), t0.Add(time.Second)) || !c.Now().Equal(t0.Add(time.Second)) {
		t.Fatalf("the second sleeper woke at %v, want 1s", c.Now().Sub(t0))
	}
	// This actor awake again: the first stays asleep until it leaves.
	c.Leave()
	if got := <-woke; !got.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("the first sleeper woke at %v, want 3s", got.Sub(t0))
	}
}

// A served request moves the clock by its service time but never past a
// sleeper's deadline: the sleeper wakes at its deadline exactly.
func TestSimClockAdvanceStopsAtDeadline(t *testing.T) {
	c := NewSimClock(t0, 2)
	woke := make(chan time.Time, 1)
	go func() {
		c.SleepUntil(context.Background(), t0.Add(1500*time.Microsecond))
		woke <- c.Now()
	}()
	waitSleepers(t, c, 1)
	c.Advance(time.Millisecond)
	c.Advance(time.Millisecond)
	if got := <-woke; !got.Equal(t0.Add(1500 * time.Microsecond)) {
		t.Fatalf("woke at %v, want 1.5ms", got.Sub(t0))
	}
	c.Advance(time.Millisecond)
	if got := c.Now().Sub(t0); got != 2500*time.Microsecond {
		t.Fatalf("clock at %v, want 2.5ms", got)
	}
	// A cancelled sleep returns false and no longer holds the clock.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c.SleepUntil(ctx, t0.Add(time.Hour)) {
		t.Fatal("a cancelled sleep returned true")
	}
	c.Advance(time.Millisecond)
	if got := c.Now().Sub(t0); got != 3500*time.Microsecond {
		t.Fatalf("clock at %v after a cancelled sleep, want 3.5ms", got)
	}
}

// waitSleepers waits (in real time, bounded) until n goroutines sleep on c.
func waitSleepers(t *testing.T, c *SimClock, n int) {
	t.Helper()
	for i := 0; i < 10000; i++ {
		c.mu.Lock()
		k := len(c.sleepers)
		c.mu.Unlock()
		if k >= n {
			return
		}
		time.Sleep(time.Millisecond) // a hang guard's poll, not a tolerance
	}
	t.Fatalf("no %d sleepers within 10 s", n)
}
