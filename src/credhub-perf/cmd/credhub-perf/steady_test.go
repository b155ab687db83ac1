package main

// Steady state: a target warming up like a fresh JVM must not pass for
// its capacity, with the run warm-up off (flagged) or auto (measured once
// warm); saturation_linux_test.go has the tester starved of CPU.
// scripts/test-all runs them on their own, after the other tests, so that
// the machine is quiet: their margins are latencies, and the saturation
// test must see its hog and nothing else.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
)

// warmingSim is credhub-sim as a JVM that has just started: service times
// factor times longer at first, normal after 20 s (-warmup-time), on
// workers instances of one core with a fixed service time.
func warmingSim(t *testing.T, workers int, service string, factor float64) *sim {
	return startSim(t, "", "-workers", fmt.Sprint(workers), "-service-time", service,
		"-warmup-time", "20s", "-warmup-factor", fmt.Sprint(factor))
}

func runSummary(t *testing.T, cfg string, args ...string) (*results.Summary, *results.Meta, perfRun) {
	t.Helper()
	r := perf(t, append([]string{"run", "--config", cfg, "--scenario", "get"}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dir := onlyRunDir(t, outputDir(t, cfg))
	sum := checkSummaryMatchesCSV(t, dir)
	meta := resultstest.Meta(t, dir)
	return sum, meta, r
}

// Without the run warm-up the first steps measure the warm-up itself: they
// come out not steady, with warnings, and do not count as capacity.
//
// Margins (a seeded simulation of the sim's model through
// results.Steadiness, and the runs of this test): a step is not steady
// when its p50 moves by more than 10 % between its halves and the share of
// its second half above the first half's median is more than 4 standard
// errors from 1/2. Service times fall as 1+(K-1)(1-t/20 s)^2; over the 2 s
// between two halves' middles that moves p50 by 20-24 % with K = 10 (15 %
// with K = 4), 30-40 standard errors of the change past the bound on a
// quiet machine and 7-12 with half the requests delayed by 10 ms on
// average. The sign test needs requests: with one or two clients (about
// 100 per half) a busy machine's latency tail hid the trend in half the
// simulated steps (seen here too: step 0 judged steady at p50 -12 %);
// three and four clients on four instances (no queueing) give 150-300 per
// half, and no simulated step was missed. What no margin survives is a
// burst of other work that slows a whole second half by about the trend:
// 5-6 ms here; with K = 6 it was 3 ms, and such a burst (load 13 on two
// cores) made step 1 steady once. Steps 2 and 3 (5 and 6 clients) queue
// and are not asserted.
func TestRunWarmupOffFlagsWarmingTarget(t *testing.T) {
	loadtest.QuietMachine(t)
	binaries(t)
	t.Parallel()
	// Each attempt on a fresh target (its warm-up starts with it); one the
	// tool judges disturbed by the machine on steps 0 and 1 is run again.
	loadtest.OnQuietMachine(t, func() string {
		s := warmingSim(t, 4, "5ms", 10)
		const first = 3 // concurrency of step 0
		cfg := writeConfig(t, s.URL, fmt.Sprintf(`steps: {min_concurrency: %d, max_concurrency: %d, step: 1, duration: 4s}`, first, first+3))
		r := perf(t, "run", "--config", cfg, "--scenario", "get")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		dir := onlyRunDir(t, outputDir(t, cfg))
		if busy := busySteps(readSummary(t, dir), 0, 1); busy != "" {
			return busy
		}
		sum := checkSummaryMatchesCSV(t, dir)
		meta, err := results.ReadMeta(dir)
		if err != nil {
			t.Fatal(err)
		}
		if meta.Warmup == nil || meta.Warmup.Mode != "off" || meta.Warmup.Requests != 0 {
			t.Fatalf("warmup %+v", meta.Warmup)
		}
		for _, st := range sum.Steps {
			t.Logf("step %d: %d requests, steady %v, %+v", st.Step, st.Requests, st.Steady, st.Stationarity)
		}
		for _, i := range []int{0, 1} {
			st := sum.Steps[i]
			if !st.Drifted() || st.Stationarity == nil || !st.Stationarity.Judged {
				t.Errorf("step %d on a warming target judged steady: %+v", i, st.Stationarity)
			}
			if !strings.Contains(r.stdout, fmt.Sprintf("warning: step %d (concurrency %d): not steady", i+1, i+first)) {
				t.Errorf("no warning for step %d:\n%s", i, r.stdout)
			}
		}
		if sum.Knee != nil && *sum.KneeStep < 3 {
			t.Errorf("an unsteady step is the knee: step %d", *sum.KneeStep)
		}
		return ""
	})
}

// With the default auto warm-up the first steps measure the warm target:
// their p50 is at most 15 % above that of the same steps measured again later.
//
// Margins: the service time is fixed, so p50's sampling noise is tiny
// (about 1 % between the two measurements here); what moves it is the
// machine: the tester's and the sim's own time per request (about 1.3 ms
// on a quiet machine) grows when other work shares the CPUs, and the two
// measurements are 10 s apart. With a 5 ms service time a busy machine
// moved one against the other by 12 %; with 10 ms that overhead is half
// the share of p50. A warm-up that ends too early is far outside 15 %:
// without one, step 0 runs at 2-3.5 times the warm service time, and
// with a warm-up of 10 s instead of the minute and more auto takes
// (the judge fits the trend over at least a minute of windows), 1.2-1.5
// times.
func TestRunWarmupAutoMeasuresWarmTarget(t *testing.T) {
	loadtest.QuietMachine(t)
	binaries(t)
	t.Parallel()
	s := warmingSim(t, 2, "10ms", 4)
	steps := `steps: {min_concurrency: 1, max_concurrency: 2, step: 1, duration: 3s}`
	cfg := writeConfig(t, s.URL, steps)
	first, meta, r := runSummary(t, cfg, "--warmup.run", "auto", "--warmup.max", "150s")
	w := meta.Warmup
	if w == nil || w.Mode != "auto" || !w.Steady || w.Requests == 0 || w.DurationS < 60 || w.DurationS > 150 || w.Concurrency != 1 {
		t.Fatalf("warmup %+v\n%s", w, r.stderr)
	}
	again, _, _ := runSummary(t, writeConfig(t, s.URL, steps))
	compared, busy := 0, ""
	for i := range again.Steps {
		if again.Steps[i].Rate > 0 {
			continue // the open-loop confirmation's steps, 1 s each here: not the warm-up's
		}
		// A step either measurement's own verdict says the machine
		// disturbed compares the machine, not the warm-up.
		if why := busySteps(first, i) + busySteps(again, i); why != "" {
			t.Logf("step %d not compared: the machine was busy (%s)", i, why)
			busy = why
			continue
		}
		compared++
		a, b := first.Steps[i].P50S, again.Steps[i].P50S
		t.Logf("step %d: p50 %.3f ms after the warm-up, %.3f ms warm", i, 1000*a, 1000*b)
		// One-sided: a target still warming is only ever slower, so a first
		// measurement faster than the second says nothing about the
		// warm-up, only that other work slowed the second (seen: -18 %).
		if d := (a - b) / b; d > 0.15 {
			t.Errorf("step %d: p50 %.2f ms after the auto warm-up, %.2f ms warm (%+.0f %%)", i, 1000*a, 1000*b, 100*d)
		}
		if first.Steps[i].Steady == nil || !*first.Steps[i].Steady {
			t.Errorf("step %d after the warm-up not steady: %+v", i, first.Steps[i].Stationarity)
		}
	}
	if compared == 0 {
		loadtest.NotRunOnBusyMachine(t, busy)
	}
}
