package load

import "testing"

// TestConnPoolMostRecentlyUsedFirst: the connection returned last is lent
// first, so a light load keeps reusing the same few warm connections.
func TestConnPoolMostRecentlyUsedFirst(t *testing.T) {
	var p connPool
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
