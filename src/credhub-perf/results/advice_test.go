package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/tester_bound_advice.json")

// adviceFile holds what summary.txt tells an operator about tester-bound
// and uncounted steps; headroom-plot takes both from credhub-perf, and its
// tests (plotting/tests/test_flags.py) check its report shows this advice.
const adviceFile = "testdata/tester_bound_advice.json"

type adviceCase struct {
	Reason string   `json:"reason"`
	Advice []string `json:"advice"`
}

type noCapacityCase struct {
	SLO   SLO           `json:"slo"`
	Steps []SummaryStep `json:"steps"`
	// Reason: NoCapacityReason without its "unknown: " (headroom-plot
	// says "NO CAPACITY at the SLO: " instead).
	Reason string `json:"reason"`
}

type adviceGolden struct {
	Advice     []adviceCase     `json:"advice"`
	NoCapacity []noCapacityCase `json:"no_capacity"`
}

func TestTesterBoundAdviceMatchesTestdata(t *testing.T) {
	var g adviceGolden
	for _, r := range []string{
		"tester CPU 93 % of 2 core(s)",
		"host CPU 97 % busy on the tester's core(s)",
		"CPU steal 25 % on the tester's core(s)",
		"tester 0: host CPU 97 % busy on the tester's core(s); tester 1: tester CPU 91 % of 2 core(s)",
		"", // a bound step without a reason (hand-made or hostile summary.json)
	} {
		g.Advice = append(g.Advice, adviceCase{r, TesterBoundAdvice(r)})
	}
	slo := SLO{Percentile: 95, LatencyS: 0.100, MaxErrorRate: 0.01}
	f := func(v float64) *float64 { return &v }
	step := func(conc int, u TesterUsage) SummaryStep {
		return SummaryStep{Concurrency: conc, Tally: Tally{Requests: 1000}, Throughput: float64(100 * conc),
			Latencies: Latencies{MeanS: 0.01, P95S: 0.02, SLOPercentileS: 0.02}, MeetsSLO: true, Steady: bp(true), TesterUsage: u}
	}
	host := func(conc int, h float64) SummaryStep {
		return step(conc, TesterUsage{HostCPU: f(h), TesterBound: true, TesterBoundReason: fmt.Sprintf("host CPU %.0f %% busy on the tester's core(s)", 100*h)})
	}
	unsteady := step(5, TesterUsage{})
	unsteady.Steady = bp(false)
	incomplete := step(6, TesterUsage{})
	incomplete.Incomplete, incomplete.IncompleteReason = true, "tester 1 sent no load in it"
	over := step(7, TesterUsage{})
	over.SLOPercentileS, over.P95S, over.MeetsSLO = 0.3, 0.3, false
	for _, steps := range [][]SummaryStep{
		// the single-host demo on a busy laptop
		{host(1, 0.97), host(2, 1.0), host(3, 0.99)},
		// every kind of step that met the SLO without counting; advice in
		// the steps' order, each item once
		{host(1, 0.96),
			step(2, TesterUsage{TesterCPU: f(0.93), TesterBound: true, TesterBoundReason: "tester CPU 93 % of 2 core(s)"}),
			step(3, TesterUsage{TesterCPU: f(0.91), HostCPU: f(0.99), TesterBound: true, TesterBoundReason: "tester 0: host CPU 99 % busy on the tester's core(s); tester 1: tester CPU 91 % of 2 core(s)"}),
			step(4, TesterUsage{HostSteal: f(0.3), TesterBound: true, TesterBoundReason: "CPU steal 30 % on the tester's core(s)"}),
			unsteady, incomplete, over},
		{step(1, TesterUsage{TesterBound: true}), unsteady},
	} {
		s := &Summary{SLO: slo, Steps: steps}
		s.Finish()
		why := s.NoCapacityReason()
		if !strings.HasPrefix(why, "unknown: ") {
			t.Fatalf("no capacity reason %q", why)
		}
		g.NoCapacity = append(g.NoCapacity, noCapacityCase{slo, s.Steps, strings.TrimPrefix(why, "unknown: ")})
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile(adviceFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(filepath.FromSlash(adviceFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s is not what summary.txt says now: if the change is meant, run go test ./results -update and check headroom-plot's report still shows it (cd plotting && python -m pytest tests/test_flags.py)", adviceFile)
	}
}

// The late-schedule rule at its edges: 5 ms and 10 % of the mean latency
// must both be passed.
func TestLateSchedule(t *testing.T) {
	for _, c := range []struct {
		lag, max, mean float64
		want           string
	}{
		{0.0002, 0.001, 0.010, ""},
		{0.005, 0.02, 0.001, ""}, // 5 ms is kept
		{0.006, 0.02, 0.060, ""}, // 10 % of the mean latency is kept
		{0.0061, 0.02, 0.060, "requests left 6.1 ms late on average (max 20.0 ms): the tester or its worker cap (-c) could not keep the schedule"},
		{0.0667, 0.2624, 0.015, "requests left 66.7 ms late on average (max 262.4 ms): the tester or its worker cap (-c) could not keep the schedule"},
	} {
		if got := LateSchedule(c.lag, c.max, c.mean, "-c"); got != c.want {
			t.Errorf("LateSchedule(%v, %v, %v) = %q, want %q", c.lag, c.max, c.mean, got, c.want)
		}
	}
}
