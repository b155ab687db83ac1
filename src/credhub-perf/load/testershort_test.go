package load

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// TestDecideShortUsesStepLeast: a tester short of CPU for longer than a
// few requests' time reads all of them late. With the step's least
// latency (what the server takes at best) the connections in flight
// still carry the rate, and a request that waited a dial's time waits
// again; sized by the least of the last 8 it dialled for "short" (at
// 8,600 req/s, 3 ms x 2 x rate = 52 connections wanted, 2 in flight).
func TestDecideShortUsesStepLeast(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := &dialPolicy{rate: 8600}
	for range 8 {
		p.noteDial(20 * time.Millisecond) // handshakes late too
	}
	p.noteLatency(now, 100*time.Microsecond) // the server, when the tester kept up
	for range 8 {
		p.noteLatency(now, 3*time.Millisecond) // read late
	}
	p.lent = 2
	if why, _, _ := p.decide(true, false); why != "" {
		t.Fatalf("decide = %q after the last 8 requests were read late; want a wait (2 x 8,600/s x 100 us < 2 in flight)", why)
	}
	// A server that is slower for all of the step needs more.
	q := &dialPolicy{rate: 8600}
	for range 8 {
		q.noteDial(20 * time.Millisecond)
		q.noteLatency(now, 3*time.Millisecond)
	}
	q.lent = 2
	if why, _, _ := q.decide(true, false); why != "short" {
		t.Fatalf("decide = %q for a server at 3 ms all step; want short", why)
	}
}

// TestConnPoolTesterShortWaits: while the tester is short of CPU
// (noteTester), a request that would dial for a slow server waits a
// dial's time instead, and dials once the tester has CPU again; with
// nothing in flight it dials at once all the same.
func TestConnPoolTesterShortWaits(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	p := newConnPool(8, clk, 640, 64)
	ctx := context.Background()
	p.noteDial(2 * time.Millisecond)
	p.noteLatency(now, 5*time.Millisecond)
	p.noteTester(true)
	var tm *time.Timer
	if c, done := p.acquire(ctx, &tm, nil); c != nil || done == nil {
		t.Fatalf("nothing in flight, tester short: got %p, token %v; want a dial token at once", c, done != nil)
	}
	p.unlend()
	done := <-p.dials
	_ = done
	p.lent = 4 // 5 ms / 4 in flight = 1.25 ms > 2 ms / 4: "slow"
	got := acquireAsync(p, ctx)
	if d := recv(t, clk.Sleeping); !d.Equal(now.Add(2 * time.Millisecond)) {
		t.Fatalf("waited until %v, want a dial's time (2ms)", d.Sub(now))
	}
	p.noteTester(false)
	clk.Set(now.Add(2 * time.Millisecond))
	if l := recv(t, got); l.c != nil || l.done == nil {
		t.Fatalf("tester back: got %p, token %v; want a dial token", l.c, l.done != nil)
	}
}

// TestCPUGauge: full over a window of at least cpuWindow in which the
// process used cpuFull of its cores or more; no verdict before a window
// has ended or when the system does not tell.
func TestCPUGauge(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var cpu time.Duration
	g := cpuGauge{read: func() (time.Duration, bool) { return cpu, true }, cores: 2}
	step := func(wall, used time.Duration) (bool, bool) {
		now = now.Add(wall)
		cpu += used
		return g.note(now)
	}
	if _, ok := step(0, 0); ok {
		t.Fatal("a verdict at the first reading")
	}
	if _, ok := step(9*time.Millisecond, 18*time.Millisecond); ok {
		t.Fatal("a verdict before a window ended")
	}
	// 9 + 2 ms: 18 + 4 ms of CPU over 11 ms on 2 cores: 100 %.
	if full, ok := step(2*time.Millisecond, 4*time.Millisecond); !ok || !full {
		t.Fatalf("full, ok = %v, %v after 100 %% of 2 cores; want true, true", full, ok)
	}
	// 15 of 20 ms of 2 cores: 75 %, under the bound.
	if full, ok := step(10*time.Millisecond, 15*time.Millisecond); !ok || full {
		t.Fatalf("full, ok = %v, %v after 75 %% of 2 cores; want false, true", full, ok)
	}
	if full, ok := step(10*time.Millisecond, 16*time.Millisecond); !ok || !full {
		t.Fatalf("full, ok = %v, %v after 80 %% of 2 cores; want true, true", full, ok)
	}
	unknown := cpuGauge{read: func() (time.Duration, bool) { return 0, false }, cores: 1}
	for i := range 3 {
		if full, ok := unknown.note(now.Add(time.Duration(i) * time.Second)); full || ok {
			t.Fatal("a verdict from a system that does not tell the process's CPU")
		}
	}
}

// TestPacerJudgesTester: the open-loop pacer tells the dial policy the
// tester is short of CPU after a window in which its process used
// cpuFull of its cores, and after handing a request over more than
// stallLate after its schedule; and not after a window with CPU to spare
// and a request on time.
func TestPacerJudgesTester(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(start)
	e, err := New(ClientOptions{Clock: clk}, Template{URL: "http://127.0.0.1:9/"})
	if err != nil {
		t.Fatal(err)
	}
	var cpu atomic.Int64
	e.hooks.cpuRead = func() (time.Duration, bool) { return time.Duration(cpu.Load()), true }
	cores := time.Duration(cpuload.Cores())
	pol := &dialPolicy{clk: clk}
	jobs := make(chan job, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const gap = 10 * time.Millisecond // 100 req/s: each request a window
	go e.pace(ctx, Step{Rate: 100, Requests: 6}, start, time.Time{}, jobs, pol, false)
	for i, c := range []struct {
		late time.Duration // after its schedule
		used time.Duration // process CPU per core since the last request
		want bool
	}{
		{0, 0, false},                      // the window starts
		{0, 9 * time.Millisecond, true},    // 90 % of the cores
		{0, 5 * time.Millisecond, false},   // 50 %
		{1500 * time.Microsecond, 0, true}, // 1.5 ms late
		{0, 1 * time.Millisecond, false},   // on time; 8.5 ms: no window ended
	} {
		cpu.Add(int64(c.used * cores))
		clk.Set(start.Add(time.Duration(i)*gap + c.late))
		recv(t, jobs)
		// The pacer judges after the hand-over, before its next sleep.
		if d := recv(t, clk.Sleeping); !d.Equal(start.Add(time.Duration(i+1) * gap)) {
			t.Fatalf("after request %d: the pacer slept until %v", i, d.Sub(start))
		}
		if got := pol.testerShort.Load(); got != c.want {
			t.Fatalf("request %d (%v late, %v CPU per core): tester short = %v, want %v", i, c.late, c.used, got, c.want)
		}
	}
}
