package targetload

// Real processes on real cores: CPU-burning stand-ins for CredHub and a
// neighbour, and a real PostgreSQL backend spinning in PL/pgSQL, pinned
// with taskset. Each set-up's verdict has a known kind, and every figure
// agrees with an independent /proc reading over the same interval within
// 5 points, whatever else the machine runs.

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/internal/testdb"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/jackc/pgx/v5"
)

// burner starts this test binary as a burner pinned to cpu.
func burner(t *testing.T, cpu int) int {
	t.Helper()
	cmd := exec.Command("taskset", "-c", strconv.Itoa(cpu), os.Args[0], "-test.run=XXX")
	cmd.Env = append(os.Environ(), "TARGETLOAD_BURN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

func pin(t *testing.T, pid, cpu int) {
	t.Helper()
	if out, err := exec.Command("taskset", "-a", "-p", "-c", strconv.Itoa(cpu), strconv.Itoa(pid)).CombinedOutput(); err != nil {
		t.Fatalf("taskset pid %d: %v %s", pid, err, out)
	}
}

// busyBackend starts a throwaway PostgreSQL (scripts/test-db) and a
// backend spinning in a PL/pgSQL loop; its PID.
func busyBackend(t *testing.T) int {
	t.Helper()
	env := testdb.Start(t, "postgres")
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://%s:%s@%s:%s/%s", env["DB_USER"], env["DB_PASSWORD"], env["DB_HOST"], env["DB_PORT"], env["DB_NAME"]))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var pid int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn.Exec(ctx, "SET statement_timeout = '120s'")
		conn.Exec(ctx, "DO $$ DECLARE i bigint := 0; BEGIN LOOP i := i + 1; END LOOP; END $$")
	}()
	t.Cleanup(func() { cancel(); <-done; conn.Close(context.Background()) })
	return pid
}

// independent reads, by its own code, a CPU's /proc/stat busy and total
// ticks and each PID's utime+stime.
type independent struct {
	busy, total map[int]float64
	ticks       map[int]float64
}

func readIndependent(t *testing.T, pids []int) independent {
	in := independent{busy: map[int]float64{}, total: map[int]float64{}, ticks: map[int]float64{}}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		var cpu int
		var v [8]float64
		if n, _ := fmt.Sscanf(l, "cpu%d %g %g %g %g %g %g %g %g", &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]); n == 9 {
			in.busy[cpu] = v[0] + v[1] + v[2] + v[5] + v[6]
			in.total[cpu] = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]
		}
	}
	for _, pid := range pids {
		in.ticks[pid] = float64(independentTicks(t, pid))
	}
	return in
}

// setUp is one arrangement: the sampled targets, the PIDs pinned, those
// paused, the verdict kind it must give, and, on a quiet machine, what
// its figures must be.
type setUp struct {
	name    string
	targets []ProcTarget
	cpuOf   map[int]int // every PID running -> its CPU
	paused  []int
	kind    string // the step verdict's finding kind; "" none
	// busyKind: on a busy machine, the other kind it may give (other
	// work on a core of its own).
	busyKind string
	quiet    func(t *testing.T, l *StepLoad)
}

// TestRealProcessesSharedCapacity holds on a busy machine too: the
// kinds of verdict do not depend on what else runs (burners burn what
// they get), and the figures are compared with /proc over the interval.
func TestRealProcessesSharedCapacity(t *testing.T) { realProcesses(t, false) }

// TestRealProcessesKnownAnswers adds the figures a quiet machine gives:
// the shared core split about evenly, a core each near 100 %, the
// neighbour taking about half of CredHub's core.
func TestRealProcessesKnownAnswers(t *testing.T) {
	if os.Getenv("CREDHUB_PERF_QUIET") == "" {
		t.Skip("needs a quiet machine (CREDHUB_PERF_QUIET=1, scripts/test-all)")
	}
	realProcesses(t, true)
}

func realProcesses(t *testing.T, quiet bool) {
	if runtime.GOOS != "linux" || runtime.NumCPU() < 2 {
		t.Skip("needs Linux with 2 CPUs")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("needs taskset (util-linux)")
	}
	db := busyBackend(t)
	ch := burner(t, 1)
	neighbour := burner(t, 0)
	both := []ProcTarget{{Resource: CredHub, PID: ch}, {Resource: Database, PID: db}}
	sets := []setUp{
		{"one shared core", both, map[int]int{ch: 1, db: 1}, []int{neighbour}, "shared", "other work", func(t *testing.T, l *StepLoad) {
			for _, r := range l.Resources {
				if *r.CPU < 0.35 || *r.CPU > 0.65 {
					t.Errorf("%s at %.2f of the shared core, want about half", r.Resource, *r.CPU)
				}
			}
		}},
		{"separate cores", both, map[int]int{ch: 0, db: 1}, []int{neighbour}, "", "other work", func(t *testing.T, l *StepLoad) {
			if len(l.Machines) != 2 || *l.Resources[0].CPU < 0.9 || *l.Resources[1].CPU < 0.9 || !strings.Contains(l.Verdict, "at 9") && !strings.Contains(l.Verdict, "at 100") {
				t.Errorf("separate cores: %s", l.Verdict)
			}
		}},
		{"a busy neighbour on CredHub's core", both[:1], map[int]int{ch: 1, neighbour: 1, db: 0}, nil, "other work", "", func(t *testing.T, l *StepLoad) {
			if o := *l.Machines[0].Other; o < 0.35 || o > 0.65 {
				t.Errorf("other work %.2f, want about half", o)
			}
		}},
	}
	for _, su := range sets {
		if quiet {
			su.busyKind = ""
		} else {
			su.quiet = nil
		}
		t.Run(su.name, func(t *testing.T) {
			if !quiet {
				checkSetUp(t, su)
				return
			}
			// The known answers hold only when nothing but the set-up ran on
			// its cores: an attempt that /proc shows other work on is run
			// again, then said not run.
			loadtest.OnQuietMachine(t, func() string { return checkSetUp(t, su) })
		})
	}
}

func signal(t *testing.T, pids []int, sig syscall.Signal) {
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
	}
}

// checkSetUp samples the set-up for 1.5 s and checks it. With su.quiet
// set, it returns why the cores were not the set-up's alone (other work
// on them past 10 % by /proc), before checking anything.
func checkSetUp(t *testing.T, su setUp) (busy string) {
	signal(t, su.paused, syscall.SIGSTOP)
	defer signal(t, su.paused, syscall.SIGCONT)
	var all []int
	for pid, cpu := range su.cpuOf {
		pin(t, pid, cpu)
		all = append(all, pid)
	}
	time.Sleep(300 * time.Millisecond) // the pins take hold
	origin := time.Now()
	src := &ProcSource{Targets: su.targets}
	s := NewSampler([]Source{src}, origin, time.Now, nil, func(w string) { t.Error(w) })
	in0 := readIndependent(t, all)
	s.SampleNow(context.Background())
	time.Sleep(1500 * time.Millisecond)
	s.SampleNow(context.Background())
	in1 := readIndependent(t, all)
	samples := s.Between(0, time.Hour)
	if len(samples) != len(su.targets) {
		t.Fatalf("samples %+v", samples)
	}
	if su.quiet != nil {
		if why := othersOnCores(su, in0, in1); why != "" {
			return why
		}
	}
	l := Judge(samples, samples[0].Start, samples[0].End)
	f := stepFinding(l)
	kind := ""
	if f != nil {
		kind = f.kind
	}
	t.Logf("verdict: %s", l.Verdict)
	if kind != su.kind && (su.busyKind == "" || kind != su.busyKind) {
		t.Errorf("finding %q, want %q: %s", kind, su.kind, l.Verdict)
	}
	if su.quiet != nil {
		su.quiet(t, l)
	}
	// Whatever else runs: resources on one core are one machine, on two
	// cores two.
	machines := map[int]bool{}
	for _, tg := range su.targets {
		machines[su.cpuOf[tg.PID]] = true
	}
	if len(l.Machines) != len(machines) || len(l.Machines[0].Resources) != len(su.targets)/len(machines) {
		t.Errorf("machines %+v, want %d", l.Machines, len(machines))
	}
	sampled := map[int]float64{}
	for _, x := range samples {
		pid := su.targets[0].PID
		for _, tg := range su.targets {
			if tg.Resource == x.Resource {
				pid = tg.PID
			}
		}
		cpu := su.cpuOf[pid]
		dt := in1.total[cpu] - in0.total[cpu]
		own := in1.ticks[pid] - in0.ticks[pid]
		sampled[cpu] += own
		agree(t, x.Resource+" CPU", x.CPU, own/dt)
		agree(t, x.Resource+" machine busy", x.MachineBusy, (in1.busy[cpu]-in0.busy[cpu])/dt)
		if x.Machine != "cpus "+strconv.Itoa(cpu) {
			t.Errorf("%s: machine %q, want cpus %d", x.Resource, x.Machine, cpu)
		}
	}
	for _, x := range samples {
		cpu := 0
		if x.Machine == "cpus 1" {
			cpu = 1
		}
		dt := in1.total[cpu] - in0.total[cpu]
		agree(t, x.Resource+" machine other", x.MachineOther, math.Max(0, (in1.busy[cpu]-in0.busy[cpu]-sampled[cpu])/dt))
	}
	return ""
}

// othersOnCores is why the machine was not the set-up's alone, by /proc:
// a CPU on which processes other than the set-up's were busy more than
// 10 % of the interval; "" when none. Every CPU counts, not only the
// set-up's: the scheduler shares a group's weight across CPUs, so a busy
// process elsewhere in the burner's session shrinks the burner's share of
// the core it shares with the database.
func othersOnCores(su setUp, in0, in1 independent) string {
	own := map[int]float64{}
	for pid, cpu := range su.cpuOf {
		own[cpu] += in1.ticks[pid] - in0.ticks[pid]
	}
	// The CPUs by number: the aggregate "cpu" line also parses as one.
	for cpu := 0; cpu < runtime.NumCPU(); cpu++ {
		dt := in1.total[cpu] - in0.total[cpu]
		if other := (in1.busy[cpu] - in0.busy[cpu] - own[cpu]) / dt; dt > 0 && other > 0.10 {
			return fmt.Sprintf("CPU %d %.0f %% busy with other processes than the set-up's", cpu, 100*other)
		}
	}
	return ""
}

func agree(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > 0.05 {
		t.Errorf("%s: sampled %.3f, /proc says %.3f", what, got, want)
	} else {
		t.Logf("%s: sampled %.3f, /proc says %.3f", what, got, want)
	}
}
