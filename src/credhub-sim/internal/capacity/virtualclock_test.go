package capacity

import (
	"context"
	"sync"
	"testing"
	"time"
)

// On a VirtualClock the plateaus are exact, whatever the machine: 2
// instances of 3 cores with a fixed 20 ms serve 12 closed-loop readers
// 300/s and 12 writers 100/s (one write lock per instance), and a client
// alone waits only its own service time. The longest wait is the steady
// state's: 12 clients queue for 6 cores (readers, two rounds) or 2 locks
// (writers, six rounds).
func TestVirtualClockPlateaus(t *testing.T) {
	for _, tc := range []struct {
		clients int
		write   bool
		want    int // served in 1.5 s
		latency time.Duration
	}{
		{12, false, 450, 40 * time.Millisecond},
		{12, true, 150, 120 * time.Millisecond},
		{1, false, 75, 20 * time.Millisecond},
	} {
		c, err := New(2, 3, 20*time.Millisecond, 0, "fixed")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clk := NewVirtualClock(start)
		c.SetClock(clk)
		end := start.Add(1500 * time.Millisecond)
		var mu sync.Mutex
		var served int
		var longest time.Duration
		var wg sync.WaitGroup
		for range tc.clients {
			clk.Join()
		}
		for range tc.clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer clk.Leave()
				for {
					t0 := clk.Now()
					if !t0.Before(end) {
						return
					}
					if !c.Serve(context.Background(), tc.write, func() {}) {
						t.Error("request not served")
						return
					}
					if t1 := clk.Now(); !t1.After(end) {
						mu.Lock()
						served++
						longest = max(longest, t1.Sub(t0))
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if served != tc.want || longest != tc.latency {
			t.Errorf("%d clients, write %v: %d served in 1.5 s, longest latency %v; want %d, %v",
				tc.clients, tc.write, served, longest, tc.want, tc.latency)
		}
		checkIdle(t, c, 3)
	}
}

// A sleeper whose context ends leaves the clock: false, the time not
// moved for it, and the other sleepers' jump not held up by it.
func TestVirtualClockCancelledSleep(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := NewVirtualClock(start)
	clk.Join()
	clk.Join()
	clk.Join()
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan bool)
	go func() { gone <- clk.SleepUntil(ctx, start.Add(10*time.Millisecond)) }()
	clk.Queued(1) // a second client waits in the queue
	cancel()
	if <-gone {
		t.Fatal("a cancelled sleep returned true")
	}
	clk.Leave() // the client that gave up: the other two, one queued, one busy
	if now := clk.Now(); !now.Equal(start) {
		t.Fatalf("the clock moved to %v for a cancelled sleep", now.Sub(start))
	}
	// The third client sleeps: with the queued one, every client waits.
	if !clk.SleepUntil(context.Background(), start.Add(20*time.Millisecond)) {
		t.Fatal("sleep returned false")
	}
	if now := clk.Now(); !now.Equal(start.Add(20 * time.Millisecond)) {
		t.Fatalf("clock at %v, want 20ms", now.Sub(start))
	}
}
