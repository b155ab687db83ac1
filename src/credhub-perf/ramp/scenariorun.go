package ramp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/credhub-perf/credhub-perf/cleanup"
	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/credhub"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

// scenario seeds, ramps and cleans up one scenario; it returns the exit status.
func (r *runner) scenario(ctx context.Context, k int, scenario string) int {
	where := fmt.Sprintf("in scenario %s (%d of %d)", scenario, k+1, len(r.c.Scenarios))
	s, status, err := r.openScenario(k, scenario)
	if err != nil {
		r.log.Printf("error: %v", err)
		r.group.publishFailure(where+", before its first step", interruptedOr(ctx, err))
		return status
	}
	runErr := s.execute(ctx)
	r.prevStart = s.start
	if runErr != nil || ctx.Err() != nil {
		// Before the cleanup, which a cancelled errand may not outlive.
		s.tellOthers(where, interruptedOr(ctx, runErr))
	}
	if s.sentAny && (scenario == "set" || scenario == "mix") {
		r.group.recordWrites(s.names)
	}
	if runErr != nil && errors.Is(runErr, errTester0Failed) {
		// Tester 0 may have cleaned up before this tester's last writes.
		r.group.cleanupOwnWrites(r.recoveryCommand())
	}
	cleanupFailed := s.cleanUp(ctx)
	return s.finish(ctx, runErr, cleanupFailed)
}

// openScenario builds scenario k's load engine and run directory, with its
// meta.json written; on error it returns the exit status to stop with.
func (r *runner) openScenario(k int, scenario string) (*scenarioState, int, error) {
	c := r.c
	n := credhub.Names{RunID: r.runID + "/" + scenario}
	engine, err := r.engine(scenario, n)
	if err != nil {
		return nil, ExitUsage, err
	}
	plan := planSteps(c)
	dir, err := r.runDir(scenario)
	if err != nil {
		return nil, ExitFailed, err
	}
	meta := r.newMeta(scenario, n, len(plan))
	meta.HTTPClient, meta.HTTPClientNote = engine.HTTPClient()
	if meta.HTTPClientNote != "" && k == 0 {
		r.log.Printf("tester.fast_http: %s sends instead of the %s client: %s", meta.HTTPClient, load.FastHTTPName, meta.HTTPClientNote)
	}
	if r.o.Capacity {
		meta.PlannedSteps = c.Capacity.MaxProbes
	}
	sum := &results.Summary{SLO: r.slo(), Testers: 1, Steps: []results.SummaryStep{}, Sources: []string{r.resultsName()}, Workload: meta.Workload}
	s := &scenarioState{r: r, index: k, scenario: scenario, names: n, engine: engine, plan: plan, dir: dir, meta: meta, sum: sum}
	s.writeMeta()
	r.log.Printf("scenario %s: run directory %s", scenario, dir)
	s.start = r.scenarioStart(k)
	return s, ExitOK, nil
}

// engine is the load engine of a scenario.
func (r *runner) engine(scenario string, n credhub.Names) (*load.Engine, error) {
	tmpl, err := r.template(scenario, n)
	if err != nil {
		return nil, err
	}
	var engine *load.Engine
	if scenario == "mix" {
		engine, err = r.mixEngine(n)
	} else {
		engine, err = load.New(r.clientOptions(), tmpl)
	}
	if err != nil {
		return nil, fmt.Errorf("%s scenario: %w", scenario, err)
	}
	return engine, nil
}

// Tester 0 owns meta.json and summary.json; other testers write only
// meta-<i>.json and summary-<i>.json, so that the run directories of
// several tester VMs extracted into one directory never overwrite each
// other (`credhub-perf collect` assembles them).

func (s *scenarioState) writeMeta() {
	name := "meta.json"
	if !s.r.tester0() {
		name = fmt.Sprintf("meta-%d.json", s.r.c.Tester.Index)
	}
	if err := results.WriteMetaFile(filepath.Join(s.dir, name), s.meta); err != nil {
		s.r.log.Printf("error: writing %s: %v", filepath.Join(s.dir, name), err)
	}
}

func (s *scenarioState) writeSummary() error {
	if s.r.tester0() {
		return s.sum.WriteFiles(s.dir)
	}
	return s.sum.WriteFilesAs(s.dir, fmt.Sprintf("summary-%d", s.r.c.Tester.Index))
}

// flush rewrites meta.json and the summary so far.
func (s *scenarioState) flush() {
	s.writeMeta()
	_ = s.writeSummary()
}

// cleanUp is tester 0's cleanup of the scenario, recorded in meta.json; it
// says whether the cleanup failed. It runs whatever happened before, with
// its own time budget, so that an interrupted run still removes what it
// wrote.
func (s *scenarioState) cleanUp(ctx context.Context) (failed bool) {
	r := s.r
	if !r.tester0() {
		return false
	}
	if !s.seeded && !s.sentAny {
		s.meta.CleanupStatus = "skipped"
		return false
	}
	if r.c.Tester.Count > 1 && ctx.Err() == nil {
		s.waitForOtherTesters(ctx)
	}
	if ctx.Err() != nil {
		s.recordInterrupted()
	}
	cctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	res, err := r.cleanup(cctx, s.names)
	cancel()
	return s.recordCleanup(res, err)
}

// waitForOtherTesters holds tester 0's cleanup until the others are done:
// the planned end, or (after an abort) the end of the step the others may
// have started before they saw the stop signal.
func (s *scenarioState) waitForOtherTesters(ctx context.Context) {
	if s.start.IsZero() {
		return
	}
	end := s.stepStart(len(s.plan))
	if s.sum.StoppedReason != "" {
		end = s.stepStart(min(s.lastStep+2, len(s.plan)))
	}
	s.r.group.waitForOthers(ctx, end.Add(config.CleanupWait(s.r.c.Target.Timeout.D())))
}

// recordInterrupted says on disk that the scenario was interrupted, before
// its cleanup: bosh cancel-task sends SIGTERM and kills the errand 10 s
// later, so a kill during the cleanup must leave a truthful record.
func (s *scenarioState) recordInterrupted() {
	meta, sum := s.meta, s.sum
	meta.Status, meta.Error, meta.CleanupStatus = "interrupted", "interrupted by a signal", "running"
	if sum.StoppedReason == "" {
		sum.StoppedReason = "interrupted"
	}
	meta.StoppedReason = sum.StoppedReason
	s.writeMeta()
	sum.Finish()
	sum.Stopped = results.StoppedNote(meta, sum.RampSteps(), sum.StoppedReason, nil)
	_ = s.writeSummary()
	// Said before the cleanup: a second interrupt or the errand's kill may
	// cut it short, and then nothing more is printed.
	if s.r.c.Cleanup.Mode != "none" {
		s.r.log.Printf("cleaning up; if this is cut short, remove what is left with: %s", s.r.recoveryCommand(s.dir))
	}
}

// recordCleanup puts the cleanup's outcome in meta.json and the log; it
// says whether the cleanup failed.
func (s *scenarioState) recordCleanup(res cleanup.Result, err error) (failed bool) {
	r, meta, mode := s.r, s.meta, s.r.c.Cleanup.Mode
	meta.CleanupDeleted = res.Deleted
	switch {
	case mode == "none":
		meta.CleanupStatus = "skipped"
	case err != nil:
		failed = true
		meta.CleanupStatus = "failed"
		meta.CleanupError = err.Error()
		r.log.Printf("error: cleanup (%s) failed: %v", mode, err)
		r.log.Printf("the results in %s are complete; credentials are left under %s: remove them with: %s", s.dir, s.names.Prefix(), r.recoveryCommand(s.dir))
	default:
		meta.CleanupStatus = "ok"
		r.log.Printf("cleanup (%s): removed %d credentials in %s", mode, res.Deleted, res.Elapsed.Round(time.Millisecond))
	}
	if res.Foreign > 0 {
		// The database cleanup empties all of CredHub: say when that took
		// credentials this run did not write.
		meta.CleanupForeign, meta.CleanupForeignNames = res.Foreign, res.ForeignNames
		r.log.Printf("warning: %s", ForeignNote(res.Foreign, res.ForeignNames, credhub.Names{RunID: r.runID}.Prefix()))
	}
	return failed
}

// finish records how the scenario ended in meta.json and the summary,
// prints its table and returns its exit status.
func (s *scenarioState) finish(ctx context.Context, runErr error, cleanupFailed bool) int {
	r, c, meta, sum := s.r, s.r.c, s.meta, s.sum
	meta.EndedAt = r.o.Clock.Now().UTC().Format(time.RFC3339Nano)
	status := s.settle(ctx, runErr, cleanupFailed)
	if status != ExitOK && s.index+1 < len(c.Scenarios) {
		// The others would wait for the next scenario's seed or start.
		why := errors.New(meta.Error)
		if meta.Error == "" {
			why = fmt.Errorf("cleanup (%s) failed: %s", c.Cleanup.Mode, meta.CleanupError)
		}
		r.group.publishFailure(fmt.Sprintf("after scenario %s (%d of %d)", s.scenario, s.index+1, len(c.Scenarios)), why)
	}
	meta.StoppedReason = sum.StoppedReason
	s.writeMeta()
	sum.Finish()
	sum.Stopped = results.StoppedNote(meta, sum.RampSteps(), sum.StoppedReason, nil)
	if d, pm, ps := results.FindPrevious(c.OutputDir, s.dir, meta); d != "" {
		sum.ComparePrevious(d, pm, ps)
	}
	if err := s.writeSummary(); err != nil {
		r.log.Printf("error: writing the summary: %v", err)
		status = max(status, ExitFailed)
	}
	r.log.Finish()
	fmt.Fprintf(r.o.Stdout, "== %s: %s (%s)\n", s.scenario, s.dir, meta.Status)
	sum.WriteTable(r.o.Stdout)
	switch {
	case ctx.Err() != nil:
		r.log.Printf("scenario %s: interrupted; the rows measured so far are in %s", s.scenario, s.dir)
	case runErr != nil:
		r.log.Printf("error: scenario %s: %v", s.scenario, runErr)
	}
	return status
}

// settle sets meta.json's status from how the ramp and its cleanup ended,
// and returns the scenario's exit status.
func (s *scenarioState) settle(ctx context.Context, runErr error, cleanupFailed bool) int {
	meta := s.meta
	status := ExitOK
	switch {
	case errors.Is(runErr, errSetup):
		meta.Status, meta.Error = "failed", runErr.Error()
		status = ExitUsage
	case ctx.Err() != nil:
		meta.Status, meta.Error = "interrupted", "interrupted by a signal"
		if s.sum.StoppedReason == "" {
			s.sum.StoppedReason = "interrupted"
		}
		status = ExitFailed
	case runErr != nil:
		meta.Status, meta.Error = "failed", runErr.Error()
		status = ExitFailed
	default:
		meta.Status = "ok"
	}
	if cleanupFailed && status == ExitOK {
		status = ExitFailed
	}
	return status
}

// tellOthers publishes tester 0's failure in a scenario when some tester
// may still depend on it: for this scenario's seed or start, for a step
// still ahead of them, or for a later scenario.
func (s *scenarioState) tellOthers(where string, cause error) {
	if !s.r.tester0() {
		return
	}
	switch {
	case !s.released:
		where += ", before the others could start it"
	case s.stepsRun > 0:
		where += fmt.Sprintf(", at step %d of %d", s.lastStep+1, len(s.plan))
	default:
		where += ", before its first step"
	}
	// Also after the last scenario's last step started: the others wait
	// for this (awaitTester0End) so that they do not end ok on a step that
	// lost tester 0's load.
	s.r.group.publishFailure(where, cause)
}
