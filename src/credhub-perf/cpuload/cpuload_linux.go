package cpuload

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// allowedCPUs is this process's CPU affinity (taskset, cgroup cpusets).
func allowedCPUs() (map[int]bool, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			cpus, err := parseCPUList(v)
			return cpus, err == nil
		}
	}
	return nil, false
}

func hostTicks(cpus map[int]bool) (Ticks, bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return Ticks{}, false
	}
	defer f.Close()
	t, err := parseProcStat(f, cpus)
	return t, err == nil
}

// runWait sums the run-queue wait of this process's threads
// (/proc/self/task/*/schedstat, field 2). /proc/self/schedstat alone is
// the main thread's, and Go runs its work on other threads. A thread that
// exited takes its wait with it; Go keeps its threads, so the sum over a
// step stays close. false when the kernel has no schedstats.
func runWait() (time.Duration, bool) {
	tasks, err := filepath.Glob("/proc/self/task/*/schedstat")
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var sum time.Duration
	read := 0
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread exited meanwhile
		}
		w, err := parseSchedstat(string(b))
		if err != nil {
			return 0, false
		}
		sum += w
		read++
	}
	return sum, read > 0
}
