package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results"
)

// The demo's figure to size with at 4 instances (its get ramp and
// open-loop confirmation, scripts/demo.yml, against credhub-sim with
// scripts/demo-target.flags, tester and target on this machine) is within
// 15 % of what open arrivals hold on that sim, T: a long open-loop step
// at F/1.15 holds the SLO (so T ≥ F/1.15) and one at F/0.85 misses it
// (so T < F/0.85). The demo's target is held back by its shared database
// (700 req/s) and stops 50 ms every 2 s. What open arrivals hold on the
// model alone, on its virtual clock (credhub-sim's virtual-ramp -rates),
// is logged beside it: the sim serving real requests holds no more.
func TestDemoFigureToSizeWith(t *testing.T) {
	binaries(t)
	loadtest.QuietMachine(t)
	flags := demoTargetFlags(t)
	model := openArrivalsHold(t, flags)
	loadtest.OnQuietMachine(t, func() string {
		s := startSim(t, "", append([]string{"-workers", "4"}, flags...)...)
		before := takeMachine(s)
		sum, out := demoRun(t, s, "--steps.max_concurrency", "48", "--steps.step", "6")
		if busy := before.othersSince(t, s); busy != "" {
			return busy
		}
		if sum.SizeWith == nil {
			t.Fatalf("no figure to size with; open arrivals hold %g req/s on the model\n%s", model, out)
		}
		f := *sum.SizeWith
		// Long steps on the warm target, each 12 s: six of its pauses.
		lo, hi := math.Round(f/1.15), math.Round(f/0.85)
		// Workers enough for a pause's backlog: a capped tester sends late
		// and measures its own queue.
		long, out := demoRun(t, s, "--steps.rates", fmt.Sprintf("%g,%g", lo, hi), "--steps.duration", "12s",
			"--warmup.run", "1s", "--confirm.open_loop=false", "--steps.max_concurrency", "500")
		if busy := before.othersSince(t, s); busy != "" {
			return busy
		}
		// A step held to the SLO only if the tester kept its schedule.
		if late := results.LateSchedule(long.Steps[0].SchedLagMeanS, long.Steps[0].SchedLagMaxS, long.Steps[0].MeanS, "steps.max_concurrency"); late != "" {
			return fmt.Sprintf("long step at %g req/s: %s", lo, late)
		}
		t.Logf("%s; long open-loop steps: p95 %.1f ms at %g req/s, %.1f ms at %g; the model holds %g",
			sum.Headline, 1000*long.Steps[0].SLOPercentileS, lo, 1000*long.Steps[1].SLOPercentileS, hi, model)
		if !long.Steps[0].MeetsSLO || long.Steps[1].MeetsSLO {
			t.Fatalf("figure to size with %g req/s: open arrivals held the SLO %v at %g and %v at %g req/s in 12 s steps: not within 15 %% of what they hold\n%s",
				f, long.Steps[0].MeetsSLO, lo, long.Steps[1].MeetsSLO, hi, out)
		}
		return ""
	})
}

// demoRun is one get run of scripts/demo.yml against s as the demo's
// 4-instance run, with flags: its summary and output.
func demoRun(t *testing.T, s *sim, flags ...string) (*results.Summary, string) {
	out := t.TempDir()
	args := append([]string{"run", "--config", filepath.Join(demoScripts, "demo.yml"), "--target.url", s.URL,
		"--target.ca_cert_file", filepath.Join(certDir, "ca.crt"), "--target.client_cert_file", filepath.Join(certDir, "client.crt"),
		"--target.client_key_file", filepath.Join(certDir, "client.key"), "--scenarios", "get",
		"--instances", "4", "--label", "4-instances", "--out", out}, flags...)
	r := perf(t, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	return readSummary(t, onlyRunDir(t, out)), r.stdout
}

// demoScripts is the repository's scripts directory, from this package's.
const demoScripts = "../../../../scripts"

// demoTargetFlags are scripts/demo-target.flags, the demo's model of an instance.
func demoTargetFlags(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join(demoScripts, "demo-target.flags"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// openArrivalsHold is the highest rate, 400 to 720 req/s in steps of 20,
// below which every 30 s open-loop step on the model's virtual clock met
// the demo's SLO (p95 ≤ 60 ms), summarised by credhub-perf summary.
func openArrivalsHold(t *testing.T, flags []string) float64 {
	bin := filepath.Join(binDir, "virtual-ramp")
	build := exec.Command("go", "build", "-o", bin, "./cmd/virtual-ramp")
	build.Dir = "../../../credhub-sim"
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building virtual-ramp: %v\n%s", err, out)
	}
	var model, rates []string
	for i := 0; i < len(flags); i += 2 {
		if !strings.HasPrefix(flags[i], "-warmup") { // warm, as the demo's ramps are
			model = append(model, flags[i], flags[i+1])
		}
	}
	for r := 400; r <= 720; r += 20 {
		rates = append(rates, strconv.Itoa(r))
	}
	dir := filepath.Join(t.TempDir(), "model")
	args := append([]string{"-out", dir, "-workers", "4", "-rates", strings.Join(rates, ","), "-step-duration", "30s"}, model...)
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("virtual-ramp %v: %v\n%s", args, err, out)
	}
	if r := perf(t, "summary", dir); r.code != 0 {
		t.Fatalf("summary of the model's run: exit %d\n%s", r.code, r.stderr)
	}
	sum := readSummary(t, dir)
	held := 0.0
	for _, st := range sum.Steps {
		if !st.MeetsSLO {
			break
		}
		held = st.Rate
	}
	if held == 0 || held == 720 {
		t.Fatalf("open arrivals on the model hold %g req/s: the rates tried do not bracket it\n%+v", held, sum.Steps)
	}
	return held
}

// machineSample is the machine's busy CPU and the CPU this test's
// processes used (the target and finished credhub-perf runs), in ticks.
type machineSample struct{ busy, total, ours uint64 }

func takeMachine(s *sim) machineSample {
	// The CPUs this test may use, as the tester reads them; steal is
	// other work too.
	h := cpuload.Take(time.Now()).Host
	m := machineSample{busy: h.Busy + h.Steal, total: h.Total}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid)); err == nil {
		p := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+2:]))
		ut, _ := strconv.ParseUint(p[11], 10, 64)
		stt, _ := strconv.ParseUint(p[12], 10, 64)
		m.ours += ut + stt
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err == nil {
		// USER_HZ is 100 on Linux: ticks of 10 ms.
		m.ours += uint64((ru.Utime.Nano() + ru.Stime.Nano()) / 1e7)
	}
	return m
}

// othersSince is why the machine was busy with other work than this
// test's processes since m (past 10 % of its CPUs), or "".
func (m machineSample) othersSince(t *testing.T, s *sim) string {
	now := takeMachine(s)
	total := float64(now.total - m.total)
	others := (float64(now.busy-m.busy) - float64(now.ours-m.ours)) / total
	if total > 0 && others > 0.10 {
		return fmt.Sprintf("other work used %.0f %% of the machine's CPUs beside the run and its target", 100*others)
	}
	return ""
}
