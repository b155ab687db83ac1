package targetload

// The machine beside the processes: for the CPUs a sampled process may
// use, /proc/stat's per-CPU times say how busy they were in all, how
// much the hypervisor stole and how much waited on I/O; what of the busy
// time the sampled processes did not use is other work (a neighbour).

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// cpuTimes is one /proc/stat cpuN line, in ticks.
type cpuTimes struct{ total, busy, steal, iowait uint64 }

// readProcStat reads the per-CPU lines of /proc/stat: user nice system
// idle iowait irq softirq steal (guest time is within user).
func readProcStat(path string) (map[int]cpuTimes, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[int]cpuTimes{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || !strings.HasPrefix(fs[0], "cpu") || fs[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(fs[0][3:])
		if err != nil || n < 0 || n >= maxCPU {
			continue
		}
		if len(fs) < 9 {
			return nil, fmt.Errorf("%s: %s has %d fields, want 8 times or more", path, fs[0], len(fs)-1)
		}
		var v [8]uint64
		for i := range v {
			if v[i], err = strconv.ParseUint(fs[i+1], 10, 64); err != nil || v[i] > 1<<60 {
				return nil, fmt.Errorf("%s: %s field %d %q is not a tick count", path, fs[0], i+1, clip(fs[i+1], 20))
			}
		}
		t := cpuTimes{busy: v[0] + v[1] + v[2] + v[5] + v[6], steal: v[7], iowait: v[4]}
		t.total = t.busy + v[3] + v[4] + v[7]
		out[n] = t
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no per-CPU lines", path)
	}
	return out, nil
}

// machineState keeps what the machines' figures need between reads.
type machineState struct {
	pidTicks map[int]uint64     // PID -> ticks at the last read
	sampled  map[string]float64 // CPU list -> sampled processes' seconds
}

// machineSets joins the targets' CPU sets that overlap, until none do:
// resources that may run on one CPU share it, so they are one machine.
// It gives each target's machine (nil for a target not read).
func machineSets(reads []*targetRead) []CPUSet {
	out := make([]CPUSet, len(reads))
	for i, tr := range reads {
		if tr != nil {
			out[i] = tr.cpus
		}
	}
	for merged := true; merged; {
		merged = false
		for i := range out {
			for j := range out {
				if i != j && out[i] != nil && out[j] != nil && out[i].String() != out[j].String() && len(out[i].Intersect(out[j])) > 0 {
					u := out[i].Union(out[j])
					out[i], out[j], merged = u, u, true
				}
			}
		}
	}
	return out
}

// update gives, per machine (machineSets, by CPU list), its cumulative
// counters. The sampled time on a machine is the ticks of the distinct
// processes whose CPUs lie within it (a process allowed beyond it may
// have run elsewhere, so it is not counted as its work).
func (m *machineState) update(reads []*targetRead, machines []CPUSet, stat map[int]cpuTimes, statErr error) (map[string]MachineCounters, []string) {
	if m.pidTicks == nil {
		m.pidTicks, m.sampled = map[int]uint64{}, map[string]float64{}
	}
	delta := map[int]float64{}
	cpusOf := map[int]CPUSet{}
	sets := map[string]CPUSet{}
	next := map[int]uint64{}
	for i, tr := range reads {
		if tr == nil {
			continue
		}
		sets[machines[i].String()] = machines[i]
		for pid, ticks := range tr.ticks {
			cpusOf[pid] = cpusOf[pid].Union(tr.cpus)
			if prev, ok := m.pidTicks[pid]; ok && ticks >= prev {
				delta[pid] = float64(ticks-prev) / userHZ
			}
			next[pid] = ticks
		}
	}
	m.pidTicks = next
	for key, set := range sets {
		for pid, d := range delta {
			if len(cpusOf[pid].Intersect(set)) == len(cpusOf[pid]) {
				m.sampled[key] += d
			}
		}
	}
	if statErr != nil {
		return nil, []string{fmt.Sprintf("reading %v; the machine's CPU figures are unknown", statErr)}
	}
	out := map[string]MachineCounters{}
	var warnings []string
	for key, set := range sets {
		c := MachineCounters{Sampled: m.sampled[key]}
		ok := true
		for _, cpu := range set {
			t, found := stat[cpu]
			if !found {
				warnings = append(warnings, fmt.Sprintf("CPU %d is not in /proc/stat (offline?): the figures of CPUs %s are unknown", cpu, key))
				ok = false
				break
			}
			c.Total += ticksDur(t.total)
			c.Busy += ticksDur(t.busy)
			c.Steal += ticksDur(t.steal)
			c.Iowait += ticksDur(t.iowait)
		}
		if ok {
			out[key] = c
		}
	}
	return out, warnings
}

func ticksDur(t uint64) float64 { return float64(t) / userHZ }
