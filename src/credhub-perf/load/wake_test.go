package load

import (
	"context"
	"testing"
	"time"
)

// TestWakerNeverEarly: the pacer's waker may return late (a busy machine)
// but never before the time asked for, whatever the kernel timer does.
// With the spin (requests far apart) and without (close together).
func TestWakerNeverEarly(t *testing.T) {
	for _, gap := range []time.Duration{spinMinGap, spinMinGap - 1} {
		w := newWaker(context.Background(), nil, gap)
		defer w.close()
		for i := 0; i < 50; i++ {
			due := time.Now().Add(time.Duration(i%5) * 150 * time.Microsecond)
			if !w.until(context.Background(), due) {
				t.Fatal("until returned false without a cancelled context")
			}
			if now := time.Now(); now.Before(due) {
				t.Fatalf("gap %v: woke %v early", gap, due.Sub(now))
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w2 := newWaker(ctx, nil, time.Second)
	defer w2.close()
	cancel()
	if w2.until(ctx, time.Now().Add(time.Hour)) {
		t.Fatal("until returned true on a cancelled context")
	}
}

// TestWakeMargin: the timer is set early by the longest recent wake-up
// lateness and a quarter, never less than spinBefore, never more than a
// tenth of the time between requests (the spin's CPU bound) or maxEarly.
func TestWakeMargin(t *testing.T) {
	const us = time.Microsecond
	m := wakeMargin{gap: 12500 * us} // 80 requests/s
	if got := m.early(); got != spinBefore {
		t.Fatalf("no wake-up yet: %v, want %v", got, spinBefore)
	}
	for _, d := range []time.Duration{20 * us, 100 * us, 30 * us} {
		m.note(d)
	}
	if got := m.early(); got != 125*us {
		t.Fatalf("after wake-ups 20/100/30 µs late: %v, want 125µs", got)
	}
	m.note(5000 * us) // a stall: bounded by maxEarly
	if got := m.early(); got != maxEarly {
		t.Fatalf("after a 5 ms stall: %v, want %v", got, maxEarly)
	}
	m.gap = 1000 * us // 1,000 requests/s: by a tenth of the gap
	if got := m.early(); got != 100*us {
		t.Fatalf("after a 5 ms stall at 1,000/s: %v, want 100µs", got)
	}
	m.gap = 12500 * us
	for range 16 {
		m.note(10 * us) // the stall ages out of the last 16
	}
	if got := m.early(); got != spinBefore {
		t.Fatalf("after 16 prompt wake-ups: %v, want %v", got, spinBefore)
	}
}
