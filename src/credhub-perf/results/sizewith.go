package results

import "math"

// The figure to size with, when a closed-loop ramp was followed by its
// open-loop confirmation, is decided here and nowhere else.
//
// An operator sizes a cluster with one number and reads it as "at this
// rate of independent clients the SLO holds". So that number must be a
// rate at which open arrivals were measured to hold the SLO, never one at
// which they missed it. Two brackets that only overlap do not say that:
// a ramp whose capacity is 506 req/s ([506, 540]) and open arrivals that
// held at 383 and missed at 506 ([383, 506]) touch at 506, the one rate
// known to miss. The data cannot tell the two capacities apart, but it
// can tell that 506 is not a rate to size with.
//
// So the closed-loop figure is confirmed only when open arrivals held the
// SLO at it: at a rate at least that figure, or at a rate within its
// bracket (at least the bracket's floor) with no miss, nor any step left
// out, between that rate and the figure. Otherwise the figure to size
// with is the highest offered rate at which open arrivals held the SLO in
// a step that counts (open_loop.held), and the headline says so; when
// none held, there is none, and the headline says below which rate to
// size. The open-loop capacity (open_loop.capacity, interpolated towards
// the miss as max_throughput_at_slo is) stays the estimate a scalability
// fit of open-loop figures uses; it is never sized with, since no step ran
// at it.

// Kinds of the figure to size with (summary.json size_with_kind).
const (
	KindClosedLoop = "closed_loop"
	KindOpenLoop   = "open_loop"
)

// sameRate: a confirmation step's rate is its fraction of the capacity
// rounded to 1/1000 req/s, so rates that close are one rate.
const sameRate = 0.002

// sizing is the rule's verdict: the figure to size with (nil: none), its
// kind, and whether open arrivals confirmed the closed-loop figure.
type sizing struct {
	figure    *float64
	kind      string
	confirmed bool
}

// sizeWith applies the rule to the closed-loop figure (max_throughput_at_slo,
// nil when the ramp found none) and the two brackets (closed: the ramp's;
// open: the confirmation's, bracket()).
func sizeWith(closedFigure *float64, closed, open bracketed) sizing {
	if closedFigure == nil {
		return sizing{}
	}
	if open.Interval == nil || open.met <= 0 {
		return sizing{}
	}
	c := *closedFigure
	heldAt := open.met >= c-sameRate
	if !heldAt && closed.Interval != nil && open.met >= closed.Low-sameRate {
		// Held within the bracket: confirmed unless a step between that
		// rate and the figure missed or was left out.
		heldAt = open.next == 0 || open.next > c+sameRate
	}
	if heldAt {
		return sizing{figure: ptr(c), kind: KindClosedLoop, confirmed: true}
	}
	return sizing{figure: ptr(open.met), kind: KindOpenLoop}
}

func ptr(x float64) *float64 { return &x }

// ConfirmFloor is the lowest fraction of the closed-loop capacity the
// confirmation goes down to when even its lowest fraction missed: below a
// tenth, the closed-loop figure says nothing worth confirming.
const ConfirmFloor = 0.1

// nextRateDown is the confirmation's next step when no rate tried held
// the SLO and the lowest missed it: geometrically midway between that
// rate and the floor (ConfirmFloor of the closed-loop capacity c), the
// floor itself when that midpoint is within RefineWithin of c of it;
// false once the floor was tried, or when the lowest rate met the SLO
// but did not count (unjudged, tester-bound): a lower one would not
// count either.
func (s *Summary) nextRateDown(c float64) (float64, bool) {
	lowest := -1
	conf := s.Steps[s.rampSteps():]
	for i, st := range conf {
		if st.Rate > 0 && (lowest < 0 || st.Rate < conf[lowest].Rate) {
			lowest = i
		}
	}
	floor := round3(ConfirmFloor * c)
	if lowest < 0 || conf[lowest].MeetsSLO || !s.missed(conf[lowest]) || conf[lowest].Rate <= floor+sameRate {
		return 0, false
	}
	low := conf[lowest].Rate
	r := round3(math.Sqrt(floor * low))
	if r-floor <= RefineWithin*c {
		r = floor
	}
	return r, true
}

// floorReached: the confirmation's lowest step is at the floor.
func (s *Summary) floorReached(c float64) bool {
	for _, st := range s.Steps[s.rampSteps():] {
		if st.Rate > 0 && st.Rate <= round3(ConfirmFloor*c)+sameRate {
			return true
		}
	}
	return false
}
