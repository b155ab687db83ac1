package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/results"
)

// stepVerdict is why credhub-perf, at its default saturation bounds,
// would say a step measured the machine rather than the target (the
// tester short of CPU, a busy host the tester waited on, CPU steal); ""
// when none. writeConfig turns the bounds themselves off, so that a test
// about something else still finds its capacity on a busy machine.
func stepVerdict(st results.SummaryStep) string {
	return cpuload.Judge(cpuload.Usage{TesterCPU: st.TesterCPU, HostCPU: st.HostCPU, HostSteal: st.HostSteal,
		TesterWait: st.TesterWait}, cpuload.DefaultLimits).Reason
}

// busySteps names the first of the given steps (all when none are given)
// that the tool's verdict says the machine disturbed
// (stepVerdict), with why; "" when none was.
func busySteps(sum *results.Summary, steps ...int) string {
	if len(steps) == 0 {
		for i := range sum.Steps {
			steps = append(steps, i)
		}
	}
	for _, i := range steps {
		if i < len(sum.Steps) {
			if why := stepVerdict(sum.Steps[i]); why != "" {
				return fmt.Sprintf("step %d: %s", i, why)
			}
		}
	}
	return ""
}

// readSummary reads a run's summary.json, to judge its steps' machine
// before checkSummaryMatchesCSV holds it to its CSV: an attempt the
// machine disturbed is not judged at all. (One such attempt, whose
// confirmation bisected, ran its rates out of order, and its tester
// figures were paired with other steps by the recomputation than in
// summary.json.)
func readSummary(t *testing.T, dir string) *results.Summary {
	t.Helper()
	sum, err := results.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
