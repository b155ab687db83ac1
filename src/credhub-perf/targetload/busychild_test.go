package targetload

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the busy child: it spins on one core
// for the fractions of each second the environment says.
func TestMain(m *testing.M) {
	if os.Getenv("TARGETLOAD_BURN") != "" {
		burn()
		return
	}
	if duty := os.Getenv("TARGETLOAD_BUSY_CHILD"); duty != "" {
		spin(duty)
		return
	}
	os.Exit(m.Run())
}

// burn keeps one CPU busy until killed.
func burn() {
	for x := 0; ; x++ {
		_ = x * x
	}
}

// spin keeps one core busy for each phase's duty share of 1.5 s.
func spin(duties string) {
	for _, d := range strings.Split(duties, ",") {
		share, _ := strconv.ParseFloat(d, 64)
		end := time.Now().Add(1500 * time.Millisecond)
		for time.Now().Before(end) {
			busyUntil := time.Now().Add(time.Duration(share * float64(10*time.Millisecond)))
			for time.Now().Before(busyUntil) {
			}
			time.Sleep(time.Duration((1 - share) * float64(10*time.Millisecond)))
		}
	}
	time.Sleep(time.Hour) // killed by the test
}

// TestProcSamplesAgreeWithProc: samples of a real busy child by PID agree,
// step by step, with its /proc figures read independently, within 5
// percentage points. Timing-dependent: it runs on a quiet machine only.
func TestProcSamplesAgreeWithProc(t *testing.T) {
	if os.Getenv("CREDHUB_PERF_QUIET") == "" || runtime.GOOS != "linux" {
		t.Skip("needs a quiet Linux machine (CREDHUB_PERF_QUIET=1, scripts/test-all)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=XXX")
	cmd.Env = append(os.Environ(), "TARGETLOAD_BUSY_CHILD=0.9,0.3,0.6")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	cores := independentCores(t, pid)
	origin := time.Now()
	src := &ProcSource{Targets: []ProcTarget{{Resource: CredHub, PID: pid}}, Every: 100 * time.Millisecond}
	s := NewSampler([]Source{src}, origin, time.Now, nil, func(w string) { t.Error(w) })
	s.Start(context.Background())
	defer s.Stop()
	// Three steps, each within one phase of the child's duty (skipping
	// the edges between phases).
	for i := 0; i < 3; i++ {
		phase := origin.Add(time.Duration(i) * 1500 * time.Millisecond)
		time.Sleep(time.Until(phase.Add(250 * time.Millisecond)))
		t0, ticks0 := time.Now(), independentTicks(t, pid)
		time.Sleep(time.Until(phase.Add(1250 * time.Millisecond)))
		t1, ticks1 := time.Now(), independentTicks(t, pid)
		s.SampleNow(context.Background())
		want := float64(ticks1-ticks0) / 100 / t1.Sub(t0).Seconds() / cores
		got := Judge(s.Between(t0.Sub(origin), t1.Sub(origin)), t0.Sub(origin), t1.Sub(origin))
		if got == nil || got.Resources[0].CPU == nil {
			t.Fatalf("step %d: no sample", i+1)
		}
		if d := math.Abs(*got.Resources[0].CPU - want); d > 0.05 {
			t.Errorf("step %d: sampled %.3f, /proc says %.3f (%.1f points apart)", i+1, *got.Resources[0].CPU, want, 100*d)
		} else {
			t.Logf("step %d: sampled %.3f, /proc says %.3f", i+1, *got.Resources[0].CPU, want)
		}
	}
}

func independentTicks(t *testing.T, pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	u, _ := strconv.ParseUint(f[11], 10, 64)
	s, _ := strconv.ParseUint(f[12], 10, 64)
	return u + s
}

// independentCores: the child inherits this process's affinity
// (runtime.NumCPU) and cgroup.
func independentCores(t *testing.T, pid int) float64 {
	cores := float64(runtime.NumCPU())
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			if m, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", p, "cpu.max")); err == nil {
				var q, per float64
				if n, _ := fmt.Sscanf(string(m), "%g %g", &q, &per); n == 2 && q/per < cores {
					cores = q / per
				}
			}
		}
	}
	return cores
}
