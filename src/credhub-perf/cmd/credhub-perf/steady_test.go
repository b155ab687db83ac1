package main

// Acceptance tests of issue 11 (steady state): a target warming up like a
// fresh JVM, and a tester starved of CPU. scripts/test-all runs them on
// their own, after the other tests, so that the machine is quiet: the
// saturation test must see the hog and nothing else.

import (
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// A CPU hog pinned on the tester's core makes its steps tester-bound; the
// same run without it has none.
func TestTesterSaturationFlagged(t *testing.T) {
	binaries(t)
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs: one for the target, one for the tester")
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset (util-linux) not installed")
	}
	s := startSim(t, "", "-workers", "2", "-service-time", "2ms")
	// The target on CPU 0, the tester on CPU 1.
	if out, err := exec.Command(taskset, "-a", "-p", "-c", "0", strconv.Itoa(s.cmd.Process.Pid)).CombinedOutput(); err != nil {
		t.Fatalf("taskset: %v\n%s", err, out)
	}
	run := func() *results.Summary {
		cfg := writeConfig(t, s.URL, `steps: {max_concurrency: 4, rates: [50, 100], duration: 2s}`)
		cmd := exec.Command(taskset, "-c", "1", perfBin, "run", "--config", cfg, "--scenario", "get", "--saturation.max_host_cpu", "0.9")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("credhub-perf: %v\n%s", err, out)
		}
		dir := onlyRunDir(t, outputDir(t, cfg))
		return checkSummaryMatchesCSV(t, dir)
	}
	quiet := run()
	for _, st := range quiet.Steps {
		if st.TesterBound || st.HostCPU == nil || st.TesterCPU == nil {
			t.Fatalf("quiet run: step %d %+v", st.Step, st)
		}
	}
	// The hog: one busy loop on the tester's CPU, bounded by timeout(1)
	// and stopped by its PID.
	hog := exec.Command("timeout", "60", taskset, "-c", "1", "sh", "-c", "while :; do :; done")
	hog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-hog.Process.Pid, syscall.SIGKILL)
		_ = hog.Wait()
	}()
	time.Sleep(200 * time.Millisecond) // the hog is spinning before the run
	busy := run()
	for _, st := range busy.Steps {
		if !st.TesterBound || !strings.Contains(st.TesterBoundReason, "host CPU") {
			t.Errorf("hogged run: step %d not tester-bound: host CPU %v, %q", st.Step, deref(st.HostCPU), st.TesterBoundReason)
		}
	}
	if busy.MaxThroughputAtSLO != nil {
		t.Errorf("tester-bound steps counted as capacity: %v", *busy.MaxThroughputAtSLO)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
