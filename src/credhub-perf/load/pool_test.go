package load

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// open is an fconn the pool takes for an open connection (release drops
// closed ones); its socket is never used.
func open() *fconn { return &fconn{nc: (*sockConn)(nil)} }

// TestConnPoolMostRecentlyUsedFirst: the connection returned last is lent
// first, so a light load keeps reusing the same few warm connections.
func TestConnPoolMostRecentlyUsedFirst(t *testing.T) {
	p := newConnPool(1, nil)
	ctx := context.Background()
	a, b, c := open(), open(), open()
	for range 3 {
		p.lent++ // three loans, given back in turn
	}
	p.release(a)
	p.release(b)
	p.release(c)
	for i, want := range []*fconn{c, b, a} {
		if got, _ := p.acquire(ctx); got != want {
			t.Fatalf("acquire %d: got %p, want %p", i, got, want)
		}
	}
	p.release(a)
	p.release(b)
	if got, _ := p.acquire(ctx); got != b {
		t.Fatalf("after giving back a then b, got %p, want b %p", got, b)
	}
	p.release(&fconn{}) // closed: dropped, not lent again
	if got, done := p.acquire(ctx); got != a || done != nil {
		t.Fatalf("got %p, want a %p (the closed one dropped)", got, a)
	}
}

// TestConnPoolPatience: a request that finds no idle connection dials at
// once when none is in flight; when one is, it waits for it to be given
// back for as long as a dial takes (on the pool's clock) before it takes a
// dial token; a connection given back meanwhile is handed over.
func TestConnPoolPatience(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	p := newConnPool(1, clk)
	ctx := context.Background()
	c, done := p.acquire(ctx)
	if c != nil || done == nil {
		t.Fatalf("nothing in flight: got %p, token %v; want a dial token at once", c, done != nil)
	}
	done()
	type loan struct {
		c    *fconn
		done func()
	}
	got := make(chan loan)
	wait := func() {
		go func() {
			c, d := p.acquire(ctx)
			got <- loan{c, d}
		}()
	}

	// Before any dial is timed the patience is firstPatience; a
	// connection given back within it is handed over, no token taken.
	wait()
	if d := recv(t, clk.Sleeping); !d.Equal(now.Add(firstPatience)) {
		t.Fatalf("waited until %v, want %v", d.Sub(now), firstPatience)
	}
	a := open()
	p.release(a)
	if l := recv(t, got); l.c != a || l.done != nil {
		t.Fatalf("got %p, token %v; want the freed %p", l.c, l.done != nil, a)
	}

	// Dials timed: the patience follows them. No connection comes back
	// within it: the request takes a dial token.
	p.noteDial(4 * time.Millisecond)
	p.noteDial(8 * time.Millisecond) // mean of about the last four: 5 ms
	wait()
	if d := recv(t, clk.Sleeping); !d.Equal(now.Add(5 * time.Millisecond)) {
		t.Fatalf("waited until %v, want 5ms", d.Sub(now))
	}
	clk.Set(now.Add(5 * time.Millisecond))
	l := recv(t, got)
	if l.c != nil || l.done == nil {
		t.Fatalf("after the patience: got %p, token %v; want a dial token", l.c, l.done != nil)
	}

	// The only token is out: the next request, past its patience, still
	// takes the connection given back rather than dialling.
	wait()
	clk.Set(recv(t, clk.Sleeping))
	b := open()
	for {
		// release hands over only to a request already waiting; until
		// this one waits, b lands in the pool: take it back and retry.
		p.release(b)
		p.mu.Lock()
		n := len(p.idle)
		if n > 0 {
			p.idle = p.idle[:n-1]
			p.lent++
		}
		p.mu.Unlock()
		if n == 0 {
			break
		}
		runtime.Gosched()
	}
	if l := recv(t, got); l.c != b || l.done != nil {
		t.Fatalf("got %p, token %v; want the freed %p", l.c, l.done != nil, b)
	}
	l.done()
	// With no token and no connection, a cancelled request gives up.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if c, d := p.acquire(cctx); c != nil || d != nil {
		t.Fatal("a cancelled request got a connection or a token")
	}
}

// TestConnPoolNoPatienceForSlowRequests: when the requests in flight are
// not expected back within a dial's time (recent latency / requests in
// flight > patience: a slow server), waiting cannot pay and the request
// takes a dial token at once; with enough of them in flight it waits.
func TestConnPoolNoPatienceForSlowRequests(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	p := newConnPool(8, clk)
	ctx := context.Background()
	p.noteDial(2 * time.Millisecond)
	p.noteLatency(20 * time.Millisecond)
	p.lent = 4 // 20 ms / 4 in flight = 5 ms > 2 ms
	if c, done := p.acquire(ctx); c != nil || done == nil {
		t.Fatalf("got %p, token %v; want a dial token at once", c, done != nil)
	}
	if n := len(clk.Sleeping); n != 0 {
		t.Fatalf("%d waits, want none", n)
	}
	p.lent = 10 // 20 ms / 10 = 2 ms: one will be back within a dial's time
	got := make(chan func())
	go func() {
		_, done := p.acquire(ctx)
		got <- done
	}()
	if d := recv(t, clk.Sleeping); !d.Equal(now.Add(2 * time.Millisecond)) {
		t.Fatalf("waited until %v, want 2ms", d.Sub(now))
	}
	clk.Set(now.Add(2 * time.Millisecond))
	if done := recv(t, got); done == nil {
		t.Fatal("no dial token after the patience")
	}
}

func recv[T any](t *testing.T, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(30 * time.Second): // a hang guard, not a tolerance
		t.Fatal("nothing received within 30 s")
		panic("unreachable")
	}
}
