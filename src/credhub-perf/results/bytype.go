package results

import (
	"github.com/credhub-perf/credhub-perf/load"
)

// Tally counts a set of requests: a step's, or one request type's in a
// step.
type Tally struct {
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	ErrorRate float64 `json:"error_rate"`
}

// Latencies are a set of requests' latency figures, in seconds.
// SLOPercentileS is the latency at the SLO's percentile.
type Latencies struct {
	MeanS          float64 `json:"mean_s"`
	P50S           float64 `json:"p50_s"`
	P90S           float64 `json:"p90_s"`
	P95S           float64 `json:"p95_s"`
	P99S           float64 `json:"p99_s"`
	MaxS           float64 `json:"max_s"`
	SLOPercentileS float64 `json:"slo_percentile_s"`
}

// figures gives a snapshot's tally and latencies, and whether they meet
// the SLO with the latency bound `bound` (the run's, or a request type's
// own). A step and each type of a mix step are judged by this one rule.
func figures(s Snapshot, slo SLO, bound float64) (Tally, Latencies, bool) {
	t := Tally{Requests: s.Requests, Errors: s.Errors}
	if s.Requests > 0 {
		t.ErrorRate = float64(s.Errors) / float64(s.Requests)
	}
	l := Latencies{
		MeanS: secs(s.Mean), P50S: secs(s.P50), P90S: secs(s.P90), P95S: secs(s.P95), P99S: secs(s.P99), MaxS: secs(s.Max),
		SLOPercentileS: secs(s.Quantile(slo.Percentile / 100)),
	}
	meets := s.Requests > 0 && t.ErrorRate <= slo.MaxErrorRate && l.SLOPercentileS <= bound
	return t, l, meets
}

// RequestStep is one request type's figures in a step of a mixed run
// (summary.json steps[].by_request): what SummaryStep gives for the whole
// step, for that type's requests only.
type RequestStep struct {
	Tally
	Throughput float64 `json:"throughput"`
	Latencies
	// SLOLatencyS is the type's bound (slo.latency_<type>, else the run's).
	SLOLatencyS float64 `json:"slo_latency_s"`
	MeetsSLO    bool    `json:"meets_slo"`
}

// TypeStats keeps one Stats per request type (Result.Request); rows
// without a type are left out. A load.Sink.
type TypeStats struct{ m map[string]*Stats }

func NewTypeStats() *TypeStats { return &TypeStats{m: map[string]*Stats{}} }

func (t *TypeStats) Record(r *load.Result) {
	if r.Request == "" {
		return
	}
	s := t.m[r.Request]
	if s == nil {
		s = NewStats()
		t.m[r.Request] = s
	}
	s.Record(r)
}

// Merge adds o's requests (another tester's, same step).
func (t *TypeStats) Merge(o *TypeStats) {
	for k, s := range o.m {
		if mine := t.m[k]; mine != nil {
			mine.Merge(s)
		} else {
			c := NewStats()
			c.Merge(s)
			t.m[k] = c
		}
	}
}

// Figures gives each type's figures when the step held more than one type
// (a mix), nil otherwise: a single-type step's figures are the step's own.
// Throughput is the type's requests over the step's duration (stepS), so
// the types' throughputs add up to the step's.
func (t *TypeStats) Figures(stepS float64, slo SLO) map[string]RequestStep {
	if len(t.m) < 2 {
		return nil
	}
	out := make(map[string]RequestStep, len(t.m))
	for k, st := range t.m {
		f := RequestStep{SLOLatencyS: slo.LatencyFor(k)}
		s := st.Snapshot()
		f.Tally, f.Latencies, f.MeetsSLO = figures(s, slo, f.SLOLatencyS)
		if stepS > 0 {
			f.Throughput = round3(float64(s.Requests) / stepS)
		}
		out[k] = f
	}
	return out
}
