package main

import (
	"fmt"
	"strings"

	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/results"
)

// boundWarning judges the measured run as credhub-perf judges a step: the
// tester's CPU over the run against cpuload.DefaultLimits (hey has no
// configuration file, so saturation.* keeps its defaults), with
// summary.json's advice, and an open loop's sched-lag against summary.json's
// late-schedule rule. It returns the warning's lines, none when the run
// measured the server. A saturated tester still answers on time by Little's
// law, so nothing else in the summary would show it.
func boundWarning(u cpuload.Usage, all results.Snapshot, open bool) []string {
	var late string
	if open {
		late = results.LateSchedule(all.SchedLagMean.Seconds(), all.SchedLagMax.Seconds(), all.Mean.Seconds(), "-c")
	}
	reason := u.Bound(cpuload.DefaultLimits)
	if reason == "" {
		if late == "" {
			return nil
		}
		// CPU to spare and still late: the -c cap, or a pause cpuload does
		// not see; the figures then describe the schedule, not the server.
		return []string{"WARNING: late schedule: " + late}
	}
	lines := []string{
		"WARNING: tester-bound: " + reason,
		"  This run's figures describe this tester, not the server (" + usageFigures(u) + ").",
	}
	for _, a := range results.TesterBoundAdvice(reason) {
		lines = append(lines, "  To do: "+a)
	}
	if late != "" {
		lines = append(lines, "  Also: "+late)
	}
	return lines
}

// usageFigures lists the CPU figures over the run; unknown ones are said
// to be so, never shown as 0.
func usageFigures(u cpuload.Usage) string {
	pct := func(p *float64) string {
		if p == nil {
			return "unknown"
		}
		return fmt.Sprintf("%.0f %%", 100**p)
	}
	figs := []string{
		fmt.Sprintf("tester CPU %s of %d core(s)", pct(u.TesterCPU), u.Cores),
		"host CPU " + pct(u.HostCPU) + " busy",
		"steal " + pct(u.HostSteal),
	}
	if u.TesterWait != nil {
		// Only where the kernel keeps schedstats; elsewhere the other
		// figures decide, as before.
		figs = append(figs, "tester's threads waited for a CPU "+pct(u.TesterWait)+" of the run per core")
	}
	return strings.Join(figs, ", ")
}
