package load_test

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// TestOpenLoopRate checks the acceptance criterion: 500 requests/s held
// within 2 % over 5 s. The achieved rate is measured from the actual send
// times. Retried because the machine is shared; a generator that drifts
// fails every attempt.
func TestOpenLoopRate(t *testing.T) {
	if testing.Short() {
		t.Skip("5 s rate test")
	}
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false)
	const rate, secs = 500.0, 5
	var last string
	for attempt := 0; attempt < 3; attempt++ {
		res := run(t, mtlsOpts(p, true), load.Template{URL: srv.URL}, load.Step{Concurrency: 20, Rate: rate, Duration: secs * time.Second})
		if len(res) != rate*secs {
			t.Fatalf("%d requests scheduled, want %d", len(res), int(rate*secs))
		}
		sent := make([]time.Time, len(res))
		for i, r := range res {
			if r.Err != "" || r.Rate != rate {
				t.Fatalf("request failed: %+v", r)
			}
			sent[i] = r.Start.Add(r.SchedLag)
		}
		sort.Slice(sent, func(i, j int) bool { return sent[i].Before(sent[j]) })
		got := float64(len(sent)-1) / sent[len(sent)-1].Sub(sent[0]).Seconds()
		// Also each second on its own: a burst-then-idle generator would
		// pass the average.
		perSec := make([]int, secs)
		for _, s := range sent {
			if i := int(s.Sub(sent[0]) / time.Second); i < secs {
				perSec[i]++
			}
		}
		ok := got >= rate*0.98 && got <= rate*1.02
		for _, n := range perSec[:secs-1] {
			ok = ok && float64(n) >= rate*0.9 && float64(n) <= rate*1.1
		}
		if ok {
			return
		}
		last = time.Now().Format(time.RFC3339) + ": " + fmtRate(got, perSec)
		t.Logf("attempt %d: %s", attempt+1, last)
	}
	t.Fatalf("open-loop rate not held: %s", last)
}

func fmtRate(got float64, perSec []int) string {
	return fmt.Sprintf("achieved %.1f/s, per second %v", got, perSec)
}

// TestCoordinatedOmission stalls the server for 300 ms once. Requests
// scheduled during the stall must report latencies that include the wait
// until the stall ends, though the generator could not send them on time.
func TestCoordinatedOmission(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	var mu sync.Mutex
	var stallFrom, stallUntil time.Time
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		from, until := stallFrom, stallUntil
		mu.Unlock()
		if now := time.Now(); !from.IsZero() && now.After(from) && now.Before(until) {
			time.Sleep(until.Sub(now))
		}
	}), true, false)
	start := time.Now().Add(50 * time.Millisecond)
	mu.Lock()
	stallFrom, stallUntil = start.Add(500*time.Millisecond), start.Add(800*time.Millisecond)
	mu.Unlock()
	// Few workers: once they all wait on the stalled server, later requests
	// cannot even be sent on time. Their sched-lag must count.
	res := run(t, mtlsOpts(p, true), load.Template{URL: srv.URL}, load.Step{Concurrency: 4, Rate: 200, Duration: 1500 * time.Millisecond, StartAt: start})
	if len(res) != 300 {
		t.Fatalf("%d requests, want 300", len(res))
	}
	var inStall, lagged int
	for _, r := range res {
		if r.Err != "" {
			t.Fatalf("request failed: %+v", r)
		}
		if r.Start.After(stallFrom.Add(5*time.Millisecond)) && r.Start.Before(stallUntil.Add(-20*time.Millisecond)) {
			inStall++
			if want := stallUntil.Sub(r.Start) - 5*time.Millisecond; r.Latency < want {
				t.Fatalf("request scheduled %v into the stall reports %v, want >= %v", r.Start.Sub(stallFrom), r.Latency, want)
			}
			if r.SchedLag > 10*time.Millisecond {
				lagged++
			}
		}
	}
	if inStall < 50 || lagged < inStall/2 {
		t.Fatalf("%d requests scheduled in the stall, %d of them sent late", inStall, lagged)
	}
}
