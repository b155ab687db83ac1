package load

import (
	"context"
	"testing"
	"time"
)

// TestWakerNeverEarly: the pacer's waker may return late (a busy machine)
// but never before the time asked for, whatever the kernel timer does.
// With the spin (requests far apart) and without (close together).
func TestWakerNeverEarly(t *testing.T) {
	for _, gap := range []time.Duration{spinMinGap, spinMinGap - 1} {
		w := newWaker(context.Background(), nil, gap)
		defer w.close()
		for i := 0; i < 50; i++ {
			due := time.Now().Add(time.Duration(i%5) * 150 * time.Microsecond)
			if !w.until(context.Background(), due) {
				t.Fatal("until returned false without a cancelled context")
			}
			if now := time.Now(); now.Before(due) {
				t.Fatalf("gap %v: woke %v early", gap, due.Sub(now))
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w2 := newWaker(ctx, nil, time.Second)
	defer w2.close()
	cancel()
	if w2.until(ctx, time.Now().Add(time.Hour)) {
		t.Fatal("until returned true on a cancelled context")
	}
}
