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

// Testers started by one `bosh run-errand` come up tens of seconds apart,
// so rounding a clock reading cannot make them agree on a start time. They
// agree through CredHub instead, which every tester already reaches with
// write rights under /credhub-perf/*: tester 0 publishes the first step's time and
// the run id, the others wait for that value.

// rendezvousSkew is the least age a value may have and still count as this
// run's: testers' starts spread over tens of seconds and their clocks may
// differ a little.
const rendezvousSkew = 2 * time.Minute

// rendezvousPoll is how often waiting testers read the credential.
var rendezvousPoll = time.Second

// rendezvousValue is the JSON credential tester 0 writes: the first step's time
// and the run id, or (Failed set) why tester 0 stopped. It holds no
// secret.
type rendezvousValue struct {
	StartAt   string `json:"start_at,omitempty"`
	RunID     string `json:"run_id,omitempty"`
	WrittenAt string `json:"written_at"`
	// Failed replaces the start time when tester 0 stops while the others
	// still depend on it (its start, a seed, a later scenario's start):
	// without it they would wait out tester.rendezvous_timeout.
	Failed *rendezvousFailure `json:"failed,omitempty"`
	// SeenBy lists the testers that read the failure. A tester finding its
	// own index there knows the failure is an earlier run's (runs of one
	// deployment never overlap); the last to read it deletes it.
	SeenBy []int `json:"seen_by,omitempty"`
}

// rendezvousFailure says which tester stopped, where and why, in one line.
type rendezvousFailure struct {
	Tester int    `json:"tester"`
	Where  string `json:"where"`
	Reason string `json:"reason"`
}

func rendezvousName(name string) string {
	return "/credhub-perf/" + config.RendezvousDir + "/" + name
}

// rendezvousWindow is how old a value (and its first step) may be when a tester
// starts: an operator who raises start_delay because tester VMs come up
// far apart widens it too.
func (g *testerGroup) rendezvousWindow() time.Duration {
	return max(rendezvousSkew, g.tester.StartDelay.D())
}

// publishRendezvous is tester 0's side: the first step at now + start_delay (whole
// seconds, as tester.start_at would be written by hand), a fresh run id.
func (g *testerGroup) publishRendezvous(ctx context.Context) (rendezvousValue, error) {
	now := g.clock.Now().UTC()
	start := now.Add(g.tester.StartDelay.D())
	if t := start.Truncate(time.Second); t.Before(start) {
		start = t.Add(time.Second)
	}
	runID := g.tester.RunID
	if runID == "" {
		runID = freshRunID(start)
	}
	v := rendezvousValue{StartAt: start.Format(time.RFC3339), RunID: runID, WrittenAt: now.Format(time.RFC3339Nano)}
	body, err := json.Marshal(v)
	if err != nil {
		return v, fmt.Errorf("tester.rendezvous: encoding the value: %w", err)
	}
	name := rendezvousName(g.tester.Rendezvous)
	if err := g.api.SetJSON(ctx, name, body); err != nil {
		return v, fmt.Errorf("tester.rendezvous: publishing the start time as %s: %w", name, err)
	}
	g.published = true
	g.log.Printf("rendezvous: published the first step at %s and run id %s as %s for the other %d tester(s)", v.StartAt, v.RunID, name, g.tester.Count-1)
	return v, nil
}

// acceptRendezvous says why a value read at now by a tester that started
// at began is not this run's ("" = it is), and returns its start time.
func (g *testerGroup) acceptRendezvous(v rendezvousValue, began, now time.Time) (time.Time, string) {
	written, err := time.Parse(time.RFC3339Nano, v.WrittenAt)
	if err != nil {
		return time.Time{}, fmt.Sprintf("written_at %q is not an RFC3339 time", clipRunes(v.WrittenAt, 40))
	}
	start, err := time.Parse(time.RFC3339, v.StartAt)
	if err != nil {
		return time.Time{}, fmt.Sprintf("start_at %q is not an RFC3339 time", clipRunes(v.StartAt, 40))
	}
	if !config.RunIDPattern.MatchString(v.RunID) {
		return time.Time{}, fmt.Sprintf("run_id %q is not a run id", clipRunes(v.RunID, 80))
	}
	w := g.rendezvousWindow()
	if written.Before(began.Add(-w)) {
		return time.Time{}, fmt.Sprintf("written at %s, more than %s before this tester started (%s): a previous run's leftover", written.UTC().Format(time.RFC3339), w, began.UTC().Format(time.RFC3339))
	}
	if start.Before(now.Add(-w)) {
		return time.Time{}, fmt.Sprintf("its first step (%s) is more than %s in the past: a previous run's leftover", v.StartAt, w)
	}
	if g.tester.RunID != "" && v.RunID != g.tester.RunID {
		return time.Time{}, fmt.Sprintf("its run id %s is not this tester's tester.run_id %s", v.RunID, g.tester.RunID)
	}
	return start, ""
}

// awaitRendezvous is the other testers' side: poll until tester 0's value
// for this run appears, at most tester.rendezvous_timeout after this
// tester began.
func (g *testerGroup) awaitRendezvous(ctx context.Context) (rendezvousValue, error) {
	name := rendezvousName(g.tester.Rendezvous)
	limit := g.tester.RendezvousTimeout.D()
	deadline := g.began.Add(limit)
	g.log.Printf("rendezvous: waiting up to %s for tester 0 to publish the first step's time as %s", limit, name)
	var lastProblem, lastIgnored string
	for {
		pctx, cancel := context.WithTimeout(ctx, min(10*time.Second, max(time.Second, deadline.Sub(g.clock.Now()))))
		raw, err := g.api.GetJSON(pctx, name)
		cancel()
		switch {
		case err == nil:
			var v rendezvousValue
			if jerr := json.Unmarshal(raw, &v); jerr != nil {
				lastProblem = fmt.Sprintf("ignored a value that is not the rendezvous JSON (%s)", oneLine(clipRunes(jerr.Error(), 200)))
				if lastProblem != lastIgnored {
					g.log.Printf("rendezvous: ignoring the value of %s: it is not the rendezvous JSON (%s); waiting for tester 0's", name, oneLine(clipRunes(jerr.Error(), 200)))
					lastIgnored = lastProblem
				}
				break
			}
			if v.Failed != nil {
				g.addReaders(ctx, name, &v)
				why := g.judgeFailure(v, g.clock.Now())
				if why == "" {
					return rendezvousValue{}, g.takeFailure(name, v)
				}
				lastProblem = "ignored " + why
				if why != lastIgnored {
					g.log.Printf("rendezvous: ignoring %s in %s; waiting for tester 0's value", why, name)
					lastIgnored = why
				}
				break
			}
			if _, why := g.acceptRendezvous(v, g.began, g.clock.Now()); why != "" {
				lastProblem = "ignored a value: " + why
				if why != lastIgnored {
					g.log.Printf("rendezvous: ignoring the value of %s: %s; waiting for tester 0's", name, why)
					lastIgnored = why
				}
				break
			}
			g.log.Printf("rendezvous: tester 0 published the first step at %s, run id %s", v.StartAt, v.RunID)
			return v, nil
		case ctx.Err() != nil:
			return rendezvousValue{}, fmt.Errorf("tester.rendezvous: interrupted while waiting for tester 0: %w", ctx.Err())
		case credhub.IsAuth(err):
			return rendezvousValue{}, fmt.Errorf("tester.rendezvous: reading %s: %w", name, err)
		case credhub.IsNotFound(err):
			lastProblem = "the credential does not exist"
		default:
			// CredHub restarting or a network hiccup: keep trying until
			// the deadline, then report it.
			lastProblem = err.Error()
		}
		if !g.clock.Now().Before(deadline) {
			return rendezvousValue{}, fmt.Errorf("tester.rendezvous: tester 0 did not publish the first step's time as %s within %s (tester.rendezvous_timeout; last: %s): is tester 0 running against the same CredHub with the same tester.rendezvous? Its log says why it stopped", name, limit, lastProblem)
		}
		if !load.Sleep(ctx, g.clock, min(rendezvousPoll, max(deadline.Sub(g.clock.Now()), time.Millisecond))) {
			return rendezvousValue{}, fmt.Errorf("tester.rendezvous: interrupted while waiting for tester 0: %w", ctx.Err())
		}
	}
}

// dropRendezvous is tester 0's part of cleanup: the value is only needed
// until the others have read it, and a leftover would only be ignored.
func (g *testerGroup) dropRendezvous() {
	if !g.published {
		return
	}
	g.published = false
	name := rendezvousName(g.tester.Rendezvous)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := g.api.Delete(ctx, name); err != nil && !credhub.IsNotFound(err) {
		g.log.Printf("warning: could not delete the rendezvous credential %s (the next run ignores it as stale): %v", name, err)
		return
	}
	g.log.Printf("rendezvous: deleted %s", name)
}
