// Package cpuload measures whether the tester itself was short of CPU
// while it measured: its own process CPU (per core it may use), how busy
// the host's CPUs it may run on were, how much time the hypervisor stole
// from them, and the Go collector's pauses. A load generator that runs out
// of CPU reports its own queue as the target's latency, and Little's law
// still holds, so nothing in the results themselves reveals it.
//
// The figures and the rule are docs/csv-format.md's ("Tester saturation");
// the reasons behind them live here.
//
// host_cpu is at least the tester's own CPU over the CPUs it may use: the
// kernel samples busy time at its tick, and a load paced at a divisor of
// the tick aliases (at 2,000 requests/s on a HZ-250 VM a tester using 40 %
// of its core read 6 % busy), while the process's own CPU is exact.
//
// tester_wait is the run-queue wait over wall time per core, not per CPU
// second the tester wanted: a tester that barely runs on a busy host waits
// at almost every wake-up (75 % of its wanted time, seen beside a busy
// target) while its waits add little to latencies that are mostly the
// target's. By Little's law each wait delays at most the requests in flight
// on that core. The rule weighs only the part other processes caused, the
// wait × (host_cpu − tester_cpu) ÷ host_cpu: a waiting thread finds its core
// busy with the tester's own work or with others', in proportion to the CPU
// each used there; a tester pinned alone on an idle core waited 6.5-11 % of
// every step behind its own threads, and a bound on the whole wait flipped
// neighbouring steps between tester-bound and not. On a busy host the wait
// is also weighed against the requests in flight: a tester sending 50
// requests/s beside a hog on its core waits only 5 % of each second, but
// that is up to half of each 2 ms latency. Why a 10 % bound: up to a tenth
// of every latency could then be the tester's own queue, past the noise of
// a step's percentiles. A host busy past its bound while the tester did not
// wait is not a bound: the busy CPUs were other work (most likely a target
// on the same machine) that did not delay the tester, so the step keeps
// counting and carries host_busy.
//
// Off Linux the fractions are nil and never bound a step; so are host_cpu
// and host_steal over less than 0.5 s per CPU (/proc/stat counts whole
// 10 ms ticks, and over a shorter span one tick per CPU is more than 2 % of
// the share: hey's short runs).
package cpuload

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Ticks are /proc/stat jiffies summed over a set of CPUs.
type Ticks struct {
	Busy  uint64 // user, nice, system, irq, softirq (guest is inside user)
	Steal uint64
	Total uint64 // everything above plus idle and iowait
	CPUs  int    // how many CPUs' lines were summed
}

// minHostTicks is the least span, in ticks per CPU, over which Between
// reports the host's shares: the kernel counts in whole ticks (10 ms at
// USER_HZ 100), so each CPU's busy count can be one off, and over a 0.1 s
// run that is 10 % (a busy share of 91 % would read as 100 % or 82 %). 50
// ticks (0.5 s) keep the error within 2 %; a shorter run's host share is
// unknown rather than a guess that could name the host as the bound.
const minHostTicks = 50

// Sample is one reading; Usage compares two.
type Sample struct {
	Wall    time.Time
	Process time.Duration // user + system CPU of this process
	Host    Ticks
	GCPause time.Duration // total stop-the-world pause time so far
	Cores   int           // CPUs this process may use (affinity, GOMAXPROCS)
	// RunWait is the time this process's threads spent runnable, waiting
	// for a CPU (the kernel's schedstat run_delay, summed over threads).
	RunWait time.Duration
	// ProcessOK, HostOK and RunWaitOK: the figures could be read on this
	// system.
	ProcessOK, HostOK, RunWaitOK bool
}

// Usage is what the tester used between two samples. Fractions are nil
// when the system does not expose them (not Linux, no /proc).
type Usage struct {
	// TesterCPU: process CPU seconds / wall seconds / Cores, so 1 means
	// every core the tester may use was busy with the tester.
	TesterCPU *float64
	// HostCPU: busy share of the CPUs the tester may run on, whoever
	// used them (the tester, a target on the same machine, a neighbour);
	// HostSteal: share the hypervisor gave to other guests.
	HostCPU, HostSteal *float64
	// TesterWait: the tester's threads' run-queue wait (runnable, waiting
	// for a CPU) per wall second per core it may use, as TesterCPU is its
	// CPU: by Little's law every wait delays at most the requests in
	// flight on that core, so up to about this share of the step's mean
	// latency may be the tester's own wait for a CPU. TesterWaitTime is
	// that wait, summed over threads. nil where the kernel does not say
	// (not Linux, no schedstats).
	TesterWait     *float64
	TesterWaitTime time.Duration
	// InFlight: the step's mean requests in flight (throughput x mean
	// latency, Little's law), nil when unknown. A tester sending little
	// waits little per second even when each of its few requests waits
	// as long as it takes: its wait over the requests in flight is the
	// share of each latency that may be the tester's own wait.
	InFlight *float64
	GCPause  time.Duration
	Cores    int
	Wall     time.Duration
}

// Limits are the bounds past which a step's figures describe the tester,
// not the target (fractions; 1 = never).
type Limits struct {
	TesterCPU, HostCPU, HostSteal float64
	// TesterWait bounds Usage.TesterWait, the tester's own starvation.
	TesterWait float64
}

// DefaultLimits: a tester past 80 % of its cores has too little slack to
// send on time; a host past 90 % queues the tester behind other work
// (when the tester's wait says it did: Judge); past 10 % steal the
// hypervisor, not the tester, sets the pace; a tester whose threads spent
// more than a tenth of the step per core waiting for one may have put up
// to a tenth of every measured latency down to its own queue (each wait a
// scheduler slice, milliseconds: the size of a fast CredHub request).
var DefaultLimits = Limits{TesterCPU: 0.80, HostCPU: 0.90, HostSteal: 0.10, TesterWait: 0.10}

// Take reads the current figures at time now.
func Take(now time.Time) Sample {
	s := Sample{Wall: now, Cores: runtime.GOMAXPROCS(0)}
	// The process's CPU first, nearest the caller's now: ReadMemStats
	// stops the world, which on a busy host can take milliseconds.
	s.Process, s.ProcessOK = processCPU()
	s.RunWait, s.RunWaitOK = runWait()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.GCPause = time.Duration(ms.PauseTotalNs)
	cpus, ok := allowedCPUs()
	if ok {
		s.Cores = min(s.Cores, len(cpus))
		s.Host, s.HostOK = hostTicks(cpus)
	}
	return s
}

// ProcessCPU is this process's user + system CPU so far (false: not
// exposed here). One system call, without Take's stop of the world and
// /proc reads: cheap enough to read every few milliseconds during a run.
func ProcessCPU() (time.Duration, bool) { return processCPU() }

// Cores is how many CPUs this process may use at once: GOMAXPROCS, bounded
// by its affinity (as Sample.Cores).
func Cores() int {
	n := runtime.GOMAXPROCS(0)
	if cpus, ok := allowedCPUs(); ok {
		n = min(n, len(cpus))
	}
	return n
}

// Between returns the usage from a to b.
func Between(a, b Sample) Usage {
	u := Usage{GCPause: b.GCPause - a.GCPause, Cores: b.Cores, Wall: b.Wall.Sub(a.Wall)}
	// The tester's CPU seconds per wall second: cores' worth it kept busy.
	perWall, procOK := 0.0, a.ProcessOK && b.ProcessOK && u.Wall > 0
	if procOK {
		perWall = (b.Process - a.Process).Seconds() / u.Wall.Seconds()
	}
	if procOK && u.Cores > 0 {
		f := perWall / float64(u.Cores)
		u.TesterCPU = &f
	}
	if a.RunWaitOK && b.RunWaitOK && b.RunWait >= a.RunWait && u.Wall > 0 && u.Cores > 0 {
		// Per wall second and core, not per CPU second it wanted: a tester
		// that barely runs on a busy host waits at almost every wake-up
		// (75 % of its wanted time, seen beside a busy target), yet its
		// waits add little to latencies that are mostly the target's.
		u.TesterWaitTime = b.RunWait - a.RunWait
		f := u.TesterWaitTime.Seconds() / u.Wall.Seconds() / float64(u.Cores)
		u.TesterWait = &f
	}
	if a.HostOK && b.HostOK && b.Host.Total > a.Host.Total && b.Host.Total-a.Host.Total >= uint64(minHostTicks*max(b.Host.CPUs, 0)) {
		total := float64(b.Host.Total - a.Host.Total)
		busy := float64(b.Host.Busy-a.Host.Busy) / total
		steal := float64(b.Host.Steal-a.Host.Steal) / total
		// The host's CPUs were at least as busy as the tester alone kept
		// them. The kernel samples busy time at its tick (without
		// VIRT_CPU_ACCOUNTING), and an open-loop load paced at a divisor
		// of the tick aliases: at 2,000 requests/s on a HZ-250 VM a
		// tester that used 40 % of its core read 6 % busy. The process's
		// own CPU is exact (the scheduler's runtime, not samples).
		if procOK && b.Host.CPUs > 0 {
			busy = min(max(busy, perWall/float64(b.Host.CPUs)), 1)
		}
		u.HostCPU, u.HostSteal = &busy, &steal
	}
	return u
}

// Bound names why the step measured the tester, as a sentence fragment
// ("tester CPU 93 %"), or "" when the tester had CPU to spare (Judge).
func (u Usage) Bound(l Limits) string { return Judge(u, l).Reason }

// Verdict is Judge's answer: Reason names the bound ("" when none);
// HostBusy notes a busy host the tester did not suffer from (reported,
// not a bound).
type Verdict struct {
	Reason   string
	HostBusy string
}

// Judge decides whether a step measured the tester rather than the
// target, from its usage figures alone (a pure function: tests inject
// the figures). In order:
//   - the tester's own CPU past l.TesterCPU of its cores: bound (it had no
//     slack to send and read on time);
//   - the host's CPUs busy past l.HostCPU: bound when the tester waited
//     for a CPU more than l.TesterWait of the step per core, or when
//     that wait is unknown (no schedstats: the host figure is all there
//     is); otherwise not bound, but noted as a busy host: the busy CPUs
//     were someone else's work (on a laptop, most likely the target on
//     the same machine) that did not delay the tester;
//   - steal past l.HostSteal: bound;
//   - the tester's wait alone past l.TesterWait (the host figure below its
//     bound, or unknown): bound, since a tester that waited for a CPU sent
//     and read late whatever the host's busy share says. Its reason names
//     the host CPU, whose advice (a quiet machine) is what helps.
func Judge(u Usage, l Limits) Verdict {
	others := u.OthersWait()
	share := u.WaitShare()
	if share != nil && others != nil && *u.TesterWait > 0 {
		v := *share * *others / *u.TesterWait
		share = &v
	}
	// The share of each latency decides only on a busy host: there it
	// tells a tester that sent little but waited on every request (a hog
	// on its core) from one beside a busy target. On a quiet host the
	// tester's own threads waking together wait a little too, which the
	// share, an upper bound, makes look large for a tester sending little.
	// 1 = never, as for every bound; the share of a latency can pass 1.
	shareOver := share != nil && *share > l.TesterWait && l.TesterWait < 1
	waited := others != nil && *others > l.TesterWait
	waitFig := func() string {
		f := fmt.Sprintf("the tester's threads waited for a CPU %.0f %% of the step per core", 100**u.TesterWait)
		if o := fmt.Sprintf("%.0f", 100**others); o != fmt.Sprintf("%.0f", 100**u.TesterWait) {
			f += ", " + o + " % behind other processes"
		}
		if shareOver {
			f += fmt.Sprintf(" (up to %.0f %% of each request's latency)", 100*min(*share, 1))
		}
		return f
	}
	switch {
	case u.TesterCPU != nil && *u.TesterCPU > l.TesterCPU:
		return Verdict{Reason: fmt.Sprintf("tester CPU %.0f %% of %d core(s)", 100**u.TesterCPU, u.Cores)}
	case u.HostCPU != nil && *u.HostCPU > l.HostCPU:
		host := fmt.Sprintf("host CPU %.0f %% busy on the tester's core(s)", 100**u.HostCPU)
		switch {
		case u.TesterWait == nil:
			return Verdict{Reason: host}
		case waited || shareOver:
			return Verdict{Reason: host + ", and " + waitFig()}
		}
		if u.HostSteal != nil && *u.HostSteal > l.HostSteal {
			return Verdict{Reason: fmt.Sprintf("CPU steal %.0f %% on the tester's core(s)", 100**u.HostSteal)}
		}
		return Verdict{HostBusy: fmt.Sprintf("host busy (is the target on this machine?): %s, but the tester's threads waited for a CPU only %.1f %% of the step per core%s; not tester-bound", host, 100**u.TesterWait, othersNote(u.TesterWait, others))}
	case u.HostSteal != nil && *u.HostSteal > l.HostSteal:
		return Verdict{Reason: fmt.Sprintf("CPU steal %.0f %% on the tester's core(s)", 100**u.HostSteal)}
	case waited:
		host := "host CPU unknown"
		if u.HostCPU != nil {
			host = fmt.Sprintf("host CPU %.0f %% busy", 100**u.HostCPU)
		}
		return Verdict{Reason: fmt.Sprintf("%s (%s)", waitFig(), host)}
	}
	return Verdict{}
}

// OthersWait is the part of the tester's run-queue wait (TesterWait) that
// other processes caused, the part Judge weighs. The tester's own threads
// queue behind each other too: pinned alone on an idle core, Go's
// threads waiting for the one running waited 6.5-11 % of every step, and
// a bound of 10 % on the whole wait flipped neighbouring steps between
// tester-bound and not. A waiting thread finds its core busy with the
// tester's own work or with others', in proportion to the CPU each used
// there, so the others' part is the wait times (host busy - tester CPU) /
// host busy. A tester alone on its cores reads host busy at about its own
// CPU (a tick's rounding, a kernel thread), so its wait counts for
// nothing; beside a busy target or a hog most of it counts. Without the
// host's or the tester's CPU figures, the whole wait (nil when unknown).
func (u Usage) OthersWait() *float64 {
	if u.TesterWait == nil || u.HostCPU == nil || u.TesterCPU == nil || *u.HostCPU <= 0 {
		return u.TesterWait
	}
	others := min(max((*u.HostCPU-*u.TesterCPU) / *u.HostCPU, 0), 1)
	w := *u.TesterWait * others
	return &w
}

// othersNote adds the others' part of a wait when it differs from it.
func othersNote(total, others *float64) string {
	if others == nil || total == nil || fmt.Sprintf("%.1f", 100**others) == fmt.Sprintf("%.1f", 100**total) {
		return ""
	}
	return fmt.Sprintf(" (%.1f %% behind other processes)", 100**others)
}

// WaitShare is the tester's wait for a CPU over its requests in flight:
// up to this share of each request's latency may be the tester waiting,
// not the target. nil when the wait or the requests in flight are unknown.
func (u Usage) WaitShare() *float64 {
	if u.TesterWait == nil || u.InFlight == nil || *u.InFlight <= 0 {
		return nil
	}
	s := *u.TesterWait * float64(max(u.Cores, 1)) / *u.InFlight
	return &s
}

// parseProcStat sums the per-CPU lines ("cpuN ...") of /proc/stat for the
// CPUs in want.
func parseProcStat(r io.Reader, want map[int]bool) (Ticks, error) {
	var t Ticks
	found := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil || !want[n] {
			continue
		}
		if len(f) < 9 {
			return Ticks{}, fmt.Errorf("/proc/stat: %s has %d fields, want at least 8 counters", f[0], len(f)-1)
		}
		var v [8]uint64
		for i := range v {
			x, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return Ticks{}, fmt.Errorf("/proc/stat: %s field %d: %w", f[0], i+1, err)
			}
			v[i] = x
		}
		// user nice system idle iowait irq softirq steal
		t.Busy += v[0] + v[1] + v[2] + v[5] + v[6]
		t.Steal += v[7]
		t.Total += v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]
		found++
	}
	t.CPUs = found
	if err := sc.Err(); err != nil {
		return Ticks{}, fmt.Errorf("/proc/stat: %w", err)
	}
	if found == 0 {
		return Ticks{}, fmt.Errorf("/proc/stat: none of the tester's CPUs listed")
	}
	return t, nil
}

// parseCPUList reads a kernel CPU list such as "0-3,8,10-11".
func parseCPUList(s string) (map[int]bool, error) {
	out := map[int]bool{}
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: bad %q", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("CPU list %q: bad %q", s, part)
			}
		}
		for i := a; i <= b; i++ {
			out[i] = true
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("CPU list %q is empty", s)
	}
	return out, nil
}

// parseSchedstat reads a /proc/<pid>/task/<tid>/schedstat line: time on
// a CPU, time waiting on a run queue (ns), timeslices; it returns the wait.
func parseSchedstat(line string) (time.Duration, error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0, fmt.Errorf("schedstat %q: want at least 2 fields", line)
	}
	ns, err := strconv.ParseUint(f[1], 10, 63)
	if err != nil {
		return 0, fmt.Errorf("schedstat %q: %w", line, err)
	}
	return time.Duration(ns), nil
}
