package results

import "math"

// Whether open arrivals confirm a closed loop's capacity is a question of
// intervals, not of a fixed tolerance. Each capacity is a crossing of the
// SLO between two measured steps: the counted step within the SLO of the
// most throughput and the next counted step, at more load, that missed it.
// Latency rises with load, so the true crossing lies between the two, and
// the steps' grid, far more than a percentile's sampling error over the
// thousands of requests of a step, is what the figure does not know. So
// each capacity carries that bracket (Interval), the closed-loop figure is
// confirmed only when open arrivals held the SLO at it (sizewith.go), and
// the confirmation narrows its own bracket by bisection (confirm.refine)
// until it is as narrow as RefineWithin of the closed-loop capacity, so
// the figure to size with is known to that, not to a coarse grid's step.
// When no rate tried held, the bisection goes down instead, towards
// ConfirmFloor of the closed-loop capacity.

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

// bracketed is a capacity's bracket and how it was found.
type bracketed struct {
	*Interval
	// met is the offered rate of the capacity's step, the bottom of what
	// the confirmation bisects.
	met float64
	// unknownAbove: no step missed, but one above the capacity's step
	// neither held nor missed in a way that counts (within the SLO but
	// unsteady, tester-bound): the capacity may be higher, or not.
	unknownAbove bool
	// next is the offered rate of the first step above the capacity's
	// that did not hold the SLO in a way that counts (missed or unknown):
	// the top of what the confirmation bisects, so a bisection never
	// lands on a rate already run.
	next float64
}

// bracket is the bracket of the capacity found among steps (sorted by
// load): the counted step within the SLO of the most throughput, and the
// first step after it that missed the SLO in a way that counts (missed).
// Its Interval is nil when no counted step met the SLO.
func (s *Summary) bracket(steps []SummaryStep) bracketed {
	best := s.bestWithin(steps)
	if best < 0 {
		return bracketed{}
	}
	b := bracketed{Interval: &Interval{Low: round3(steps[best].Throughput)}, met: steps[best].Rate}
	for _, st := range steps[best+1:] {
		if st.Requests == 0 || st.MeetsSLO && s.CountsStep(st) {
			continue
		}
		if b.next == 0 {
			b.next = st.Rate
		}
		if st.MeetsSLO || !s.missed(st) {
			b.unknownAbove = true
			continue
		}
		hi := st.Throughput
		if st.Rate > 0 {
			hi = st.Rate
		}
		// A saturated target delivers no more past its capacity, so the
		// step over it can read less than the step within it.
		hi = round3(math.Max(hi, b.Low))
		b.High, b.unknownAbove = &hi, false
		return b
	}
	return b
}

// missed: a step over the SLO that says the target could not keep up.
// One that counts does; so does any open-loop step over it that was
// complete and not tester-bound, steady or not: arrivals that do not wait
// for answers queue behind a target's pause or outrun its capacity, and
// that backlog, which makes the step unsteady, is the miss itself, not a
// reason to leave the step out. (Unsteady steps within the SLO still do
// not count as holding it: the rule leans to the lower figure both ways.)
func (s *Summary) missed(st SummaryStep) bool {
	if s.CountsStep(st) {
		return true
	}
	return st.Rate > 0 && st.Requests > 0 && !st.TesterBound && !st.Incomplete
}

// NextConfirmRate is the offered rate (req/s) of the confirmation's next
// bisection step: midway between the highest rate that held the SLO and
// the lowest above it that did not (missed, or did not count either way),
// while those two are more than RefineWithin of the closed-loop capacity
// apart; when none held, below the lowest tried (nextRateDown). False
// when the bracket is narrow enough, open (every rate held), the floor
// was tried, or the rate is one already run (a step's rows are keyed by
// their concurrency and rate, which must not repeat).
func (s *Summary) NextConfirmRate() (float64, bool) {
	o := s.OpenLoop
	if o == nil || o.ClosedLoop == nil || s.Incomplete {
		return 0, false
	}
	b := s.bracket(s.Steps[s.rampSteps():])
	var mid float64
	if b.Interval == nil {
		r, ok := s.nextRateDown(*o.ClosedLoop)
		if !ok {
			return 0, false
		}
		mid = r
	} else {
		top := b.next
		if b.met <= 0 || top <= b.met || top-b.met <= RefineWithin**o.ClosedLoop {
			return 0, false
		}
		mid = round3((b.met + top) / 2)
	}
	for _, st := range s.Steps[s.rampSteps():] {
		if st.Rate == mid {
			return 0, false
		}
	}
	return mid, true
}
