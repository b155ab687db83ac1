package main

// Acceptance tests of issue 11 (steady state): a target warming up like a
// fresh JVM, and a tester starved of CPU. scripts/test-all runs them on
// their own, after the other tests, so that the machine is quiet: the
// saturation test must see the hog and nothing else.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/results"
)

// warmingSim is credhub-sim as a JVM that has just started: service times
// 4 times longer at first, normal after 20 s.
func warmingSim(t *testing.T) *sim {
	return startSim(t, "", "-workers", "2", "-service-time", "5ms", "-warmup-time", "20s", "-warmup-factor", "4")
}

func runSummary(t *testing.T, cfg string, args ...string) (*results.Summary, *results.Meta, perfRun) {
	t.Helper()
	r := perf(t, append([]string{"run", "--config", cfg, "--scenario", "get"}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dir := onlyRunDir(t, outputDir(t, cfg))
	sum := checkSummaryMatchesCSV(t, dir)
	meta, err := results.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sum, meta, r
}

// Without the run warm-up the first steps measure the warm-up itself: they
// come out not steady, with warnings, and do not count as capacity.
func TestRunWarmupOffFlagsWarmingTarget(t *testing.T) {
	binaries(t)
	t.Parallel()
	s := warmingSim(t)
	cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 1, max_concurrency: 4, step: 1, duration: 4s}`)
	sum, meta, r := runSummary(t, cfg)
	if meta.Warmup == nil || meta.Warmup.Mode != "off" || meta.Warmup.Requests != 0 {
		t.Fatalf("warmup %+v", meta.Warmup)
	}
	for _, i := range []int{0, 1} {
		st := sum.Steps[i]
		if st.Steady || st.Stationarity == nil || !st.Stationarity.Judged {
			t.Errorf("step %d on a warming target judged steady: %+v", i, st.Stationarity)
		}
		if !strings.Contains(r.stdout, fmt.Sprintf("warning: step %d (concurrency %d): not steady", i, i+1)) {
			t.Errorf("no warning for step %d:\n%s", i, r.stdout)
		}
	}
	if sum.Knee != nil && *sum.KneeStep < 2 {
		t.Errorf("an unsteady step is the knee: step %d", *sum.KneeStep)
	}
}

// With the default auto warm-up the first steps measure the warm target:
// their p50 is within 15 % of the same steps measured again later.
func TestRunWarmupAutoMeasuresWarmTarget(t *testing.T) {
	binaries(t)
	t.Parallel()
	s := warmingSim(t)
	steps := `steps: {min_concurrency: 1, max_concurrency: 2, step: 1, duration: 3s}`
	cfg := writeConfig(t, s.URL, steps)
	first, meta, r := runSummary(t, cfg, "--warmup.run", "auto")
	w := meta.Warmup
	if w == nil || w.Mode != "auto" || !w.Steady || w.Requests == 0 || w.DurationS < 20 || w.DurationS > 90 || w.Concurrency != 1 {
		t.Fatalf("warmup %+v\n%s", w, r.stderr)
	}
	again, _, _ := runSummary(t, writeConfig(t, s.URL, steps))
	for i := range again.Steps {
		a, b := first.Steps[i].P50S, again.Steps[i].P50S
		if d := (a - b) / b; d > 0.15 || d < -0.15 {
			t.Errorf("step %d: p50 %.2f ms after the auto warm-up, %.2f ms warm (%+.0f %%)", i, 1000*a, 1000*b, 100*d)
		}
		if !first.Steps[i].Steady {
			t.Errorf("step %d after the warm-up not steady: %+v", i, first.Steps[i].Stationarity)
		}
	}
}
