package results

import (
	"fmt"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

// A step's slow requests have three usual causes, and the CSV can tell
// them apart without instrumenting CredHub:
//
//   - the target paused (a JVM's collection, a deoptimisation, a slow
//     query holding a lock): no request completes on any connection for a
//     while, then a burst does. A gap in the step's completions much
//     longer than their usual spacing, ended by requests that were all in
//     flight during it (at least two), is such a stall, and a slow request
//     that was in flight during one, or arrived while its backlog drained,
//     was held by it;
//   - new connections: a request that opened its own connection paid a
//     mutual-TLS handshake (its DNS+dialup column), expensive on CredHub;
//   - queueing: neither; the target was busy the whole time.
//
// TailCause watches one step's requests, in completion order (the order
// the CSV holds them in), in constant memory, and names the cause of the
// requests slower than the SLO's latency when most of them share one.

// stallGapFactor: a gap in completions longer than this many times their
// mean spacing (and than minStall) is a stall. At a steady rate the
// spacing rarely reaches 4 means (a fixed schedule's, even less often).
const stallGapFactor = 4

// minStall: gaps shorter than this are noise (a scheduler's tick, a
// garbage collection in the tester itself).
const minStall = 10 * time.Millisecond

// causeShare: the share of the slow requests one cause must explain to
// be named.
const causeShare = 0.5

// recentStalls bounds the stalls kept to match later completions with.
const recentStalls = 8

// Causes of a step's slow requests (TailFigures.Cause).
const (
	CausePauses      = "target pauses"
	CauseConnections = "new connections"
	CauseQueueing    = "queueing"
)

type stall struct{ from, to time.Duration }

// TailCause is a load.Sink of one step's requests; Figures says what it saw.
type TailCause struct {
	slo         time.Duration
	n           int64
	first, last time.Duration // completion offsets
	recent      []stall
	all         []stall // for the steadiness verdict (pauses.go)
	pending     *stall  // a gap, until the next completion shows it held more than one request
	pendingOver int64   // the request that ended the pending gap was over the SLO
	stalls      int
	stallTotal  time.Duration
	longest     time.Duration
	dials       int64
	dialTotal   time.Duration
	over        int64
	overStalled int64
	overDialled int64
}

// NewTailCause watches a step whose SLO latency bound is slo.
func NewTailCause(slo time.Duration) *TailCause { return &TailCause{slo: slo} }

// Record takes one request (a load.Sink).
func (t *TailCause) Record(r *load.Result) {
	done := r.Offset + r.Latency
	if t.n == 0 {
		t.first, t.last = done, done
	}
	if p := t.pending; p != nil {
		// A stall is a stop of every connection: the next completion was
		// in flight during the gap too. One slow request alone (a
		// handshake on the only connection) is not a stall.
		t.pending = nil
		if r.Offset < p.to {
			t.stalls++
			t.stallTotal += p.to - p.from
			t.longest = max(t.longest, p.to-p.from)
			t.recent = append(t.recent, *p)
			t.keep(*p)
			if len(t.recent) > recentStalls {
				t.recent = t.recent[1:]
			}
			t.overStalled += t.pendingOver
		}
	}
	over, held := t.slo > 0 && r.Latency > t.slo, false
	if over {
		t.over++
		if r.DNSDial > 0 {
			t.overDialled++
		}
		for _, s := range t.recent {
			// In flight during the stall, or arrived while its backlog
			// (as long as the stall, at most) drained.
			if done >= s.to && r.Offset < s.to+(s.to-s.from) {
				t.overStalled++
				held = true
				break
			}
		}
	}
	if t.n >= 8 && done > t.last {
		mean := (t.last - t.first) / time.Duration(t.n-1)
		if gap := done - t.last; gap > max(minStall, stallGapFactor*mean) {
			t.pending = &stall{from: t.last, to: done}
			t.pendingOver = 0
			if over && !held {
				t.pendingOver = 1 // held by this stall once it is confirmed
			}
		}
	}
	t.last = max(t.last, done)
	t.n++
	if r.DNSDial > 0 {
		t.dials++
		t.dialTotal += r.DNSDial
	}
}

// TailFigures is a step's `tail` in summary.json.
type TailFigures struct {
	// Stalls: gaps in the step's completions (no request finished on any
	// connection) longer than 4 times their mean spacing and 10 ms;
	// StallS their total and LongestStallS the longest, seconds.
	Stalls        int     `json:"stalls"`
	StallS        float64 `json:"stall_s"`
	LongestStallS float64 `json:"longest_stall_s"`
	// Dials: requests that opened a connection during the step, DialS
	// their handshakes' total (DNS+dialup), seconds.
	Dials int64   `json:"dials"`
	DialS float64 `json:"dial_s"`
	// OverSLO: requests slower than slo.latency_s; of them, OverStalled
	// were held by a stall, OverDialled opened a connection.
	OverSLO     int64 `json:"over_slo"`
	OverStalled int64 `json:"over_slo_stalled"`
	OverDialled int64 `json:"over_slo_dialled"`
	// Cause of the requests over the SLO latency when at least half of
	// them share one: "target pauses", "new connections", else
	// "queueing"; "" when no request was over it.
	Cause string `json:"cause"`
	// Note says it in words (Text); headroom-plot's time view shows it.
	Note string `json:"note,omitempty"`
}

// Figures says what the step's requests showed.
func (t *TailCause) Figures() *TailFigures {
	f := &TailFigures{Stalls: t.stalls, StallS: secs(t.stallTotal), LongestStallS: secs(t.longest),
		Dials: t.dials, DialS: secs(t.dialTotal), OverSLO: t.over, OverStalled: t.overStalled, OverDialled: t.overDialled}
	switch {
	case t.over == 0:
	case float64(t.overStalled) >= causeShare*float64(t.over):
		f.Cause = CausePauses
	case float64(t.overDialled) >= causeShare*float64(t.over):
		f.Cause = CauseConnections
	default:
		f.Cause = CauseQueueing
	}
	f.Note = f.Text()
	return f
}

// Text says the cause in words, for summary.txt and headroom-plot's time
// view: "target pauses: 3 stalls (longest 52 ms) held 41 of the 52
// requests over the SLO"; "" without a cause.
func (f *TailFigures) Text() string {
	if f == nil || f.Cause == "" {
		return ""
	}
	switch f.Cause {
	case CausePauses:
		return fmt.Sprintf("target pauses: %d stall(s) with no completion on any connection (longest %.0f ms) held %d of the %d requests over the SLO", f.Stalls, 1000*f.LongestStallS, f.OverStalled, f.OverSLO)
	case CauseConnections:
		return fmt.Sprintf("new connections: %d of the %d requests over the SLO opened a connection (a mutual-TLS handshake; %d dials in the step)", f.OverDialled, f.OverSLO, f.Dials)
	}
	return fmt.Sprintf("queueing: %d requests over the SLO, neither held by a stall nor opening a connection (%d stall(s), %d dials in the step)", f.OverSLO, f.Stalls, f.Dials)
}
