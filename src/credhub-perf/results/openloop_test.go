package results

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// openStep is a confirmation step at rate req/s (16 workers) whose SLO
// percentile is p95 (seconds), judged steady.
func openStep(rate, p95 float64) SummaryStep {
	st := headlineStep(16)
	st.Rate, st.Throughput = rate, rate
	st.SLOPercentileS, st.P95S = p95, p95
	st.MeetsSLO = p95 <= 0.1
	return st
}

// rampWithConfirmation is a closed-loop ramp of 1..5 workers at 100 req/s
// each (capacity 500 req/s at concurrency 5), then open steps given in
// any order (summaries sort them after the ramp).
func rampWithConfirmation(open ...SummaryStep) *Summary {
	s := &Summary{SLO: SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}}
	for _, st := range open {
		s.Steps = append(s.Steps, st)
	}
	for c := 5; c >= 1; c-- {
		s.Steps = append(s.Steps, headlineStep(c))
	}
	s.Finish()
	return s
}

// Open arrivals hold the SLO at 250 and 350 req/s, miss it at 425 and
// 500: the open-loop capacity interpolates between 350 (ratio 0.8) and
// 425 (ratio 1.6) to 368.75 req/s, and the headline sizes with 350, the
// highest rate that held. The
// ramp's own figures (knee, max throughput at SLO) are the ramp's alone.
func TestOpenLoopConfirmationDiffers(t *testing.T) {
	s := rampWithConfirmation(openStep(500, 0.4), openStep(250, 0.05), openStep(425, 0.16), openStep(350, 0.08))
	if s.MaxThroughputAtSLO == nil || *s.MaxThroughputAtSLO != 500 || s.Knee == nil || *s.KneeConcurrency != 5 {
		t.Fatalf("ramp capacity %v, knee %v", s.MaxThroughputAtSLO, s.KneeConcurrency)
	}
	o := s.OpenLoop
	if o == nil || o.Capacity == nil || *o.Capacity != 368.75 || o.Agree || *o.ClosedLoopConcurrency != 5 {
		t.Fatalf("open loop %+v", o)
	}
	if got := jsonOf(o.Steps); got != "[6,7,8,9]" {
		t.Errorf("confirmation steps %s, want 6 7 8 9 (after the ramp's, by rate)", got)
	}
	if s.Steps[5].Rate != 250 || s.Steps[8].Rate != 500 || s.Steps[4].Concurrency != 5 {
		t.Errorf("steps not ramp first, then by rate: %+v", s.Steps)
	}
	if s.SizeWith == nil || *s.SizeWith != 350 || s.SizeWithKind != KindOpenLoop || *o.Held != 350 || s.Requests != 9000 {
		t.Fatalf("size with %v, requests %d", s.SizeWith, s.Requests)
	}
	want := "capacity at p95 ≤ 100 ms: 500 req/s closed loop (5 connections); under open arrivals the SLO holds to 350 req/s and missed at 425 — size with 350"
	if s.Headline != want {
		t.Fatalf("headline\n%s\nwant\n%s", s.Headline, want)
	}
	var sb strings.Builder
	s.WriteTable(&sb)
	if !strings.Contains(sb.String(), "\n"+want+"\n") || !strings.Contains(sb.String(), " 425/s ") {
		t.Fatalf("summary.txt:\n%s", sb.String())
	}
	b, _ := json.Marshal(s)
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil || back.Headline != want || back.OpenLoop == nil || *back.SizeWith != 350 {
		t.Fatalf("summary.json round trip: %v %+v", err, back.OpenLoop)
	}
}

// Open arrivals meet the SLO at every fraction: one figure, the ramp's.
func TestOpenLoopConfirmationAgrees(t *testing.T) {
	s := rampWithConfirmation(openStep(250, 0.02), openStep(500, 0.05))
	if o := s.OpenLoop; o == nil || !o.Agree || *s.SizeWith != 500 {
		t.Fatalf("open loop %+v, size with %v", o, s.SizeWith)
	}
	if want := "capacity at p95 ≤ 100 ms: 500 req/s closed loop (5 connections); open arrivals confirm it (the SLO holds to 500 req/s)"; s.Headline != want {
		t.Fatalf("headline %q", s.Headline)
	}
}

// The rule of the figure to size with (sizewith.go), with known answers.
// The ramp of 1..5 connections met the SLO at every step: its capacity is
// at least 500 req/s, bracket [500, none]; with a sixth step at 520 req/s
// and p95 180 ms it is 510 req/s (interpolated), bracket [500, 520].
func TestSizeWithRule(t *testing.T) {
	over := headlineStep(6)
	over.Throughput, over.SLOPercentileS, over.P95S, over.MeetsSLO = 520, 0.18, 0.18, false
	for _, c := range []struct {
		name      string
		crossed   bool // the ramp's sixth step
		open      []SummaryStep
		size      float64 // 0: none
		kind      string
		confirmed bool
		headline  string // its end
		next      float64
	}{
		// The brackets touch at the one rate known to miss: the demo's
		// "confirm" that sized with a rate open arrivals missed at.
		{name: "touching", open: []SummaryStep{openStep(250, 0.02), openStep(383, 0.05), openStep(500, 0.3)},
			size: 383, kind: KindOpenLoop, headline: "under open arrivals the SLO holds to 383 req/s and missed at 500 — size with 383", next: 441.5},
		// Overlapping, held below the closed loop's floor: not confirmed,
		// and the bisection goes on while the bracket is wider than 5 %.
		{name: "overlapping below the floor", open: []SummaryStep{openStep(250, 0.02), openStep(470, 0.05), openStep(520, 2)},
			size: 470, kind: KindOpenLoop, headline: "the SLO holds to 470 req/s and missed at 520 — size with 470", next: 495},
		// Overlapping, held within the closed loop's bracket [500, 520]
		// but missed at its figure, 510.
		{name: "overlapping, missed at the figure", crossed: true, open: []SummaryStep{openStep(255, 0.02), openStep(505, 0.05), openStep(510, 0.2)},
			size: 505, kind: KindOpenLoop, headline: "the SLO holds to 505 req/s and missed at 510 — size with 505"},
		// Held within the closed loop's bracket, the first miss above its
		// figure: the data cannot tell them apart and no rate at or below
		// the figure missed, so it is confirmed.
		{name: "overlapping, held within the bracket", crossed: true, open: []SummaryStep{openStep(255, 0.02), openStep(505, 0.05), openStep(530, 0.2)},
			size: 510, kind: KindClosedLoop, confirmed: true, headline: "open arrivals confirm it (the SLO holds to 505 req/s and missed at 530)"},
		// Held at the figure itself.
		{name: "held at the figure", open: []SummaryStep{openStep(250, 0.02), openStep(500, 0.05)},
			size: 500, kind: KindClosedLoop, confirmed: true, headline: "open arrivals confirm it (the SLO holds to 500 req/s)"},
		{name: "disjoint", open: []SummaryStep{openStep(250, 0.02), openStep(350, 0.08), openStep(425, 0.2), openStep(500, 0.4)},
			size: 350, kind: KindOpenLoop, headline: "the SLO holds to 350 req/s and missed at 425 — size with 350", next: 387.5},
		// None held: nothing to size with; the confirmation goes down,
		// geometrically towards 10 % of the closed loop's figure.
		{name: "none held", open: []SummaryStep{openStep(250, 0.2), openStep(500, 0.4)},
			headline: "no open-loop step met the SLO; the lowest, rate 250/s, missed it — size below 250 req/s", next: 111.803},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := rampWithConfirmation(c.open...)
			if c.crossed {
				s = rampWithConfirmation(append([]SummaryStep{over}, c.open...)...)
			}
			o := s.OpenLoop
			if c.size == 0 {
				if s.SizeWith != nil || s.SizeWithKind != "" || o.Held != nil || o.Agree {
					t.Fatalf("size with %v (%q), open loop %+v", s.SizeWith, s.SizeWithKind, o)
				}
			} else if s.SizeWith == nil || *s.SizeWith != c.size || s.SizeWithKind != c.kind || o.Agree != c.confirmed {
				t.Fatalf("size with %v (%q), confirmed %v; want %g (%q), %v", s.SizeWith, s.SizeWithKind, o.Agree, c.size, c.kind, c.confirmed)
			}
			if !strings.HasSuffix(s.Headline, c.headline) || (!c.confirmed && strings.Contains(s.Headline, "confirm")) {
				t.Errorf("headline %q, want it to end %q", s.Headline, c.headline)
			}
			if s.ClosedLoopCapacity == nil || *s.ClosedLoopCapacity != *s.MaxThroughputAtSLO {
				t.Errorf("closed-loop capacity %v", s.ClosedLoopCapacity)
			}
			if r, ok := s.NextConfirmRate(); ok != (c.next > 0) || r != c.next {
				t.Errorf("next rate %v %v, want %v", r, ok, c.next)
			}
		})
	}
}

// When even the lowest fraction missed, the confirmation goes down: with
// the floor at 10 % of 500 req/s and 250 missed, the geometric midpoint is
// 111.8; a miss there makes the next one 74.8, within 5 % of 500 of the
// floor, so the floor itself, 50, follows. A miss at the floor ends it,
// and the headline says none held down to it; a hold there makes the
// bracket [50, 111.8], bisected upwards as usual.
func TestConfirmationGoesDownToTheFloor(t *testing.T) {
	steps := []SummaryStep{openStep(250, 0.2), openStep(500, 0.4)}
	for _, want := range []float64{111.803, 50} {
		s := rampWithConfirmation(steps...)
		r, ok := s.NextConfirmRate()
		if !ok || r != want {
			t.Fatalf("after %d steps: next %v %v, want %v", len(steps), r, ok, want)
		}
		steps = append(steps, openStep(r, 0.2))
	}
	s := rampWithConfirmation(steps...)
	if r, ok := s.NextConfirmRate(); ok {
		t.Fatalf("below the floor: %v", r)
	}
	if want := "under open arrivals no open-loop step met the SLO down to 10 % of the closed loop's capacity; the lowest, rate 50/s, missed it — size below 50.0 req/s"; !strings.HasSuffix(s.Headline, want) || s.SizeWith != nil {
		t.Fatalf("headline %q, size with %v", s.Headline, s.SizeWith)
	}
	steps[len(steps)-1] = openStep(50, 0.05)
	s = rampWithConfirmation(steps...)
	if r, ok := s.NextConfirmRate(); !ok || r != 80.902 || *s.SizeWith != 50 || s.SizeWithKind != KindOpenLoop {
		t.Fatalf("held at the floor: next %v %v, size with %v", r, ok, s.SizeWith)
	}
}

// A ramp that crossed the SLO brackets its capacity between the step
// within it and the next over it, by throughput; a saturated ramp whose
// step over the SLO delivered less than the one within brackets at the
// one within. Nothing to bisect upwards when every open step held.
func TestCapacityIntervals(t *testing.T) {
	over := headlineStep(6)
	over.Throughput, over.SLOPercentileS, over.P95S, over.MeetsSLO = 520, 0.3, 0.3, false
	s := rampWithConfirmation(openStep(250, 0.02), openStep(500, 0.05), over)
	if got := jsonOf(s.OpenLoop.ClosedLoopInterval); got != `{"low":500,"high":520}` {
		t.Errorf("closed-loop interval %s", got)
	}
	if got := jsonOf(s.OpenLoop.CapacityInterval); got != `{"low":500,"high":null}` || !s.OpenLoop.Agree {
		t.Errorf("open-loop interval %s, agree %v", got, s.OpenLoop.Agree)
	}
	if r, ok := s.NextConfirmRate(); ok {
		t.Errorf("every open step held, yet bisects at %v", r)
	}
	over.Throughput = 480
	s = rampWithConfirmation(openStep(250, 0.02), openStep(500, 0.05), over)
	if got := jsonOf(s.OpenLoop.ClosedLoopInterval); got != `{"low":500,"high":500}` {
		t.Errorf("saturated closed-loop interval %s", got)
	}
	s = rampWithConfirmation(openStep(250, 0.2), openStep(500, 0.4))
	if s.OpenLoop.CapacityInterval != nil {
		t.Errorf("no open step held, yet interval %v", s.OpenLoop.CapacityInterval)
	}
}

// No open-loop step met the SLO: nothing to size with that the data
// supports; the headline says to size below the lowest rate tried. One
// that met it but does not count (tester-bound, its schedule not kept)
// leaves the confirmation unknown.
func TestOpenLoopConfirmationFailsOrUnknown(t *testing.T) {
	s := rampWithConfirmation(openStep(250, 0.2), openStep(500, 0.4))
	if s.SizeWith != nil || s.OpenLoop.Capacity != nil || !strings.HasSuffix(s.Headline, "— size below 250 req/s") ||
		!strings.Contains(s.Headline, "no open-loop step met the SLO; the lowest, rate 250/s, missed it") {
		t.Fatalf("size with %v, headline %q", s.SizeWith, s.Headline)
	}
	bound := openStep(250, 0.02)
	bound.TesterBound, bound.TesterBoundReason = true, "tester CPU 95 % of 1 core(s)"
	bound.SchedLagMeanS, bound.SchedLagMaxS = 0.012, 0.03
	s = rampWithConfirmation(bound, openStep(500, 0.4))
	if s.OpenLoop.Capacity != nil || !strings.Contains(s.Headline, "open arrivals unconfirmed: 1 of 2 steps met the SLO but none counts: 1 tester-bound") ||
		!strings.HasSuffix(s.Headline, "— no figure to size with") || s.SizeWith != nil {
		t.Fatalf("headline %q, size with %v", s.Headline, s.SizeWith)
	}
}

// A ramp alone, or an open-loop ramp alone, has no confirmation; its
// headline is the capacity, and size_with is max_throughput_at_slo.
func TestNoConfirmationInOneKindOfRamp(t *testing.T) {
	s := rampWithConfirmation()
	if s.OpenLoop != nil || *s.SizeWith != 500 || s.Headline != "capacity at p95 ≤ 100 ms: 500 req/s" {
		t.Fatalf("closed: %+v %v %q", s.OpenLoop, s.SizeWith, s.Headline)
	}
	s = &Summary{SLO: SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}, Steps: []SummaryStep{openStep(100, 0.01), openStep(200, 0.02)}}
	s.Finish()
	if s.OpenLoop != nil || *s.SizeWith != 200 {
		t.Fatalf("open: %+v %v", s.OpenLoop, s.SizeWith)
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[float64]string{0: "0.0", 57.25: "57.2", 99.96: "100", 999.6: "1,000", 1290.4: "1,290", 1234567: "1,234,567"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%g) = %q, want %q", in, got, want)
		}
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// Every step error-free but tester-bound or drifting: the knee line says
// so, not "no step within the error bound".
func TestNoKneeSaysTheRealReason(t *testing.T) {
	bound, drift := headlineStep(1), headlineStep(2)
	bound.TesterBound, bound.TesterBoundReason = true, "tester CPU 95 % of 1 core(s)"
	bound.SchedLagMeanS, bound.SchedLagMaxS = 0.012, 0.03
	drift.Steady = bp(false)
	s := &Summary{SLO: SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}, Steps: []SummaryStep{bound, drift}}
	s.Finish()
	var sb strings.Builder
	s.WriteTable(&sb)
	if want := "knee: none (2 of 2 steps within the error bound, none counts: 1 tester-bound (tester CPU): add testers or use a bigger VM; 1 not steady)\n"; !strings.Contains(sb.String(), want) {
		t.Fatalf("summary.txt:\n%s\nwant %q", sb.String(), want)
	}
	bad := headlineStep(1)
	bad.Errors, bad.ErrorRate = 500, 0.5
	s = &Summary{SLO: s.SLO, Steps: []SummaryStep{bad}}
	s.Finish()
	sb.Reset()
	s.WriteTable(&sb)
	if !strings.Contains(sb.String(), "knee: none (no step within the error bound)\n") {
		t.Fatalf("summary.txt:\n%s", sb.String())
	}
}

// Open arrivals above the target's capacity, or behind its pauses, build a
// queue: the step over the SLO is not steady. That is the miss itself, so
// it tops the bracket and the confirmation bisects below it. A step over the
// SLO left out for another reason (tester-bound) says nothing either way:
// the open-loop figure is not confirmed, and it is the one to size with.
func TestOpenLoopOverloadIsAMiss(t *testing.T) {
	queue := openStep(480, 0.12)
	queue.Steady = bp(false)
	// The median fell: a pause early in the step, its backlog drained.
	queue.Stationarity = &Stationarity{Judged: true, P50Drift: true, P50Change: -0.6}
	s := rampWithConfirmation(openStep(250, 0.02), queue)
	o := s.OpenLoop
	if o.Agree || jsonOf(o.CapacityInterval) != `{"low":250,"high":480}` || *s.SizeWith != 250 {
		t.Fatalf("open loop %+v %s, size with %v", o, jsonOf(o.CapacityInterval), *s.SizeWith)
	}
	if r, ok := s.NextConfirmRate(); !ok || r != 365 {
		t.Fatalf("next rate %v %v, want 365", r, ok)
	}
	bound := openStep(500, 0.12)
	bound.TesterBound, bound.TesterBoundReason = true, "tester CPU 95 % of 1 core(s)"
	bound.SchedLagMeanS, bound.SchedLagMaxS = 0.012, 0.03
	s = rampWithConfirmation(openStep(250, 0.02), bound)
	if o = s.OpenLoop; o.Agree || jsonOf(o.CapacityInterval) != `{"low":250,"high":null}` || *s.SizeWith != 250 {
		t.Fatalf("tester-bound above: %+v %s, size with %v", o, jsonOf(o.CapacityInterval), *s.SizeWith)
	}
	// The bisection looks between them: the figure may be higher.
	if r, ok := s.NextConfirmRate(); !ok || r != 375 {
		t.Fatalf("next rate %v %v, want 375, between the held step and the one left out", r, ok)
	}
}

// Held at 50 and 70 %, within the SLO but unsteady at 85 %, missed at
// 100 %: the bisection looks below the unsteady step (midway to 100 %
// would be 85 % again, a step already run, whose rows would then share
// their concurrency and rate with another step's).
func TestBisectionNeverRepeatsARate(t *testing.T) {
	unsteady := openStep(425, 0.05)
	unsteady.Steady = bp(false)
	s := rampWithConfirmation(openStep(250, 0.02), openStep(350, 0.03), unsteady, openStep(500, 0.4))
	if r, ok := s.NextConfirmRate(); !ok || r != 387.5 {
		t.Fatalf("next rate %v %v, want 387.5, between the last hold and the unsteady step", r, ok)
	}
	if o := s.OpenLoop; jsonOf(o.CapacityInterval) != `{"low":350,"high":500}` {
		t.Fatalf("open loop %+v %s", o, jsonOf(o.CapacityInterval))
	}
}

// Whatever the steps, the figure to size with is never at or above a rate
// open arrivals missed, and a closed-loop figure is sized with only when
// open arrivals held at a rate within its bracket or above: random
// confirmations of a latency that rises with the rate, crossing the SLO
// anywhere.
func TestSizeWithNeverAMiss(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		cross := 50 + 600*rng.Float64()
		var open []SummaryStep
		seen := map[float64]bool{}
		for range 1 + rng.IntN(6) {
			r := math.Round(10+590*rng.Float64()) + 0.5
			if seen[r] {
				continue
			}
			seen[r] = true
			open = append(open, openStep(r, 0.1*r/cross))
		}
		s := rampWithConfirmation(open...)
		if s.SizeWith == nil {
			continue
		}
		for _, st := range open {
			if !st.MeetsSLO && *s.SizeWith >= st.Rate {
				t.Fatalf("case %d: size with %v (%s), but rate %g missed: %q", i, *s.SizeWith, s.SizeWithKind, st.Rate, s.Headline)
			}
		}
		if s.SizeWithKind == KindClosedLoop && (!s.OpenLoop.Agree || *s.OpenLoop.Held < s.OpenLoop.ClosedLoopInterval.Low) {
			t.Fatalf("case %d: closed loop sized with, open loop %+v", i, s.OpenLoop)
		}
		if s.SizeWithKind == KindOpenLoop && (s.OpenLoop.Held == nil || *s.SizeWith != *s.OpenLoop.Held || strings.Contains(s.Headline, "confirm")) {
			t.Fatalf("case %d: size with %v, open loop %+v, headline %q", i, *s.SizeWith, s.OpenLoop, s.Headline)
		}
	}
}
