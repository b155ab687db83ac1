package results

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// closedLoop feeds a steady closed loop of c workers for span seconds whose
// latencies are exponential with mean(t) at start time t.
func closedLoop(s *Steadiness, seed uint64, c int, span float64, mean func(t float64) float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	for w := 0; w < c; w++ {
		for t := 0.0; t < span; {
			l := rng.ExpFloat64() * mean(t)
			s.add(time.Duration(t*1e9), time.Duration(l*1e9))
			t += l
		}
	}
}

func TestSteadyStepIsSteady(t *testing.T) {
	// Chance alone must not flag a steady step: 1000 seeded steps (4 sigma: about 1 in 10,000 by chance).
	flagged := 0
	for seed := uint64(0); seed < 1000; seed++ {
		s := NewSteadiness()
		closedLoop(s, seed, 4, 3, func(float64) float64 { return 0.005 })
		v := s.Verdict()
		if !v.Judged {
			t.Fatalf("seed %d: a 3 s step of ~2400 requests not judged", seed)
		}
		if !v.Steady() {
			flagged++
		}
	}
	if flagged > 0 {
		t.Fatalf("%d of 1000 steady steps flagged as drifting", flagged)
	}
}

func TestWarmingTargetIsNotSteady(t *testing.T) {
	// Service time falling from 20 ms to 15 ms across a short step, as a
	// JVM warming up: a closed loop's throughput rises by about 25 %; the
	// p50 of 500 exponential latencies is too noisy to prove its fall.
	s := NewSteadiness()
	closedLoop(s, 1, 2, 5, func(t float64) float64 { return 0.020 - 0.001*t })
	v := s.Verdict()
	if !v.Judged || v.Steady() || !v.ThroughputDrift {
		t.Fatalf("warming target judged %+v", v)
	}
	if v.ThroughputChange < 0.15 {
		t.Fatalf("changes %+v, want throughput up by more than 15 %%", v)
	}
	// With enough requests the p50's fall is proven too.
	s = NewSteadiness()
	closedLoop(s, 2, 8, 20, func(t float64) float64 { return 0.020 - 0.00025*t })
	if v := s.Verdict(); !v.P50Drift || v.P50Change > -0.15 {
		t.Fatalf("p50 drift over 9,000 requests judged %+v", v)
	}
}

func TestSmallDriftIsSteady(t *testing.T) {
	// 4 % slower by the end of a long step: real, significant with 100k
	// requests, but below the 10 % an operator would act on.
	s := NewSteadiness()
	closedLoop(s, 3, 8, 60, func(t float64) float64 { return 0.005 * (1 + 0.04*t/60) })
	if v := s.Verdict(); !v.Judged || !v.Steady() {
		t.Fatalf("a 4 %% drift flagged: %+v", v)
	}
}

func TestShortStepNotJudged(t *testing.T) {
	s := NewSteadiness()
	for i := 0; i < 30; i++ {
		s.add(time.Duration(i)*time.Millisecond, time.Duration(1+i)*time.Millisecond) // drifting, but 30 requests
	}
	if v := s.Verdict(); v.Judged || !v.Steady() {
		t.Fatalf("30 requests judged: %+v", v)
	}
	// 1,000 requests, but within 100 ms: a hiccup, not a trend. (Steps
	// under 2 s are not judged at all.)
	s = NewSteadiness()
	for i := 0; i < 1000; i++ {
		s.add(time.Duration(i)*100*time.Microsecond, time.Duration(1+i)*time.Millisecond)
	}
	if v := s.Verdict(); v.Judged || !v.Steady() {
		t.Fatalf("a 100 ms step judged: %+v", v)
	}
}

func TestReservoirKeepsVerdict(t *testing.T) {
	// Past the reservoir the verdict comes from a sample; throughput is
	// scaled back to every request.
	s := NewSteadiness()
	n := 3 * steadyReservoir
	for i := 0; i < n; i++ {
		at := float64(i) / float64(n) * 10 // 10 s, constant rate
		lat := 0.004
		if at >= 5 {
			lat = 0.006 // 50 % slower in the second half
		}
		s.add(time.Duration(at*1e9), time.Duration(lat*1e9))
	}
	if len(s.samples) != steadyReservoir {
		t.Fatalf("kept %d samples", len(s.samples))
	}
	v := s.Verdict()
	if !v.P50Drift || v.ThroughputDrift {
		t.Fatalf("verdict %+v", v)
	}
	if math.Abs(v.FirstThroughput-float64(n)/10) > 0.02*float64(n)/10 {
		t.Fatalf("first half throughput %v, want about %v", v.FirstThroughput, n/10)
	}
}

func TestUnsteadyAndTesterBoundStepsAreNotCapacity(t *testing.T) {
	s := &Summary{SLO: SLO{Percentile: 95, LatencyS: 0.100, MaxErrorRate: 0.01}}
	add := func(conc int, tput, mean, p float64) *SummaryStep {
		s.Steps = append(s.Steps, SummaryStep{Concurrency: conc, Tally: Tally{Requests: 1000}, Throughput: tput, Latencies: Latencies{MeanS: mean, SLOPercentileS: p}, MeetsSLO: p <= 0.1, Steady: bp(true)})
		return &s.Steps[len(s.Steps)-1]
	}
	add(1, 100, 0.010, 0.012)
	add(2, 190, 0.0105, 0.013)
	w := add(4, 300, 0.013, 0.050)
	w.Judge(Stationarity{Judged: true, FirstP50S: 0.016, SecondP50S: 0.012, P50Change: -0.25, P50Drift: true})
	tb := add(8, 350, 0.023, 0.090)
	cpu := 0.93
	tb.TesterCPU, tb.TesterBound, tb.TesterBoundReason = &cpu, true, "tester CPU 93 % of 2 core(s)"
	s.Finish()
	if *s.MaxThroughputAtSLO != 190 || *s.Knee != 190 {
		t.Fatalf("capacity %v, knee %v: the unsteady and the tester-bound step counted", *s.MaxThroughputAtSLO, *s.Knee)
	}
	got := strings.Join(s.StepWarnings, "\n")
	for _, want := range []string{"step 3 (concurrency 4): not steady, p50 16.00 -> 12.00 ms (-25 %)", "tester CPU 93 % of 2 core(s) at step 4 (concurrency 8): add testers or use a bigger VM"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
}

// A run whose every step met the SLO while the tester's host was busy has
// no capacity, and the summary says why and what to do, not "no step met
// the SLO" (the single-host demo on a busy laptop).
func TestHostBoundRunSaysWhyItHasNoCapacity(t *testing.T) {
	s := &Summary{SLO: SLO{Percentile: 95, LatencyS: 0.100, MaxErrorRate: 0.01}}
	for i, host := range []float64{0.97, 1.0, 0.99} {
		h := host
		s.Steps = append(s.Steps, SummaryStep{Concurrency: i + 1, Tally: Tally{Requests: 500}, Throughput: float64(100 * (i + 1)), Latencies: Latencies{MeanS: 0.01, SLOPercentileS: 0.02},
			MeetsSLO: true, Steady: bp(true), TesterUsage: TesterUsage{HostCPU: &h, TesterBound: true, TesterBoundReason: fmt.Sprintf("host CPU %.0f %% busy on the tester's core(s)", 100*h)}})
	}
	s.Finish()
	if s.MaxThroughputAtSLO != nil {
		t.Fatalf("capacity %v from tester-bound steps", *s.MaxThroughputAtSLO)
	}
	var b strings.Builder
	s.WriteTable(&b)
	out := b.String()
	for _, want := range []string{
		"max throughput at SLO: unknown: 3 of 3 steps met the SLO but none counts: 3 tester-bound (host CPU 97-100 % busy): other work kept the tester's CPUs busy: run on a quiet machine",
		"host CPU 100 % busy on the tester's core(s) at step 2 (concurrency 2): other work kept the tester's CPUs busy",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "bigger VM") || strings.Contains(out, "no step met the SLO") {
		t.Errorf("a busy host is not cured by a bigger tester, and steps did meet the SLO:\n%s", out)
	}
}

func bp(b bool) *bool { return &b }
