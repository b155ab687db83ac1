package results

import (
	"strings"
	"testing"
)

// bound marks a step tester-bound as the tester's verdict does.
func bound(st SummaryStep, schedLagMeanS float64) SummaryStep {
	st.TesterBound, st.TesterBoundReason = true, "the tester's threads waited for a CPU 18 % of the step per core (host CPU 35 % busy)"
	st.SchedLagMeanS, st.SchedLagMaxS = schedLagMeanS, 2*schedLagMeanS
	return st
}

// Open arrivals at 250 and 350 req/s met the SLO while the tester waited
// for a CPU, their schedule kept: they count, and the run sizes with 350,
// the highest rate held (the step at 425 missed). The same steps sent late
// (12 ms on average, past LateSchedule's bound) do not: no rate held.
func TestTesterBoundOpenStepThatHeldCounts(t *testing.T) {
	s := rampWithConfirmation(bound(openStep(250, 0.05), 0.001), bound(openStep(350, 0.08), 0.001), openStep(425, 0.16))
	if s.SizeWith == nil || *s.SizeWith != 350 || s.SizeWithKind != KindOpenLoop {
		t.Fatalf("size with %v (%s), want 350 open loop; open loop %+v", s.SizeWith, s.SizeWithKind, s.OpenLoop)
	}
	for _, st := range s.Steps[5:7] {
		if st.TesterBound || !strings.Contains(st.HostBusy, "tester was short of CPU (the tester's threads waited") || !strings.Contains(st.HostBusy, "the step counts") {
			t.Errorf("step %d: tester_bound %v, host_busy %q", st.Step, st.TesterBound, st.HostBusy)
		}
	}
	// A later Finish (a vitals attach, a merge) keeps the verdict and the note once.
	s.Finish()
	if *s.SizeWith != 350 || strings.Count(s.Steps[5].HostBusy, "tester was short of CPU") != 1 {
		t.Fatalf("after a second Finish: size with %v, host_busy %q", *s.SizeWith, s.Steps[5].HostBusy)
	}

	late := rampWithConfirmation(bound(openStep(250, 0.05), 0.012), bound(openStep(350, 0.08), 0.012), openStep(425, 0.16))
	if late.SizeWith != nil || !late.Steps[5].TesterBound {
		t.Fatalf("late schedule: size with %v, step 6 tester-bound %v", late.SizeWith, late.Steps[5].TesterBound)
	}
}

// A tester-bound open step over the SLO stays bound (its miss may be the
// tester's): open arrivals held to 250, and above it nothing is known,
// so the run sizes with 250.
func TestTesterBoundOpenStepThatMissedStaysBound(t *testing.T) {
	s := rampWithConfirmation(openStep(250, 0.05), bound(openStep(425, 0.16), 0.001))
	if !s.Steps[6].TesterBound || s.SizeWith == nil || *s.SizeWith != 250 {
		t.Fatalf("step 7 tester-bound %v, size with %v", s.Steps[6].TesterBound, s.SizeWith)
	}
	if strings.Contains(s.Headline, "missed at 425") {
		t.Errorf("headline %q: a tester-bound step is not a miss", s.Headline)
	}
}

// A closed-loop step is not cleared: its tester, short of CPU, offered
// less than its connections would, so the capacity is a lower bound.
func TestTesterBoundClosedStepStaysBound(t *testing.T) {
	s := &Summary{SLO: SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}}
	for c := 1; c <= 5; c++ {
		st := headlineStep(c)
		if c == 5 {
			st = bound(st, 0)
		}
		s.Steps = append(s.Steps, st)
	}
	s.Finish()
	if !s.Steps[4].TesterBound || s.MaxThroughputAtSLO == nil || *s.MaxThroughputAtSLO != 400 || !s.CapacityIsLowerBound {
		t.Fatalf("step 5 tester-bound %v, capacity %v, lower bound %v", s.Steps[4].TesterBound, s.MaxThroughputAtSLO, s.CapacityIsLowerBound)
	}
}
