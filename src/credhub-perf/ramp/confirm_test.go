package ramp

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
)

// The confirmation's mechanics on a simulated clock (every request
// 1 ms): after the ramp found its capacity, one open-loop step per
// fraction, their rate set in the same CSV, each warmed up unrecorded,
// the summary's open_loop and headline recomputed from the CSV alone,
// meta.json's confirmation, and the headline in the live output. The
// simulated clock is not a queue (time moves by each answer), so the
// SLO here is loose: the gap a target's pauses open is measured against
// credhub-sim (cmd/credhub-perf, TestConfirmationCatchesPauses) and on
// its capacity model's virtual clock.
func TestConfirmationAgreesOnConstantTarget(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	clk, srv := simFake(t, p, newFake(), 1)
	c := fakeConfig(t, p, srv.URL)
	c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 3, Step: 1, Duration: config.Duration(3 * time.Second)}
	c.SLO.Latency = config.Duration(2 * time.Second)
	// 10 s steps: a step's throughput counts its last answers' time too.
	c.Confirm = config.ConfirmConfig{OpenLoop: true, Fractions: []float64{0.5, 1}, Duration: config.Duration(10 * time.Second), Refine: 2}
	code, log := executeSim(t, clk, c)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	dir := runDirs(t, c.OutputDir)[0]
	sum, meta := resultstest.Run(t, dir)
	o := sum.OpenLoop
	// Two fractions, and a bisection only if a step missed the SLO.
	if o == nil || sum.MaxThroughputAtSLO == nil || meta.Confirmation == nil || len(sum.Steps) != 3+len(meta.Confirmation.Rates) ||
		len(o.Steps) != len(meta.Confirmation.Rates) || o.Steps[0] != 4 || meta.Confirmation.Refine != 2 {
		t.Fatalf("steps %d, open loop %+v, meta %+v\n%s", len(sum.Steps), o, meta.Confirmation, log)
	}
	want := []float64{0.5 * *sum.MaxThroughputAtSLO, *sum.MaxThroughputAtSLO}
	for i, rate := range meta.Confirmation.Rates[:2] {
		if math.Abs(rate-want[i]) > 0.001 {
			t.Errorf("confirmation rate #%d: %g, want %g", i, rate, want[i])
		}
	}
	for _, st := range sum.Steps[3:] {
		if st.Requests < int64(2*st.Rate) {
			t.Errorf("confirmation step %d: rate %g, %d requests", st.Step, st.Rate, st.Requests)
		}
	}

	// Whether the open-loop steps agree depends on how promptly this host
	// wakes the pacer (the simulated clock jumps only when every worker
	// waits), so a busy machine may read them slow: the verdict's wording
	// must follow it either way. That the figures agree on a target that
	// does not pause is TestConfirmationAgreesWithoutPauses's, in real time
	// on a quiet machine.
	if (sum.SizeWith == nil) != (o.Held == nil && !o.Agree) || o.ClosedLoopConcurrency == nil || *o.ClosedLoop != *sum.MaxThroughputAtSLO {
		t.Fatalf("open loop %+v, size with %v\n%s", o, sum.SizeWith, log)
	}
	if !strings.Contains(sum.Headline, "closed loop (") {
		t.Errorf("headline %q", sum.Headline)
	}
	// A busy machine can also leave every open-loop step unsteady: then
	// nothing counts either way, no rate is known to hold, and the headline
	// says the open-loop figure is unconfirmed, with why, and that there is
	// no figure to size with.
	switch {
	case o.Agree:
		if *sum.SizeWith != *sum.MaxThroughputAtSLO || !strings.Contains(sum.Headline, "open arrivals confirm it") {
			t.Errorf("the figures agree, but size with %v and headline %q", *sum.SizeWith, sum.Headline)
		}
	case o.Capacity == nil:
		if sum.SizeWith != nil || o.Note == "" || !strings.Contains(sum.Headline, "open arrivals unconfirmed: "+o.Note+" — no figure to size with") {
			t.Errorf("no open-loop step counts, but size with %v, note %q and headline %q", *sum.SizeWith, o.Note, sum.Headline)
		}
	case *sum.SizeWith >= *sum.MaxThroughputAtSLO || !strings.Contains(sum.Headline, "size with"):
		t.Errorf("the figures differ, but size with %v (closed loop %v) and headline %q", *sum.SizeWith, *sum.MaxThroughputAtSLO, sum.Headline)
	}
	if !strings.Contains(log, sum.Headline) {
		t.Errorf("the live output does not give the headline %q:\n%s", sum.Headline, log)
	}
	if mc := meta.Confirmation; mc == nil || len(mc.Rates) < 2 || mc.DurationS != 10 || mc.ClosedLoop != *sum.MaxThroughputAtSLO {
		t.Errorf("meta.json confirmation %+v", meta.Confirmation)
	}
	// credhub-perf summary recomputes the same verdict from the CSV.
	re, err := results.SummarizeFiles([]string{filepath.Join(dir, "results.csv")}, sum.SLO)
	if err != nil {
		t.Fatal(err)
	}
	re.AddTesterUsage([]*results.Meta{meta})
	re.Warmup = sum.Warmup
	re.Finish()
	if re.Headline != sum.Headline {
		t.Errorf("recomputed headline %q, run's %q", re.Headline, sum.Headline)
	}
}

// confirm.open_loop false: no confirmation steps, and meta.json says so.
func TestConfirmationOff(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	clk, srv := simFake(t, p, newFake(), 1)
	c := fakeConfig(t, p, srv.URL)
	c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 2, Step: 1, Duration: config.Duration(3 * time.Second)}
	c.Confirm.OpenLoop = false
	if code, log := executeSim(t, clk, c); code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	dir := runDirs(t, c.OutputDir)[0]
	sum, meta := resultstest.Run(t, dir)
	if len(sum.Steps) != 2 || sum.OpenLoop != nil || meta.Confirmation == nil || meta.Confirmation.Enabled || !strings.Contains(meta.Confirmation.Note, "off") {
		t.Fatalf("steps %d, open loop %+v, meta %+v", len(sum.Steps), sum.OpenLoop, meta.Confirmation)
	}
}

// The confirmation's bisections run below rates already run (and down
// towards the floor when every fraction missed), while a summary
// recomputed from the CSV pairs one tester's meta.json steps with its
// steps by position, in the summary's order: meta.json keeps that order.
func TestConfirmationMetaInSummaryOrder(t *testing.T) {
	s := &scenarioState{confirming: true, meta: &results.Meta{}}
	for _, st := range []results.MetaStep{{Concurrency: 1}, {Concurrency: 2}, {Concurrency: 63, Rate: 250}, {Concurrency: 125, Rate: 500}, {Concurrency: 28, Rate: 111.8}, {Concurrency: 94, Rate: 375}} {
		s.meta.Steps = append(s.meta.Steps, st)
		s.orderConfirmMeta()
	}
	var got []float64
	for _, st := range s.meta.Steps {
		got = append(got, float64(st.Concurrency)+st.Rate)
	}
	if want := []float64{1, 2, 139.8, 313, 469, 625}; !slices.Equal(got, want) {
		t.Fatalf("meta.json steps %v, want %v", got, want)
	}
}
