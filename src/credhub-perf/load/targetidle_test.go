package load_test

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// TestClosedLoopLeavesTargetIdle: what the open-loop confirmation after a
// closed-loop ramp relies on, so that its first step measures the target
// and not the ramp. A closed-loop step at more connections than the target
// serves at once (6 workers, one request at a time served) returns only
// once every request it sent was answered, so no backlog of the ramp waits
// at the target, and it closes its connections, so none of the ramp's is
// left for the target to serve or time out; the open-loop step after it
// dials its own and warms them before its clock (the step after a KeepConns
// warm-up dials none: TestOpenLoopKeepConns). Either HTTP client.
func TestClosedLoopLeavesTargetIdle(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		var inFlight, open atomic.Int64
		one := make(chan struct{}, 1) // the target serves one request at a time: the workers queue
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inFlight.Add(1)
			one <- struct{}{}
			time.Sleep(200 * time.Microsecond)
			<-one
			// Counted out before the answer is written: a request the
			// tester has its answer to is no longer at the target.
			inFlight.Add(-1)
		})
		srv := loadtest.NewMTLSServer(t, p, h, true, false, func(s *http.Server) {
			s.ConnState = func(_ net.Conn, st http.ConnState) {
				switch st {
				case http.StateNew:
					open.Add(1)
				case http.StateClosed, http.StateHijacked:
					open.Add(-1)
				}
			}
		})
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		e, err := load.New(opts, load.Template{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Run(context.Background(), load.Step{Concurrency: 6, Requests: 300}, load.Discard); err != nil {
			t.Fatal(err)
		}
		if n := inFlight.Load(); n != 0 {
			t.Fatalf("%d requests of the closed-loop step still at the target after it ended", n)
		}
		// The target sees a closed connection when it reads its end: not
		// at once, but without any more load.
		for deadline := time.Now().Add(10 * time.Second); open.Load() != 0; {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections of the closed-loop step still open at the target 10 s after it ended", open.Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}
