package targetload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on
// every Linux architecture (the kernel scales to it whatever its HZ).
const userHZ = 100

// ProcTarget is one resource on this machine: a PID, or every process of
// a name (matched against /proc/PID/comm, or the base name of argv[0]).
type ProcTarget struct {
	Resource string
	PID      int
	Name     string
}

// ParseProcTarget reads "RESOURCE=PID" or "RESOURCE=NAME".
func ParseProcTarget(s string) (ProcTarget, error) {
	res, what, ok := strings.Cut(s, "=")
	res, what = strings.TrimSpace(res), strings.TrimSpace(what)
	if !ok || res == "" || what == "" {
		return ProcTarget{}, fmt.Errorf("%q: want RESOURCE=PID or RESOURCE=NAME, e.g. credhub=java or database=postgres", clip(s, 64))
	}
	if strings.Trim(res, "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		return ProcTarget{}, fmt.Errorf("%q: the resource name may hold only a-z, 0-9, _ and -", clip(s, 64))
	}
	if n, err := strconv.Atoi(what); err == nil {
		if n <= 0 {
			return ProcTarget{}, fmt.Errorf("%q: PID %d is not a process id", clip(s, 64), n)
		}
		return ProcTarget{Resource: res, PID: n}, nil
	}
	if strings.ContainsAny(what, "/\x00") {
		return ProcTarget{}, fmt.Errorf("%q: a process name has no '/'", clip(s, 64))
	}
	return ProcTarget{Resource: res, Name: what}, nil
}

// ProcSource samples processes on this machine from /proc, and the CPUs
// they may use from /proc/stat (procmachine.go).
type ProcSource struct {
	Targets []ProcTarget
	// Root is /proc and CgroupRoot /sys/fs/cgroup; tests point them at
	// made-up trees.
	Root, CgroupRoot string
	Every            time.Duration
	// Now stamps readings; nil is time.Now (tests read a fixture on a
	// clock of their own).
	Now func() time.Time

	// seen: a target's process -> its CPU ticks at the last read. Keyed
	// by target, not PID alone: one PID named for two resources counts
	// for each.
	seen map[seenKey]uint64
	busy map[int]time.Duration // target index -> cumulative busy time
	// mach: per machine, cumulative figures (procmachine.go).
	mach     machineState
	mu       sync.Mutex        // the last read's findings, for meta.json
	resolved map[string][]int  // resource -> PIDs at the last read
	cpusOf   map[string]string // resource -> CPUs at the last read
}

type seenKey struct{ target, pid int }

func (p *ProcSource) Name() string { return "proc" }

func (p *ProcSource) Interval() time.Duration {
	if p.Every > 0 {
		return p.Every
	}
	return time.Second
}

func (p *ProcSource) root() string {
	if p.Root == "" {
		return "/proc"
	}
	return p.Root
}

// targetRead is what one read found of a target.
type targetRead struct {
	pids  []int
	rss   int64
	cores float64
	cpus  CPUSet
	ticks map[int]uint64 // PID -> CPU ticks now
}

// Read reports each target's cumulative CPU time: the ticks its processes
// used since they were first seen (a process's earlier CPU cannot be
// placed in time), so a name's count grows as processes come and go.
// Each reading carries its CPUs' machine figures (procmachine.go).
func (p *ProcSource) Read(ctx context.Context) ([]Reading, []string) {
	if p.seen == nil {
		p.seen, p.busy = map[seenKey]uint64{}, map[int]time.Duration{}
	}
	now := time.Now()
	if p.Now != nil {
		now = p.Now()
	}
	stat, statErr := readProcStat(filepath.Join(p.root(), "stat"))
	var warnings []string
	reads := make([]*targetRead, len(p.Targets))
	resolved, cpusOf := map[string][]int{}, map[string]CPUSet{}
	for i, t := range p.Targets {
		tr, w := p.readTarget(t)
		if w != "" {
			warnings = append(warnings, w)
			continue
		}
		reads[i] = tr
		resolved[t.Resource] = append(resolved[t.Resource], tr.pids...)
		cpusOf[t.Resource] = cpusOf[t.Resource].Union(tr.cpus)
	}
	p.remember(resolved, cpusOf)
	warnings = append(warnings, p.sharedPIDs(reads)...)
	p.countBusy(reads)
	sets := machineSets(reads)
	machines, mw := p.mach.update(reads, sets, stat, statErr)
	warnings = append(warnings, mw...)
	var out []Reading
	for i, tr := range reads {
		if tr == nil {
			continue
		}
		t := p.Targets[i]
		r := Reading{Resource: t.Resource, Instance: t.describe(), At: now, Busy: p.busy[i], Cores: tr.cores, Share: math.NaN(), RSSBytes: tr.rss, CPUs: tr.cpus.String()}
		if m, ok := machines[sets[i].String()]; ok {
			r.Machine, r.Counters = "cpus "+sets[i].String(), &m
		}
		out = append(out, r)
	}
	return out, warnings
}

// readTarget resolves a target and reads its processes; a warning
// instead when none could be read.
func (p *ProcSource) readTarget(t ProcTarget) (*targetRead, string) {
	pids, err := p.resolve(t)
	if err != nil {
		return nil, err.Error()
	}
	tr := &targetRead{rss: -1, ticks: map[int]uint64{}}
	var lastErr error
	for _, pid := range pids {
		ticks, r, c, cpus, err := p.readPID(pid)
		if err != nil {
			lastErr = err
			continue
		}
		tr.pids = append(tr.pids, pid)
		tr.ticks[pid] = ticks
		if r >= 0 {
			tr.rss = max(tr.rss, 0) + r
		}
		tr.cores = math.Max(tr.cores, c)
		tr.cpus = tr.cpus.Union(cpus)
	}
	if len(tr.pids) == 0 {
		return nil, fmt.Sprintf("%s: %v", t.describe(), lastErr)
	}
	return tr, ""
}

// countBusy adds each target's processes' ticks since their last read,
// per target, and forgets the processes gone.
func (p *ProcSource) countBusy(reads []*targetRead) {
	live := map[seenKey]bool{}
	for i, tr := range reads {
		if tr == nil {
			continue
		}
		for pid, ticks := range tr.ticks {
			k := seenKey{i, pid}
			live[k] = true
			if prev, ok := p.seen[k]; ok && ticks >= prev {
				p.busy[i] += time.Duration(ticks-prev) * time.Second / userHZ
			}
			p.seen[k] = ticks
		}
	}
	for k := range p.seen {
		if !live[k] {
			delete(p.seen, k)
		}
	}
}

// sharedPIDs warns, once per PID, of a process named for several
// resources: each is given all of its CPU, so their sum overstates it.
func (p *ProcSource) sharedPIDs(reads []*targetRead) []string {
	by := map[int][]string{}
	for i, tr := range reads {
		if tr != nil {
			for _, pid := range tr.pids {
				by[pid] = append(by[pid], p.Targets[i].Resource)
			}
		}
	}
	var out []string
	for pid, res := range by {
		if len(res) > 1 {
			out = append(out, fmt.Sprintf("pid %d is sampled for %s: each is given all its CPU, so their sum counts it %d times", pid, strings.Join(res, " and "), len(res)))
		}
	}
	sort.Strings(out)
	return out
}

func (p *ProcSource) remember(resolved map[string][]int, cpus map[string]CPUSet) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resolved, p.cpusOf = resolved, map[string]string{}
	for r, c := range cpus {
		p.cpusOf[r] = c.String()
	}
}

// Resolved is, per resource, the PIDs and the CPUs the last read found.
func (p *ProcSource) Resolved() (map[string][]int, map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resolved, p.cpusOf
}

// describe names the target in samples and messages; a name (from the
// operator, up to any length) is cut short.
func (t ProcTarget) describe() string {
	if t.PID > 0 {
		return fmt.Sprintf("pid %d", t.PID)
	}
	return clip(t.Name, 64)
}

func (p *ProcSource) resolve(t ProcTarget) ([]int, error) {
	if t.PID > 0 {
		return []int{t.PID}, nil
	}
	entries, err := os.ReadDir(p.root())
	if err != nil {
		return nil, fmt.Errorf("%s: listing processes: %w", t.describe(), err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if p.named(pid, t.Name) {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("no process named %q for %s: is it running on this machine?", t.describe(), t.Resource)
	}
	sort.Ints(pids)
	return pids, nil
}

// named: comm holds at most 15 bytes of the name; argv[0] the whole.
func (p *ProcSource) named(pid int, name string) bool {
	dir := filepath.Join(p.root(), strconv.Itoa(pid))
	if b, err := os.ReadFile(filepath.Join(dir, "comm")); err == nil {
		comm := strings.TrimSpace(string(b))
		if comm == name || (len(name) > 15 && comm == name[:15]) {
			return true
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil || len(b) == 0 {
		return false
	}
	argv0, _, _ := strings.Cut(string(b), "\x00")
	return filepath.Base(argv0) == name
}

var errNoProcess = errors.New("no such process (exited?)")

// readPID returns a process's CPU ticks (utime+stime), its RSS in bytes,
// the cores it may use (its CPUs, capped by a cgroup cpu.max quota) and
// its CPUs (its affinity within its cgroup's cpuset).
func (p *ProcSource) readPID(pid int) (uint64, int64, float64, CPUSet, error) {
	dir := filepath.Join(p.root(), strconv.Itoa(pid))
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, 0, nil, errNoProcess
	}
	if err != nil {
		return 0, 0, 0, nil, fmt.Errorf("reading its stat: %w", err)
	}
	ticks, err := parseStatTicks(string(b))
	if err != nil {
		return 0, 0, 0, nil, err
	}
	rss, cpus, err := readStatus(filepath.Join(dir, "status"))
	if err != nil {
		return 0, 0, 0, nil, err
	}
	quota, cpuset := p.cgroupLimits(dir)
	if cpuset != nil {
		if in := cpus.Intersect(cpuset); len(in) > 0 {
			cpus = in
		}
	}
	cores := float64(len(cpus))
	if quota > 0 && quota < cores {
		cores = quota
	}
	return ticks, rss, cores, cpus, nil
}

// parseStatTicks reads fields 14 and 15 (utime, stime) of a stat line; the
// command name (field 2) may hold spaces and parentheses, so fields count
// from its last ')'.
func parseStatTicks(line string) (uint64, error) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return 0, errors.New("stat has no command field")
	}
	f := strings.Fields(line[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("stat has %d fields after the command, want 13 or more", len(f))
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("stat utime %q / stime %q are not tick counts", f[11], f[12])
	}
	if u > math.MaxUint64/2 || s > math.MaxUint64/2 {
		return 0, errors.New("stat tick counts out of range")
	}
	return u + s, nil
}

func readStatus(path string) (int64, CPUSet, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil, errNoProcess
	}
	if err != nil {
		return 0, nil, fmt.Errorf("reading its status: %w", err)
	}
	defer f.Close()
	rss := int64(-1)
	var cpus CPUSet
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fs := strings.Fields(v)
			if len(fs) == 2 && fs[1] == "kB" {
				if n, err := strconv.ParseInt(fs[0], 10, 64); err == nil && n >= 0 && n < 1<<40 {
					rss = n * 1024
				}
			}
		}
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			set, err := ParseCPUList(v)
			if err != nil {
				return 0, nil, fmt.Errorf("status Cpus_allowed_list: %w", err)
			}
			cpus = set
		}
	}
	if len(cpus) == 0 {
		return 0, nil, errors.New("status has no Cpus_allowed_list")
	}
	// Kernel threads and zombies have no VmRSS: -1, no memory figure.
	return rss, cpus, nil
}

// cgroupLimits is the process's cgroup v2 cpu.max limit in cores (0 for
// none) and its cpuset.cpus.effective (nil when unknown).
func (p *ProcSource) cgroupLimits(dir string) (float64, CPUSet) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup"))
	if err != nil {
		return 0, nil
	}
	root := p.CgroupRoot
	if root == "" {
		root = "/sys/fs/cgroup"
	}
	for _, line := range strings.Split(string(b), "\n") {
		path, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		cg := filepath.Join(root, filepath.Clean("/"+path))
		var set CPUSet
		if c, err := os.ReadFile(filepath.Join(cg, "cpuset.cpus.effective")); err == nil && strings.TrimSpace(string(c)) != "" {
			set, _ = ParseCPUList(string(c))
		}
		return cpuMax(filepath.Join(cg, "cpu.max")), set
	}
	return 0, nil
}

// cpuMax reads a cpu.max file ("QUOTA PERIOD" or "max PERIOD") in cores.
func cpuMax(path string) float64 {
	m, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	f := strings.Fields(string(m))
	if len(f) != 2 || f[0] == "max" {
		return 0
	}
	q, err1 := strconv.ParseFloat(f[0], 64)
	per, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || q <= 0 || per <= 0 {
		return 0
	}
	return q / per
}
