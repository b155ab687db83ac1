package load

import (
	"testing"
	"time"
)

// blockingSink records Results' Latency in order; the first Record waits
// until release is closed.
type blockingSink struct {
	got     []time.Duration
	entered chan struct{}
	release chan struct{}
}

func (b *blockingSink) Record(r *Result) {
	if len(b.got) == 0 {
		close(b.entered)
		<-b.release
	}
	b.got = append(b.got, r.Latency)
}

// TestRecorderOrderWhileSinkBlocks: while one worker's result is held up
// in the sink, the others' results are queued, not held up with it, and
// every result is recorded in the order the requests ended, stamped with
// the step's figures.
func TestRecorderOrderWhileSinkBlocks(t *testing.T) {
	sink := &blockingSink{entered: make(chan struct{}), release: make(chan struct{})}
	s := Step{Concurrency: 3, Rate: 7}
	rec, collected := newRecorder(s, sink)
	start := time.Now()
	rec.runStart = start
	first := make(chan struct{})
	go func() {
		defer close(first)
		rec.add(&Result{Start: start.Add(time.Second), Latency: 1})
	}()
	<-sink.entered
	for i := 2; i <= 5; i++ {
		done := make(chan struct{})
		go func() {
			defer close(done)
			rec.add(&Result{Start: start, Latency: time.Duration(i)})
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("result %d waited for the sink held up by another worker's result", i)
		}
	}
	close(sink.release)
	<-first
	rec.close()
	<-collected
	if len(sink.got) != 5 {
		t.Fatalf("%d results recorded, want 5", len(sink.got))
	}
	for i, l := range sink.got {
		if l != time.Duration(i+1) {
			t.Fatalf("results recorded in the order %v, want 1..5", sink.got)
		}
	}
	// A result after the queue drained is recorded by its worker, stamped.
	var last Result
	rec2, collected2 := newRecorder(s, SinkFunc(func(r *Result) { last = *r }))
	rec2.runStart = start
	rec2.add(&Result{Start: start.Add(2 * time.Second)})
	if last.Offset != 2*time.Second || last.Concurrency != 3 || last.Rate != 7 {
		t.Fatalf("recorded %+v, want offset 2s, concurrency 3, rate 7", last)
	}
	rec2.close()
	<-collected2
}
