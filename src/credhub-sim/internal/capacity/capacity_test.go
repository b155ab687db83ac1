package capacity

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newWaiter(write bool) *waiter { return &waiter{write: write, ready: make(chan struct{})} }

func mustCapacity(t *testing.T, workers, cores int) *Model {
	t.Helper()
	c, err := New(workers, cores, 0, 0, "fixed")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// queued waits until n requests wait in c's queue, so that tests can fix
// the arrival order.
func queued(t *testing.T, c *Model, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		got := len(c.queue)
		c.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func granted(w *waiter) bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

// A write waiting for its instance's lock must not hold up a read that a
// free core can take, and gets the lock as soon as it is released.
func TestCapacityWriteLockDoesNotBlockReads(t *testing.T) {
	c := mustCapacity(t, 1, 2)
	ctx := context.Background()
	w1 := newWaiter(true)
	if !c.acquire(ctx, w1) {
		t.Fatal("first write not served")
	}
	w2 := newWaiter(true)
	done := make(chan bool)
	go func() { done <- c.acquire(ctx, w2) }()
	queued(t, c, 1)
	r := newWaiter(false)
	if !c.acquire(ctx, r) {
		t.Fatal("read not served")
	}
	if granted(w2) {
		t.Fatal("second write got the instance while the first held its lock")
	}
	c.release(r)
	if granted(w2) {
		t.Fatal("a freed core let the second write past the held lock")
	}
	c.release(w1)
	if !<-done {
		t.Fatal("second write not served after the lock was released")
	}
	c.release(w2)
	checkIdle(t, c, 2)
}

// Requests that can use the same capacity are served in arrival order,
// writes and reads alike.
func TestCapacityFIFO(t *testing.T) {
	c := mustCapacity(t, 1, 1)
	ctx := context.Background()
	first := newWaiter(false)
	c.acquire(ctx, first)
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := 1; i <= 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWaiter(i%2 == 0)
			if !c.acquire(ctx, w) {
				t.Errorf("request %d not served", i)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			c.release(w)
		}()
		queued(t, c, i)
	}
	c.release(first)
	wg.Wait()
	if fmt.Sprint(order) != "[1 2 3 4 5 6]" {
		t.Fatalf("served in order %v, want arrival order", order)
	}
	checkIdle(t, c, 1)
}

// With many clients, some giving up while queued, at most K*N requests are
// in service, at most K of them writes; both limits are reached; and
// everything is free again afterwards.
func TestCapacityLimits(t *testing.T) {
	const workers, cores = 2, 3
	c := mustCapacity(t, workers, cores)
	var inService, writes, maxInService, maxWrites, served, gaveUp atomic.Int64
	raise := func(m *atomic.Int64, v int64) {
		for {
			old := m.Load()
			if v <= old || m.CompareAndSwap(old, v) {
				return
			}
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 24; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				write := (g+i)%3 == 0
				ctx, cancel := context.WithCancel(context.Background())
				if i%5 == 4 {
					cancel() // gives up at once or while queued
				}
				ok := c.Serve(ctx, write, func() {
					raise(&maxInService, inService.Add(1))
					if write {
						raise(&maxWrites, writes.Add(1))
					}
					time.Sleep(3 * time.Millisecond)
					if write {
						writes.Add(-1)
					}
					inService.Add(-1)
				})
				cancel()
				if ok {
					served.Add(1)
				} else {
					gaveUp.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("served %d, gave up %d, at most %d in service, %d writes", served.Load(), gaveUp.Load(), maxInService.Load(), maxWrites.Load())
	if got := maxInService.Load(); got != workers*cores {
		t.Errorf("at most %d requests in service at once, want exactly %d (workers × cores)", got, workers*cores)
	}
	if got := maxWrites.Load(); got != workers {
		t.Errorf("at most %d writes in service at once, want exactly %d (one per instance)", got, workers)
	}
	if served.Load() < 200 {
		t.Errorf("only %d of 360 requests served", served.Load())
	}
	checkIdle(t, c, cores)
}

func checkIdle(t *testing.T, c *Model, cores int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) != 0 {
		t.Errorf("%d requests left in the queue", len(c.queue))
	}
	for i, in := range c.instances {
		if len(in.free) != cores || in.locked {
			t.Errorf("instance %d: %d of %d cores free, locked %v; want all free", i, len(in.free), cores, in.locked)
		}
	}
}

func TestCapacityConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		workers, cores int
		read, write    time.Duration
		want           string
	}{
		{-1, 1, 0, 0, "-workers -1"},
		{2, 0, 0, 0, "-cores 0 must be 1 or more"},
		{0, 2, 0, 0, "-cores 2 needs -workers"},
		{1, 1, -time.Millisecond, 0, "-service-time"},
		{1, 1, 0, -time.Millisecond, "-write-service-time"},
	} {
		_, err := New(tc.workers, tc.cores, tc.read, tc.write, "fixed")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%d, %d, %v, %v): %v, want an error containing %q", tc.workers, tc.cores, tc.read, tc.write, err, tc.want)
		}
	}
}

// The warm-up curve has known values: K at start, 1 from D on, and the
// documented quadratic in between.
func TestWarmupCurve(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c, err := New(1, 1, 10*time.Millisecond, 0, "fixed")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetWarmup(start, 20*time.Second, 4); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   time.Duration
		want time.Duration
	}{
		{-time.Second, 40 * time.Millisecond}, // before the start: still cold
		{0, 40 * time.Millisecond},
		{10 * time.Second, 17500 * time.Microsecond}, // 1 + 3*(1/2)^2 = 1.75
		{15 * time.Second, 11875 * time.Microsecond}, // 1 + 3*(1/4)^2 = 1.1875
		{20 * time.Second, 10 * time.Millisecond},
		{time.Hour, 10 * time.Millisecond},
	} {
		if got := c.sample(false, start.Add(tc.at)); got != tc.want {
			t.Errorf("service time at %v = %v, want %v", tc.at, got, tc.want)
		}
	}
	if got := c.sample(true, start); got != 40*time.Millisecond {
		t.Errorf("writes warm up too: got %v at start, want 40ms", got)
	}
}

func TestWarmupFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		k    float64
		mean time.Duration
	}{
		{time.Second, 0.5, time.Millisecond},
		{-time.Second, 2, time.Millisecond},
		{0, 2, time.Millisecond},
		{time.Second, 2, 0},
	} {
		c, err := New(1, 1, tc.mean, 0, "fixed")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SetWarmup(time.Now(), tc.d, tc.k); err == nil {
			t.Errorf("-warmup-time %v -warmup-factor %g with service time %v accepted", tc.d, tc.k, tc.mean)
		}
	}
}
