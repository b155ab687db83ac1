package load

import (
	"sync"
	"sync/atomic"
	"time"
)

// resultBuffer bounds the results queued between workers and the
// collector, so memory stays flat however many requests a run sends.
const resultBuffer = 4096

// recorder records a step's results to its sink one at a time, in the
// order the requests ended, stamped with the step's figures.
//
// A worker records its own result when none is queued and no one else is
// recording: the usual case on a tester that keeps up. Handing every
// result to a collector goroutine instead woke that goroutine once per
// request (a channel send, a park and a pass of the scheduler), some 3 %
// of the lean client's CPU per request against a null server. Otherwise
// the result is queued for the collector goroutine, which records the
// queue in order; while anything is queued every result joins the queue,
// so none overtakes an earlier one. A sink that blocks (a CSV flush to a
// slow disk) thus holds up the one worker recording at that moment, or
// the collector, never the other workers, until resultBuffer results wait.
type recorder struct {
	mu     sync.Mutex   // held while a result is recorded
	queued atomic.Int64 // results sent to ch and not yet recorded
	ch     chan Result
	sink   Sink
	step   Step
	// runStart: the origin of Offset, set before the first result comes.
	runStart time.Time
}

// newRecorder starts the collector goroutine of a step's results to
// sink; the returned channel closes once close has drained the queue.
func newRecorder(s Step, sink Sink) (*recorder, <-chan struct{}) {
	rc := &recorder{ch: make(chan Result, resultBuffer), sink: sink, step: s}
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		var r Result // one heap cell for the whole step
		for r = range rc.ch {
			rc.mu.Lock()
			rc.record(&r)
			rc.queued.Add(-1)
			rc.mu.Unlock()
		}
	}()
	return rc, collected
}

// add records r, or queues it when results are queued or being recorded.
// r is not kept.
func (rc *recorder) add(r *Result) {
	if rc.queued.Load() == 0 && rc.mu.TryLock() {
		if rc.queued.Load() == 0 {
			rc.record(r)
			rc.mu.Unlock()
			return
		}
		rc.mu.Unlock()
	}
	rc.queued.Add(1)
	rc.ch <- *r
}

// record stamps r with the step's figures and hands it to the sink (under
// mu).
func (rc *recorder) record(r *Result) {
	r.Offset = r.Start.Sub(rc.runStart)
	r.Concurrency = rc.step.Concurrency
	r.Rate = rc.step.Rate
	rc.sink.Record(r)
}

// close ends the queue once every worker has returned.
func (rc *recorder) close() { close(rc.ch) }
