package ramp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/credhub"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/targetload"
)

type scenarioState struct {
	r        *runner
	index    int // position among the run's scenarios
	scenario string
	names    credhub.Names
	engine   *load.Engine
	plan     []load.Step
	dir      string
	meta     *results.Meta
	sum      *results.Summary
	start    time.Time // lockstep origin of the first step; zero = as soon as ready

	csv      *results.CSVWriter
	seeded   bool
	sentAny  bool
	runStart time.Time
	lastStep int // index of the last step started
	stepsRun int // steps started (warm-ups excluded)
	// released: tester 0 gave the others what they wait for in this
	// scenario (the seed, and for a later scenario its start).
	released bool
	overRun  int // consecutive steps over an abort bound
	// confirming: the steps are the open-loop confirmation's (confirm.go):
	// not in the lockstep schedule, and warmed up at least confirmWarmup.
	confirming bool
	// abortStopped: the abort policy ended the ramp (past the SLO, as a
	// ramp usually ends): its capacity may still be confirmed.
	abortStopped bool
	// target samples the target's resources (nil: not configured).
	target *targetload.Sampler
}

// needsSeed: set writes its own names, custom may or may not read seeds;
// seeding it is harmless and gives `((prefix))` something to point at.
func (s *scenarioState) needsSeed() bool { return s.scenario != "set" }

func (s *scenarioState) execute(ctx context.Context) error {
	r := s.r
	f, err := os.OpenFile(filepath.Join(s.dir, r.resultsName()), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("results file: %w", err)
	}
	s.csv = results.NewCSVWriter(f)
	defer func() {
		if err := s.csv.Close(); err != nil {
			r.log.Printf("error: writing %s: %v", r.resultsName(), err)
		}
	}()

	if err := s.prepareSeed(ctx); err != nil {
		return err
	}
	// Several testers: a later scenario's start is what tester 0 publishes
	// once it has cleaned up and seeded (agreeScenarioStart); every tester
	// then warms up from that start.
	if s.index > 0 && !s.start.IsZero() {
		start, err := r.group.agreeScenarioStart(ctx, s.names, s.scenario, s.start)
		if err != nil {
			return err
		}
		s.start = start
	}
	s.released = true
	if !s.start.IsZero() {
		s.meta.ScenarioStartAt = s.start.UTC().Format(time.RFC3339Nano)
		if late := r.o.Clock.Now().Sub(s.start); late > 0 {
			r.log.Printf("warning: ready %s after the scheduled start %s; this tester starts late", late.Round(time.Millisecond), s.start.Format(time.RFC3339))
		}
	}
	if err := s.warmup(ctx); err != nil {
		return err
	}
	s.runStart = s.stepStart(0)
	if s.runStart.IsZero() {
		s.runStart = r.o.Clock.Now()
	}
	s.meta.OffsetOrigin = s.runStart.UTC().Format(time.RFC3339Nano)
	defer s.startTargetLoad(ctx)()
	if r.o.Capacity {
		if err := s.capacity(ctx); err != nil {
			return err
		}
		return s.confirm(ctx)
	}
	if err := s.ramp(ctx); err != nil {
		return err
	}
	if s.sum.StoppedReason != "" && !s.abortStopped {
		return nil
	}
	return s.confirm(ctx)
}

// ramp runs the planned steps until the plan or the abort policy ends it.
func (s *scenarioState) ramp(ctx context.Context) error {
	r, c := s.r, s.r.c
	for i, st := range s.plan {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if c.Tester.Count > 1 && !r.tester0() {
			if reason := r.group.stopSignal(ctx, s.names, i, s.stepStart(i), r.slot()); reason != "" {
				s.sum.StoppedReason = reason
				r.log.Printf("stopping: %s", reason)
				return nil
			}
			// Its steps would now load the target with one tester fewer
			// than planned.
			if err := r.group.tester0Failed(ctx, false); err != nil {
				s.sum.StoppedReason = "tester 0 stopped"
				return err
			}
		}
		snap, _, err := s.runStep(ctx, i, len(s.plan), st)
		if err != nil {
			return err
		}
		if reason := s.abortCheck(i, snap); reason != "" {
			s.sum.StoppedReason = reason
			r.log.Printf("stopping the ramp: %s", reason)
			if c.Tester.Count > 1 && r.tester0() {
				r.group.signalStop(s.names, reason, s.lastStep)
			}
			s.abortStopped = true
			return nil
		}
	}
	if c.Tester.Count > 1 && !r.tester0() {
		return s.awaitTester0End(ctx)
	}
	return nil
}

// awaitTester0End gives tester 0 the time to report a failure in the last
// scenario's last step (or one this tester did not see before its last
// step): tester 0 writes it within failurePublishTimeout of stopping, as
// late as the last slot's end. Without the wait a tester whose last steps
// lost tester 0's load would end ok. Earlier scenarios need no wait: the
// next scenario's start is where the others see it.
func (s *scenarioState) awaitTester0End(ctx context.Context) error {
	r := s.r
	if !r.group.rendezvousMode() || s.start.IsZero() || s.index+1 < len(r.c.Scenarios) {
		return nil
	}
	until := s.stepStart(len(s.plan)).Add(failurePublishTimeout + rendezvousPoll)
	if err := r.group.awaitTester0End(ctx, until); err != nil {
		s.sum.StoppedReason = "tester 0 stopped"
		return err
	}
	return nil
}

// prepareSeed seeds (tester 0) or waits until the seed is visible (others).
func (s *scenarioState) prepareSeed(ctx context.Context) error {
	r := s.r
	c := r.c
	if !s.needsSeed() {
		return nil
	}
	if r.tester0() {
		t0 := r.o.Clock.Now()
		r.log.Printf("seeding %d JSON credentials of about %d bytes under %s", c.Seed.Credentials, c.Seed.Bytes, s.names.Prefix()+"/seed/")
		s.seeded = true // from the first write on, cleanup has work to do
		err := credhub.SeedAll(ctx, r.api, s.names, c.Seed.Credentials, c.Seed.Bytes, 4, func(done int) {
			r.log.Progress(fmt.Sprintf("seeding: %d/%d", done, c.Seed.Credentials))
		})
		r.log.Finish()
		if err != nil {
			if credhub.IsAuth(err) {
				return fmt.Errorf("%w: %v", errSetup, err)
			}
			return err
		}
		if err := credhub.VerifySeed(ctx, r.api, s.names, c.Seed.Credentials); err != nil {
			return err
		}
		r.log.Printf("seeded and verified %d credentials in %s", c.Seed.Credentials, r.o.Clock.Now().Sub(t0).Round(time.Millisecond))
		return nil
	}
	// Other testers: tester 0 seeds; wait for it, at most until one
	// scenario gap past the start.
	deadline := r.o.Clock.Now().Add(10 * time.Minute)
	if !s.start.IsZero() {
		deadline = s.start.Add(c.Tester.ScenarioGap.D() + 30*time.Second)
		if s.index > 0 {
			// Tester 0 may clean up the previous scenario for longer than
			// the gap (see agreeScenarioStart).
			deadline = s.start.Add(max(c.Tester.ScenarioGap.D()+30*time.Second, c.Tester.RendezvousTimeout.D()))
		}
	}
	return r.group.awaitSeed(ctx, s.names, c.Seed.Credentials, deadline)
}

// stepStart is when step i starts (zero = now) in lockstep mode: after
// the scenario's warm-up slot.
func (s *scenarioState) stepStart(i int) time.Time {
	if s.start.IsZero() {
		return time.Time{}
	}
	return s.start.Add(s.r.warmupSlot() + time.Duration(i)*s.r.slot())
}

func (s *scenarioState) runStep(ctx context.Context, i, total int, st load.Step) (results.Snapshot, results.SummaryStep, error) {
	r := s.r
	c := r.c
	s.lastStep = i
	s.stepsRun++
	st.RunStart = s.runStart
	begin, w := s.stepStart(i), c.Steps.Warmup.D()
	if s.confirming {
		begin, w = time.Time{}, max(w, confirmWarmup)
	}
	if w > 0 {
		ws := st
		ws.Requests, ws.Duration, ws.StartAt = 0, w, begin
		// The measured step starts on the warm-up's connections (open
		// loop), not with a dial on its clock.
		ws.KeepConns = true
		r.log.Progress(fmt.Sprintf("step %d/%d %s: warming up for %s", i+1, total, loadLabel(st), w))
		s.sentAny = true
		if err := s.engine.Run(ctx, ws, load.Discard); err != nil {
			s.engine.CloseIdle()
			return results.Snapshot{}, results.SummaryStep{}, err
		}
		if !begin.IsZero() {
			begin = begin.Add(w)
		}
	}
	st.StartAt = begin
	ready := r.o.Clock.Now()
	stats := results.NewStats()
	steady := results.NewSteadiness()
	prog := newProgressSink(r.log, r.o.Clock, stats, i, total, st, s.eta(i, total))
	s.sentAny = true
	// CPU shares are CPU time over real elapsed time: the system clock,
	// whatever clock schedules the run.
	before := r.o.CPU(time.Now())
	tail := results.NewTailCause(c.SLO.Latency.D())
	sinks := []load.Sink{s.csv, microseconds{stats}, microseconds{steady}, microseconds{tail}, prog}
	var types *results.TypeStats
	if s.scenario == "mix" {
		// Per-type figures only for a mix: one type's are the step's own,
		// so single-type runs pay nothing for them.
		types = results.NewTypeStats()
		sinks = append(sinks, microseconds{types})
	}
	err := s.engine.Run(ctx, st, load.Multi(sinks...))
	usage := cpuload.Between(before, r.o.CPU(time.Now()))
	prog.stop()
	// Rows are flushed after every step, and on failure, so a run that dies
	// later keeps everything measured so far.
	if ferr := s.csv.Flush(); ferr != nil && err == nil {
		err = fmt.Errorf("writing %s: %w", r.resultsName(), ferr)
	}
	snap := stats.Snapshot()
	step := results.NewSummaryStep(len(s.sum.Steps), st.Concurrency, st.Rate, snap, s.sum.SLO)
	if st.Rate > 0 {
		step.Judge(steady.OpenLoopVerdict(tail))
	} else {
		step.Judge(steady.Verdict())
	}
	step.Tail = tail.Figures()
	if types != nil {
		step.SetByRequest(types.Figures(step.DurationS, s.sum.SLO))
	}
	s.judgeTarget(ctx, &step, i, total, snap.FirstStart, snap.LastEnd)
	ms := results.NewMetaStep(step, usage, r.cpuLimits())
	step.AddTester(c.Tester.Index, c.Tester.Count, ms)
	if snap.Requests > 0 {
		s.sum.Steps = append(s.sum.Steps, step)
		s.meta.Steps = append(s.meta.Steps, ms)
		s.orderConfirmMeta()
	}
	s.sum.Finish()
	s.flush()
	r.log.Finish()
	var flags string
	if snap.Requests > 0 && step.Drifted() {
		flags += "; NOT STEADY (see the summary's warnings)"
	} else if snap.Requests > 0 && step.Unjudged() {
		flags += "; too short to judge steady"
	}
	switch {
	case ms.TesterBound && step.HeldDespiteTester():
		flags += "; " + results.HeldDespiteTesterNote(ms.TesterBoundReason)
	case ms.TesterBound:
		flags += "; TESTER-BOUND: " + ms.TesterBoundReason
	}
	r.log.Printf("step %d/%d %s: %d requests, %.1f req/s, p50 %s p95 %s p99 %s, errors %d (%.2f%%), tester CPU %s%s",
		i+1, total, loadLabel(st), snap.Requests, snap.Throughput, fmtMS(snap.P50), fmtMS(snap.P95), fmtMS(snap.P99), snap.Errors, 100*step.ErrorRate, pct(usage.TesterCPU), flags)
	if err != nil {
		return snap, step, err
	}
	if snap.Requests == 0 && ctx.Err() == nil {
		return snap, step, s.noRequests(i, st, ready)
	}
	if snap.Requests > 0 && snap.StatusCodes[0] == snap.Requests {
		return snap, step, fmt.Errorf("step %d: no request got a response from %s (%s): the target is down or unreachable", i+1, c.Target.URL, topError(snap))
	}
	return snap, step, nil
}

// noRequests explains a step that recorded nothing: it measured nothing,
// so it must fail the run rather than pass as a quiet step.
func (s *scenarioState) noRequests(i int, st load.Step, ready time.Time) error {
	what := fmt.Sprintf("step %d (%s) recorded 0 requests", i+1, loadLabel(st))
	if !st.StartAt.IsZero() && st.Duration > 0 {
		if end := st.StartAt.Add(st.Duration); !ready.Before(end) {
			return fmt.Errorf("%s: this tester was ready at %s, after the step's wall-clock slot ended at %s; with several testers every step has a fixed slot, so a tester that starts late (raise tester.start_delay) or waits for tester 0's seed misses it",
				what, ready.UTC().Format(time.RFC3339Nano), end.UTC().Format(time.RFC3339Nano))
		}
	}
	return fmt.Errorf("%s: no request was sent or answered within the step; lengthen steps.duration or raise the rate", what)
}

// microseconds feeds Stats the values exactly as the CSV holds them
// (rounded to the microsecond), so summary.json equals a recomputation
// from results.csv, not merely comes close.
type microseconds struct{ s load.Sink }

func roundUS(d time.Duration) time.Duration {
	if d < 0 {
		return -roundUS(-d)
	}
	return (d + 500) / 1000 * 1000
}

func (m microseconds) Record(r *load.Result) {
	c := *r
	// Every duration summary.json reports a figure of (sched-lag's mean
	// too: unrounded, it missed the CSV's by a microsecond in a few
	// percent of open-loop steps).
	c.Latency, c.Offset, c.SchedLag, c.DNSDial = roundUS(c.Latency), roundUS(c.Offset), roundUS(c.SchedLag), roundUS(c.DNSDial)
	m.s.Record(&c)
}

func loadLabel(st load.Step) string {
	if st.Rate > 0 {
		return fmt.Sprintf("rate %g/s", st.Rate)
	}
	return fmt.Sprintf("concurrency %d", st.Concurrency)
}

func fmtMS(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/1e6) }

func pct(f *float64) string {
	if f == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.0f%%", 100**f)
}

func topError(s results.Snapshot) string {
	best, n := "", int64(0)
	for k, v := range s.ErrorCounts {
		if v > n || (v == n && k < best) {
			best, n = k, v
		}
	}
	if best == "" {
		return "no error message"
	}
	return best
}

// eta estimates the time left after step i starts, for the progress line.
func (s *scenarioState) eta(i, total int) func(stepElapsed time.Duration, done int64, rate float64) time.Duration {
	c := s.r.c
	return func(el time.Duration, done int64, rate float64) time.Duration {
		remainingSteps := total - i - 1
		if c.Steps.Duration > 0 {
			per := s.r.slot()
			left := c.Steps.Duration.D() - el
			return max(left, 0) + time.Duration(remainingSteps)*per
		}
		if rate <= 0 {
			return -1
		}
		left := float64(int64(c.Steps.Requests)-done) / rate
		return time.Duration((left + float64(remainingSteps*c.Steps.Requests)/rate) * float64(time.Second))
	}
}

// abortCheck applies the abort policy after step i.
func (s *scenarioState) abortCheck(i int, snap results.Snapshot) string {
	a := s.r.c.Abort
	if snap.Requests == 0 {
		return ""
	}
	rate := float64(snap.Errors) / float64(snap.Requests)
	pl := snap.Quantile(a.Percentile / 100)
	var why string
	switch {
	case rate > a.MaxErrorRate:
		why = fmt.Sprintf("error rate %.2f%% above abort.max_error_rate %.2f%%", 100*rate, 100*a.MaxErrorRate)
	case a.MaxLatency > 0 && pl > a.MaxLatency.D():
		why = fmt.Sprintf("p%g latency %s above abort.max_latency %s", a.Percentile, fmtMS(pl), a.MaxLatency)
	}
	if why == "" {
		s.overRun = 0
		return ""
	}
	s.overRun++
	s.r.log.Printf("step %d: %s (%d of %d consecutive steps)", i+1, why, s.overRun, a.ConsecutiveSteps)
	if s.overRun >= a.ConsecutiveSteps {
		return fmt.Sprintf("abort policy after step %d of %d: %s for %d consecutive step(s)", i+1, len(s.plan), why, s.overRun)
	}
	return ""
}
