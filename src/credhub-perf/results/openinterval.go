package results

import "math"

// Whether open arrivals confirm a closed loop's capacity is a question of
// intervals, not of a fixed tolerance. Each capacity is a crossing of the
// SLO between two measured steps: the counted step within the SLO of the
// most throughput and the next counted step, at more load, that missed it.
// Latency rises with load, so the true crossing lies between the two, and
// the steps' grid, far more than a percentile's sampling error over the
// thousands of requests of a step, is what the figure does not know. So
// each capacity carries that bracket (Interval), the two agree when their
// brackets overlap (the data cannot tell them apart), and the
// confirmation narrows its own bracket by bisection (confirm.refine)
// until it is as narrow as RefineWithin of the closed-loop capacity, so a
// coarse grid of fractions cannot pass a real gap off as agreement.

// RefineWithin is how narrow the confirmation's bracket must be before
// it stops bisecting: 5 % of the closed-loop capacity, the spread of a
// capacity at the SLO between runs of 30 s steps.
const RefineWithin = 0.05

// Interval is a capacity's bracket (req/s): Low is the throughput of the
// counted step within the SLO the capacity comes from; High is where the
// next counted step at more load missed the SLO (a closed-loop step's
// throughput, an open-loop step's offered rate, since a step that fell
// behind its arrivals delivered less than it was offered), null when none
// did (the capacity is at least Low).
type Interval struct {
	Low  float64  `json:"low"`
	High *float64 `json:"high"`
}

// bracket is the interval of the capacity found among steps (sorted by
// load): the counted step within the SLO of the most throughput, and the
// first counted step after it that missed the SLO. It also returns the
// offered rates of the two (met, missed; missed 0 when none), which the
// confirmation bisects. nil when no counted step met the SLO.
func (s *Summary) bracket(steps []SummaryStep) (*Interval, float64, float64) {
	best := -1
	for i, st := range steps {
		if st.MeetsSLO && s.CountsStep(st) && (best < 0 || st.Throughput >= steps[best].Throughput) {
			best = i
		}
	}
	if best < 0 {
		return nil, 0, 0
	}
	in := &Interval{Low: round3(steps[best].Throughput)}
	for _, st := range steps[best+1:] {
		if st.MeetsSLO || !s.CountsStep(st) {
			continue
		}
		hi := st.Throughput
		if st.Rate > 0 {
			hi = st.Rate
		}
		// A saturated target delivers no more past its capacity, so the
		// step over it can read less than the step within it.
		hi = round3(math.Max(hi, in.Low))
		in.High = &hi
		return in, steps[best].Rate, st.Rate
	}
	return in, steps[best].Rate, 0
}

// overlaps: the open-loop bracket reaches the closed loop's (or is above
// it): the data cannot tell the two capacities apart.
func overlaps(open, closed *Interval) bool {
	return open != nil && closed != nil && (open.High == nil || *open.High >= closed.Low)
}

// NextConfirmRate is the offered rate (req/s) of the confirmation's next
// bisection step: midway between the highest rate that held the SLO and
// the lowest above it that missed, while those two are more than
// RefineWithin of the closed-loop capacity apart; false when the bracket
// is narrow enough, or open (every rate held, or none did).
func (s *Summary) NextConfirmRate() (float64, bool) {
	o := s.OpenLoop
	if o == nil || o.ClosedLoop == nil || s.Incomplete {
		return 0, false
	}
	_, met, missed := s.bracket(s.Steps[s.rampSteps():])
	if met <= 0 || missed <= met || missed-met <= RefineWithin**o.ClosedLoop {
		return 0, false
	}
	return math.Round((met+missed)/2*1000) / 1000, true
}
