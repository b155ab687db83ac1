package load

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestWakerNeverEarlyBusyCore: on one busy P the poller does not look at
// the timerfd (something is always runnable), so the read deadline's
// runtime timer ends the sleep: that path must be as exact and report
// "time reached", not a cancelled step.
func TestWakerNeverEarlyBusyCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // keeps the run queue non-empty until the test ends
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	defer func() { close(stop); <-done }()
	w := newWaker(context.Background(), nil, spinMinGap-1) // parks, no spin
	defer w.close()
	for i := 0; i < 50; i++ {
		due := time.Now().Add(time.Duration(1+i%5) * 200 * time.Microsecond)
		if !w.until(context.Background(), due) {
			t.Fatal("until returned false without a cancelled context")
		}
		if now := time.Now(); now.Before(due) {
			t.Fatalf("woke %v early", due.Sub(now))
		}
	}
	// Without the deadline the poller would only be asked by sysmon, every
	// 10 ms: each sleep 10 ms late. The OS may pause the test long enough
	// for sysmon to get there first now and then, hence "most".
	if tw, ok := w.(*timerfdWaker); ok && tw.byDeadline < 40 {
		t.Fatalf("the read deadline ended %d of 50 sleeps on a busy core, want most", tw.byDeadline)
	}
}
