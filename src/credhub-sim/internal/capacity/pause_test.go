package capacity

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"
)

// The pause schedule has known answers: a service that would start in a
// pause starts at its end, one that spans a pause's start ends a pause
// later, one between pauses is untouched.
func TestPauseShift(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := pauses{start: start, every: 2 * time.Second, d: 50 * time.Millisecond}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		at, s, want time.Duration // want: the end, from start
	}{
		{ms(100), ms(5), ms(105)},      // between pauses
		{ms(0), ms(5), ms(55)},         // in the first pause
		{ms(2010), ms(5), ms(2055)},    // in a later pause
		{ms(1998), ms(5), ms(2053)},    // spans a pause's start
		{ms(1000), ms(3000), ms(4100)}, // spans two
		{-ms(3), ms(5), ms(52)},        // before the schedule: spans the first pause
		{ms(2050), ms(1), ms(2051)},    // the pause just ended
	} {
		if got := p.shift(start.Add(tc.at), tc.s).Sub(start); got != tc.want {
			t.Errorf("service of %v at %v ends at %v, want %v", tc.s, tc.at, got, tc.want)
		}
	}
	if got := (pauses{}).shift(start, ms(5)); got != start.Add(ms(5)) {
		t.Errorf("no pauses: %v", got)
	}
}

func TestPauseFlagsRefused(t *testing.T) {
	c, err := New(1, 1, time.Millisecond, 0, "fixed")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, tc := range [][2]time.Duration{
		{time.Second, 0}, {0, time.Millisecond}, {-time.Second, time.Millisecond},
		{time.Second, -time.Millisecond}, {50 * time.Millisecond, 50 * time.Millisecond},
	} {
		if err := c.SetPauses(now, tc[0], tc[1]); err == nil {
			t.Errorf("-pause-every %v -pause %v accepted", tc[0], tc[1])
		}
	}
	if err := c.SetPauses(now, 0, 0); err != nil {
		t.Errorf("no pauses refused: %v", err)
	}
}

// latencies runs the model on a virtual clock for d: closed loop (clients
// each sending the next request when the last one ended), or open loop at
// rate (request i due at i/rate, taken up by one of 64 clients in turn,
// its latency counted from its schedule), and returns the latencies of
// the requests that ended by d, sorted.
func latencies(t *testing.T, pause bool, clients int, rate float64, d time.Duration) []time.Duration {
	t.Helper()
	c, err := New(1, 1, time.Millisecond, 0, "exponential")
	if err != nil {
		t.Fatal(err)
	}
	c.SetSeed(7)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := NewVirtualClock(start)
	c.SetClock(clk)
	if pause {
		if err := c.SetPauses(start.Add(time.Second/3), 2*time.Second, 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	end := start.Add(d)
	var mu sync.Mutex
	var out []time.Duration
	var wg sync.WaitGroup
	actors := clients
	if rate > 0 {
		actors = 64
	}
	for range actors {
		clk.Join()
	}
	for a := range actors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer clk.Leave()
			for i := a; ; i += actors {
				t0 := clk.Now()
				if rate > 0 {
					t0 = start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
					if !t0.Before(end) || !clk.SleepUntil(context.Background(), t0) {
						return
					}
				} else if !t0.Before(end) {
					return
				}
				c.Serve(context.Background(), false, func() {})
				if t1 := clk.Now(); !t1.After(end) {
					mu.Lock()
					out = append(out, t1.Sub(t0))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func p99(l []time.Duration) time.Duration { return l[len(l)*99/100] }

// The gap a JVM's pauses open, on the virtual clock: three closed-loop
// clients hide a 50 ms pause every 2 s behind three requests (0.15 % of
// them: their p99 barely moves), while requests arriving on their own
// schedule at half the closed loop's throughput queue behind every pause
// (about 25 arrive during it and the backlog takes as long again to
// clear: 5 % of the requests), and their p99 grows several times.
// Without pauses the open loop at that rate is the D/M/1 queue at 50 %
// load: p99 under 10 ms.
func TestPausesHitOpenArrivals(t *testing.T) {
	const d = 20 * time.Second
	closed := latencies(t, false, 3, 0, d)
	closedPaused := latencies(t, true, 3, 0, d)
	tput := float64(len(closedPaused)) / d.Seconds()
	open := latencies(t, false, 0, tput/2, d)
	openPaused := latencies(t, true, 0, tput/2, d)
	t.Logf("closed loop p99 %v, paused %v (%.0f req/s); open loop at %.0f/s p99 %v, paused %v",
		p99(closed), p99(closedPaused), tput, tput/2, p99(open), p99(openPaused))
	if tput < 900 || tput > 1000 {
		t.Errorf("closed-loop throughput with pauses %.0f req/s, want about 975 (1000 less 2.5 %% paused)", tput)
	}
	if r := float64(p99(closedPaused)) / float64(p99(closed)); r > 1.2 {
		t.Errorf("closed loop: pauses raised p99 %.2fx (%v -> %v); three clients should hide them", r, p99(closed), p99(closedPaused))
	}
	if p := p99(open); p > 10*time.Millisecond {
		t.Errorf("open loop without pauses: p99 %v, want under 10 ms (D/M/1 at 50 %%)", p)
	}
	if p99(openPaused) < 3*p99(open) {
		t.Errorf("open loop: pauses left p99 at %v (without %v); arrivals should queue behind them", p99(openPaused), p99(open))
	}
}
