package load

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/leanhttp"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// open is a connection the pool takes for an open one (release drops
// closed ones); nothing is sent on it.
func open() *leanhttp.Conn {
	c, _ := net.Pipe()
	return leanhttp.NewConn(c)
}

// TestConnPoolMostRecentlyUsedFirst: the connection returned last is lent
// first, so a light load keeps reusing the same few warm connections.
func TestConnPoolMostRecentlyUsedFirst(t *testing.T) {
	p := newConnPool(1, nil, 10, 8)
	ctx := context.Background()
	var tm *time.Timer
	a, b, c := open(), open(), open()
	for range 3 {
		p.lent++ // three loans, given back in turn
	}
	p.release(a)
	p.release(b)
	p.release(c)
	for i, want := range []*leanhttp.Conn{c, b, a} {
		if got, _ := p.acquire(ctx, &tm, nil); got != want {
			t.Fatalf("acquire %d: got %p, want %p", i, got, want)
		}
	}
	p.release(a)
	p.release(b)
	if got, _ := p.acquire(ctx, &tm, nil); got != b {
		t.Fatalf("after giving back a then b, got %p, want b %p", got, b)
	}
	p.release(&leanhttp.Conn{}) // closed: dropped, not lent again
	if got, done := p.acquire(ctx, &tm, nil); got != a || done != nil {
		t.Fatalf("got %p, want a %p (the closed one dropped)", got, a)
	}
}

// TestNeedDial: when a request that found no idle connection dials
// rather than waits, and why.
func TestNeedDial(t *testing.T) {
	const ms, us = time.Millisecond, time.Microsecond
	for _, c := range []struct {
		name            string
		busy            int
		dial, med, leat time.Duration
		rate            float64
		waited, stalled bool
		want            string
	}{
		{"nothing in flight", 0, 2 * ms, 0, 0, 100, false, false, "idle"},
		{"first requests: no latency yet", 1, 2 * ms, 0, 0, 1000, false, false, ""},
		{"fast server, one busy", 1, 2 * ms, 150 * us, 100 * us, 1700, false, false, ""},
		// A burst (dozens due at once after a stall of the tester) against
		// a fast server: waiting, whatever the queue, and still after a
		// dial's time while connections come back.
		{"burst, fast server, after a dial's time", 2, 2 * ms, 150 * us, 100 * us, 8600, true, false, ""},
		{"nothing back for a dial's time", 2, 2 * ms, 150 * us, 100 * us, 8600, true, true, "stall"},
		// 8,600/s x 100 µs x 2 = 1.72: one connection cannot carry it.
		{"too few for the rate, after a dial's time", 1, 2 * ms, 150 * us, 100 * us, 8600, true, false, "short"},
		{"too few for the rate, not waited yet", 1, 2 * ms, 150 * us, 100 * us, 8600, false, false, ""},
		// A CredHub get or the M/M/4 station: busy ones back 1.25 ms
		// apart > 2 ms / 4: dial at once, a wait would be sched-lag.
		{"slow server", 4, 2 * ms, 5 * ms, 1 * ms, 640, false, false, "slow"},
		{"slow server, enough busy", 12, 2 * ms, 5 * ms, 1 * ms, 640, false, false, ""},
		// The tester short of CPU reads responses late: the median grows
		// with the dial time (both wall time), the least stays low.
		{"loaded tester", 2, 20 * ms, 3 * ms, 200 * us, 1700, true, false, ""},
	} {
		if got := needDial(c.busy, c.dial, c.med, c.leat, c.rate, c.waited, c.stalled); got != c.want {
			t.Errorf("%s: needDial = %q, want %q", c.name, got, c.want)
		}
	}
}

// giveBack hands c to a request waiting in acquire: release hands over
// only to a request already waiting, so until one waits c lands in the
// pool; take it back and retry.
func giveBack(p *connPool, c *leanhttp.Conn) {
	for {
		before := handedOver(p)
		p.release(c)
		p.mu.Lock()
		n := len(p.idle)
		if n > 0 {
			p.idle = p.idle[:n-1]
			p.lent++
		}
		p.mu.Unlock()
		if n == 0 && handedOver(p) > before {
			return
		}
		if n == 0 {
			// Handed over, the count not yet taken: wait for it.
			for handedOver(p) == before {
				runtime.Gosched()
			}
			return
		}
		runtime.Gosched()
	}
}

func handedOver(p *connPool) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handed
}

type loan struct {
	c    *leanhttp.Conn
	done func()
}

func acquireAsync(p *connPool, ctx context.Context) <-chan loan {
	got := make(chan loan, 1)
	go func() {
		var tm *time.Timer
		c, d := p.acquire(ctx, &tm, nil)
		got <- loan{c, d}
	}()
	return got
}

// TestConnPoolPatience: a request that finds no idle connection dials at
// once when none is in flight; when one is, it waits for it to be given
// back for a dial's time on the pool's clock (before any dial or response
// of the step, the warm dial's time); a connection given back meanwhile
// is handed over; nothing back in that time, it takes a dial token.
func TestConnPoolPatience(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	p := newConnPool(1, clk, 100, 8)
	ctx := context.Background()
	var tm *time.Timer
	c, done := p.acquire(ctx, &tm, nil)
	if c != nil || done == nil {
		t.Fatalf("nothing in flight: got %p, token %v; want a dial token at once", c, done != nil)
	}
	done() // its dial ended; the request is still in flight (lent)

	// Before any dial or response is timed, the warm dial's time.
	p.warmT = 7 * time.Millisecond
	got := acquireAsync(p, ctx)
	if d := recv(t, clk.Sleeping); !d.Equal(now.Add(7 * time.Millisecond)) {
		t.Fatalf("waited until %v, want the warm dial's 7ms", d.Sub(now))
	}
	a := open()
	giveBack(p, a)
	if l := recv(t, got); l.c != a || l.done != nil {
		t.Fatalf("got %p, token %v; want the freed %p", l.c, l.done != nil, a)
	}

	// Dials timed: the patience is their median. Nothing comes back
	// within it: the request takes a dial token.
	p.noteDial(4 * time.Millisecond)
	p.noteDial(5 * time.Millisecond)
	p.noteDial(30 * time.Millisecond) // one slow handshake does not set it
	p.noteLatency(now, 100*time.Microsecond)
	got = acquireAsync(p, ctx)
	if d := recv(t, clk.Sleeping); !d.Equal(now.Add(5 * time.Millisecond)) {
		t.Fatalf("waited until %v, want 5ms", d.Sub(now))
	}
	clk.Set(now.Add(5 * time.Millisecond))
	l := recv(t, got)
	if l.c != nil || l.done == nil {
		t.Fatalf("after a dial's time with nothing back: got %p, token %v; want a dial token", l.c, l.done != nil)
	}

	// The only token is out: a stalled request still takes the
	// connection given back rather than dialling.
	got = acquireAsync(p, ctx)
	clk.Set(recv(t, clk.Sleeping))
	b := open()
	giveBack(p, b)
	if l := recv(t, got); l.c != b || l.done != nil {
		t.Fatalf("got %p, token %v; want the freed %p", l.c, l.done != nil, b)
	}
	l.done()
	// With no token and no connection, a cancelled request gives up.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	p.noteLatency(now, 100*time.Millisecond) // slow: it would dial at once
	if c, d := p.acquire(cctx, &tm, nil); c != nil || d != nil {
		t.Fatal("a cancelled request got a connection or a token")
	}
}

// TestConnPoolBurstWaits: dozens of requests due at once (the tester back
// from a stall) against a fast server with two connections busy: none
// dials, not even after a dial's time, while connections come back; each
// takes a busy one as it is given back.
func TestConnPoolBurstWaits(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	p := newConnPool(4, clk, 1700, 64)
	ctx := context.Background()
	for range 8 {
		p.noteDial(2 * time.Millisecond)
		p.noteLatency(now, 150*time.Microsecond)
	}
	conns := []*leanhttp.Conn{open(), open()}
	p.lent = 2 // both busy
	const burst = 30
	loans := make([]<-chan loan, burst)
	for i := range loans {
		loans[i] = acquireAsync(p, ctx)
	}
	for range burst {
		recv(t, clk.Sleeping) // each waits, none dials
	}
	// The busy ones come back one by one, each to a waiting request, which
	// sends on it and gives it back in turn; meanwhile the waits of a
	// dial's time run out.
	served := 0
	for round := 0; served < burst; round++ {
		for _, c := range conns {
			if served == burst {
				break
			}
			giveBack(p, c)
			served++
		}
		if round == 2 {
			clk.Set(now.Add(2 * time.Millisecond)) // every wait so far ends
		}
	}
	for i, ch := range loans {
		l := recv(t, ch)
		if l.done != nil || l.c == nil {
			t.Fatalf("request %d of the burst dialled (token %v) instead of taking a busy connection", i, l.done != nil)
		}
	}
	if n := len(p.dials); n != 0 {
		t.Fatalf("%d dial tokens taken", n)
	}
}

// TestConnPoolSlowServerDialsAtOnce: busy connections not expected back
// within a quarter of a dial's time (a slow server): no wait (it would be
// sched-lag), a dial token at once; with enough of them busy it waits.
func TestConnPoolSlowServerDialsAtOnce(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	p := newConnPool(8, clk, 640, 64)
	ctx := context.Background()
	p.noteDial(2 * time.Millisecond)
	p.noteLatency(now, 5*time.Millisecond)
	p.lent = 4 // 5 ms / 4 in flight = 1.25 ms > 2 ms / 4
	var tm *time.Timer
	if c, done := p.acquire(ctx, &tm, nil); c != nil || done == nil {
		t.Fatalf("got %p, token %v; want a dial token at once", c, done != nil)
	}
	if n := len(clk.Sleeping); n != 0 {
		t.Fatalf("%d waits, want none", n)
	}
	p.lent = 11 // 5 ms / 11 < 0.5 ms: one will be back soon
	got := acquireAsync(p, ctx)
	if d := recv(t, clk.Sleeping); !d.Equal(now.Add(2 * time.Millisecond)) {
		t.Fatalf("waited until %v, want 2ms", d.Sub(now))
	}
	clk.Set(now.Add(2 * time.Millisecond))
	if l := recv(t, got); l.done == nil {
		t.Fatal("no dial token after a dial's time with nothing back")
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

// TestConnPoolStallVoidsLatencies: after the tester was seen back from a
// stall, latencies of requests sent before it (their responses may have
// sat unread) no longer make the server look slow: a request waits
// instead of dialling at once, until requests sent since are timed.
func TestConnPoolStallVoidsLatencies(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	p := newConnPool(4, clk, 400, 8)
	ctx := context.Background()
	p.noteDial(2 * time.Millisecond)
	for range 8 {
		p.noteLatency(now, 40*time.Millisecond) // in flight during a stall
	}
	p.lent = 2
	var tm *time.Timer
	if c, done := p.acquire(ctx, &tm, nil); c != nil || done == nil {
		t.Fatalf("slow by the samples: got %p, token %v; want a dial token at once", c, done != nil)
	}
	p.unlend()
	<-p.dials // the request ends; its token back
	back := now.Add(40 * time.Millisecond)
	p.noteStall(back)
	got := acquireAsync(p, ctx)
	if d := recv(t, clk.Sleeping); !d.Equal(now.Add(2 * time.Millisecond)) {
		t.Fatalf("waited until %v, want a dial's time (2ms)", d.Sub(now))
	}
	c := open()
	giveBack(p, c)
	if l := recv(t, got); l.c != c || l.done != nil {
		t.Fatalf("got %p, token %v; want the connection given back", l.c, l.done != nil)
	}
	// Requests sent since the stall, slow too: the server is slow.
	for range 3 {
		p.noteLatency(back, 40*time.Millisecond)
	}
	if c, done := p.acquire(ctx, &tm, nil); c != nil || done == nil {
		t.Fatalf("slow since the stall: got %p, token %v; want a dial token at once", c, done != nil)
	}
}

// TestConnPoolStallDialsOneAtATime: every busy connection stops answering
// (the server stalled as a whole) while requests wait: after a dial's time
// one of them dials, the others wait again; once that dial is over,
// another may.
func TestConnPoolStallDialsOneAtATime(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	p := newConnPool(4, clk, 1700, 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const dial = 2 * time.Millisecond
	for range 8 {
		p.noteDial(dial)
		p.noteLatency(now, 150*time.Microsecond)
	}
	p.lent = 2 // both busy, neither comes back
	loans := make([]<-chan loan, 5)
	for i := range loans {
		loans[i] = acquireAsync(p, ctx)
	}
	for range loans {
		recv(t, clk.Sleeping)
	}
	waiting := len(loans)
	for round := 1; round <= 2; round++ {
		at := now.Add(time.Duration(round) * dial)
		clk.Set(at) // a dial's time more, nothing back
		// One request dials; every other one waits a dial's time again
		// (each either sleeps again or has dialled: count both).
		var dialled []func()
		stuck := time.Now().Add(10 * time.Second) // real time: a hang's bound, not a timing
		for slept := 0; slept+len(dialled) < waiting; {
			if time.Now().After(stuck) {
				t.Fatalf("round %d: %d requests dialled, %d wait a dial's time again, %d neither (blocked for a dial token?)", round, len(dialled), slept, waiting-slept-len(dialled))
			}
			select {
			case d := <-clk.Sleeping:
				if !d.Equal(at.Add(dial)) {
					t.Fatalf("round %d: a request waits until %v, want %v", round, d.Sub(now), at.Add(dial).Sub(now))
				}
				slept++
			default:
				for i, ch := range loans {
					if ch == nil {
						continue
					}
					select {
					case l := <-ch:
						if l.c != nil || l.done == nil {
							t.Fatalf("round %d, request %d: got %p, token %v; want a dial token", round, i, l.c, l.done != nil)
						}
						dialled = append(dialled, l.done)
						loans[i] = nil
					default:
					}
				}
				runtime.Gosched()
			}
		}
		if len(dialled) != 1 {
			t.Fatalf("round %d: %d requests dialled for a stalled server, want 1", round, len(dialled))
		}
		waiting--
		dialled[0]() // that dial is over (its request is in flight)
	}
}

// TestPredial: the connections dialled before a step's clock.
func TestPredial(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		rate float64
		warm time.Duration
		conc int
		want int
	}{
		{10, 2 * ms, 64, 1},                    // one request per 50 handshakes
		{640, 2500 * time.Microsecond, 256, 2}, // 1.6 due during one
		{13800, 2 * ms, 256, 4},                // 27.6 due: capped
		{13800, 2 * ms, 3, 3},                  // capped by -c
		{500, 2 * ms, 64, 1},                   // exactly one due
		{501, 2 * ms, 64, 2},
		{1000, 0, 64, 1}, // untimed (a fake clock)
		{1000, 2 * ms, 0, 1},
	} {
		if got := predial(c.rate, c.warm, c.conc); got != c.want {
			t.Errorf("predial(%v req/s, %v, -c %d) = %d, want %d", c.rate, c.warm, c.conc, got, c.want)
		}
	}
}

// TestPredialTimesItsDials: the connections dialled before a step's clock
// are dialled one after another; the first one's time is the warm dial's,
// each of the others is a dial time of the step (the patience once a
// response is back), so a step that dialled nothing on its clock does not
// fall back to the 2 ms default patience.
func TestPredialTimesItsDials(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(now)
	e := &Engine{opts: ClientOptions{Clock: clk}}
	p := newConnPool(4, clk, 1000, 64)
	// Each dial takes 5 ms, the first (it verifies the chain) 9 ms: at
	// 1,000 req/s, 9 requests come due during it, so 4 are dialled.
	took := []time.Duration{9 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond, 6 * time.Millisecond}
	var dials, inFlight int
	p.predialWith(e, 64, func() bool {
		inFlight++
		if inFlight > 1 {
			t.Fatal("two dials before the clock at once")
		}
		clk.Set(clk.Now().Add(took[dials]))
		dials++
		inFlight--
		return true
	})
	if dials != 4 {
		t.Fatalf("%d dials before the clock, want 4", dials)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.warmT != 9*time.Millisecond {
		t.Fatalf("warm dial's time %v, want 9ms", p.warmT)
	}
	p.lat.add(now, 100*time.Microsecond) // a response is back
	if got := p.patience(); got != 5*time.Millisecond {
		t.Fatalf("patience %v once a response is back, want the median of the timed dials, 5ms", got)
	}
	// A failed first dial: nothing more is dialled, nothing timed.
	q := newConnPool(4, clk, 1000, 64)
	n := 0
	q.predialWith(e, 64, func() bool { n++; return false })
	if n != 1 || q.warmT != 0 || q.dialT.n != 0 {
		t.Fatalf("after a failed first dial: %d dials, warmT %v, %d dial times", n, q.warmT, q.dialT.n)
	}
}
