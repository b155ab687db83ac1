package results

import (
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
)

// A host busy past its bound whose tester did not wait for a CPU is a note
// in meta.json and a step warning, not a bound: the step still counts. A
// tester that waited is bound, and the wait is recorded either way.
func TestHostBusyIsNotTesterBound(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	step := SummaryStep{Step: 1, Concurrency: 4, Steady: bp(true)}
	step.Requests = 100
	quiet := cpuload.Usage{TesterCPU: f(0.3), HostCPU: f(0.97), HostSteal: f(0), TesterWait: f(0.02), TesterWaitTime: 12 * time.Millisecond, Cores: 1}
	m := NewMetaStep(step, quiet, cpuload.DefaultLimits)
	if m.TesterBound || !strings.HasPrefix(m.HostBusy, "host busy (is the target on this machine?)") ||
		m.TesterWait == nil || *m.TesterWait != 0.02 || m.TesterWaitS == nil || *m.TesterWaitS != 0.012 {
		t.Fatalf("busy host, tester not waiting: %+v", m)
	}
	sum := &Summary{Steps: []SummaryStep{step}}
	sum.Steps[0].AddTester(0, 1, m)
	sum.Finish()
	if st := sum.Steps[0]; st.TesterBound || st.HostBusy == "" || len(sum.StepWarnings) != 1 ||
		!strings.Contains(sum.StepWarnings[0], "step 1 (concurrency 4): host busy (is the target on this machine?)") {
		t.Fatalf("summary: %+v %q", st, sum.StepWarnings)
	}

	starved := quiet
	starved.TesterWait = f(0.3)
	m = NewMetaStep(step, starved, cpuload.DefaultLimits)
	if !m.TesterBound || m.HostBusy != "" || !strings.Contains(m.TesterBoundReason, "host CPU 97 %") || !strings.Contains(m.TesterBoundReason, "waited for a CPU 30 %") {
		t.Fatalf("busy host, tester waiting: %+v", m)
	}
	if a := TesterBoundAdvice(m.TesterBoundReason); len(a) != 1 || !strings.Contains(a[0], "quiet machine") {
		t.Fatalf("advice %q", a)
	}
}
