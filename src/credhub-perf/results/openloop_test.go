package results

import (
	"encoding/json"
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
// 425 (ratio 1.6) to 368.75 req/s, and the headline sizes with it. The
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
	if s.SizeWith == nil || *s.SizeWith != 368.75 || s.Requests != 9000 {
		t.Fatalf("size with %v, requests %d", s.SizeWith, s.Requests)
	}
	want := "capacity at p95 ≤ 100 ms: 500 req/s closed loop (5 connections); under open arrivals the SLO holds to 369 req/s — size with 369"
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
	if err := json.Unmarshal(b, &back); err != nil || back.Headline != want || back.OpenLoop == nil || *back.SizeWith != 368.75 {
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

// Agreement is the overlap of the two brackets. The ramp met the SLO at
// every step: its capacity is at least 500 req/s, [500, none]. Open
// arrivals that held at 470 and missed at 520 bracket theirs in [470,
// 520]: the two may be the same figure, so they agree, but the bracket is
// 50 req/s wide, over 5 % of 500, so the confirmation bisects at 495; a
// miss there makes it [470, 495], below the ramp's: they differ, and the
// headline sizes with the open-loop figure.
func TestOpenLoopAgreementIsOverlap(t *testing.T) {
	s := rampWithConfirmation(openStep(250, 0.02), openStep(470, 0.05), openStep(520, 2))
	o := s.OpenLoop
	if !o.Agree || jsonOf(o.CapacityInterval) != `{"low":470,"high":520}` || jsonOf(o.ClosedLoopInterval) != `{"low":500,"high":null}` {
		t.Fatalf("open loop %+v: intervals %s %s", o, jsonOf(o.CapacityInterval), jsonOf(o.ClosedLoopInterval))
	}
	if r, ok := s.NextConfirmRate(); !ok || r != 495 {
		t.Fatalf("next rate %v %v, want 495", r, ok)
	}
	s = rampWithConfirmation(openStep(250, 0.02), openStep(470, 0.05), openStep(520, 2), openStep(495, 0.2))
	o = s.OpenLoop
	if o.Agree || jsonOf(o.CapacityInterval) != `{"low":470,"high":495}` || *s.SizeWith >= 470 && *s.SizeWith != *o.Capacity {
		t.Fatalf("after the bisection: %+v %s, size with %v", o, jsonOf(o.CapacityInterval), *s.SizeWith)
	}
	// 25 req/s apart is 5 % of 500: narrow enough.
	if r, ok := s.NextConfirmRate(); ok {
		t.Fatalf("bisects again at %v", r)
	}
	// A held bisection raises the bracket's floor instead: [495, 520]
	// reaches the ramp's [500, none].
	s = rampWithConfirmation(openStep(250, 0.02), openStep(470, 0.05), openStep(520, 2), openStep(495, 0.09))
	if o = s.OpenLoop; !o.Agree || *s.SizeWith != 500 || jsonOf(o.CapacityInterval) != `{"low":495,"high":520}` {
		t.Fatalf("held at 495: %+v %s", o, jsonOf(o.CapacityInterval))
	}
	if want := "capacity at p95 ≤ 100 ms: 500 req/s closed loop (5 connections); open arrivals confirm it (the SLO holds to 495 req/s and missed at 520)"; s.Headline != want {
		t.Fatalf("headline %q", s.Headline)
	}
}

// A ramp that crossed the SLO brackets its capacity between the step
// within it and the next over it, by throughput; a saturated ramp whose
// step over the SLO delivered less than the one within brackets at the
// one within. Nothing to bisect when every open step held or none did.
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
	if r, ok := s.NextConfirmRate(); ok || s.OpenLoop.CapacityInterval != nil {
		t.Errorf("no open step held, yet bisects at %v (interval %v)", r, s.OpenLoop.CapacityInterval)
	}
}

// No open-loop step met the SLO: nothing to size with that the data
// supports; the headline says to size below the lowest rate tried. One
// that met it but does not count leaves the confirmation unknown.
func TestOpenLoopConfirmationFailsOrUnknown(t *testing.T) {
	s := rampWithConfirmation(openStep(250, 0.2), openStep(500, 0.4))
	if s.SizeWith != nil || s.OpenLoop.Capacity != nil || !strings.HasSuffix(s.Headline, "— size below 250 req/s") ||
		!strings.Contains(s.Headline, "no open-loop step met the SLO; the lowest, rate 250/s, missed it") {
		t.Fatalf("size with %v, headline %q", s.SizeWith, s.Headline)
	}
	bound := openStep(250, 0.02)
	bound.TesterBound, bound.TesterBoundReason = true, "tester CPU 95 % of 1 core(s)"
	s = rampWithConfirmation(bound, openStep(500, 0.4))
	if s.OpenLoop.Capacity != nil || !strings.Contains(s.Headline, "open arrivals unconfirmed: 1 of 2 steps met the SLO but none counts: 1 tester-bound") || *s.SizeWith != 500 {
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
