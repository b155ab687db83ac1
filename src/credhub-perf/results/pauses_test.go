package results

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

// pausingServer is one server of a fixed service time that stops for
// pause every `every` from phase on, as credhub-sim's capacity model does
// (-workers 1 -cores 1 -service-time 1ms -pause-every -pause): a request
// that would start during a pause starts at its end, and one in service
// when a pause begins finishes that much later. Time is the simulation's
// own, so what it gives is the queue's exact answer, however busy the
// machine that computes it.
type pausingServer struct {
	service, every, pause, phase time.Duration
	free                         time.Duration // when the server is next free
}

// serve returns when a request arriving at t ends (FIFO).
func (p *pausingServer) serve(t time.Duration) time.Duration {
	start := max(t, p.free)
	if p.every > 0 {
		k := (start - p.phase) / p.every
		if begin := p.phase + k*p.every; start >= begin && start < begin+p.pause {
			start = begin + p.pause
		}
	}
	end := start + p.service
	if p.every > 0 {
		k := (start-p.phase)/p.every + 1
		for next := p.phase + k*p.every; next < end; next += p.every {
			end += p.pause
		}
	}
	p.free = end
	return end
}

// openArrivals: Poisson arrivals at rate for d, their results in
// completion order (FIFO: arrival order).
func openArrivals(srv *pausingServer, rate float64, d time.Duration, seed uint64) []load.Result {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	var out []load.Result
	for t := time.Duration(0); ; {
		t += time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
		if t >= d {
			return out
		}
		end := srv.serve(t)
		out = append(out, load.Result{Offset: t, Latency: end - t, Status: 200, Rate: rate})
	}
}

type readyTimes []time.Duration

func (h readyTimes) Len() int           { return len(h) }
func (h readyTimes) Less(i, j int) bool { return h[i] < h[j] }
func (h readyTimes) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *readyTimes) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *readyTimes) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// closedClients: n clients that each send their next request when the last
// one came back, for d.
func closedClients(srv *pausingServer, n int, d time.Duration) []load.Result {
	h := make(readyTimes, n)
	var out []load.Result
	for h.Len() > 0 {
		t := heap.Pop(&h).(time.Duration)
		if t >= d {
			continue
		}
		end := srv.serve(t)
		out = append(out, load.Result{Offset: t, Latency: end - t, Status: 200, Concurrency: n})
		heap.Push(&h, end)
	}
	slices.SortFunc(out, func(a, b load.Result) int { return int(a.Offset + a.Latency - b.Offset - b.Latency) })
	return out
}

// simStep summarises a step's requests as a run does (ramp's runStep,
// merge.go): statistics, the steadiness verdict and the tail's causes.
func simStep(rs []load.Result, concurrency int, rate float64, slo SLO) SummaryStep {
	stats, steady, tail := NewStats(), NewSteadiness(), NewTailCause(time.Duration(slo.LatencyS*1e9))
	for i := range rs {
		stats.Record(&rs[i])
		steady.Record(&rs[i])
		tail.Record(&rs[i])
	}
	st := NewSummaryStep(0, concurrency, rate, stats.Snapshot(), slo)
	if rate > 0 {
		st.Judge(steady.OpenLoopVerdict(tail))
	} else {
		st.Judge(steady.Verdict())
	}
	st.Tail = tail.Figures()
	return st
}

// p95Of is the 95th percentile of the requests' latencies, exactly.
func p95Of(rs []load.Result) time.Duration {
	l := make([]time.Duration, len(rs))
	for i, r := range rs {
		l[i] = r.Latency
	}
	slices.Sort(l)
	return l[int(math.Ceil(0.95*float64(len(l))))-1]
}

// A target at 70 % of its capacity that paused once, 150 ms, early in a
// 2.2 s step: the backlog behind the pause (about 500 ms of arrivals)
// slows half of the first half and none of the second. Compared over
// every request, the halves' medians differ and the step reads "not
// steady"; compared beside the pause, it is steady, as it is. A target
// whose service slows by half in the second half drifts either way.
func TestSteadinessBesidePauses(t *testing.T) {
	slo := SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}
	// One pause at 0.3 s: every = 1 h puts the next far beyond the step.
	srv := &pausingServer{service: time.Millisecond, every: time.Hour, pause: 150 * time.Millisecond, phase: 300 * time.Millisecond}
	rs := openArrivals(srv, 700, 2200*time.Millisecond, 7)
	steady, tail := NewSteadiness(), NewTailCause(100*time.Millisecond)
	for i := range rs {
		steady.Record(&rs[i])
		tail.Record(&rs[i])
	}
	if tail.Figures().Stalls != 1 {
		t.Fatalf("stalls %+v", tail.Figures())
	}
	if v := steady.Verdict(); v.Steady() {
		t.Fatalf("over every request the pause reads as drift, yet steady: %+v", v)
	}
	v := steady.OpenLoopVerdict(tail)
	if !v.Judged || !v.Steady() || v.PauseHeld < 300 || v.PauseHeld > 450 {
		t.Fatalf("beside the pause: %+v", v)
	}
	if st := simStep(rs, 175, 700, slo); st.Steady == nil || !*st.Steady {
		t.Fatalf("step %+v", st)
	}

	// Drift: the same pause, and the service 1.5 times slower from 1.1 s.
	srv = &pausingServer{service: time.Millisecond, every: time.Hour, pause: 150 * time.Millisecond, phase: 300 * time.Millisecond}
	first := openArrivals(srv, 500, 1100*time.Millisecond, 8)
	second := openArrivals(&pausingServer{service: 1500 * time.Microsecond}, 500, 1100*time.Millisecond, 9)
	for i := range second {
		second[i].Offset += 1100 * time.Millisecond
	}
	steady, tail = NewSteadiness(), NewTailCause(100*time.Millisecond)
	for _, r := range append(first, second...) {
		steady.Record(&r)
		tail.Record(&r)
	}
	if v := steady.OpenLoopVerdict(tail); !v.Judged || v.Steady() {
		t.Fatalf("a slower target beside a pause reads steady: %+v", v)
	}
}

// credhub-sim's target in simulated time: one server of 1 ms that stops
// for 20 ms every 250 ms (-workers 1 -cores 1 -service-time 1ms
// -pause-every 250ms -pause 20ms), an SLO of p95 <= 25 ms. A closed loop
// of a few clients keeps it busy between pauses (920 req/s) at a few ms
// each. Open arrivals queue behind each pause, and more so the nearer the
// rate is to the capacity: the SLO holds to the rate found from 200 s of
// arrivals (about 820 req/s). The confirmation, with the default fractions
// and bisections and the demo's 2.2 s steps, judged beside the pauses,
// sizes with that rate to within 10 % whatever the pauses' phase and the
// arrivals' draw, and every step that met the SLO counts.
func TestSizeWithMatchesQueueWithPauses(t *testing.T) {
	for v := range uint64(6) {
		s, truth := confirmOnPausingTarget(t, v)
		if s.SizeWith == nil || math.Abs(*s.SizeWith-truth) > 0.1*truth || s.SizeWithKind != KindOpenLoop {
			t.Fatalf("variant %d: size with %v (%s), truth %.0f req/s; headline %q", v, s.SizeWith, s.SizeWithKind, truth, s.Headline)
		}
		for _, st := range s.Steps[s.rampSteps():] {
			if st.MeetsSLO && !s.CountsStep(st) {
				t.Errorf("variant %d: rate %g met the SLO (p95 %.1f ms) but does not count: steady %v %+v", v, st.Rate, 1000*st.P95S, st.Steady, st.Stationarity)
			}
		}
	}
}

// pausingTarget is the target of TestSizeWithMatchesQueueWithPauses.
func pausingTarget(phase time.Duration) *pausingServer {
	return &pausingServer{service: time.Millisecond, every: 250 * time.Millisecond, pause: 20 * time.Millisecond, phase: phase}
}

// pausingTruth is the rate (req/s, to 2) at which 200 s of open arrivals
// on pausingTarget read p95 40 ms.
var pausingTruth = sync.OnceValue(func() float64 {
	lo, hi := 100.0, 1000.0
	for hi-lo > 2 {
		mid := (lo + hi) / 2
		if p95Of(openArrivals(pausingTarget(0), mid, 200*time.Second, 1)) <= 25*time.Millisecond {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
})

// confirmOnPausingTarget runs a closed-loop ramp of 1..8 clients and its
// confirmation on pausingTarget, in 2.2 s steps whose pauses fall at
// phases and arrivals from seeds that vary with variant; it returns the
// summary and the truth.
func confirmOnPausingTarget(t *testing.T, variant uint64) (*Summary, float64) {
	t.Helper()
	slo := SLO{Percentile: 95, LatencyS: 0.025, MaxErrorRate: 0.01}
	const stepD = 2200 * time.Millisecond
	s := &Summary{SLO: slo, Warmup: &Warmup{Mode: "fixed"}}
	for n := 1; n <= 8; n++ {
		phase := time.Duration(uint64(n)*137+variant*61) * time.Millisecond % (250 * time.Millisecond)
		s.Steps = append(s.Steps, simStep(closedClients(pausingTarget(phase), n, stepD), n, 0, slo))
	}
	s.Finish()
	if s.MaxThroughputAtSLO == nil || *s.MaxThroughputAtSLO < 850 {
		t.Fatalf("closed loop %v: %+v", s.MaxThroughputAtSLO, s.Steps)
	}
	c := *s.MaxThroughputAtSLO
	k := uint64(0)
	run := func(rate float64) {
		k++
		phase := time.Duration(k*173+variant*97) * time.Millisecond % (250 * time.Millisecond)
		s.Steps = append(s.Steps, simStep(openArrivals(pausingTarget(phase), rate, stepD, 10+k+100*variant), confirmWorkers(rate), rate, slo))
		s.Finish()
	}
	for _, f := range []float64{0.5, 0.7, 0.85, 1} {
		run(math.Round(f*c*1000) / 1000)
	}
	for range 2 {
		r, ok := s.NextConfirmRate()
		if !ok {
			break
		}
		run(r)
	}
	return s, pausingTruth()
}

// confirmWorkers stands in for the confirmation's worker cap (a quarter
// second's arrivals), the step's concurrency.
func confirmWorkers(rate float64) int { return int(math.Ceil(rate / 4)) }
