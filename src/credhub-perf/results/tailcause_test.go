package results

import (
	"sort"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

const msec = time.Millisecond

// feed gives t the requests of a fixed schedule of one every gap from 0
// to end, each taking service, held until `to` when it would be in
// flight during [from, to) or start then (a pause), in completion order;
// dial marks the requests that open a connection.
func feedSchedule(t *TailCause, gap, service, end, from, to time.Duration, dial func(i int) bool) {
	type req struct {
		start, done time.Duration
		i           int
	}
	var rs []req
	free := time.Duration(0) // one server: a request starts when the last one is done
	for i := 0; time.Duration(i)*gap < end; i++ {
		start := time.Duration(i) * gap
		begin := max(start, free)
		if begin >= from && begin < to {
			begin = to
		}
		done := begin + service
		if begin < from && done > from {
			done += to - from
		}
		free = done
		rs = append(rs, req{start, done, i})
	}
	for _, r := range rs { // completion order is start order with one server
		res := &load.Result{Offset: r.start, Latency: r.done - r.start}
		if dial != nil && dial(r.i) {
			res.DNSDial = 5 * msec
		}
		t.Record(res)
	}
}

// Known answers: a 100 msec pause in a 2 msec schedule with a 1 msec service
// is one stall that holds every request over a 20 msec bound; the same
// schedule without it has no request over the bound and no cause.
func TestTailCausePause(t *testing.T) {
	tc := NewTailCause(20 * msec)
	feedSchedule(tc, 2*msec, 1*msec, 2*time.Second, time.Second, time.Second+100*msec, nil)
	f := tc.Figures()
	if f.OverStalled > f.OverSLO {
		t.Fatalf("more held than over: %+v", f)
	}
	if f.Stalls != 1 || f.LongestStallS < 0.099 || f.LongestStallS > 0.102 || f.Cause != CausePauses || f.OverStalled != f.OverSLO || f.OverSLO < 40 {
		t.Fatalf("%+v", f)
	}
	if got := f.Text(); got == "" || got[:13] != "target pauses" {
		t.Fatalf("text %q", got)
	}
	tc = NewTailCause(20 * msec)
	feedSchedule(tc, 2*msec, 1*msec, 2*time.Second, time.Hour, time.Hour, nil)
	if f := tc.Figures(); f.Stalls != 0 || f.OverSLO != 0 || f.Cause != "" || f.Text() != "" {
		t.Fatalf("no pause: %+v", f)
	}
}

// Slow requests that opened connections, and no stall: new connections.
// Slow requests with neither: queueing.
func TestTailCauseConnectionsAndQueueing(t *testing.T) {
	tc := NewTailCause(20 * msec)
	var rs []*load.Result
	for i := 0; i < 100; i++ {
		r := &load.Result{Offset: time.Duration(i) * 2 * msec, Latency: 2 * msec}
		if i%10 == 0 {
			r.Latency, r.DNSDial = 30*msec, 25*msec
		}
		rs = append(rs, r)
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Offset+rs[i].Latency < rs[j].Offset+rs[j].Latency })
	for _, r := range rs {
		tc.Record(r)
	}
	if f := tc.Figures(); f.Cause != CauseConnections || f.OverSLO != 10 || f.OverDialled != 10 || f.Dials != 10 {
		t.Fatalf("%+v", tc.Figures())
	}
	tc = NewTailCause(20 * msec)
	for i := 0; i < 100; i++ {
		tc.Record(&load.Result{Offset: time.Duration(i) * 2 * msec, Latency: time.Duration(5+i%40) * msec})
	}
	if f := tc.Figures(); f.Cause != CauseQueueing || f.Stalls != 0 || f.OverSLO == 0 {
		t.Fatalf("%+v", f)
	}
}

// One connection, one slow request: a gap in completions, but nothing
// else was in flight, so no stall.
func TestTailCauseOneConnection(t *testing.T) {
	tc := NewTailCause(20 * msec)
	at := time.Duration(0)
	for i := 0; i < 50; i++ {
		lat := 2 * msec
		if i == 25 {
			lat = 60 * msec
		}
		tc.Record(&load.Result{Offset: at, Latency: lat})
		at += lat
	}
	if f := tc.Figures(); f.Stalls != 0 || f.Cause != CauseQueueing {
		t.Fatalf("%+v", f)
	}
}

// Hostile input: nothing recorded, a zero SLO, completions out of order
// or at the same time: no panic, no stall, no division by zero.
func TestTailCauseDegenerate(t *testing.T) {
	if f := NewTailCause(20 * msec).Figures(); f.Stalls != 0 || f.Cause != "" {
		t.Fatalf("empty: %+v", f)
	}
	tc := NewTailCause(0)
	for i := 0; i < 50; i++ {
		tc.Record(&load.Result{Offset: time.Duration(50-i) * msec, Latency: msec})
		tc.Record(&load.Result{Offset: 0, Latency: 0})
	}
	if f := tc.Figures(); f.Cause != "" || f.OverSLO != 0 {
		t.Fatalf("%+v", f)
	}
}
