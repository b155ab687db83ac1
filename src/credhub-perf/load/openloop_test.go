package load_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// TestOpenLoopRateOnClock checks the acceptance criterion, 500
// requests/s held within 2 % over 5 s and in each second on its own (a
// generator that bursts then idles would pass the average), on a clock
// the test controls, so it holds however slow the machine is. The pacer
// is woken up to 1.999 ms late (under the 2 ms between requests), as a
// busy machine would wake it: a pacer that paced from its wake-ups instead
// of the schedule would drift off rate. The send times are the clock's
// readings when the requests reach the server.
func TestOpenLoopRateOnClock(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(start)
	var mu sync.Mutex
	var arrived []time.Time
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived = append(arrived, clk.Now())
		mu.Unlock()
	}), true, false)
	const rate, secs, n = 500, 5, 500 * 5
	results, done := clockRun(t, clk, mtlsOpts(p, true), load.Template{URL: srv.URL}, load.Step{Concurrency: 20, Rate: rate, Duration: secs * time.Second})
	for i := 0; i < n; i++ {
		sched := start.Add(time.Duration(i) * time.Second / rate)
		late := time.Duration(i*7919%2000) * time.Microsecond
		if i == 0 {
			late = 0 // due as the step starts: the pacer does not sleep
		} else {
			if got := recv(t, clk.Sleeping, "pacer sleep"); !got.Equal(sched) {
				t.Fatalf("request %d: pacer slept until %v, want %v", i, got.Sub(start), sched.Sub(start))
			}
			clk.Set(sched.Add(late))
		}
		// Lock step: the clock moves on only once this request is back, so
		// each one is sent at a known time.
		r := recv(t, results, "result")
		if r.Err != "" || r.Status != 200 || r.Rate != rate {
			t.Fatalf("request %d failed: %+v", i, r)
		}
		if !r.Start.Equal(sched) || r.SchedLag != late || r.Latency != late {
			t.Fatalf("request %d: start %v, sched-lag %v, latency %v; want start %v, sched-lag and latency %v",
				i, r.Start.Sub(start), r.SchedLag, r.Latency, sched.Sub(start), late)
		}
	}
	if err := recv(t, done, "end of step"); err != nil {
		t.Fatal(err)
	}
	// The socket orders the handler's writes before the responses, but the
	// race detector cannot see that: take the lock.
	mu.Lock()
	sent := arrived
	mu.Unlock()
	if len(results) != 0 || len(sent) != n {
		t.Fatalf("%d requests reached the server, %d beyond the step's %d recorded", len(sent), len(results), n)
	}
	got := float64(n-1) / sent[n-1].Sub(sent[0]).Seconds()
	perSec := make([]int, secs)
	for _, s := range sent {
		perSec[s.Sub(start)/time.Second]++
	}
	if got < rate*0.98 || got > rate*1.02 || fmt.Sprint(perSec) != "[500 500 500 500 500]" {
		t.Fatalf("open-loop rate not held: %s, want %d/s within 2 %% and %d in each second", fmtRate(got, perSec), rate, rate)
	}
}

func fmtRate(got float64, perSec []int) string {
	return fmt.Sprintf("achieved %.1f/s, per second %v", got, perSec)
}

// TestOpenLoopScheduleRealClock runs the same step on the system clock
// (the kernel-timer pacer) and checks what holds however busy the machine
// is: every scheduled request is sent and recorded once, at its slot; none
// reaches the server before its slot; and how late a worker took it up
// (its sched-lag) is counted in its latency. Whether the rate is held in real time is
// TestOpenLoopRateRealTime's question, for a quiet machine.
func TestOpenLoopScheduleRealClock(t *testing.T) {
	if testing.Short() {
		t.Skip("2 s step on the real clock")
	}
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	var mu sync.Mutex
	var arrived []time.Time
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		mu.Lock()
		arrived = append(arrived, now)
		mu.Unlock()
	}), true, false)
	const rate, secs = 500, 2
	paths(t, func(t *testing.T, force bool) {
		mu.Lock()
		arrived = nil
		mu.Unlock()
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		res := run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 20, Rate: rate, Duration: secs * time.Second})
		mu.Lock() // as in TestOpenLoopRateOnClock
		arrived := arrived
		mu.Unlock()
		if len(res) != rate*secs || len(arrived) != rate*secs {
			t.Fatalf("%d requests recorded and %d sent, want %d", len(res), len(arrived), rate*secs)
		}
		sort.Slice(res, func(i, j int) bool { return res[i].Start.Before(res[j].Start) })
		sort.Slice(arrived, func(i, j int) bool { return arrived[i].Before(arrived[j]) })
		first := res[0].Start
		for i, r := range res {
			if r.Err != "" || r.Status != 200 || r.Rate != rate {
				t.Fatalf("request %d failed: %+v", i, r)
			}
			// The slots are those of the pacer's float arithmetic; they
			// may differ from i*2ms by a rounding nanosecond.
			if want := time.Duration(i) * time.Second / rate; r.Start.Sub(first)-want > time.Nanosecond || want-r.Start.Sub(first) > time.Nanosecond {
				t.Fatalf("request %d recorded at %v into the step, want its slot %v", i, r.Start.Sub(first), want)
			}
			if r.SchedLag < 0 || r.Latency < r.SchedLag {
				t.Fatalf("request %d: sched-lag %v not counted in its latency %v", i, r.SchedLag, r.Latency)
			}
			// The k-th arrival cannot precede the k-th slot unless some
			// request left before its own.
			if arrived[i].Before(r.Start) {
				t.Fatalf("request %d reached the server %v before the %d-th slot", i, r.Start.Sub(arrived[i]), i)
			}
		}
	})
}

// TestOpenLoopRateRealTime: on the system clock, 500 requests/s held
// within 2 % over 5 s, and each second within 10 %. It measures the
// machine as much as the pacer (a busy machine starves the pacer and the
// workers), so scripts/test-all runs it alone, on a quiet machine, and
// not under -race; the pacing logic itself is TestOpenLoopRateOnClock's.
// A warm-up step first leaves the step its connections: otherwise its
// first second measures net/http's mTLS handshakes (37 of them for -c 20,
// sends up to 600 ms late under -race on a busy machine, then a burst).
func TestOpenLoopRateRealTime(t *testing.T) {
	loadtest.QuietMachine(t)
	if raceEnabled {
		t.Skip("a rate in real time: under -race it measures the race detector (TestOpenLoopRateOnClock checks the pacing on the test's clock)")
	}
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false)
	const rate, secs = 500.0, 5
	e, err := load.New(mtlsOpts(p, true), load.Template{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Run(context.Background(), load.Step{Concurrency: 20, Rate: rate, Duration: time.Second, KeepConns: true}, load.Discard); err != nil {
		t.Fatal(err)
	}
	// A run the tool's own verdict on this process says the machine
	// disturbed (loadtest.SinceVerdict) measured the machine: run again.
	loadtest.OnQuietMachine(t, func() string {
		from := cpuload.Take(time.Now())
		var c collect
		if err := e.Run(context.Background(), load.Step{Concurrency: 20, Rate: rate, Duration: secs * time.Second}, &c); err != nil {
			t.Fatal(err)
		}
		if busy := loadtest.SinceVerdict(from); busy != "" {
			return busy
		}
		checkRealTimeRate(t, c.res, rate, secs)
		return ""
	})
}

// checkRealTimeRate: the requests of a secs-long step at rate were sent
// at that rate, overall within 2 % and each second within 10 %.
func checkRealTimeRate(t *testing.T, res []load.Result, rate float64, secs int) {
	t.Helper()
	if len(res) != int(rate)*secs {
		t.Fatalf("%d requests scheduled, want %d", len(res), int(rate)*secs)
	}
	// When a worker took each request up: the pacer's release, late only
	// by the tester's own lateness (a wait for a connection is the
	// server's, and comes after).
	sent := make([]time.Time, len(res))
	for i, r := range res {
		if r.Err != "" || r.Rate != rate {
			t.Fatalf("request failed: %+v", r)
		}
		sent[i] = r.Start.Add(r.SchedLag)
	}
	sort.Slice(sent, func(i, j int) bool { return sent[i].Before(sent[j]) })
	got := float64(len(sent)-1) / sent[len(sent)-1].Sub(sent[0]).Seconds()
	// Also each second on its own: a burst-then-idle generator would
	// pass the average.
	perSec := make([]int, secs)
	for _, s := range sent {
		if i := int(s.Sub(sent[0]) / time.Second); i < secs {
			perSec[i]++
		}
	}
	ok := got >= rate*0.98 && got <= rate*1.02
	for _, n := range perSec[:secs-1] {
		ok = ok && float64(n) >= rate*0.9 && float64(n) <= rate*1.1
	}
	if !ok {
		t.Fatalf("open-loop rate not held in real time: %s (a quiet machine? this test measures it too)", fmtRate(got, perSec))
	}
}

// TestCoordinatedOmission stalls the server for 300 ms once. Requests
// scheduled during the stall must report latencies that include the wait
// until the stall ends, though the generator could not send them on time.
func TestCoordinatedOmission(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	var mu sync.Mutex
	var stallFrom, stallUntil time.Time
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		from, until := stallFrom, stallUntil
		mu.Unlock()
		if now := time.Now(); !from.IsZero() && now.After(from) && now.Before(until) {
			time.Sleep(until.Sub(now))
		}
	}), true, false)
	paths(t, func(t *testing.T, force bool) {
		start := time.Now().Add(50 * time.Millisecond)
		mu.Lock()
		stallFrom, stallUntil = start.Add(500*time.Millisecond), start.Add(800*time.Millisecond)
		mu.Unlock()
		// Few workers: once they all wait on the stalled server, later requests
		// cannot even be sent on time. Their sched-lag must count.
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		res := run(t, opts, load.Template{Name: "set", URL: srv.URL}, load.Step{Concurrency: 4, Rate: 200, Duration: 1500 * time.Millisecond, StartAt: start})
		if len(res) != 300 {
			t.Fatalf("%d requests, want 300", len(res))
		}
		var inStall, lagged int
		for _, r := range res {
			if r.Err != "" || r.Request != "set" {
				t.Fatalf("request failed: %+v", r)
			}
			if r.Start.After(stallFrom.Add(5*time.Millisecond)) && r.Start.Before(stallUntil.Add(-20*time.Millisecond)) {
				inStall++
				if want := stallUntil.Sub(r.Start) - 5*time.Millisecond; r.Latency < want {
					t.Fatalf("request scheduled %v into the stall reports %v, want >= %v", r.Start.Sub(stallFrom), r.Latency, want)
				}
				if r.SchedLag > 10*time.Millisecond {
					lagged++
				}
			}
		}
		if inStall < 50 || lagged < inStall/2 {
			t.Fatalf("%d requests scheduled in the stall, %d of them sent late", inStall, lagged)
		}
	})
}

// clockRun runs step s of template tpl on a fake clock in the background;
// its results arrive on the returned channel in completion order, and done
// carries Run's error.
func clockRun(t *testing.T, clk *loadtest.FakeClock, opts load.ClientOptions, tpl load.Template, s load.Step, setup ...func(*load.Engine)) (<-chan load.Result, <-chan error) {
	t.Helper()
	opts.Clock = clk
	e, err := load.New(opts, tpl)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range setup {
		f(e)
	}
	results := make(chan load.Result, 1024)
	done := make(chan error, 1)
	// A failed test cancels the step, which would otherwise wait on the
	// fake clock for ever.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		done <- e.Run(ctx, s, load.SinkFunc(func(r *load.Result) {
			select {
			case results <- *r:
			case <-ctx.Done():
			}
		}))
	}()
	return results, done
}

func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(30 * time.Second): // a hang guard, not a tolerance
		t.Fatalf("no %s within 30 s", what)
		panic("unreachable")
	}
}

// TestOpenLoopPacedOnClock: each request is released at its scheduled time
// on the engine's clock, never before; how late it left is its sched-lag
// and is part of its latency; and a light step (10 req/s, -c 64) reuses
// one warm connection instead of opening one per worker (fewer than 5),
// with either HTTP client.
func TestOpenLoopPacedOnClock(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		var conns atomic.Int64
		srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false, loadtest.CountConns(&conns))
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clk := loadtest.NewFakeClock(start)
		const rate, n = 10, 20
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		results, done := clockRun(t, clk, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 64, Rate: rate, Duration: n * time.Second / rate})
		for i := 0; i < n; i++ {
			sched := start.Add(time.Duration(i) * time.Second / rate)
			lag := time.Duration(i*7) * time.Microsecond
			if i > 0 {
				if got := recv(t, clk.Sleeping, "pacer sleep"); !got.Equal(sched) {
					t.Fatalf("request %d: pacer slept until %v, want %v", i, got.Sub(start), sched.Sub(start))
				}
				clk.Set(sched.Add(lag))
			}
			r := recv(t, results, "result")
			if r.Err != "" || r.Status != 200 {
				t.Fatalf("request %d failed: %+v", i, r)
			}
			if !r.Start.Equal(sched) || r.SchedLag != lag || r.Latency != lag || r.Rate != rate {
				t.Fatalf("request %d: start %v, sched-lag %v, latency %v; want start %v, sched-lag and latency %v",
					i, r.Start.Sub(start), r.SchedLag, r.Latency, sched.Sub(start), lag)
			}
		}
		if err := recv(t, done, "end of step"); err != nil {
			t.Fatal(err)
		}
		if len(results) != 0 {
			t.Fatalf("%d requests beyond the step's %d", len(results), n)
		}
		if c := conns.Load(); c >= 5 {
			t.Fatalf("10 req/s with -c 64 opened %d connections, want fewer than 5", c)
		}
	})
}

// TestOpenLoopNetHTTPHandedEarly: net/http's open loop hands a request to
// its worker when the pacer wakes, before its schedule, so that building it
// is not in its latency, and the worker holds it until its schedule: the
// server never sees it earlier. Its latency and sched-lag count from the
// schedule, the lag being how late the worker sent it. A request the pacer
// woke late for is handed over at once and not held.
func TestOpenLoopNetHTTPHandedEarly(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(start)
	var mu sync.Mutex
	var arrived []time.Time
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived = append(arrived, clk.Now())
		mu.Unlock()
	}), true, false)
	sent := func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), arrived...)
	}
	const rate, n, lead = 10, 12, 300 * time.Microsecond
	opts := mtlsOpts(p, true) // FastHTTP off: net/http
	results, done := clockRun(t, clk, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 8, Rate: rate, Duration: n * time.Second / rate},
		func(e *load.Engine) { load.SetHandLead(e, lead) })
	var seen []time.Time // sleeps received ahead of the request they belong to
	sleep := func() time.Time {
		if len(seen) > 0 {
			s := seen[0]
			seen = seen[1:]
			return s
		}
		return recv(t, clk.Sleeping, "sleep")
	}
	for i := 0; i < n; i++ {
		sched := start.Add(time.Duration(i) * time.Second / rate)
		late := time.Duration(i*7) * time.Microsecond
		if i > 0 {
			if got := sleep(); !got.Equal(sched.Add(-lead)) {
				t.Fatalf("request %d: pacer slept until %v, want %v (its schedule less the lead)", i, got.Sub(start), sched.Add(-lead).Sub(start))
			}
			if i%3 == 0 {
				// The pacer wakes after the schedule: handed over at once.
				clk.Set(sched.Add(late))
			} else {
				clk.Set(sched.Add(-lead / 2))
				// Two sleeps: the worker holding the request until its
				// schedule, and the pacer until the next one's lead (none
				// after the last).
				want := 2
				if i == n-1 {
					want = 1
				}
				held := false
				for k := 0; k < want; k++ {
					if s := recv(t, clk.Sleeping, "sleep"); s.Equal(sched) {
						held = true
					} else {
						seen = append(seen, s)
					}
				}
				if !held {
					t.Fatalf("request %d: handed over %v early and not held until its schedule (sleeps %v)", i, lead/2, seen)
				}
				if got := len(sent()); got != i {
					t.Fatalf("request %d: reached the server before its schedule (%d requests sent, want %d)", i, got, i)
				}
				clk.Set(sched.Add(late))
			}
		}
		r := recv(t, results, "result")
		if r.Err != "" || r.Status != 200 {
			t.Fatalf("request %d failed: %+v", i, r)
		}
		if !r.Start.Equal(sched) || r.SchedLag != late || r.Latency != late {
			t.Fatalf("request %d: start %v, sched-lag %v, latency %v; want start %v, sched-lag and latency %v",
				i, r.Start.Sub(start), r.SchedLag, r.Latency, sched.Sub(start), late)
		}
	}
	if err := recv(t, done, "end of step"); err != nil {
		t.Fatal(err)
	}
	got := sent()
	if len(got) != n || len(results) != 0 {
		t.Fatalf("%d requests reached the server, %d results beyond the step's %d", len(got), len(results), n)
	}
	for i, a := range got {
		if sched := start.Add(time.Duration(i) * time.Second / rate); a.Before(sched) {
			t.Fatalf("request %d reached the server at %v, before its schedule %v", i, a.Sub(start), sched.Sub(start))
		}
	}
}

// TestOpenLoopNetHTTPHandedEarlyCancelled: a step cancelled while a
// worker holds a request handed over before its schedule neither sends
// nor records it, as for a request the pacer had not handed over yet.
func TestOpenLoopNetHTTPHandedEarlyCancelled(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(start)
	var sent atomic.Int64
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent.Add(1) }), true, false)
	const rate, lead = 10, 300 * time.Microsecond
	opts := mtlsOpts(p, true) // FastHTTP off: net/http
	opts.Clock = clk
	e, err := load.New(opts, load.Template{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	load.SetHandLead(e, lead)
	results := make(chan load.Result, 16)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		done <- e.Run(ctx, load.Step{Concurrency: 4, Rate: rate, Duration: time.Second}, load.SinkFunc(func(r *load.Result) { results <- *r }))
	}()
	if r := recv(t, results, "first result"); r.Err != "" || r.Status != 200 {
		t.Fatalf("request 0 failed: %+v", r)
	}
	sched := start.Add(time.Second / rate)
	if got := recv(t, clk.Sleeping, "pacer sleep"); !got.Equal(sched.Add(-lead)) {
		t.Fatalf("pacer slept until %v, want %v", got.Sub(start), sched.Add(-lead).Sub(start))
	}
	clk.Set(sched.Add(-lead / 2))
	held := false
	for k := 0; k < 2; k++ { // the worker's hold and the pacer's next sleep
		if recv(t, clk.Sleeping, "sleep").Equal(sched) {
			held = true
		}
	}
	if !held {
		t.Fatal("request 1 not held until its schedule")
	}
	cancel()
	if err := recv(t, done, "end of step"); err != context.Canceled {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	if len(results) != 0 || sent.Load() != 1 {
		t.Fatalf("after the cancel: %d more results, %d requests sent; want none recorded and 1 sent", len(results), sent.Load())
	}
}

// TestOpenLoopConnectionsFollowInFlight: a second connection is opened only
// while the first is busy, after waiting for it about as long as a dial
// takes, and afterwards both are reused; with either client (the lean
// pool's policy, and the same through net/http's gate).
func TestOpenLoopConnectionsFollowInFlight(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		var conns atomic.Int64
		handler, arrived, open := holdFirst()
		srv := loadtest.NewMTLSServer(t, p, handler, true, false, loadtest.CountConns(&conns))
		// After the server's cleanup (cleanups run last first): a failed
		// test must not leave the handler blocked, nor the server's Close
		// waiting for it.
		t.Cleanup(open)
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clk := loadtest.NewFakeClock(start)
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		results, done := clockRun(t, clk, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 64, Rate: 10, Requests: 10})
		// Request 0 left at once on the connection dialled before the step
		// (lean: the pool's; net/http: the gate's stash) and is
		// held at the server; request 1 is due while it is in flight, and
		// waits for its connection first (the patience: 2 ms while no dial
		// of the step has been timed, the dial having taken no time on the
		// test's clock; the pacer meanwhile sleeps until request 2).
		// Nothing comes back within it: request 1 dials.
		recv(t, arrived, "request 0 at the server")
		due1 := start.Add(100 * time.Millisecond)
		if got := recv(t, clk.Sleeping, "pacer sleep"); !got.Equal(due1) {
			t.Fatalf("pacer slept until %v, want %v", got.Sub(start), due1.Sub(start))
		}
		clk.Set(due1)
		due2 := start.Add(200 * time.Millisecond)
		patience, b := recv(t, clk.Sleeping, "sleep"), recv(t, clk.Sleeping, "sleep")
		if patience.After(b) {
			patience, b = b, patience
		}
		if !patience.Equal(due1.Add(2*time.Millisecond)) || !b.Equal(due2) {
			t.Fatalf("sleeps until %v and %v, want the patience until %v and the pacer until %v",
				patience.Sub(start), b.Sub(start), due1.Add(2*time.Millisecond).Sub(start), due2.Sub(start))
		}
		clk.Set(patience)
		// Its wait for a connection is in its latency, but it is not
		// sched-lag: a worker took it up on time, and the wait was the
		// server's (its only connection busy).
		if r := recv(t, results, "result"); !r.Start.Equal(due1) || r.SchedLag != 0 || r.Latency != patience.Sub(due1) || r.Err != "" {
			t.Fatalf("first result should be request 1, taken up on time, its latency the %v it waited for a connection: %+v", patience.Sub(due1), r)
		}
		open()
		if r := recv(t, results, "result"); !r.Start.Equal(start) || r.Err != "" {
			t.Fatalf("second result should be request 0: %+v", r)
		}
		for i := 2; i < 10; i++ {
			if i == 2 {
				clk.Set(due2)
			} else {
				clk.Set(recv(t, clk.Sleeping, "pacer sleep"))
			}
			if r := recv(t, results, "result"); r.Err != "" || r.SchedLag != 0 {
				t.Fatalf("request %d failed or was late: %+v", i, r)
			}
		}
		if err := recv(t, done, "end of step"); err != nil {
			t.Fatal(err)
		}
		if c := conns.Load(); c != 2 {
			t.Fatalf("at most 2 requests were in flight but %d connections were opened", c)
		}
	})
}

// TestClosedLoopConnectionPerWorker: closed loop keeps hey's model, one
// connection per worker.
func TestClosedLoopConnectionPerWorker(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		var conns atomic.Int64
		srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false, loadtest.CountConns(&conns))
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		res := run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 4, Requests: 40})
		if len(res) != 40 {
			t.Fatalf("%d results, want 40", len(res))
		}
		if c := conns.Load(); c != 4 {
			t.Fatalf("4 closed-loop workers opened %d connections, want 4", c)
		}
	})
}

// TestOpenLoopCancelDuringLongGap: cancelling a slow open-loop step ends
// it without waiting for the next scheduled request (the kernel timer's
// sleep is interrupted).
func TestOpenLoopCancelDuringLongGap(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false)
	e, err := load.New(mtlsOpts(p, true), load.Template{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- e.Run(ctx, load.Step{Concurrency: 2, Rate: 0.001, Duration: time.Hour}, load.SinkFunc(func(*load.Result) { first <- struct{}{} }))
	}()
	recv(t, first, "first request")
	cancel()
	if err := recv(t, done, "end of the cancelled step"); err != context.Canceled {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
}

// TestOpenLoopStartAt: a step given a start time sends its first request at
// that time on the engine's clock, through the pacer (not a coarser wait).
func TestOpenLoopStartAt(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	at := now.Add(1500 * time.Millisecond)
	results, done := clockRun(t, clk, mtlsOpts(p, true), load.Template{URL: srv.URL}, load.Step{Concurrency: 2, Rate: 4, Requests: 2, StartAt: at, RunStart: now})
	for i := 0; i < 2; i++ {
		sched := at.Add(time.Duration(i) * 250 * time.Millisecond)
		if got := recv(t, clk.Sleeping, "pacer sleep"); !got.Equal(sched) {
			t.Fatalf("request %d: pacer slept until %v, want %v", i, got.Sub(now), sched.Sub(now))
		}
		clk.Set(sched)
		r := recv(t, results, "result")
		if !r.Start.Equal(sched) || r.SchedLag != 0 || r.Offset != sched.Sub(now) || r.Err != "" {
			t.Fatalf("request %d: %+v, want start %v, offset %v", i, r, sched, sched.Sub(now))
		}
	}
	if err := recv(t, done, "end of step"); err != nil {
		t.Fatal(err)
	}
}

// TestOpenLoopKeepConns: a step with KeepConns (a warm-up) leaves its
// connections to the engine's next step, which sends on them instead of
// dialling; without it, each step dials its own. Either HTTP client.
func TestOpenLoopKeepConns(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		var conns atomic.Int64
		srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false, loadtest.CountConns(&conns))
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		e, err := load.New(opts, load.Template{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		step := load.Step{Concurrency: 8, Rate: 200, Requests: 3, KeepConns: true}
		for i := 0; i < 2; i++ {
			if err := e.Run(context.Background(), step, load.Discard); err != nil {
				t.Fatal(err)
			}
		}
		kept := conns.Load()
		step.KeepConns = false
		if err := e.Run(context.Background(), step, load.Discard); err != nil {
			t.Fatal(err)
		}
		if c := conns.Load(); c != kept {
			t.Fatalf("the step after a KeepConns step opened %d connections, want 0", c-kept)
		}
		if err := e.Run(context.Background(), step, load.Discard); err != nil {
			t.Fatal(err)
		}
		if c := conns.Load(); c == kept {
			t.Fatal("a step after one without KeepConns opened no connection: the pool was not closed")
		}
	})
}

// TestOpenLoopNoDialStormAfterStall: when a stall of the tester leaves
// dozens of requests due at once, they wait for the connection in use to
// come back instead of each dialling (handshakes on the core that sends
// would delay the requests due next, which would dial in turn); with
// either client.
func TestOpenLoopNoDialStormAfterStall(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		var conns atomic.Int64
		srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false, loadtest.CountConns(&conns))
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clk := loadtest.NewFakeClock(start)
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		const n = 50
		results, done := clockRun(t, clk, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 64, Rate: 1000, Requests: n})
		recv(t, results, "request 0")
		// The tester "stalls" for 48 ms: every request is due at once.
		recv(t, clk.Sleeping, "pacer sleep")
		clk.Set(start.Add((n - 1) * time.Millisecond))
		for i := 1; i < n; i++ {
			if r := recv(t, results, "result"); r.Err != "" {
				t.Fatalf("request failed: %+v", r)
			}
		}
		if err := recv(t, done, "end of step"); err != nil {
			t.Fatal(err)
		}
		if c := conns.Load(); c != 1 {
			t.Fatalf("%d requests due at once against a server that answers at once opened %d connections, want 1", n-1, c)
		}
	})
}

// TestOpenLoopPredial: before a step's clock starts, the client dials
// the connections its first requests will need (the requests due during
// one handshake), at most 4 and at most -c; a step with less than one
// request due per handshake dials one (TestOpenLoopPacedOnClock). With
// either client: the lean pool's idle connections, net/http's gate's stash.
// Those no request took are closed with the step (no KeepConns).
func TestOpenLoopPredial(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		for _, c := range []struct{ conc, want int64 }{{64, 4}, {2, 2}} {
			var conns atomic.Int64
			closed := make(chan struct{}, 16)
			srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false, func(s *http.Server) {
				s.ConnState = func(_ net.Conn, st http.ConnState) {
					switch st {
					case http.StateNew:
						conns.Add(1)
					case http.StateClosed:
						closed <- struct{}{}
					}
				}
			})
			opts := mtlsOpts(p, true)
			opts.FastHTTP = !force
			// 10^6 requests/s: any handshake takes more than a microsecond.
			res := run(t, opts, load.Template{Method: "GET", URL: srv.URL}, load.Step{Concurrency: int(c.conc), Rate: 1e6, Requests: 1})
			if len(res) != 1 || res[0].Err != "" {
				t.Fatalf("-c %d: results %+v", c.conc, res)
			}
			if res[0].DNSDial != 0 || res[0].DNS != 0 {
				t.Fatalf("-c %d: the step's request dialled (%v) beside the connections dialled before it", c.conc, res[0].DNSDial)
			}
			if got := conns.Load(); got != c.want {
				t.Fatalf("-c %d at 10^6 requests/s: %d connections dialled, want %d", c.conc, got, c.want)
			}
			for i := range c.want {
				recv(t, closed, fmt.Sprintf("close of connection %d of %d after the step", i+1, c.want))
			}
		}
	})
}

// TestOpenLoopPredialServesFirstRequests: the connections dialled before
// the step count as idle for the step's first requests: a request due
// while another holds the first of them goes at once to the second (no
// wait for a connection back, no dial on the step's clock) and reports no
// DNS+dialup. With net/http this is the gate counting its stash: uncounted,
// the second request would wait a dial's time for the busy connection
// (needDial names no reason to dial with one request in flight and none
// back yet). The test's clock moves 1 ms during the first handshake (the
// server accepting its connection), so the warm dial's time is 1 ms: at
// 1,500 requests/s, 2 connections before the clock.
func TestOpenLoopPredialServesFirstRequests(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clk := loadtest.NewFakeClock(start)
		t1 := start.Add(time.Millisecond)
		var conns atomic.Int64
		handler, arrived, open := holdFirst()
		srv := loadtest.NewMTLSServer(t, p, handler, true, false, func(s *http.Server) {
			s.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew && conns.Add(1) == 1 {
					clk.Set(t1) // before the client's handshake can end
				}
			}
		})
		t.Cleanup(open)
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		results, done := clockRun(t, clk, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 64, Rate: 1500, Requests: 2})
		recv(t, arrived, "request 0 at the server")
		due1 := recv(t, clk.Sleeping, "pacer sleep")
		if want := t1.Add(time.Second / 1500); due1.Before(t1) || due1.After(want) {
			t.Fatalf("pacer slept until %v, want request 1 due at %v", due1.Sub(start), want.Sub(start))
		}
		clk.Set(due1)
		select {
		case r := <-results:
			if r.Err != "" || !r.Start.Equal(due1) || r.SchedLag != 0 || r.Latency != 0 || r.DNSDial != 0 || r.DNS != 0 {
				t.Fatalf("request 1 should leave at once on the second connection dialled before the step, DNS+dialup 0: %+v", r)
			}
		case w := <-clk.Sleeping:
			t.Fatalf("request 1 waited for a connection (until %v) beside one dialled before the step", w.Sub(start))
		case <-time.After(30 * time.Second): // a hang guard, not a tolerance
			t.Fatal("no result for request 1 within 30 s")
		}
		open()
		if r := recv(t, results, "request 0"); r.Err != "" || !r.Start.Equal(t1) || r.DNSDial != 0 {
			t.Fatalf("request 0 should have left at the step's start on a connection dialled before it: %+v", r)
		}
		if err := recv(t, done, "end of step"); err != nil {
			t.Fatal(err)
		}
		if c := conns.Load(); c != 2 {
			t.Fatalf("%d connections opened, want the 2 dialled before the step", c)
		}
	})
}

// holdFirst is a handler that holds the first request in flight until open
// is called (arrived: it has come); later requests are answered at once.
func holdFirst() (h http.Handler, arrived <-chan struct{}, open func()) {
	var reqs atomic.Int64
	came, gate := make(chan struct{}, 1), make(chan struct{})
	var release sync.Once
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reqs.Add(1) == 1 {
			came <- struct{}{}
			<-gate
		}
	})
	return h, came, func() { release.Do(func() { close(gate) }) }
}

// TestOpenLoopNotSentAfterTimeout: a request the pacer comes to a client
// timeout or more after its schedule (every worker busy meanwhile) is
// recorded as failed and not sent (its latency, counted from its schedule,
// is past the timeout whatever the server does); one it comes to sooner is
// sent late. Without the rule a
// server that holds every request held the run for one timeout per -c
// requests due (hey -rate 100 -c 4 -z 2s -t 3: 150 s). On the engine's
// clock, with either HTTP client.
func TestOpenLoopNotSentAfterTimeout(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		arrived := make(chan struct{}, 8)
		release := make(chan struct{}, 8)
		var served atomic.Int64
		stop := make(chan struct{})
		srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served.Add(1)
			arrived <- struct{}{}
			select {
			case <-release:
			case <-stop: // the test failed: let the server close
			}
		}), true, false)
		t.Cleanup(func() { close(stop) }) // before the server's own Close
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clk := loadtest.NewFakeClock(start)
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		opts.Timeout = 2 * time.Second // judged on the engine's clock; the server answers long before real time gets there
		const ms = time.Millisecond
		results, done := clockRun(t, clk, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 1, Rate: 10, Duration: 400 * ms})
		recv(t, arrived, "request 0 at the server")
		if got := recv(t, clk.Sleeping, "pacer sleep"); !got.Equal(start.Add(100 * ms)) {
			t.Fatalf("pacer slept until %v, want 100ms", got.Sub(start))
		}
		// The pacer comes to requests 1-3 at 2.25 s, the only worker
		// holding request 0: 1 and 2 are 2.15 and 2.05 s late (not sent),
		// 3 is 1.95 s late (sent).
		clk.Set(start.Add(2250 * ms))
		release <- struct{}{}
		recv(t, arrived, "request 3 at the server")
		release <- struct{}{}
		got := map[time.Duration]load.Result{}
		for range 4 {
			r := recv(t, results, "result")
			got[r.Start.Sub(start)] = r
		}
		if err := recv(t, done, "end of step"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			at, late time.Duration
			sent     bool
		}{{0, 0, true}, {100 * ms, 2150 * ms, false}, {200 * ms, 2050 * ms, false}, {300 * ms, 1950 * ms, true}} {
			r := got[c.at]
			switch {
			case c.sent && (r.Err != "" || r.Status != 200 || r.SchedLag != c.late):
				t.Fatalf("request at %v: %+v, want sent %v late", c.at, r, c.late)
			case !c.sent && (r.Err != "not sent: waited the timeout for a free worker" || r.Status != 0 || r.SchedLag != c.late || r.Latency != c.late):
				t.Fatalf("request at %v: %+v, want not sent, %v late", c.at, r, c.late)
			}
		}
		if n := served.Load(); n != 2 {
			t.Fatalf("the server saw %d requests, want 2 (requests 1 and 2 not sent)", n)
		}
	})
}
