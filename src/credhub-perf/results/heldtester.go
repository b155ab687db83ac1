package results

import (
	"fmt"
	"strings"
)

// An open-loop step that met the SLO counts even when the tester was
// short of CPU, as long as it kept its schedule. A tester short of CPU
// can make a step look worse than the target is, never better: it sends
// late (which an open loop measures, sched-lag, and LateSchedule judges)
// and reads answers late (which only adds to each latency). So when the
// rate was offered on time and the latencies, the tester's delays
// included, still met the SLO, open arrivals held the SLO at that rate:
// the step is what the figure to size with is made of. A closed-loop
// step is not cleared this way: a closed loop's tester that runs short
// offers less load than its connections would, so its throughput is the
// tester's as much as the target's. A step that missed the SLO stays
// bound: the miss may be the tester's.
//
// The tester's own verdict stays in meta.json; summary.json's step then
// has tester_bound false and says why in host_busy, so every reader of
// summary.json (headroom-plot included) counts it without a rule of its
// own. Seen on a 2-core machine with the target beside the tester: open
// steps at 525 and 585 req/s met the SLO with their schedule kept while
// the tester's threads waited 17-21 % of each step behind the target, and
// left out, they held the figure to size with at 465 where open arrivals
// hold about 600.

// HeldDespiteTester: a tester-bound open-loop step that met the SLO with
// its schedule kept (LateSchedule), complete: it counts.
func (st SummaryStep) HeldDespiteTester() bool {
	return st.TesterBound && st.Rate > 0 && st.Requests > 0 && st.MeetsSLO && !st.Incomplete &&
		LateSchedule(st.SchedLagMeanS, st.SchedLagMaxS, st.MeanS, "") == ""
}

// HeldDespiteTesterCleared: the step was tester-bound by the tester's
// verdict and counts as HeldDespiteTester (its note in host_busy).
func (st SummaryStep) HeldDespiteTesterCleared() bool {
	return !st.TesterBound && strings.Contains(st.HostBusy, heldNoteTail)
}

// heldNoteTail ends every HeldDespiteTesterNote.
const heldNoteTail = "a tester short of CPU only adds latency, so the step counts"

// HeldDespiteTesterNote says why such a step counts, naming the tester's
// bound (its reason).
func HeldDespiteTesterNote(reason string) string {
	return fmt.Sprintf("the tester was short of CPU (%s), but open arrivals held the SLO at this rate with the schedule kept; %s", reason, heldNoteTail)
}

// clearHeldTesterBounds counts the steps HeldDespiteTester: no longer
// tester-bound, their reason kept in host_busy.
func (s *Summary) clearHeldTesterBounds() {
	for i := range s.Steps {
		st := &s.Steps[i]
		if !st.HeldDespiteTester() {
			continue
		}
		note := HeldDespiteTesterNote(st.TesterBoundReason)
		if st.HostBusy != "" {
			note = st.HostBusy + "; " + note
		}
		st.HostBusy, st.TesterBound, st.TesterBoundReason = note, false, ""
	}
}
