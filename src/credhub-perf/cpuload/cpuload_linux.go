package cpuload

import (
	"bufio"
	"os"
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
