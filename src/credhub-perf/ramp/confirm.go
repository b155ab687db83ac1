package ramp

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

// The open-loop confirmation (confirm.*): after a closed-loop ramp or
// search found its capacity at the SLO, fixed-rate steps at fractions of
// that capacity, so the summary can say what many independent clients
// (whose requests arrive whether or not the last one finished) would see.
// Why, and how the verdict is reached: results/openloop.go and
// results/openinterval.go.
//
// Each step lasts confirm.duration (default 30 s: long enough for several
// of a JVM's pauses) on warm connections (each warms up at least
// confirmWarmup, unrecorded), is judged by the ramp's steady /
// tester-bound / SLO rules and written to the same CSV with its rate set,
// so every reader keeps working. After the fractions, up to confirm.refine
// more steps bisect between the highest rate that held and the lowest that
// did not, until the two are within results.RefineWithin of the
// closed-loop capacity (the run-to-run spread of a capacity: 1,278 and
// 1,332 req/s against one CredHub), so a gap wider than that cannot pass as
// agreement. The confirmation runs on one tester only: each of several
// would confirm a share of a capacity only their merge knows.
// credhub-sim's -pause-every/-pause pause the whole target on its capacity
// model's clock, so the gap can be shown and tested.

// confirmWarmup is the least warm-up of a confirmation step: its
// connections are open, and its pacer settled, before its clock starts.
//
// The first step needs nothing more to read what its rate reads alone
// (cmd/credhub-perf TestConfirmationFirstStepAsAlone): the ramp's last
// step leaves the target no backlog (a closed-loop step ends once every
// request it sent was answered) and none of its connections (closed at
// its end: load TestClosedLoopLeavesTargetIdle), and the step dials and
// warms its own at its rate. First steps measured several times slower
// than the rate alone, on a busy machine, showed the tester's sends late
// and the target's answers held (sched-lag and response delay of tens of
// ms): the machine's, which the tester-bound and steadiness rules judge.
const confirmWarmup = time.Second

// confirmWorkersPerRate sizes a confirmation step's workers: enough for a
// quarter of a second's arrivals in flight at once, so a target's pause
// of that length queues requests at the target, where the latency
// belongs, and not in the tester (which would show as sched-lag).
const confirmWorkersPerRate = 0.25

// confirmMaxWorkers bounds the workers (goroutines) of one step.
const confirmMaxWorkers = 10000

// confirmSkip says why a run gets no confirmation ("" when it gets one).
func (s *scenarioState) confirmSkip() string {
	c := s.r.c
	switch {
	case !c.Confirm.OpenLoop:
		return "off (confirm.open_loop false)"
	case len(c.Steps.Rates) > 0:
		return "not needed: the ramp is open loop (steps.rates)"
	case c.Tester.Count > 1:
		return "not run: several testers (each would confirm its own share of a capacity only their merge knows)"
	case s.sum.StoppedReason != "" && s.sum.MaxThroughputAtSLO == nil:
		return "not run: the ramp stopped before it found a capacity"
	case s.sum.MaxThroughputAtSLO == nil:
		return "not run: the ramp found no capacity at the SLO"
	}
	return ""
}

// confirm runs the confirmation's steps after the ramp, the fractions'
// and then the bisections' (confirm.refine, results.NextConfirmRate), and
// records in meta.json what it ran or why it did not.
func (s *scenarioState) confirm(ctx context.Context) error {
	c := s.r.c
	rec := &results.Confirmation{Enabled: c.Confirm.OpenLoop, Fractions: c.Confirm.Fractions, DurationS: c.Confirm.Duration.D().Seconds(), Refine: c.Confirm.Refine}
	s.meta.Confirmation = rec
	if rec.Note = s.confirmSkip(); rec.Note != "" {
		if c.Confirm.OpenLoop && len(c.Steps.Rates) == 0 {
			s.r.log.Printf("open-loop confirmation %s", rec.Note)
		}
		s.flush()
		return nil
	}
	capacity := *s.sum.MaxThroughputAtSLO
	rec.ClosedLoop = capacity
	s.r.log.Printf("confirming %.1f req/s under open arrivals: %d fixed-rate steps of %s at %v of it", capacity, len(c.Confirm.Fractions), c.Confirm.Duration, c.Confirm.Fractions)
	s.confirming = true
	defer func() { s.confirming = false }()
	// The step count shown is the most it can be: the bisections run only
	// while the bracket is wide.
	first, total := len(s.plan), len(s.plan)+len(c.Confirm.Fractions)+c.Confirm.Refine
	step := func(k int, rate float64) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		st := load.Step{Concurrency: confirmWorkers(rate, c.Steps.MaxConcurrency), Rate: rate, Duration: c.Confirm.Duration.D()}
		rec.Rates = append(rec.Rates, rate)
		_, _, err := s.runStep(ctx, first+k, total, st)
		return err
	}
	k := 0
	for _, f := range c.Confirm.Fractions {
		if rate := math.Round(f*capacity*1000) / 1000; rate > 0 {
			if err := step(k, rate); err != nil {
				return err
			}
			k++
		}
	}
	for range c.Confirm.Refine {
		rate, ok := s.sum.NextConfirmRate()
		if !ok {
			break
		}
		if err := step(k, rate); err != nil {
			return err
		}
		k++
	}
	if h := s.sum.Headline; h != "" {
		s.r.log.Printf("%s", h)
	}
	return nil
}

// confirmWorkers is a confirmation step's worker cap at rate: at least
// steps.max_concurrency, else a quarter second's arrivals.
func confirmWorkers(rate float64, maxConcurrency int) int {
	n := int(math.Ceil(rate * confirmWorkersPerRate))
	return min(max(n, maxConcurrency, 1), confirmMaxWorkers)
}

// orderConfirmMeta keeps meta.json's steps in the summary's order during
// the confirmation (the ramp's, then the confirmation's by rate): a
// summary recomputed from the CSV pairs one tester's meta.json steps with
// its steps by position, and the bisections run below rates already run.
func (s *scenarioState) orderConfirmMeta() {
	if !s.confirming {
		return
	}
	sort.SliceStable(s.meta.Steps, func(i, j int) bool {
		a, b := s.meta.Steps[i], s.meta.Steps[j]
		if (a.Rate > 0) != (b.Rate > 0) {
			return b.Rate > 0
		}
		if a.Rate == 0 {
			return false // the ramp's own order
		}
		return a.Concurrency < b.Concurrency || a.Concurrency == b.Concurrency && a.Rate < b.Rate
	})
}
