package results

import (
	"fmt"
	"strings"
)

// A target measured without a run warm-up may be a cold JVM: its first
// steps measure the JIT compiling (measured on CredHub 2.15: 6.5-14 s of
// every 10 s step for minutes), and steadiness within each step does not
// catch it (19 of 24 cold steps were judged steady). So with warmup.run
// off the capacity is labelled, in summary.txt, summary.json (its
// warnings and capacity_label) and headroom-plot's outputs, unless the
// steps themselves show the target warm: a warm target is no faster at a
// heavier load than at a lighter one, while a cold one speeds up as it
// compiles, its later, heavier steps faster than its first.

// warmShownTolerance: a heavier step's median may be this much below a
// lighter one's and still show a warm target (the steadiness judge's
// bound on a median's change).
const warmShownTolerance = 0.10

// minWarmShownSteps: fewer steps show nothing either way.
const minWarmShownSteps = 3

// coldLabelPrefix starts the label, and the warning that repeats it.
const coldLabelPrefix = "warm-up off: the capacity may be a cold target's"

// coldLabel is the label of a capacity measured with the run warm-up off
// on steps that do not show the target warm; "" otherwise.
func (s *Summary) coldLabel() string {
	if s.Warmup == nil || s.Warmup.Mode != "off" {
		return ""
	}
	var steps []SummaryStep
	for _, st := range s.Steps[:s.rampSteps()] {
		if st.Requests > 0 {
			steps = append(steps, st)
		}
	}
	if len(steps) < minWarmShownSteps {
		return fmt.Sprintf("%s (%d step(s) cannot show it warm; set warmup.run: auto)", coldLabelPrefix, len(steps))
	}
	for i, a := range steps {
		for _, b := range steps[i+1:] {
			if b.P50S < (1-warmShownTolerance)*a.P50S {
				return fmt.Sprintf("%s (step %d, %s, had a median of %s ms, the heavier step %d, %s, %s ms: the target sped up as it ran; set warmup.run: auto)",
					coldLabelPrefix, a.Step, a.label(), ms(a.P50S), b.Step, b.label(), ms(b.P50S))
			}
		}
	}
	return ""
}

// setColdLabel sets CapacityLabel and the warning that repeats it (once,
// however often Finish runs).
func (s *Summary) setColdLabel() {
	kept := s.Warnings[:0]
	for _, w := range s.Warnings {
		if !strings.HasPrefix(w, coldLabelPrefix) {
			kept = append(kept, w)
		}
	}
	s.Warnings = kept
	if len(s.Warnings) == 0 {
		s.Warnings = nil
	}
	s.CapacityLabel = ""
	if s.MaxThroughputAtSLO == nil && s.NoCapacityReason() == "" {
		return
	}
	if s.CapacityLabel = s.coldLabel(); s.CapacityLabel != "" {
		s.Warnings = append(s.Warnings, s.CapacityLabel)
	}
}
