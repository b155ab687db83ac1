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

// publishFailure is tester 0's last word to the others: where it stopped
// and why, replacing the start value (which it then no longer deletes:
// the others do, once all have read the failure). Called at most once.
func (g *testerGroup) publishFailure(where string, cause error) {
	if !g.tester0() || !g.rendezvousMode() || g.api == nil || g.failurePublished || cause == nil {
		return
	}
	g.failurePublished = true
	name := rendezvousName(g.tester.Rendezvous)
	v := rendezvousValue{
		RunID:     g.runID,
		WrittenAt: g.clock.Now().UTC().Format(time.RFC3339Nano),
		Failed:    &rendezvousFailure{Tester: 0, Where: oneLine(where), Reason: oneLine(g.redact(cause.Error()))},
	}
	body, err := json.Marshal(v)
	if err != nil {
		g.log.Printf("warning: could not encode tester 0's failure for the other testers: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), failurePublishTimeout)
	defer cancel()
	if err := g.api.SetJSON(ctx, name, body); err != nil {
		g.log.Printf("warning: could not tell the other testers through %s that tester 0 stopped (they wait up to tester.rendezvous_timeout, %s): %v", name, g.tester.RendezvousTimeout.D(), err)
		return
	}
	g.published = false
	g.log.Printf("rendezvous: told the other testers through %s that tester 0 stopped %s", name, v.Failed.Where)
}

// redact removes the configuration's secrets from a reason that leaves
// this tester (a driver's error may quote a connection string). A secret
// under 4 characters is left: replacing it would blank ordinary words.
func (g *testerGroup) redact(s string) string {
	for _, secret := range g.secrets {
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
func (g *testerGroup) judgeFailure(v rendezvousValue, now time.Time) string {
	written, err := time.Parse(time.RFC3339Nano, v.WrittenAt)
	if err != nil {
		return fmt.Sprintf("a failure report whose written_at %q is not an RFC3339 time", oneLine(clipRunes(v.WrittenAt, 40)))
	}
	if v.Failed.Tester != 0 {
		return fmt.Sprintf("a failure report naming tester %d; only tester 0 writes one", v.Failed.Tester)
	}
	if slices.Contains(v.SeenBy, g.tester.Index) {
		return fmt.Sprintf("a failure report written at %s that this tester (%d) has read before: an earlier run's", written.UTC().Format(time.RFC3339), g.tester.Index)
	}
	w := g.rendezvousWindow()
	if written.After(now.Add(w)) {
		return fmt.Sprintf("a failure report written at %s, more than %s in the future", written.UTC().Format(time.RFC3339), w)
	}
	if g.runID != "" && v.RunID != g.runID {
		return fmt.Sprintf("a failure report for run %q, not this run's %s", oneLine(clipRunes(v.RunID, 80)), g.runID)
	}
	if g.runID != "" && g.tester.RunID == "" {
		// tester 0's fresh run id: no other run has it.
		return ""
	}
	if written.Before(g.began.Add(-w)) {
		return fmt.Sprintf("a failure report written at %s, more than %s before this tester started (%s): a previous run's leftover", written.UTC().Format(time.RFC3339), w, g.began.UTC().Format(time.RFC3339))
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
func (g *testerGroup) takeFailure(name string, v rendezvousValue) error {
	g.ackFailure(name, v)
	return failureError(name, v)
}

// Readers mark a failure read by writing it again, as a new version with
// their index in seen_by, never by rewriting one list: two readers doing
// that at once would lose one index. CredHub keeps every version, so the
// readers of a report are the union over the newest versions that carry
// it.

// failureVersions is how many versions are read to collect the readers:
// the report and one mark per other tester, with room to spare.
func (g *testerGroup) failureVersions() int { return min(2*g.tester.Count+4, 1000) }

// addReaders fills v.SeenBy with every reader of the report v is, read
// from the credential's versions. Best effort: on error v stays as read.
func (g *testerGroup) addReaders(ctx context.Context, name string, v *rendezvousValue) {
	vctx, cancel := context.WithTimeout(ctx, failurePublishTimeout)
	defer cancel()
	raws, err := g.api.GetJSONVersions(vctx, name, g.failureVersions())
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
func (g *testerGroup) ackFailure(name string, v rendezvousValue) {
	ctx, cancel := context.WithTimeout(context.Background(), failurePublishTimeout)
	defer cancel()
	me := g.tester.Index
	if !slices.Contains(v.SeenBy, me) {
		v.SeenBy = append(v.SeenBy, me)
	}
	if !seenByAll(v.SeenBy, g.tester.Count) {
		body, err := json.Marshal(v)
		if err != nil {
			return
		}
		if err := g.api.SetJSON(ctx, name, body); err != nil {
			g.log.Printf("warning: could not mark tester 0's failure report %s as read by tester %d: %v", name, me, err)
			return
		}
		// The others' marks written before ours: whoever writes last
		// sees them all.
		g.addReaders(ctx, name, &v)
		if !seenByAll(v.SeenBy, g.tester.Count) {
			return
		}
	}
	if err := g.api.Delete(ctx, name); err != nil && !credhub.IsNotFound(err) {
		g.log.Printf("warning: could not delete tester 0's failure report %s (the next run's tester 0 overwrites it): %v", name, err)
		return
	}
	g.log.Printf("rendezvous: every tester has read tester 0's failure report; deleted %s", name)
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
func (g *testerGroup) tester0Failed(ctx context.Context, paced bool) error {
	if g.tester0() || !g.rendezvousMode() || g.api == nil {
		return nil
	}
	now := g.clock.Now()
	if paced && !g.failureCheckedAt.IsZero() && now.Sub(g.failureCheckedAt) < rendezvousPoll {
		return nil
	}
	g.failureCheckedAt = now
	name := rendezvousName(g.tester.Rendezvous)
	pctx, cancel := context.WithTimeout(ctx, failurePublishTimeout)
	raw, err := g.api.GetJSON(pctx, name)
	cancel()
	if err != nil {
		return nil
	}
	var v rendezvousValue
	if json.Unmarshal(raw, &v) != nil || v.Failed == nil {
		return nil
	}
	g.addReaders(ctx, name, &v)
	if why := g.judgeFailure(v, now); why != "" {
		if why != g.failureIgnored {
			g.failureIgnored = why
			g.log.Printf("rendezvous: ignoring %s in %s", why, name)
		}
		return nil
	}
	return g.takeFailure(name, v)
}

// cleanupOwnWrites deletes what this tester (not 0) wrote in this run's
// set and mix scenarios when tester 0 stopped: tester 0's cleanup may have
// run before this tester's last writes (tester 0 cancelled mid-ramp), or
// not at all. recovery is the command that removes what is left.
func (g *testerGroup) cleanupOwnWrites(recovery string) {
	if g.tester0() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, n := range g.wrote {
		mine := strings.ToLower(n.SetPrefix(g.tester.Index))
		names, err := g.api.FindPath(ctx, n.Prefix()+"/set")
		if err != nil {
			g.log.Printf("warning: could not list what this tester wrote under %s/set: %v; once every tester has stopped, remove the run's credentials with: %s", n.Prefix(), err, recovery)
			continue
		}
		deleted := 0
		for _, name := range names {
			if !strings.HasPrefix(strings.ToLower(name), mine) {
				continue
			}
			if err := g.api.Delete(ctx, name); err != nil && !credhub.IsNotFound(err) {
				g.log.Printf("warning: could not delete %s, which this tester wrote: %v; once every tester has stopped, remove the run's credentials with: %s", name, err, recovery)
				break
			}
			deleted++
		}
		g.log.Printf("cleanup: deleted %d credentials this tester wrote under %s (tester 0 stopped)", deleted, n.SetPrefix(g.tester.Index))
	}
	g.wrote = nil
}
