package load

import (
	"context"
	"testing"
)

// TestConnPoolMostRecentlyUsedFirst: the connection returned last is lent
// first, so a light load keeps reusing the same few warm connections.
func TestConnPoolMostRecentlyUsedFirst(t *testing.T) {
	p := newConnPool(1)
	if p.get() != nil {
		t.Fatal("an empty pool lent a connection")
	}
	a, b, c := &fconn{}, &fconn{}, &fconn{}
	p.put(a)
	p.put(b)
	p.put(c)
	for i, want := range []*fconn{c, b, a, nil} {
		if got := p.get(); got != want {
			t.Fatalf("get %d: got %p, want %p", i, got, want)
		}
	}
	p.put(a)
	p.put(b)
	if got := p.get(); got != b {
		t.Fatalf("after putting a then b, got %p, want b %p", got, b)
	}
}

// A request that finds no idle connection waits for whichever comes first:
// a connection given back, or a dial token; tokens bound the handshakes in
// flight, and one given back lets the next request dial.
func TestConnPoolHandoffAndDialTokens(t *testing.T) {
	p := newConnPool(1)
	ctx := context.Background()
	c, done := p.acquire(ctx)
	if c != nil || done == nil {
		t.Fatalf("empty pool: got %p, token %v; want a dial token", c, done != nil)
	}
	// The only token is taken: the next request waits, and takes the
	// connection given back rather than dialling.
	got := make(chan *fconn)
	go func() {
		c, d := p.acquire(ctx)
		if d != nil {
			t.Error("took a dial token while none was free")
		}
		got <- c
	}()
	a := &fconn{}
	for {
		// put hands over only to a waiting request; retry until it waits.
		select {
		case c := <-got:
			if c != a {
				t.Fatalf("waiting request got %p, want the freed %p", c, a)
			}
			goto handed
		default:
		}
		p.put(a)
		if x := p.get(); x != nil && x != a {
			t.Fatalf("pool lent %p", x)
		} else if x == a {
			continue // nobody waited yet: take it back and try again
		}
	}
handed:
	done()
	c, done = p.acquire(ctx)
	if c != nil || done == nil {
		t.Fatal("a token given back was not lent again")
	}
	// With no token and no connection, a cancelled request gives up.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if c, d := p.acquire(cctx); c != nil || d != nil {
		t.Fatal("a cancelled request got a connection or a token")
	}
	done()
}
