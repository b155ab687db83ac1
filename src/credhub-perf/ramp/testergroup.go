package ramp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/credhub"
	"github.com/credhub-perf/credhub-perf/load"
)

// Several testers (tester.count > 1) load one target as one: each runs
// the same ramp, and their steps must share wall-clock slots or the
// target would see neither the sum of their loads nor any one of them.
// They have no channel between them but the CredHub they load, which
// every tester reaches with write rights under /credhub-perf/*, so they
// meet there:
//   - at the start, through the rendezvous credential: tester 0 publishes
//     the first step's time and the run id, the others wait for it
//     (rendezvous.go); with tester.start_at the time is given instead;
//   - at each scenario's seed, which tester 0 writes and the others wait
//     to read (awaitSeed);
//   - at a later scenario's start, which tester 0 publishes once it has
//     cleaned up and seeded the next one (agreeScenarioStart);
//   - before each step, where tester 0's abort reaches the others
//     (signalStop, stopSignal);
//   - and whenever tester 0 stops, which it writes over the rendezvous
//     credential so the others stop too (rendezvousfailure.go).
//
// testerGroup is one tester's side of all of it, and the state it needs.

// testerGroup is this tester's part in the several-tester protocol. With
// one tester its waits return at once and it publishes nothing.
type testerGroup struct {
	tester config.TesterConfig
	// secrets are removed from a failure reason before it leaves this
	// tester (a driver's error may quote a connection string).
	secrets []string
	api     *credhub.Client // nil until setup has built it
	log     *logger
	clock   load.Clock
	// runID is the run id as far as this tester knows it: the configured
	// one, then the agreed one. A failure report is judged against it.
	runID string
	// began is when this tester started (before its pre-flight requests):
	// what a rendezvous value's age is judged against.
	began time.Time
	// published: tester 0 wrote the rendezvous credential and must delete it.
	published bool
	// failurePublished: tester 0 told the others it stopped (once is enough).
	failurePublished bool
	// failureCheckedAt and failureIgnored pace and quieten the other
	// testers' checks for tester 0's failure (tester0Failed).
	failureCheckedAt time.Time
	failureIgnored   string
	// wrote: the set and mix scenarios in which this tester (not 0) wrote,
	// to delete its own writes if tester 0 stops (cleanupOwnWrites).
	wrote []credhub.Names
}

func newTesterGroup(c config.Config, log *logger, clock load.Clock) *testerGroup {
	return &testerGroup{
		tester:  c.Tester,
		secrets: []string{c.Cleanup.Database.Password, c.UAA.ClientSecret, c.TargetLoad.BoshClientSecret},
		log:     log,
		clock:   clock,
	}
}

func (g *testerGroup) tester0() bool { return g.tester.Index == 0 }

// several: more than one tester loads the target.
func (g *testerGroup) several() bool { return g.tester.Count > 1 }

// rendezvousMode: the testers meet through the rendezvous credential,
// where tester 0 also reports its failure.
func (g *testerGroup) rendezvousMode() bool {
	return g.tester.Rendezvous != "" && g.several()
}

// recordWrites notes a scenario this tester (not 0) wrote in, for
// cleanupOwnWrites.
func (g *testerGroup) recordWrites(n credhub.Names) {
	if !g.tester0() {
		g.wrote = append(g.wrote, n)
	}
}

// Between scenarios, a fixed tester.scenario_gap cannot promise that tester
// 0 has cleaned up the previous scenario and seeded this one: deleting
// thousands of set credentials can take longer than any gap, and the other
// testers' steps would then pass in slots that have already ended. So
// tester 0 publishes each later scenario's start once it is ready, never
// earlier than the schedule, and the others wait for it.

// scenarioLead is the least time between tester 0 publishing a scenario's
// start and that start: enough for the others to read it and check the seed.
const scenarioLead = 2 * time.Second

// scenarioPoll is how often the other testers read the scenario's start.
var scenarioPoll = 250 * time.Millisecond

// scenarioStartValue is the JSON credential holding a scenario's start.
type scenarioStartValue struct {
	StartAt   string `json:"start_at"`
	WrittenAt string `json:"written_at"`
}

// scenarioStartName lives under the scenario's prefix, so the scenario's
// own cleanup removes it, and a name no other run can hold.
func scenarioStartName(n credhub.Names) string { return n.Prefix() + "/control/start" }

// agreeScenarioStart is the start of a scenario after the first one,
// scheduled at scheduled, when several testers run in lockstep: tester 0
// (after its cleanup and seeding) publishes max(schedule, now +
// scenarioLead); the others take that value, waiting at most
// tester.rendezvous_timeout past the schedule.
func (g *testerGroup) agreeScenarioStart(ctx context.Context, n credhub.Names, scenario string, scheduled time.Time) (time.Time, error) {
	if !g.several() {
		return scheduled, nil
	}
	if g.tester0() {
		return g.publishScenarioStart(ctx, n, scenario, scheduled)
	}
	return g.awaitScenarioStart(ctx, n, scenario, scheduled)
}

func (g *testerGroup) publishScenarioStart(ctx context.Context, n credhub.Names, scenario string, scheduled time.Time) (time.Time, error) {
	name := scenarioStartName(n)
	now := g.clock.Now()
	start := scheduled
	if earliest := now.Add(scenarioLead); earliest.After(start) {
		start = earliest
		g.log.Printf("scenario %s: starts at %s, %s after its schedule: cleaning up the previous scenario and seeding took longer than tester.scenario_gap allowed",
			scenario, start.UTC().Format(time.RFC3339Nano), start.Sub(scheduled).Round(time.Millisecond))
	}
	v := scenarioStartValue{StartAt: start.UTC().Format(time.RFC3339Nano), WrittenAt: now.UTC().Format(time.RFC3339Nano)}
	body, err := json.Marshal(v)
	if err != nil {
		return scheduled, fmt.Errorf("scenario %s: encoding its start: %w", scenario, err)
	}
	if err := g.api.SetJSON(ctx, name, body); err != nil {
		return scheduled, fmt.Errorf("scenario %s: publishing its start as %s for the other testers: %w", scenario, name, err)
	}
	return start, nil
}

func (g *testerGroup) awaitScenarioStart(ctx context.Context, n credhub.Names, scenario string, scheduled time.Time) (time.Time, error) {
	name := scenarioStartName(n)
	limit := g.tester.RendezvousTimeout.D()
	if limit <= 0 {
		limit = 10 * time.Minute
	}
	deadline := scheduled.Add(limit)
	lastProblem := "the credential does not exist"
	for {
		if err := g.tester0Failed(ctx, true); err != nil {
			return scheduled, err
		}
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		raw, err := g.api.GetJSON(pctx, name)
		cancel()
		switch {
		case err == nil:
			return g.takeScenarioStart(name, scenario, scheduled, raw)
		case ctx.Err() != nil:
			return scheduled, ctx.Err()
		case credhub.IsAuth(err):
			return scheduled, fmt.Errorf("scenario %s: reading its start %s: %w", scenario, name, err)
		case credhub.IsNotFound(err):
			lastProblem = "the credential does not exist"
		default:
			lastProblem = err.Error()
		}
		if !g.clock.Now().Before(deadline) {
			return scheduled, fmt.Errorf("scenario %s: tester 0 did not publish its start as %s within %s of the scheduled start (tester.rendezvous_timeout; last: %s): tester 0's log says why it stopped", scenario, name, limit, lastProblem)
		}
		if !load.Sleep(ctx, g.clock, scenarioPoll) {
			return scheduled, ctx.Err()
		}
	}
}

// takeScenarioStart reads the start tester 0 published as name.
func (g *testerGroup) takeScenarioStart(name, scenario string, scheduled time.Time, raw []byte) (time.Time, error) {
	var v scenarioStartValue
	if jerr := json.Unmarshal(raw, &v); jerr != nil {
		return scheduled, fmt.Errorf("scenario %s: %s does not hold a start time: %v", scenario, name, jerr)
	}
	start, perr := time.Parse(time.RFC3339Nano, v.StartAt)
	if perr != nil {
		return scheduled, fmt.Errorf("scenario %s: %s: start_at %q is not an RFC3339 time", scenario, name, v.StartAt)
	}
	if start.After(scheduled) {
		g.log.Printf("scenario %s: tester 0 starts it at %s, %s after its schedule (its cleanup and seeding took longer than tester.scenario_gap)",
			scenario, v.StartAt, start.Sub(scheduled).Round(time.Millisecond))
	}
	return start, nil
}

// awaitSeed is the other testers' wait for tester 0's seed of n: until the
// last seeded name reads back (credhub.SeedAll writes it after all the
// others), at most until deadline; then the whole seed is verified.
func (g *testerGroup) awaitSeed(ctx context.Context, n credhub.Names, count int, deadline time.Time) error {
	last := n.Seed(count - 1)
	for {
		if err := g.tester0Failed(ctx, true); err != nil {
			return err
		}
		_, err := g.api.GetJSON(ctx, last)
		if err == nil {
			return credhub.VerifySeed(ctx, g.api, n, count)
		}
		if !credhub.IsNotFound(err) {
			return fmt.Errorf("waiting for tester 0's seed: %w", err)
		}
		if g.clock.Now().After(deadline) {
			return fmt.Errorf("tester 0's seed (%s) did not appear by %s: is tester 0 running with the same tester.start_at / run id?", last, deadline.Format(time.RFC3339))
		}
		if !load.Sleep(ctx, g.clock, 500*time.Millisecond) {
			return ctx.Err()
		}
	}
}

// signalStop tells the other testers (through a credential under the
// scenario's prefix, which cleanup removes) that tester 0 stopped ramping
// after step.
func (g *testerGroup) signalStop(n credhub.Names, reason string, step int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := []byte(fmt.Sprintf(`{"reason":%q,"step":%d}`, reason, step))
	if err := g.api.SetJSON(ctx, n.Control(), b); err != nil {
		g.log.Printf("warning: could not tell the other testers to stop: %v", err)
	}
}

// stopSignal checks, just before step i starts at at (zero = now), whether
// tester 0 stopped; slot is the length of a step's slot.
func (g *testerGroup) stopSignal(ctx context.Context, n credhub.Names, i int, at time.Time, slot time.Duration) string {
	if !at.IsZero() {
		// Look shortly before the step starts: late enough to see a signal
		// tester 0 wrote right after the step before the previous one.
		lead := min(500*time.Millisecond, slot/4)
		if !g.clock.SleepUntil(ctx, at.Add(-lead)) {
			return ""
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := g.api.GetJSON(cctx, n.Control()); err == nil {
		return fmt.Sprintf("tester 0 stopped the ramp before step %d", i+1)
	}
	return ""
}

// awaitTester0End watches for tester 0's failure until until: see
// scenarioState.awaitTester0End.
func (g *testerGroup) awaitTester0End(ctx context.Context, until time.Time) error {
	for {
		if err := g.tester0Failed(ctx, true); err != nil {
			return err
		}
		if !g.clock.Now().Before(until) || !load.Sleep(ctx, g.clock, rendezvousPoll) {
			return nil
		}
	}
}

// waitForOthers holds tester 0 until end, when the other testers are done
// with a scenario, so that its cleanup does not pull their credentials
// from under their last steps.
func (g *testerGroup) waitForOthers(ctx context.Context, end time.Time) {
	if d := end.Sub(g.clock.Now()); d > 0 {
		g.log.Printf("waiting %s for the other testers to finish before cleaning up", d.Round(time.Second))
		g.clock.SleepUntil(ctx, end)
	}
}
