package main

// The saturation test of issue 11 (see steady_test.go): it pins processes
// with taskset(1) and stops its CPU hog by process group, both Linux only.

import (
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/results"
)

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
