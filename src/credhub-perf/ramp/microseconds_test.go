package ramp

import (
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

// summary.json must equal a recomputation from the CSV, which holds every
// duration to the microsecond: the sched-lag mean of requests whose lags
// end in 0.5-0.9 µs is a microsecond off unless each lag is rounded first.
func TestMicrosecondsRoundsWhatTheCSVRounds(t *testing.T) {
	exact, rounded := results.NewStats(), results.NewStats()
	sink := microseconds{exact}
	for i := range 100 {
		r := load.Result{Offset: time.Duration(i) * time.Millisecond, Latency: 3*time.Millisecond + 700, SchedLag: 600*time.Microsecond + 700}
		sink.Record(&r)
		c := r
		c.Latency, c.Offset, c.SchedLag = 3*time.Millisecond+time.Microsecond, time.Duration(i)*time.Millisecond, 601*time.Microsecond
		rounded.Record(&c)
	}
	a, b := exact.Snapshot(), rounded.Snapshot()
	if a.SchedLagMean != b.SchedLagMean || a.Mean != b.Mean || a.SchedLagMax != b.SchedLagMax {
		t.Fatalf("through microseconds: sched-lag mean %v max %v, latency mean %v; from the CSV's values: %v %v %v",
			a.SchedLagMean, a.SchedLagMax, a.Mean, b.SchedLagMean, b.SchedLagMax, b.Mean)
	}
}
