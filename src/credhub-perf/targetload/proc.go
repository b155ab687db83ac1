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
		return ProcTarget{}, fmt.Errorf("%q: want RESOURCE=PID or RESOURCE=NAME, e.g. credhub=java or database=postgres", s)
	}
	if strings.Trim(res, "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		return ProcTarget{}, fmt.Errorf("%q: the resource name %q may hold only a-z, 0-9, _ and -", s, res)
	}
	if n, err := strconv.Atoi(what); err == nil {
		if n <= 0 {
			return ProcTarget{}, fmt.Errorf("%q: PID %d is not a process id", s, n)
		}
		return ProcTarget{Resource: res, PID: n}, nil
	}
	if strings.ContainsAny(what, "/\x00") {
		return ProcTarget{}, fmt.Errorf("%q: a process name has no '/'", s)
	}
	return ProcTarget{Resource: res, Name: what}, nil
}

// ProcSource samples processes on this machine from /proc.
type ProcSource struct {
	Targets []ProcTarget
	// Root is /proc and CgroupRoot /sys/fs/cgroup; tests point them at
	// made-up trees.
	Root, CgroupRoot string
	Every            time.Duration

	seen map[int]uint64        // PID -> its CPU ticks at the last read
	busy map[int]time.Duration // target index -> cumulative busy time
}

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

// Read reports each target's cumulative CPU time: the ticks its processes
// used since they were first seen (a process's earlier CPU cannot be
// placed in time), so a name's count grows as processes come and go.
func (p *ProcSource) Read(ctx context.Context) ([]Reading, []string) {
	if p.seen == nil {
		p.seen, p.busy = map[int]uint64{}, map[int]time.Duration{}
	}
	now := time.Now()
	var out []Reading
	var warnings []string
	live := map[int]bool{}
	for i, t := range p.Targets {
		pids, err := p.resolve(t)
		if err != nil {
			warnings = append(warnings, err.Error())
			continue
		}
		rss := int64(-1)
		cores := 0.0
		read := 0
		var lastErr error
		for _, pid := range pids {
			ticks, r, c, err := p.readPID(pid)
			if err != nil {
				lastErr = err
				continue
			}
			read++
			live[pid] = true
			if prev, ok := p.seen[pid]; ok && ticks >= prev {
				p.busy[i] += time.Duration(ticks-prev) * time.Second / userHZ
			}
			p.seen[pid] = ticks
			if r >= 0 {
				rss = max(rss, 0) + r
			}
			cores = math.Max(cores, c)
		}
		if read == 0 {
			warnings = append(warnings, fmt.Sprintf("%s: %v", t.describe(), lastErr))
			continue
		}
		out = append(out, Reading{Resource: t.Resource, Instance: t.describe(), At: now, Busy: p.busy[i], Cores: cores, Share: math.NaN(), RSSBytes: rss})
	}
	for pid := range p.seen {
		if !live[pid] {
			delete(p.seen, pid)
		}
	}
	return out, warnings
}

func (t ProcTarget) describe() string {
	if t.PID > 0 {
		return fmt.Sprintf("pid %d", t.PID)
	}
	return t.Name
}

func (p *ProcSource) resolve(t ProcTarget) ([]int, error) {
	if t.PID > 0 {
		return []int{t.PID}, nil
	}
	entries, err := os.ReadDir(p.root())
	if err != nil {
		return nil, fmt.Errorf("%s: listing processes: %w", t.Name, err)
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
		return nil, fmt.Errorf("no process named %q (%s=%s): is it running on this machine?", t.Name, t.Resource, t.Name)
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

// readPID returns a process's CPU ticks (utime+stime), its RSS in bytes
// and the cores it may use.
func (p *ProcSource) readPID(pid int) (uint64, int64, float64, error) {
	dir := filepath.Join(p.root(), strconv.Itoa(pid))
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, 0, errNoProcess
	}
	if err != nil {
		return 0, 0, 0, fmt.Errorf("reading its stat: %w", err)
	}
	ticks, err := parseStatTicks(string(b))
	if err != nil {
		return 0, 0, 0, err
	}
	rss, cpus, err := readStatus(filepath.Join(dir, "status"))
	if err != nil {
		return 0, 0, 0, err
	}
	if q := p.quota(dir); q > 0 && q < cpus {
		cpus = q
	}
	return ticks, rss, cpus, nil
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

func readStatus(path string) (int64, float64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, errNoProcess
	}
	if err != nil {
		return 0, 0, fmt.Errorf("reading its status: %w", err)
	}
	defer f.Close()
	rss := int64(-1)
	cpus := 0.0
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
			n, err := countCPUList(strings.TrimSpace(v))
			if err != nil {
				return 0, 0, fmt.Errorf("status Cpus_allowed_list: %w", err)
			}
			cpus = float64(n)
		}
	}
	if cpus == 0 {
		return 0, 0, errors.New("status has no Cpus_allowed_list")
	}
	// Kernel threads and zombies have no VmRSS: -1, no memory figure.
	return rss, cpus, nil
}

// countCPUList counts a list such as 0-3,8,10-11.
func countCPUList(s string) (int, error) {
	n := 0
	for _, part := range strings.Split(s, ",") {
		lo, hi, rng := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0, fmt.Errorf("%q is not a CPU list", s)
		}
		b := a
		if rng {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return 0, fmt.Errorf("%q is not a CPU list", s)
			}
		}
		n += b - a + 1
	}
	return n, nil
}

// quota is the process's cgroup v2 cpu.max limit in cores, 0 for none.
func (p *ProcSource) quota(dir string) float64 {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup"))
	if err != nil {
		return 0
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
		m, err := os.ReadFile(filepath.Join(root, filepath.Clean("/"+path), "cpu.max"))
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
	return 0
}
