package cpuload

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

const procStat = `cpu  300 0 100 600 0 0 0 0 0 0
cpu0 100 10 40 800 20 5 5 20 0 0
cpu1 200 0 60 100 0 0 0 40 7 0
cpu2 1 1 1 1 1 1 1 1
intr 12345
ctxt 999
`

func TestParseProcStat(t *testing.T) {
	got, err := parseProcStat(strings.NewReader(procStat), map[int]bool{0: true, 1: true})
	if err != nil {
		t.Fatal(err)
	}
	// cpu0: busy 100+10+40+5+5 = 160, steal 20, total 1000;
	// cpu1: busy 260, steal 40, total 400 (guest 7 is already in user).
	want := Ticks{Busy: 420, Steal: 60, Total: 1400, CPUs: 2}
	if got != want {
		t.Fatalf("ticks = %+v, want %+v", got, want)
	}
	one, err := parseProcStat(strings.NewReader(procStat), map[int]bool{2: true})
	if err != nil || one != (Ticks{Busy: 5, Steal: 1, Total: 8, CPUs: 1}) {
		t.Fatalf("cpu2 alone = %+v, %v", one, err)
	}
}

func TestParseProcStatHostile(t *testing.T) {
	for _, in := range []string{
		"",
		"cpu 1 2 3\n",
		"cpu0 1 2 3\n",
		"cpu0 1 2 3 4 5 6 7 x\n",
		"cpu0 -1 2 3 4 5 6 7 8\n",
		"cpu0 99999999999999999999999 2 3 4 5 6 7 8\n",
		"cpu7 1 2 3 4 5 6 7 8\n", // not one of ours
		"\x00\xff cpu0",
	} {
		if _, err := parseProcStat(strings.NewReader(in), map[int]bool{0: true}); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	got, err := parseCPUList(" 0-2,5,7-8\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []int{0, 1, 2, 5, 7, 8} {
		if !got[c] {
			t.Errorf("CPU %d missing", c)
		}
	}
	if len(got) != 6 {
		t.Errorf("got %d CPUs, want 6", len(got))
	}
	for _, bad := range []string{"", "x", "3-1", "-1", "1-", "0-99999999", "1,,a"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(procStat, "0-1")
	f.Add("cpu0 1 2 3 4 5 6 7 8", "0")
	f.Fuzz(func(t *testing.T, stat, list string) {
		cpus, err := parseCPUList(list)
		if err != nil {
			return
		}
		// Hostile /proc content: an error or a reading, never a panic.
		_, _ = parseProcStat(strings.NewReader(stat), cpus)
	})
}

func f64(v float64) *float64 { return &v }

func TestBetweenAndBound(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := Sample{Wall: t0, Process: time.Second, Host: Ticks{Busy: 100, Steal: 0, Total: 1000}, GCPause: time.Millisecond, Cores: 2, ProcessOK: true, HostOK: true}
	b := Sample{Wall: t0.Add(10 * time.Second), Process: 17 * time.Second, Host: Ticks{Busy: 1050, Steal: 20, Total: 2000}, GCPause: 4 * time.Millisecond, Cores: 2, ProcessOK: true, HostOK: true}
	u := Between(a, b)
	// 16 CPU-seconds over 10 s on 2 cores; 950 of 1000 ticks busy, 20 stolen.
	if *u.TesterCPU != 0.8 || *u.HostCPU != 0.95 || *u.HostSteal != 0.02 || u.GCPause != 3*time.Millisecond {
		t.Fatalf("usage = tester %v host %v steal %v gc %v", *u.TesterCPU, *u.HostCPU, *u.HostSteal, u.GCPause)
	}
	if got := u.Bound(DefaultLimits); got != "host CPU 95 % busy on the tester's core(s)" {
		t.Fatalf("bound = %q", got)
	}
	for _, tc := range []struct {
		u    Usage
		want string
	}{
		{Usage{TesterCPU: f64(0.93), Cores: 2}, "tester CPU 93 % of 2 core(s)"},
		{Usage{TesterCPU: f64(0.8), HostCPU: f64(0.9), HostSteal: f64(0.1)}, ""},
		{Usage{HostSteal: f64(0.25)}, "CPU steal 25 % on the tester's core(s)"},
		{Usage{}, ""}, // unknown figures never make a step tester-bound
	} {
		if got := tc.u.Bound(Limits{1, 1, 1, 1}); got != "" {
			t.Errorf("limits of 1 bound a step: %q", got)
		}
		if got := tc.u.Bound(DefaultLimits); got != tc.want {
			t.Errorf("Bound() = %q, want %q", got, tc.want)
		}
	}
	// Too short a span for whole ticks to measure a share within 2 %: the
	// host's figures are unknown (0.2 s on 2 CPUs: 40 ticks, of which 39
	// busy could be a 91 % host read as 97.5 %).
	short := Between(Sample{Wall: t0, Host: Ticks{Busy: 100, Total: 1000, CPUs: 2}, HostOK: true},
		Sample{Wall: t0.Add(200 * time.Millisecond), Host: Ticks{Busy: 139, Total: 1040, CPUs: 2}, HostOK: true})
	if short.HostCPU != nil || short.HostSteal != nil || short.Bound(DefaultLimits) != "" {
		t.Fatalf("a 40-tick span on 2 CPUs gave host figures %v %v", short.HostCPU, short.HostSteal)
	}
	long := Between(Sample{Wall: t0, Host: Ticks{Busy: 100, Total: 1000, CPUs: 2}, HostOK: true},
		Sample{Wall: t0.Add(time.Second), Host: Ticks{Busy: 295, Total: 1200, CPUs: 2}, HostOK: true})
	if long.HostCPU == nil || *long.HostCPU != 0.975 {
		t.Fatalf("a 200-tick span on 2 CPUs: host %v, want 0.975", long.HostCPU)
	}
	// The host's tick-sampled busy share aliased low (6 %): the tester's
	// own exact CPU (0.8 s of 2 s on 1 CPU) is the least it can have been.
	aliased := Between(Sample{Wall: t0, Process: time.Second, ProcessOK: true, Host: Ticks{Busy: 100, Total: 1000, CPUs: 1}, HostOK: true},
		Sample{Wall: t0.Add(2 * time.Second), Process: 1800 * time.Millisecond, ProcessOK: true, Host: Ticks{Busy: 112, Total: 1200, CPUs: 1}, HostOK: true})
	if aliased.HostCPU == nil || *aliased.HostCPU != 0.4 {
		t.Fatalf("tester at 40 %% of the host's one CPU, ticks 6 %%: host %v, want 0.4", aliased.HostCPU)
	}
	// Over two CPUs the tester's share of them is half its CPU per wall
	// second; the ticks' 97.5 % stays when it is the larger.
	two := Between(Sample{Wall: t0, Process: time.Second, ProcessOK: true, Host: Ticks{Busy: 100, Total: 1000, CPUs: 2}, HostOK: true},
		Sample{Wall: t0.Add(time.Second), Process: 2 * time.Second, ProcessOK: true, Host: Ticks{Busy: 295, Total: 1200, CPUs: 2}, HostOK: true})
	if *two.HostCPU != 0.975 {
		t.Fatalf("host %v, want the ticks' 0.975", *two.HostCPU)
	}
	// Unreadable figures stay unknown rather than becoming 0.
	if u := Between(Sample{Wall: t0}, Sample{Wall: t0.Add(time.Second)}); u.TesterCPU != nil || u.HostCPU != nil {
		t.Fatal("unknown figures reported as known")
	}
}

// On Linux the real figures are readable and a busy goroutine shows.
func TestTakeReadsThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("figures are read from /proc on Linux only")
	}
	a := Take(time.Now())
	if !a.ProcessOK || !a.HostOK || !a.RunWaitOK || a.Cores < 1 {
		t.Fatalf("sample = %+v", a)
	}
	// Longer than minHostTicks per CPU, or the host's share is unknown.
	deadline := time.Now().Add(700 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	b := Take(time.Now())
	u := Between(a, b)
	if u.TesterCPU == nil || *u.TesterCPU <= 0 || u.HostCPU == nil || *u.HostCPU <= 0 {
		t.Fatalf("700 ms of spinning not seen: %+v (%d)", u, x)
	}
}

// The rule behind tester_bound, on injected figures: a busy host bounds
// a step only when the tester itself waited for a CPU (or its wait is
// unknown); otherwise it is a note, not a bound. A tester that waited
// is bound whatever the host figure says.
func TestJudge(t *testing.T) {
	l := DefaultLimits
	for _, tc := range []struct {
		name         string
		u            Usage
		reason, note string
	}{
		{"quiet", Usage{TesterCPU: f64(0.3), HostCPU: f64(0.4), TesterWait: f64(0.01)}, "", ""},
		{"tester's own CPU", Usage{TesterCPU: f64(0.93), HostCPU: f64(0.99), TesterWait: f64(0.5), Cores: 2}, "tester CPU 93 % of 2 core(s)", ""},
		{"busy host, tester starved", Usage{TesterCPU: f64(0.4), HostCPU: f64(0.97), TesterWait: f64(0.25)},
			"host CPU 97 % busy on the tester's core(s), and the tester's threads waited for a CPU 25 % of the step per core, 15 % behind other processes", ""},
		{"busy host, tester not waiting", Usage{TesterCPU: f64(0.4), HostCPU: f64(0.97), TesterWait: f64(0.012)},
			"", "host busy (is the target on this machine?): host CPU 97 % busy on the tester's core(s), but the tester's threads waited for a CPU only 1.2 % of the step per core (0.7 % behind other processes); not tester-bound"},
		{"busy host, wait unknown", Usage{TesterCPU: f64(0.4), HostCPU: f64(0.97)}, "host CPU 97 % busy on the tester's core(s)", ""},
		{"busy host and steal, no wait", Usage{HostCPU: f64(0.97), HostSteal: f64(0.2), TesterWait: f64(0)}, "CPU steal 20 % on the tester's core(s)", ""},
		{"starved, host under its bound", Usage{TesterCPU: f64(0.5), HostCPU: f64(0.85), TesterWait: f64(0.3)},
			"the tester's threads waited for a CPU 30 % of the step per core, 12 % behind other processes (host CPU 85 % busy)", ""},
		{"starved, host unknown", Usage{TesterWait: f64(0.3)}, "the tester's threads waited for a CPU 30 % of the step per core (host CPU unknown)", ""},
		{"at the bounds", Usage{TesterCPU: f64(0.8), HostCPU: f64(0.9), HostSteal: f64(0.1), TesterWait: f64(0.1)}, "", ""},
		// A hog on the tester's core, the tester sending 50 requests/s of
		// 2 ms (0.1 in flight): 5 % of each second waiting is up to half
		// of every latency.
		{"busy host, few requests each waiting", Usage{TesterCPU: f64(0.01), HostCPU: f64(1), TesterWait: f64(0.05), InFlight: f64(0.1), Cores: 1},
			"host CPU 100 % busy on the tester's core(s), and the tester's threads waited for a CPU 5 % of the step per core (up to 50 % of each request's latency)", ""},
		// The target beside the tester: 15 requests in flight, the same
		// wait is a third of a per cent of each latency.
		{"busy host, many requests in flight", Usage{TesterCPU: f64(0.2), HostCPU: f64(0.97), TesterWait: f64(0.05), InFlight: f64(15), Cores: 1},
			"", "host busy (is the target on this machine?): host CPU 97 % busy on the tester's core(s), but the tester's threads waited for a CPU only 5.0 % of the step per core (4.0 % behind other processes); not tester-bound"},
		// A quiet host: the tester's own threads waking together waited a
		// little; over few requests in flight that share is large, but
		// only a busy host makes it a bound.
		{"quiet host, little wait over few requests", Usage{TesterCPU: f64(0.03), HostCPU: f64(0.03), TesterWait: f64(0.02), InFlight: f64(0.15), Cores: 1}, "", ""},
	} {
		v := Judge(tc.u, l)
		if v.Reason != tc.reason || v.HostBusy != tc.note {
			t.Errorf("%s:\n got %q / %q\nwant %q / %q", tc.name, v.Reason, v.HostBusy, tc.reason, tc.note)
		}
		if tc.u.Bound(l) != tc.reason {
			t.Errorf("%s: Bound disagrees with Judge", tc.name)
		}
		if v := Judge(tc.u, Limits{1, 1, 1, 1}); v.Reason != "" {
			t.Errorf("%s: limits of 1 bound a step: %q", tc.name, v.Reason)
		}
	}
}

// The wait share is run-queue wait per wall second per core, between two
// readings on a controlled clock; unreadable or going-backwards figures
// stay unknown.
func TestBetweenTesterWait(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := Sample{Wall: t0, Process: time.Second, ProcessOK: true, RunWait: 2 * time.Second, RunWaitOK: true, Cores: 2}
	b := Sample{Wall: t0.Add(2 * time.Second), Process: 1600 * time.Millisecond, ProcessOK: true, RunWait: 2400 * time.Millisecond, RunWaitOK: true, Cores: 2}
	u := Between(a, b)
	if u.TesterWait == nil || math.Abs(*u.TesterWait-0.1) > 1e-9 || u.TesterWaitTime != 400*time.Millisecond {
		t.Fatalf("0.4 s wait over 2 s on 2 cores: share %v, time %v; want 0.1, 400ms", u.TesterWait, u.TesterWaitTime)
	}
	idle := b
	idle.RunWait = a.RunWait
	if u := Between(a, idle); u.TesterWait == nil || *u.TesterWait != 0 {
		t.Fatalf("a tester that never waited: %v", u.TesterWait)
	}
	unknown := b
	unknown.RunWaitOK = false
	if u := Between(a, unknown); u.TesterWait != nil {
		t.Fatal("an unreadable wait reported as known")
	}
	back := b
	back.RunWait = time.Second // a thread with a large wait exited
	if u := Between(a, back); u.TesterWait != nil {
		t.Fatal("a wait that went backwards reported as known")
	}
}

func TestParseSchedstat(t *testing.T) {
	if w, err := parseSchedstat("123456 789000 12\n"); err != nil || w != 789*time.Microsecond {
		t.Fatalf("got %v %v", w, err)
	}
	for _, bad := range []string{"", "12", "1 x 3", "1 -5 2"} {
		if _, err := parseSchedstat(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// stepSamples is two synthetic readings a second apart on one core: the
// tester used testerCPU of it, the host's core was busy hostBusy (in
// /proc/stat ticks of 10 ms), and the tester's threads' schedstat lines
// (run_delay, the second field) grew by wait.
func stepSamples(t *testing.T, at time.Time, testerCPU, hostBusy, wait float64) (Sample, Sample) {
	t.Helper()
	line := func(ns int64) time.Duration {
		w, err := parseSchedstat(fmt.Sprintf("%d %d 40\n", 5_000_000, ns))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	a := Sample{Wall: at, Cores: 1, ProcessOK: true, HostOK: true, RunWaitOK: true,
		Host: Ticks{CPUs: 1, Total: 1000, Busy: 300}, RunWait: line(1_000_000)}
	b := a
	b.Wall = at.Add(time.Second)
	b.Process = time.Duration(testerCPU * float64(time.Second))
	b.Host = Ticks{CPUs: 1, Total: 1100, Busy: 300 + uint64(math.Round(hostBusy*100))}
	b.RunWait = line(1_000_000 + int64(wait*1e9))
	return a, b
}

// Known answer: a tester pinned alone on an idle core waits 6.5-11 % of
// every step behind its own threads (as measured on CredHub's tester),
// its core's busy time a tick or two above its own CPU. Judged on the
// others' part of the wait, none of 20 consecutive steps is tester-bound;
// twice that wait beside a process that keeps the core busy is.
func TestTesterAloneOnIdleCoreNeverBound(t *testing.T) {
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 20; i++ {
		tester := 0.30 + 0.02*float64(i%5)   // 30-38 % of the core
		host := tester + 0.01*float64(i%3)   // 0-2 ticks of kernel work and rounding
		wait := 0.065 + 0.045*float64(i%7)/6 // 6.5-11 %
		a, b := stepSamples(t, at.Add(time.Duration(i)*time.Second), tester, host, wait)
		u := Between(a, b)
		u.InFlight = f64(3)
		if v := Judge(u, DefaultLimits); v.Reason != "" {
			t.Fatalf("step %d (tester %.0f %%, host %.0f %%, wait %.1f %%): tester-bound: %s", i+1, 100*tester, 100*host, 100*wait, v.Reason)
		}
	}
	a, b := stepSamples(t, at, 0.30, 1.0, 0.20)
	if v := Judge(Between(a, b), DefaultLimits); v.Reason == "" || !strings.Contains(v.Reason, "14 % behind other processes") {
		t.Fatalf("beside a hog: %+v", v)
	}
	a, b = stepSamples(t, at, 0.30, 0.80, 0.20)
	if v := Judge(Between(a, b), DefaultLimits); !strings.Contains(v.Reason, "20 % of the step per core, 12 % behind other processes") {
		t.Fatalf("waiting behind another process, host under its bound: %+v", v)
	}
}
