package capacity

import (
	"fmt"
	"time"
)

// pauses models a JVM's stop-the-world pauses (a garbage collection, a
// deoptimisation, a safepoint): every `every`, counted from start, the
// whole target stops serving for `d`, every instance at once. A request
// that would start during a pause starts at its end, and one in service
// when a pause begins finishes that much later. A closed loop of a few
// connections hides such a pause behind a few requests; requests that
// arrive on their own schedule queue behind it, which is the gap between
// a closed-loop capacity and what open arrivals see.
type pauses struct {
	start    time.Time
	every, d time.Duration // d == 0: no pauses
}

// SetPauses makes the whole target stop for d every `every` from start
// (both 0: none). Call it before serving.
func (c *Model) SetPauses(start time.Time, every, d time.Duration) error {
	switch {
	case every == 0 && d == 0:
		return nil
	case every < 0 || d < 0:
		return fmt.Errorf("-pause-every %v and -pause %v must not be negative", every, d)
	case every == 0 || d == 0:
		return fmt.Errorf("-pause-every %v and -pause %v go together: how often the target stops and for how long, e.g. -pause-every 2s -pause 50ms", every, d)
	case d >= every:
		return fmt.Errorf("-pause %v must be shorter than -pause-every %v (the target must serve between pauses)", d, every)
	}
	c.pause = pauses{start: start, every: every, d: d}
	return nil
}

// shift returns when a service of length s that could start at t ends,
// the pauses it meets included: it starts after a pause it falls in and
// stretches by every pause that begins while it runs.
func (p pauses) shift(t time.Time, s time.Duration) time.Time {
	if p.d <= 0 {
		return t.Add(s)
	}
	// k: the index of the period t lies in; pauses begin at start + k·every.
	k := int64(0)
	if t.After(p.start) {
		k = int64(t.Sub(p.start) / p.every)
	}
	begin := p.start.Add(time.Duration(k) * p.every)
	if t.Before(begin.Add(p.d)) && !t.Before(begin) {
		t = begin.Add(p.d)
	} else if t.Before(p.start) {
		// Before the first period: the first pause is at start.
		begin = p.start.Add(-p.every)
	}
	end := t.Add(s)
	for next := begin.Add(p.every); next.Before(end); next = next.Add(p.every) {
		end = end.Add(p.d)
	}
	return end
}
