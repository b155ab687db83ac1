package ramp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/credhub-perf/credhub-perf/credhub"
)

// The other testers depend on tester 0 three times per scenario: for
// the first step's time (the rendezvous), for the seed, and for a later
// scenario's start. When tester 0 stops before it delivers, they would
// wait out tester.rendezvous_timeout (10 min by default) and then fail
// with a message that cannot say why. So tester 0, best effort and within
// failurePublishTimeout, overwrites the rendezvous credential with why it
// stopped; the others read it on their next poll and stop at once.
//
// The credential's name belongs to the deployment, not to one run, so a
// failure value must be told apart from an earlier run's leftover:
//   - once a tester knows the run id tester 0 drew (random suffix), a
//     failure for another run id is not this run's, one for this id is;
//   - before that (still waiting for the rendezvous, or with a fixed
//     tester.run_id), a failure written more than the rendezvous window
//     (max(2 min, tester.start_delay)) before this tester started is a
//     leftover, as for a start value;
//   - each tester that reads a failure adds its index to seen_by (in a
//     version of its own, see ackFailure), and the last one deletes the
//     credential: runs of one deployment never overlap (the director runs
//     one errand at a time), so a tester that finds its own index there
//     is looking at an earlier run's failure.

// failurePublishTimeout bounds every write and read of a failure: the
// testers are stopping anyway, and a cancelled errand is killed 10 s after
// SIGTERM, by when the failure must be out and the cleanup under way.
const failurePublishTimeout = 5 * time.Second

// maxReason is the longest reason, in runes, tester 0 writes or a tester
// repeats from the credential (a hostile value may be megabytes).
const maxReason = 400

// errTester0Failed marks a tester stopping because tester 0 did.
var errTester0Failed = errors.New("tester 0 stopped")

func (r *runner) rendezvousMode() bool {
	return r.c.Tester.Rendezvous != "" && r.c.Tester.Count > 1
}

// publishFailure is tester 0's last word to the others: where it stopped
// and why, replacing the start value (which it then no longer deletes:
// the others do, once all have read the failure). Called at most once.
func (r *runner) publishFailure(where string, cause error) {
	if !r.tester0() || !r.rendezvousMode() || r.api == nil || r.failurePublished || cause == nil {
		return
	}
	r.failurePublished = true
	name := rendezvousName(r.c.Tester.Rendezvous)
	v := rendezvousValue{
		RunID:     r.runID,
		WrittenAt: r.o.Clock.Now().UTC().Format(time.RFC3339Nano),
		Failed:    &rendezvousFailure{Tester: 0, Where: oneLine(where), Reason: oneLine(r.redact(cause.Error()))},
	}
	body, err := json.Marshal(v)
	if err != nil {
		r.log.Printf("warning: could not encode tester 0's failure for the other testers: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), failurePublishTimeout)
	defer cancel()
	if err := r.api.SetJSON(ctx, name, body); err != nil {
		r.log.Printf("warning: could not tell the other testers through %s that tester 0 stopped (they wait up to tester.rendezvous_timeout, %s): %v", name, r.c.Tester.RendezvousTimeout.D(), err)
		return
	}
	r.published = false
	r.log.Printf("rendezvous: told the other testers through %s that tester 0 stopped %s", name, v.Failed.Where)
}

// redact removes the configuration's secrets from a reason that leaves
// this tester (a driver's error may quote a connection string). A secret
// under 4 characters is left: replacing it would blank ordinary words.
func (r *runner) redact(s string) string {
	for _, secret := range []string{r.c.Cleanup.Database.Password, r.c.UAA.ClientSecret} {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

// oneLine makes s printable on one line of at most maxReason runes.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "?")
	var b strings.Builder
	n := 0
	space := false
	for _, c := range s {
		if unicode.IsSpace(c) || !unicode.IsPrint(c) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			n++
		}
		space = false
		if n >= maxReason {
			b.WriteString("…")
			break
		}
		b.WriteRune(c)
		n++
	}
	return b.String()
}

// judgeFailure says why a failure value read at now is not this run's
// tester 0's ("" = it is).
func (r *runner) judgeFailure(v rendezvousValue, now time.Time) string {
	written, err := time.Parse(time.RFC3339Nano, v.WrittenAt)
	if err != nil {
		return fmt.Sprintf("a failure report whose written_at %q is not an RFC3339 time", oneLine(clipRunes(v.WrittenAt, 40)))
	}
	if v.Failed.Tester != 0 {
		return fmt.Sprintf("a failure report naming tester %d; only tester 0 writes one", v.Failed.Tester)
	}
	if slices.Contains(v.SeenBy, r.c.Tester.Index) {
		return fmt.Sprintf("a failure report written at %s that this tester (%d) has read before: an earlier run's", written.UTC().Format(time.RFC3339), r.c.Tester.Index)
	}
	w := r.rendezvousWindow()
	if written.After(now.Add(w)) {
		return fmt.Sprintf("a failure report written at %s, more than %s in the future", written.UTC().Format(time.RFC3339), w)
	}
	if r.runID != "" && v.RunID != r.runID {
		return fmt.Sprintf("a failure report for run %q, not this run's %s", oneLine(clipRunes(v.RunID, 80)), r.runID)
	}
	if r.runID != "" && r.c.Tester.RunID == "" {
		// tester 0's fresh run id: no other run has it.
		return ""
	}
	if written.Before(r.began.Add(-w)) {
		return fmt.Sprintf("a failure report written at %s, more than %s before this tester started (%s): a previous run's leftover", written.UTC().Format(time.RFC3339), w, r.began.UTC().Format(time.RFC3339))
	}
	return ""
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// failureError is the one line a tester stops with when tester 0 failed.
func failureError(name string, v rendezvousValue) error {
	where := oneLine(v.Failed.Where)
	if where == "" {
		where = "(it did not say where)"
	}
	reason := oneLine(v.Failed.Reason)
	if reason == "" {
		reason = "(no reason given)"
	}
	return fmt.Errorf("%w %s (at %s): %s; this tester stops too. Tester 0's log has the details (the run-errand output of instance 0, or credhub-perf-0.stderr.log from `bosh run-errand --download-logs`); read from %s",
		errTester0Failed, where, oneLine(v.WrittenAt), reason, name)
}

// takeFailure acts on a failure value judged this run's: it records this
// tester as a reader (the last reader deletes the credential) and returns
// the error to stop with.
func (r *runner) takeFailure(name string, v rendezvousValue) error {
	r.ackFailure(name, v)
	return failureError(name, v)
}

// Readers mark a failure read by writing it again, as a new version with
// their index in seen_by, never by rewriting one list: two readers doing
// that at once would lose one index. CredHub keeps every version, so the
// readers of a report are the union over the newest versions that carry
// it.

// failureVersions is how many versions are read to collect the readers:
// the report and one mark per other tester, with room to spare.
func (r *runner) failureVersions() int { return min(2*r.c.Tester.Count+4, 1000) }

// addReaders fills v.SeenBy with every reader of the report v is, read
// from the credential's versions. Best effort: on error v stays as read.
func (r *runner) addReaders(ctx context.Context, name string, v *rendezvousValue) {
	vctx, cancel := context.WithTimeout(ctx, failurePublishTimeout)
	defer cancel()
	raws, err := r.api.GetJSONVersions(vctx, name, r.failureVersions())
	if err != nil {
		return
	}
	for _, raw := range raws {
		var old rendezvousValue
		if json.Unmarshal(raw, &old) != nil || !sameReport(old, *v) {
			break // an older value: another report, or a start time
		}
		for _, i := range old.SeenBy {
			if !slices.Contains(v.SeenBy, i) {
				v.SeenBy = append(v.SeenBy, i)
			}
		}
	}
}

func sameReport(a, b rendezvousValue) bool {
	return a.Failed != nil && b.Failed != nil && *a.Failed == *b.Failed && a.WrittenAt == b.WrittenAt && a.RunID == b.RunID
}

// ackFailure writes the report again with this tester in seen_by, then
// deletes the credential when every other tester has read it. Best
// effort and bounded.
func (r *runner) ackFailure(name string, v rendezvousValue) {
	ctx, cancel := context.WithTimeout(context.Background(), failurePublishTimeout)
	defer cancel()
	me := r.c.Tester.Index
	if !slices.Contains(v.SeenBy, me) {
		v.SeenBy = append(v.SeenBy, me)
	}
	if !seenByAll(v.SeenBy, r.c.Tester.Count) {
		body, err := json.Marshal(v)
		if err != nil {
			return
		}
		if err := r.api.SetJSON(ctx, name, body); err != nil {
			r.log.Printf("warning: could not mark tester 0's failure report %s as read by tester %d: %v", name, me, err)
			return
		}
		// The others' marks written before ours: whoever writes last
		// sees them all.
		r.addReaders(ctx, name, &v)
		if !seenByAll(v.SeenBy, r.c.Tester.Count) {
			return
		}
	}
	if err := r.api.Delete(ctx, name); err != nil && !credhub.IsNotFound(err) {
		r.log.Printf("warning: could not delete tester 0's failure report %s (the next run's tester 0 overwrites it): %v", name, err)
		return
	}
	r.log.Printf("rendezvous: every tester has read tester 0's failure report; deleted %s", name)
}

// seenByAll: every tester but 0 is in seen.
func seenByAll(seen []int, count int) bool {
	for i := 1; i < count; i++ {
		if !slices.Contains(seen, i) {
			return false
		}
	}
	return true
}

// tester0Failed is the other testers' check, while they wait for tester 0
// (its seed, a later scenario's start) and before each step: it reads the
// rendezvous credential and returns tester 0's failure for this run, if
// any. paced: called from a wait loop, it reads at most once per
// rendezvousPoll (the loops poll faster for what they wait for). A missing
// or unreadable credential is no news: the wait goes on as before.
func (r *runner) tester0Failed(ctx context.Context, paced bool) error {
	if r.tester0() || !r.rendezvousMode() || r.api == nil {
		return nil
	}
	now := r.o.Clock.Now()
	if paced && !r.failureCheckedAt.IsZero() && now.Sub(r.failureCheckedAt) < rendezvousPoll {
		return nil
	}
	r.failureCheckedAt = now
	name := rendezvousName(r.c.Tester.Rendezvous)
	pctx, cancel := context.WithTimeout(ctx, failurePublishTimeout)
	raw, err := r.api.GetJSON(pctx, name)
	cancel()
	if err != nil {
		return nil
	}
	var v rendezvousValue
	if json.Unmarshal(raw, &v) != nil || v.Failed == nil {
		return nil
	}
	r.addReaders(ctx, name, &v)
	if why := r.judgeFailure(v, now); why != "" {
		if why != r.failureIgnored {
			r.failureIgnored = why
			r.log.Printf("rendezvous: ignoring %s in %s", why, name)
		}
		return nil
	}
	return r.takeFailure(name, v)
}

// tellOthers publishes tester 0's failure in a scenario when some tester
// may still depend on it: for this scenario's seed or start, for a step
// still ahead of them, or for a later scenario.
func (s *scenarioState) tellOthers(where string, cause error) {
	r := s.r
	if !r.tester0() {
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
	r.publishFailure(where, cause)
}

// cleanupOwnWrites deletes what this tester (not 0) wrote in this run's
// set and mix scenarios when tester 0 stopped: tester 0's cleanup may have
// run before this tester's last writes (tester 0 cancelled mid-ramp), or
// not at all.
func (r *runner) cleanupOwnWrites() {
	if r.tester0() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, n := range r.wrote {
		mine := strings.ToLower(n.SetPrefix(r.c.Tester.Index))
		names, err := r.api.FindPath(ctx, n.Prefix()+"/set")
		if err != nil {
			r.log.Printf("warning: could not list what this tester wrote under %s/set: %v; once every tester has stopped, remove the run's credentials with: %s", n.Prefix(), err, r.recoveryCommand())
			continue
		}
		deleted := 0
		for _, name := range names {
			if !strings.HasPrefix(strings.ToLower(name), mine) {
				continue
			}
			if err := r.api.Delete(ctx, name); err != nil && !credhub.IsNotFound(err) {
				r.log.Printf("warning: could not delete %s, which this tester wrote: %v; once every tester has stopped, remove the run's credentials with: %s", name, err, r.recoveryCommand())
				break
			}
			deleted++
		}
		r.log.Printf("cleanup: deleted %d credentials this tester wrote under %s (tester 0 stopped)", deleted, n.SetPrefix(r.c.Tester.Index))
	}
	r.wrote = nil
}
