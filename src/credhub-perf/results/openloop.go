package results

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A closed loop of a few connections sends its next request only when the
// last one came back, so a target that stops for 50 ms (a collection, a
// deoptimisation) holds up a few requests, and the ramp's capacity is what
// a few such clients see. The applications that read CredHub are many
// independent clients whose requests arrive whether or not the last one
// finished: at 800 requests/s forty of them queue behind the same pause.
// So `credhub-perf run` and `capacity` follow a closed-loop ramp that
// found its capacity with open-loop steps at fractions of it (ramp's
// confirmation), written to the same CSV with their `rate` set.
//
// A summary whose steps hold both closed-loop steps (rate 0) and
// open-loop ones (rate > 0) is such a run: the closed-loop steps are the
// ramp, whose figures (knee, max_throughput_at_slo) are computed from them
// alone, and the open-loop steps are the confirmation, summarised in
// `open_loop`. A run of one kind only has no confirmation. Which figure to
// size with is sizewith.go's rule: a rate open arrivals held, never one
// they missed. It needs nothing but the CSV, so `credhub-perf summary`
// recomputes it anywhere.
//
// Measured against CredHub 2.15 (p95 <= 5 ms): 1,278-1,332 req/s closed
// loop, but under open arrivals the SLO held to about 650 req/s. The
// headline gives both and names the one to size with ("capacity at p95 <=
// 5 ms: 1,290 req/s closed loop (3 connections); under open arrivals the
// SLO holds to 700 req/s and missed at 740 - size with 700").
//
// An open-loop step over the SLO is a miss whether or not it was steady
// (complete and not tester-bound): the backlog behind a pause, or of
// arrivals faster than service, is what makes it unsteady. One within the
// SLO but unsteady is not a hold; its steadiness is judged beside the
// target's pauses (pauses.go).
//
// Queueing sets what to expect. Where the ramp's figure leaves the target
// headroom (an SLO well above the service time, reached before the
// target's cores are all busy), open arrivals at that rate meet the SLO
// too and the two agree. Where the ramp drove the target to saturation
// within the SLO (every core busy, the wait of a few connections still
// short), no open arrival rate holds there: Poisson arrivals at 100 % of a
// saturated target queue without bound, so the confirmation names the
// lower figure, rightly, pauses or not.

// OpenLoop is summary.json's `open_loop`: the open-loop confirmation of
// the closed-loop capacity and the verdict on which to size with.
type OpenLoop struct {
	// Steps are the confirmation's step numbers (after the ramp's).
	Steps []int `json:"steps"`
	// ClosedLoop is the ramp's capacity (max_throughput_at_slo) and
	// ClosedLoopConcurrency the concurrency of the counted step it comes
	// from; null when the ramp found none.
	ClosedLoop            *float64 `json:"closed_loop"`
	ClosedLoopConcurrency *int     `json:"closed_loop_concurrency"`
	// Capacity is the highest throughput of a counted confirmation step
	// within the SLO, interpolated towards the next one over it, as
	// max_throughput_at_slo is for the ramp: the estimate a fit of
	// open-loop figures takes, never sized with (no step ran at it); null
	// when no confirmation step met the SLO (or none that did counts: Note
	// says which).
	Capacity             *float64 `json:"capacity"`
	CapacityIsLowerBound bool     `json:"capacity_is_lower_bound"`
	LowerBoundReason     string   `json:"lower_bound_reason,omitempty"`
	// ClosedLoopInterval and CapacityInterval bracket the two capacities
	// (openinterval.go); null when there is no such capacity.
	ClosedLoopInterval *Interval `json:"closed_loop_interval"`
	CapacityInterval   *Interval `json:"capacity_interval"`
	// Held is the highest offered rate (req/s) at which open arrivals held
	// the SLO in a step that counts: the figure to size with when the
	// closed loop's is not confirmed; null when none held.
	Held *float64 `json:"held"`
	// Agree: open arrivals held the SLO at the closed-loop figure, so it
	// is confirmed and sized with (sizewith.go has the rule).
	Agree bool `json:"agree"`
	// Note says what the confirmation could not say (no step met the
	// SLO, none counts).
	Note string `json:"note,omitempty"`
}

// hasConfirmation: the steps hold closed-loop and open-loop steps.
func (s *Summary) hasConfirmation() bool {
	var closed, open bool
	for _, st := range s.Steps {
		if st.Rate > 0 {
			open = true
		} else {
			closed = true
		}
	}
	return closed && open
}

// rampSteps is how many of the (sorted) steps are the ramp's: all but a
// confirmation's.
func (s *Summary) rampSteps() int {
	if !s.hasConfirmation() {
		return len(s.Steps)
	}
	n := 0
	for n < len(s.Steps) && s.Steps[n].Rate == 0 {
		n++
	}
	return n
}

// RampSteps is how many steps the ramp ran (summary order), the
// confirmation's left out: what a planned step count compares with.
func (s *Summary) RampSteps() int { return s.rampSteps() }

// finishOpenLoop adds the confirmation's steps to the totals and sets
// OpenLoop from them (nil without a confirmation) and SizeWith.
func (s *Summary) finishOpenLoop() {
	s.OpenLoop = nil
	s.SizeWith, s.SizeWithKind = s.MaxThroughputAtSLO, s.rampKind()
	s.ClosedLoopCapacity = nil
	if s.SizeWithKind == KindClosedLoop {
		s.ClosedLoopCapacity = s.MaxThroughputAtSLO
	}
	n := s.rampSteps()
	if n == len(s.Steps) {
		return
	}
	conf := s.Steps[n:]
	sub := &Summary{Steps: conf, SLO: s.SLO, Warmup: s.Warmup}
	sub.totalsAndKnee()
	s.Requests += sub.Requests
	s.Errors += sub.Errors
	sub.lowerBound(sub.maxThroughput(), len(s.Steps))
	o := &OpenLoop{ClosedLoop: s.MaxThroughputAtSLO, Capacity: sub.MaxThroughputAtSLO,
		CapacityIsLowerBound: sub.CapacityIsLowerBound, LowerBoundReason: sub.LowerBoundReason}
	for _, st := range conf {
		o.Steps = append(o.Steps, st.Step)
	}
	var closedB, openB bracketed
	if o.ClosedLoop != nil {
		closedB = s.bracket(s.Steps[:n])
		o.ClosedLoopInterval = closedB.Interval
	}
	if o.Capacity != nil {
		openB = s.bracket(conf)
		o.CapacityInterval = openB.Interval
	}
	if i := s.bestWithin(s.Steps[:n]); i >= 0 {
		c := s.Steps[i].Concurrency
		o.ClosedLoopConcurrency = &c
	}
	switch {
	case s.Incomplete:
		o.Capacity, o.CapacityIsLowerBound, o.LowerBoundReason = nil, false, ""
		o.ClosedLoopInterval, o.CapacityInterval = nil, nil
	case o.Capacity != nil:
	case sub.NoCapacityReason() != "":
		o.Note = strings.Replace(sub.NoCapacityReason(), "unknown: ", "", 1)
	case o.ClosedLoop != nil && s.floorReached(*o.ClosedLoop):
		o.Note = fmt.Sprintf("no open-loop step met the SLO down to %g %% of the closed loop's capacity; the lowest, %s, missed it", 100*ConfirmFloor, conf[0].label())
	default:
		o.Note = fmt.Sprintf("no open-loop step met the SLO; the lowest, %s, missed it", conf[0].label())
	}
	s.OpenLoop = o
	if s.Incomplete || o.ClosedLoop == nil {
		s.SizeWith, s.SizeWithKind = o.ClosedLoop, s.rampKind()
		return
	}
	v := sizeWith(o.ClosedLoop, closedB, openB)
	o.Agree = v.confirmed
	if o.Capacity != nil {
		o.Held = ptr(openB.met)
	}
	s.SizeWith, s.SizeWithKind = v.figure, v.kind
}

// rampKind is the kind of the ramp's own capacity: open loop when its
// steps had a rate (steps.rates), else closed loop; "" without one.
func (s *Summary) rampKind() string {
	n := s.rampSteps()
	switch {
	case s.MaxThroughputAtSLO == nil || n == 0:
		return ""
	case s.Steps[0].Rate > 0:
		return KindOpenLoop
	}
	return KindClosedLoop
}

// bestWithin is the index of the counted step within the SLO of the most
// throughput among steps (-1: none), the step a capacity comes from.
func (s *Summary) bestWithin(steps []SummaryStep) int {
	best := -1
	for i, st := range steps {
		if st.MeetsSLO && s.CountsStep(st) && (best < 0 || st.Throughput >= steps[best].Throughput) {
			best = i
		}
	}
	return best
}

// headline is the capacity in one sentence, the one every output repeats
// (summary.txt, the live output, headroom-plot's report): the ramp's
// capacity at the SLO, and with an open-loop confirmation what open
// arrivals hold and which figure to size with. "" without a capacity.
func (s *Summary) headline() string {
	if s.MaxThroughputAtSLO == nil || s.Incomplete {
		return ""
	}
	head := fmt.Sprintf("capacity at p%g ≤ %s ms: ", s.SLO.Percentile, strconv.FormatFloat(s.SLO.LatencyS*1000, 'f', -1, 64))
	o := s.OpenLoop
	closed := thousands(*s.MaxThroughputAtSLO) + " req/s"
	if s.CapacityIsLowerBound {
		closed = "at least " + closed
	}
	if s.CapacityLabel != "" {
		head += "[warm-up off: may be a cold target's] "
	}
	if o == nil {
		return head + closed
	}
	if c := o.ClosedLoopConcurrency; c != nil && *c > 0 {
		closed += fmt.Sprintf(" closed loop (%d connection%s)", *c, map[bool]string{true: "", false: "s"}[*c == 1])
	} else {
		closed += " closed loop"
	}
	if o.Held == nil {
		if strings.HasPrefix(o.Note, "no open-loop step met") {
			return fmt.Sprintf("%s%s; under open arrivals %s — size below %s req/s", head, closed, o.Note, thousands(s.Steps[o.Steps[0]-1].Rate))
		}
		return fmt.Sprintf("%s%s; open arrivals unconfirmed: %s — no figure to size with", head, closed, o.Note)
	}
	held := "holds to " + thousands(*o.Held) + " req/s"
	if i := o.CapacityInterval; i != nil && i.High != nil {
		held += " and missed at " + thousands(*i.High)
	} else if o.CapacityIsLowerBound {
		held = "holds to at least " + thousands(*o.Held) + " req/s"
	}
	if o.Agree {
		return fmt.Sprintf("%s%s; open arrivals confirm it (the SLO %s)", head, closed, held)
	}
	return fmt.Sprintf("%s%s; under open arrivals the SLO %s — size with %s", head, closed, held, thousands(*o.Held))
}

// thousands writes a throughput for the headline: a whole number with
// thousands separators from 100 on (1290.4 -> "1,290"), one decimal below.
func thousands(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Sprint(x)
	}
	if math.Abs(x) < 99.95 {
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	d := strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	neg := strings.HasPrefix(d, "-")
	d = strings.TrimPrefix(d, "-")
	var b strings.Builder
	for i, r := range d {
		if i > 0 && (len(d)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// noKneeReason says why a complete run has no knee: no step within the
// error bound, or steps within it that do not count, and why not (a run
// whose every step had no error but was tester-bound or not steady must
// not read as a run of errors).
func (s *Summary) noKneeReason() string {
	var within []SummaryStep
	for _, st := range s.Steps[:s.rampSteps()] {
		if st.Requests > 0 && st.ErrorRate <= s.SLO.MaxErrorRate {
			within = append(within, st)
		}
	}
	if len(within) == 0 {
		return "no step within the error bound"
	}
	return fmt.Sprintf("%d of %d steps within the error bound, none counts: %s", len(within), s.rampSteps(), s.leftOutReason(within, s.rampSteps(), false))
}
