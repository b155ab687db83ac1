package results

import (
	"math"
	"sort"

	"github.com/credhub-perf/credhub-perf/load"
)

// RequestStep is one request type's figures in a step of a mixed run
// (summary.json steps[].by_request): what SummaryStep gives for the whole
// step, for that type's requests only.
type RequestStep struct {
	Requests       int64   `json:"requests"`
	Errors         int64   `json:"errors"`
	ErrorRate      float64 `json:"error_rate"`
	Throughput     float64 `json:"throughput"`
	MeanS          float64 `json:"mean_s"`
	P50S           float64 `json:"p50_s"`
	P90S           float64 `json:"p90_s"`
	P95S           float64 `json:"p95_s"`
	P99S           float64 `json:"p99_s"`
	MaxS           float64 `json:"max_s"`
	SLOPercentileS float64 `json:"slo_percentile_s"`
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
	names := make([]string, 0, len(t.m))
	for k := range t.m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		s := t.m[k].Snapshot()
		f := RequestStep{
			Requests: s.Requests, Errors: s.Errors,
			MeanS: secs(s.Mean), P50S: secs(s.P50), P90S: secs(s.P90), P95S: secs(s.P95), P99S: secs(s.P99), MaxS: secs(s.Max),
			SLOPercentileS: secs(s.Quantile(slo.Percentile / 100)),
			SLOLatencyS:    slo.LatencyFor(k),
		}
		if stepS > 0 {
			f.Throughput = math.Round(float64(s.Requests)/stepS*1000) / 1000
		}
		if s.Requests > 0 {
			f.ErrorRate = float64(s.Errors) / float64(s.Requests)
		}
		f.MeetsSLO = s.Requests > 0 && f.ErrorRate <= slo.MaxErrorRate && f.SLOPercentileS <= f.SLOLatencyS
		out[k] = f
	}
	return out
}
