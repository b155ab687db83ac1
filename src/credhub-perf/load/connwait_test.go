package load

import (
	"context"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// TestConnPoolWaitEndsAtDeadline: an open-loop request of the lean client
// that waits for a dial token (every one held by a dial in progress) or
// for a connection given back stops waiting at its deadline (its schedule
// + the client's timeout) on the engine's clock, with neither, and is no
// longer counted as waiting or in flight. Unbounded, the token wait would
// make each request, against a server that never completes a handshake,
// wait for the dials ahead of it to time out, a few at a time.
func TestConnPoolWaitEndsAtDeadline(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	p := newConnPool(1, clk, 100, 8)
	p.dials <- struct{}{} // the only token: a dial in progress
	due := &dueWait{clk: clk, at: now.Add(3 * time.Second)}
	got := make(chan loan, 1)
	go func() {
		var tm *time.Timer
		c, d := p.acquire(context.Background(), &tm, due)
		got <- loan{c, d}
	}()
	// Nothing in flight ("idle"): it would dial, and waits for a token.
	if d := recv(t, clk.Sleeping); !d.Equal(due.at) {
		t.Fatalf("waited for a dial token until %v, want its deadline 3s", d.Sub(now))
	}
	clk.Set(due.at)
	if l := recv(t, got); l.c != nil || l.done != nil || !due.passed() {
		t.Fatalf("at its deadline: got %p, token %v; want neither", l.c, l.done != nil)
	}
	p.mu.Lock()
	waiting, lent := p.waiting, p.lent
	p.mu.Unlock()
	if waiting != 0 || lent != 0 {
		t.Fatalf("after the deadline: %d waiting, %d in flight; want 0 and 0", waiting, lent)
	}

	// A request in flight, no dial time known: a request waits for it a
	// dial's time (2 ms), but no longer than its deadline, 1 ms away.
	<-p.dials
	p.lent = 1
	due.at = clk.Now().Add(time.Millisecond)
	go func() {
		var tm *time.Timer
		c, d := p.acquire(context.Background(), &tm, due)
		got <- loan{c, d}
	}()
	if d := recv(t, clk.Sleeping); !d.Equal(due.at) {
		t.Fatalf("waited for a connection back until %v, want its deadline %v", d.Sub(now), due.at.Sub(now))
	}
	clk.Set(due.at)
	if l := recv(t, got); l.c != nil || l.done != nil {
		t.Fatalf("at its deadline: got %p, token %v; want neither", l.c, l.done != nil)
	}
	p.mu.Lock()
	waiting, lent = p.waiting, p.lent
	p.mu.Unlock()
	if waiting != 0 || lent != 1 {
		t.Fatalf("after the deadline: %d waiting, %d in flight; want 0 and 1", waiting, lent)
	}
}

// TestStdGateWaitEndsAtDeadline: the same for net/http's gate: a request
// waiting for a dial token, or for a connection back, is not let through
// to the Transport after its deadline, and leaves the gate's counts as
// they were.
func TestStdGateWaitEndsAtDeadline(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	g := newStdGate(clk, 8)
	g.rate = 100
	for range cap(g.dials) {
		g.dials <- struct{}{} // every token: dials in progress
	}
	due := &dueWait{clk: clk, at: now.Add(3 * time.Second)}
	got := make(chan *gateTicket, 1)
	enter := func() {
		go func() {
			var tm *time.Timer
			got <- g.enter(context.Background(), &tm, due)
		}()
	}
	enter()
	if d := recv(t, clk.Sleeping); !d.Equal(due.at) {
		t.Fatalf("waited for a dial token until %v, want its deadline 3s", d.Sub(now))
	}
	clk.Set(due.at)
	if tk := recv(t, got); tk != nil {
		t.Fatal("let through after its deadline")
	}
	counts := func() (waiting, lent, pending int) {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.waiting, g.lent, g.pending
	}
	if w, l, p := counts(); w != 0 || l != 0 || p != 0 {
		t.Fatalf("after the deadline: %d waiting, %d in flight, %d pending; want none", w, l, p)
	}

	// A request in flight: wait for it a dial's time, up to the deadline.
	for range cap(g.dials) {
		<-g.dials
	}
	g.lent = 1
	due.at = clk.Now().Add(time.Millisecond)
	enter()
	if d := recv(t, clk.Sleeping); !d.Equal(due.at) {
		t.Fatalf("waited for a connection back until %v, want its deadline %v", d.Sub(now), due.at.Sub(now))
	}
	clk.Set(due.at)
	if tk := recv(t, got); tk != nil {
		t.Fatal("let through after its deadline")
	}
	if w, l, p := counts(); w != 0 || l != 1 || p != 0 {
		t.Fatalf("after the deadline: %d waiting, %d in flight, %d pending; want 0, 1, 0", w, l, p)
	}
}

// TestRequestDeadline: a request's I/O deadline is the client's timeout
// from its send, or, in open loop on the system clock, its schedule + the
// timeout when that comes sooner.
func TestRequestDeadline(t *testing.T) {
	send := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	w := &worker{e: &Engine{opts: ClientOptions{Timeout: 3 * time.Second}}}
	if got := w.deadline(send); !got.Equal(send.Add(3 * time.Second)) {
		t.Fatalf("closed loop: %v, want the send + 3s", got)
	}
	w.ioDue = send.Add(time.Second) // scheduled 2 s before its send
	if got := w.deadline(send); !got.Equal(w.ioDue) {
		t.Fatalf("open loop, sent 2 s late: %v, want its schedule + 3s", got)
	}
	w.ioDue = send.Add(4 * time.Second)
	if got := w.deadline(send); !got.Equal(send.Add(3 * time.Second)) {
		t.Fatalf("%v, want the send + 3s", got)
	}
	w.e.opts.Timeout = 0
	if got := w.deadline(send); !got.IsZero() {
		t.Fatalf("no timeout: %v, want none", got)
	}
}
