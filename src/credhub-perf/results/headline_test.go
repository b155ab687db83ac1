package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// headlineStep is a step of conc workers at 100*conc req/s within the SLO,
// judged steady.
func headlineStep(conc int) SummaryStep {
	return SummaryStep{Concurrency: conc, Tally: Tally{Requests: 1000}, Throughput: float64(100 * conc), DurationS: 10,
		Latencies: Latencies{MeanS: 0.01, P95S: 0.02, SLOPercentileS: 0.02}, MeetsSLO: true, Steady: bp(true)}
}

func TestCapacityIsALowerBoundWhenAHigherStepIsLeftOut(t *testing.T) {
	slo := SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}
	cpu := 0.93
	bound := headlineStep(5)
	bound.TesterCPU, bound.TesterBound, bound.TesterBoundReason = &cpu, true, "tester CPU 93 % of 2 core(s)"
	s := &Summary{SLO: slo, Steps: []SummaryStep{headlineStep(1), headlineStep(2), headlineStep(3), headlineStep(4), bound}}
	s.Finish()
	if s.MaxThroughputAtSLO == nil || *s.MaxThroughputAtSLO != 400 || !s.CapacityIsLowerBound {
		t.Fatalf("capacity %v, lower bound %v", s.MaxThroughputAtSLO, s.CapacityIsLowerBound)
	}
	want := "at least 400.0 req/s (steps up to 500.0 req/s within the SLO were not counted: 1 tester-bound (tester CPU 93 %): add testers or use a bigger VM)"
	if got := s.CapacityText(); got != want {
		t.Fatalf("headline\n%s\nwant\n%s", got, want)
	}
	var sb strings.Builder
	s.WriteTable(&sb)
	if !strings.Contains(sb.String(), "max throughput at SLO: "+want+"\n") {
		t.Fatalf("summary.txt:\n%s", sb.String())
	}
	b, _ := json.Marshal(s)
	var raw map[string]any
	_ = json.Unmarshal(b, &raw)
	if raw["capacity_is_lower_bound"] != true || raw["lower_bound_reason"] != "1 tester-bound (tester CPU 93 %): add testers or use a bigger VM" {
		t.Fatalf("summary.json: %v %v", raw["capacity_is_lower_bound"], raw["lower_bound_reason"])
	}

	// A left-out step below the best one says nothing about more capacity.
	low := headlineStep(1)
	low.Steady = bp(false)
	s = &Summary{SLO: slo, Steps: []SummaryStep{low, headlineStep(2), headlineStep(3)}}
	s.Finish()
	if s.CapacityIsLowerBound || s.CapacityText() != "300.0 req/s" {
		t.Fatalf("lower bound %v (%s) from a step below the best", s.CapacityIsLowerBound, s.CapacityText())
	}

	// A higher step too short to judge, with the warm-up off: left out, said so.
	short := headlineStep(4)
	short.Steady = nil
	short.Stationarity = &Stationarity{NotJudged: NotJudgedShort}
	s = &Summary{SLO: slo, Warmup: &Warmup{Mode: "off"}, Steps: []SummaryStep{headlineStep(1), headlineStep(2), short}}
	s.Finish()
	if !s.CapacityIsLowerBound || *s.MaxThroughputAtSLO != 200 || s.LowerBoundReason != "1 too short to judge steady, and the run warm-up was off" {
		t.Fatalf("capacity %v, lower bound %v %q", *s.MaxThroughputAtSLO, s.CapacityIsLowerBound, s.LowerBoundReason)
	}
	// The same after a warm-up judged steady: the step counts.
	s.Warmup = &Warmup{Mode: "auto", Steady: true}
	s.Finish()
	if s.CapacityIsLowerBound || *s.MaxThroughputAtSLO != 400 {
		t.Fatalf("after a steady warm-up: capacity %v, lower bound %v", *s.MaxThroughputAtSLO, s.CapacityIsLowerBound)
	}
}

// writeShortSteps writes a run directory of one tester whose steps last
// 1 s (200 requests each, 5 ms), with meta.json's warm-up w.
func writeShortSteps(t *testing.T, w *Warmup) string {
	t.Helper()
	dir := t.TempDir()
	writeCSVFile(t, filepath.Join(dir, "results.csv"), func(rec func(off, latency time.Duration, c int)) {
		for si, c := range []int{1, 2, 4} {
			for j := 0; j < 200; j++ {
				rec(time.Duration(si)*2*time.Second+time.Duration(j)*5*time.Millisecond, 5*time.Millisecond, c)
			}
		}
	})
	if err := WriteMeta(dir, &Meta{Scenario: "get", Testers: 1, Warmup: w}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestShortStepsAreNotJudgedSteady(t *testing.T) {
	slo := SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}
	dir := writeShortSteps(t, &Warmup{Mode: "off", Reason: "off (warmup.run: 0)"})
	sum, err := SummarizeDir(dir, slo)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	var raw struct {
		Steps []map[string]any `json:"steps"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for i, st := range raw.Steps {
		if v, ok := st["steady"]; !ok || v != nil {
			t.Fatalf("step %d: steady %v, want null", i+1, v)
		}
		if st["step"] != float64(i+1) {
			t.Fatalf("step numbered %v, want %d", st["step"], i+1)
		}
	}
	if sum.StepsNotJudged != 3 || sum.MaxThroughputAtSLO != nil || sum.Knee != nil {
		t.Fatalf("not judged %d, capacity %v, knee %v", sum.StepsNotJudged, sum.MaxThroughputAtSLO, sum.Knee)
	}
	txt, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
	for _, want := range []string{
		"warm-up off: the first steps may measure a cold JVM\n",
		"max throughput at SLO: unknown: 3 of 3 steps met the SLO but none counts: 3 too short to judge steady, and the run warm-up was off\n",
		"steadiness: 3 of 3 steps could not be judged steady: steps of 1 s are too short to judge (their requests must start over at least 2 s): use steps.duration of 3 s or more; they are not counted as capacity: the run warm-up was off\n",
		"not-judged\n",
	} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("summary.txt lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(string(txt), "\n   0 ") {
		t.Errorf("a step numbered 0:\n%s", txt)
	}

	// After a run warm-up judged steady the same steps count, still unjudged.
	dir = writeShortSteps(t, &Warmup{Mode: "auto", Steady: true, Reason: "steady after 15s"})
	sum, err = SummarizeDir(dir, slo)
	if err != nil {
		t.Fatal(err)
	}
	if sum.MaxThroughputAtSLO == nil || sum.StepsNotJudged != 3 || sum.CapacityIsLowerBound {
		t.Fatalf("after a steady warm-up: capacity %v, not judged %d, lower bound %v", sum.MaxThroughputAtSLO, sum.StepsNotJudged, sum.CapacityIsLowerBound)
	}
	txt, _ = os.ReadFile(filepath.Join(dir, "summary.txt"))
	if strings.Contains(string(txt), "warm-up off") || strings.Contains(string(txt), "warm-up not steady") || !strings.Contains(string(txt), "they count as capacity: the run warm-up was judged steady") {
		t.Errorf("summary.txt:\n%s", txt)
	}
}

func TestWarmupNotSteadyHeadline(t *testing.T) {
	w := &Warmup{Mode: "auto", Steady: false, Reason: "not steady by warmup.max 3m0s"}
	if got := WarmupHeadline(w); got != "warm-up not steady (not steady by warmup.max 3m0s): the first steps may measure a JVM still warming up" {
		t.Fatal(got)
	}
	if WarmupHeadline(&Warmup{Mode: "fixed"}) != "" || WarmupHeadline(nil) != "" {
		t.Fatal("a fixed or unrecorded warm-up in the headline")
	}
}
