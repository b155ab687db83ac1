package results

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

// Stationarity bounds (docs/csv-format.md, "Steady steps"). A step is not
// steady when its second half differs from its first, by start time, in
// throughput or in median latency by more than SteadyBound, and by more
// than SteadySigma standard errors of that comparison, so that chance
// alone almost never flags a steady step and a drift of a few percent,
// which no operator would act on, never does either.
const (
	SteadyBound = 0.10
	SteadySigma = 4.0
	// A step with fewer requests than SteadyMinHalf in a half, or whose
	// requests start within less than SteadyMinSpanS, is not judged
	// (judged false, summary.json `steady` null, NotJudged says which): the test takes requests as independent, and
	// over a second or so they are not: one scheduling hiccup, or the
	// queue of a saturated closed loop wandering, moves a half's
	// throughput and median by 20 % (seen in 1.5 s demo steps) with no
	// drift at all. Over longer halves that wandering averages out.
	SteadyMinHalf  = 20
	SteadyMinSpanS = 2.0 // seconds
	// steadyReservoir bounds the memory of one step: beyond it the pairs
	// are a uniform sample (Vitter's algorithm R).
	steadyReservoir = 1 << 16
)

// Stationarity is the evidence behind a step's `steady` verdict: the
// step's two halves by request start time.
type Stationarity struct {
	Judged           bool    `json:"judged"`
	FirstThroughput  float64 `json:"first_half_throughput"`
	SecondThroughput float64 `json:"second_half_throughput"`
	FirstP50S        float64 `json:"first_half_p50_s"`
	SecondP50S       float64 `json:"second_half_p50_s"`
	// Changes are relative, second half against the first (throughput)
	// or against the whole step's median (p50): -0.2 is a 20 % fall.
	ThroughputChange float64 `json:"throughput_change"`
	P50Change        float64 `json:"p50_change"`
	ThroughputDrift  bool    `json:"throughput_drift"`
	P50Drift         bool    `json:"p50_drift"`
	// NotJudged: why a step was not judged ("" when it was): too few
	// requests, or requests that started within less than SteadyMinSpanS.
	NotJudged string `json:"not_judged,omitempty"`
	// StartSpanS: how long the step's requests kept starting (seconds),
	// the span a step must reach to be judged.
	StartSpanS float64 `json:"start_span_s"`
	// PauseHeld: of the requests sampled, how many the target's pauses
	// held (an open-loop step's; pauses.go), left out of the medians.
	PauseHeld int `json:"pause_held,omitempty"`
}

// Not-judged reasons (Stationarity.NotJudged).
const (
	NotJudgedFewRequests = "too few requests"
	NotJudgedShort       = "too short"
)

// Steady reports the verdict: no drift found (or too few requests to tell;
// Judged says which).
func (s Stationarity) Steady() bool { return !s.ThroughputDrift && !s.P50Drift }

type startLatency struct{ start, latency float32 } // seconds

// Steadiness collects one step's requests for the stationarity verdict, in
// bounded memory. Not safe for concurrent use (a load.Sink).
type Steadiness struct {
	n       int64
	samples []startLatency
	rng     *rand.Rand
}

// NewSteadiness returns an empty collector; its sampling is seeded, so a
// verdict recomputed from the same CSV is the same verdict.
func NewSteadiness() *Steadiness {
	return &Steadiness{rng: rand.New(rand.NewPCG(1, 2))}
}

// Record adds one request (load.Sink).
func (s *Steadiness) Record(r *load.Result) {
	s.add(r.Offset, r.Latency)
}

func (s *Steadiness) add(offset, latency time.Duration) {
	p := startLatency{float32(offset.Seconds()), float32(latency.Seconds())}
	s.n++
	if len(s.samples) < steadyReservoir {
		s.samples = append(s.samples, p)
		return
	}
	if j := s.rng.Int64N(s.n); j < steadyReservoir {
		s.samples[j] = p
	}
}

// Verdict compares the step's two halves.
func (s *Steadiness) Verdict() Stationarity { return s.verdict(nil, false) }

// OpenLoopVerdict is an open-loop step's verdict (pauses.go): the medians
// are compared over the requests no pause of the target held (t's stalls;
// nil: none), and against the spread of the median between stretches of
// the step as well as between requests.
func (s *Steadiness) OpenLoopVerdict(t *TailCause) Stationarity {
	var stalls []stall
	if t != nil {
		stalls = t.all
	}
	return s.verdict(stalls, true)
}

// verdict compares the step's two halves, the medians over the requests
// no stall held (heldByStalls; all of them without stalls), their spread
// between stretches too when batches is set (batchSE).
func (s *Steadiness) verdict(stalls []stall, batches bool) Stationarity {
	var v Stationarity
	if len(s.samples) == 0 {
		v.NotJudged = NotJudgedFewRequests
		return v
	}
	lo, hi := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for _, p := range s.samples {
		lo, hi = min(lo, p.start), max(hi, p.start)
	}
	half := float64(hi-lo) / 2
	v.StartSpanS = round3(2 * half)
	if 2*half < SteadyMinSpanS {
		v.NotJudged = NotJudgedShort
		return v
	}
	if len(s.samples) < 2*SteadyMinHalf {
		v.NotJudged = NotJudgedFewRequests
		return v
	}
	mid := lo + float32(half)
	held := heldByStalls(s.samples, stalls)
	var na, nb float64
	var a, b []startLatency
	for i, p := range s.samples {
		if p.start < mid {
			na++
		} else {
			nb++
		}
		if held[i] {
			continue
		}
		if p.start < mid {
			a = append(a, p)
		} else {
			b = append(b, p)
		}
	}
	if na < SteadyMinHalf || nb < SteadyMinHalf || len(a) < SteadyMinHalf || len(b) < SteadyMinHalf {
		v.NotJudged = NotJudgedFewRequests
		return v
	}
	v.Judged = true
	v.PauseHeld = len(s.samples) - len(a) - len(b)
	perSample := float64(s.n) / float64(len(s.samples))
	v.FirstThroughput = round3(na * perSample / half)
	v.SecondThroughput = round3(nb * perSample / half)

	// Throughput: counts of two equal spans; under a steady load their
	// difference has a standard error of at most sqrt(na+nb) (Poisson;
	// a closed loop is steadier than that, so the test is conservative).
	v.ThroughputChange = round4((nb - na) / na)
	rel := math.Abs(nb-na) / ((na + nb) / 2)
	v.ThroughputDrift = rel > SteadyBound && math.Abs(nb-na) > SteadySigma*math.Sqrt(na+nb)
	v.medianDrift(a, b, lo, mid, hi, batches)
	return v
}

// medianDrift compares the halves' medians: the share of the second half
// above the first half's median is 1/2 under a steady load, with a
// standard error of about sqrt(1/na + 1/nb) / 2 (a two-sample median
// test) when requests are independent. Under open arrivals near a
// target's capacity they are not: the queue wanders with the arrivals'
// chance bunching over tenths of a second, and a 10 s step's halves at
// 85 % of one server differed by 20 % in median with no drift at all. So
// with batches the error is at least the one seen between stretches of
// the step (batchSE).
func (v *Stationarity) medianDrift(a, b []startLatency, lo, mid, hi float32, batches bool) {
	la, lb := latencies(a), latencies(b)
	ma, mb, m := median(la), median(lb), median(append(slices.Clone(la), lb...))
	v.FirstP50S, v.SecondP50S = roundUS(ma), roundUS(mb)
	if m <= 0 {
		return
	}
	na, nb := float64(len(a)), float64(len(b))
	v.P50Change = round4((mb - ma) / m)
	share := shareAbove(lb, ma)
	se := 0.5 * math.Sqrt(1/na+1/nb)
	if batches {
		se = max(se, math.Hypot(batchSE(a, lo, mid, ma), batchSE(b, mid, hi, ma)))
	}
	v.P50Drift = math.Abs(v.P50Change) > SteadyBound && math.Abs(share-0.5) > SteadySigma*se
}

// steadyBatches: how many stretches of each half batchSE compares.
const steadyBatches = 10

// batchSE is the standard error of a half's share of requests above m,
// from the spread of that share between steadyBatches equal stretches of
// the half [from, to) (batch means); 0 with too few requests to tell.
func batchSE(half []startLatency, from, to float32, m float64) float64 {
	var above, n [steadyBatches]float64
	w := (to - from) / steadyBatches
	if w <= 0 {
		return 0
	}
	for _, p := range half {
		k := min(int((p.start-from)/w), steadyBatches-1)
		n[k]++
		if float64(p.latency) > m {
			above[k]++
		}
	}
	var sum, sq, k float64
	for i := range n {
		if n[i] < SteadyMinHalf/2 {
			continue
		}
		f := above[i] / n[i]
		sum, sq, k = sum+f, sq+f*f, k+1
	}
	if k < 3 {
		return 0
	}
	mean := sum / k
	return math.Sqrt(max(0, sq/k-mean*mean) / (k - 1))
}

func latencies(x []startLatency) []float64 {
	out := make([]float64, len(x))
	for i, p := range x {
		out[i] = float64(p.latency)
	}
	return out
}

// shareAbove: the share of x above m, ties counted half.
func shareAbove(x []float64, m float64) float64 {
	above := 0.0
	for _, v := range x {
		switch {
		case v > m:
			above++
		case v == m:
			above += 0.5
		}
	}
	return above / float64(len(x))
}

func median(x []float64) float64 {
	slices.Sort(x)
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

func round3(x float64) float64  { return math.Round(x*1000) / 1000 }
func round4(x float64) float64  { return math.Round(x*10000) / 10000 }
func roundUS(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// Merge adds o's requests (another tester's share of the same step).
func (s *Steadiness) Merge(o *Steadiness) {
	n := s.n + o.n
	for _, p := range o.samples {
		s.n++
		if len(s.samples) < steadyReservoir {
			s.samples = append(s.samples, p)
		} else if j := s.rng.Int64N(s.n); j < steadyReservoir {
			s.samples[j] = p
		}
	}
	s.n = n
}
