package ramp

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

// warmupWindow is the length of the windows an auto warm-up compares.
const warmupWindow = 5 * time.Second

// Agreement of two consecutive warm-up windows: throughput and p50 within
// warmupAgree of each other, or within warmupNoise standard errors when the
// windows hold too few requests (or latencies too spread) to resolve 5 %
// (a slow target), so that a steady target is recognised whatever its
// speed. Three agreements in a row end an auto warm-up.
const (
	warmupAgree  = 0.05
	warmupNoise  = 3.0
	warmupAgreed = 3
)

// warmupJudge decides when consecutive windows agree; it only sees
// window figures, so tests feed it any history.
type warmupJudge struct {
	prev    *warmupWindowStats
	streak  int
	windows int
}

// warmupWindowStats is what the judge knows of a window. p50lo and p50hi
// are the window's latency quantiles at 0.5 ∓ 1/sqrt(n): the order
// statistics sqrt(n) ranks either side of the median, whose spread gives
// the median's standard error (medianSE).
type warmupWindowStats struct {
	requests     int64
	throughput   float64
	p50          time.Duration
	p50lo, p50hi time.Duration
}

// add records a window and reports whether the target is now steady.
func (j *warmupJudge) add(w warmupWindowStats) bool {
	j.windows++
	if j.prev != nil && windowsAgree(*j.prev, w) {
		j.streak++
	} else {
		j.streak = 0
	}
	j.prev = &w
	return j.streak >= warmupAgreed
}

// windowStats takes a window's figures from the engine's snapshot.
func windowStats(s results.Snapshot) warmupWindowStats {
	w := warmupWindowStats{requests: s.Requests, throughput: s.Throughput, p50: s.P50}
	if s.Requests > 0 {
		lo, hi := medianBand(s.Requests)
		w.p50lo, w.p50hi = s.Quantile(lo), s.Quantile(hi)
	}
	return w
}

// medianBand returns the quantiles 0.5 ∓ 1/sqrt(n) (clamped to [0, 1]).
func medianBand(n int64) (lo, hi float64) {
	d := 1 / math.Sqrt(float64(n))
	return math.Max(0, 0.5-d), math.Min(1, 0.5+d)
}

// medianSE is the standard error of a window's p50, relative to it,
// estimated distribution-free from the window's own latencies: the median's
// rank in a sample of n has standard deviation sqrt(n)/2, so the order
// statistics at 0.5 ∓ 1/sqrt(n) lie about ±2 standard errors from it
// whatever the latency distribution (McKean and Schrader's estimator,
// (X(n/2+sqrt n) - X(n/2-sqrt n)) / 4). A fixed 1.5/sqrt(n), right for an
// exponential spread, gave ±23 % at 750 requests a window, so a target
// with CredHub's tight warm latencies could still be getting 10-20 %
// faster a window and "agree". Order statistics rather than a bootstrap:
// the engine keeps a histogram (quantiles to 0.1 %), not the latencies,
// and two quantile look-ups cost nothing and need no random numbers. ±2
// rather than ±1 standard error: twice the ranks between the two order
// statistics, so a steadier estimate from one window.
func medianSE(w warmupWindowStats) float64 {
	return float64(w.p50hi-w.p50lo) / 4 / float64(w.p50)
}

func windowsAgree(a, b warmupWindowStats) bool {
	if a.requests == 0 || b.requests == 0 || a.throughput <= 0 || a.p50 <= 0 || b.p50 <= 0 {
		return false
	}
	na, nb := float64(a.requests), float64(b.requests)
	// Counts: Poisson standard error of the difference, relative to the
	// mean. Median: each window's own standard error (medianSE), relative
	// to a's p50.
	tputTol := math.Max(warmupAgree, warmupNoise*math.Sqrt(na+nb)/((na+nb)/2))
	seA, seB := medianSE(a), medianSE(b)*float64(b.p50)/float64(a.p50)
	p50Tol := math.Max(warmupAgree, warmupNoise*math.Hypot(seA, seB))
	dt := math.Abs(b.throughput-a.throughput) / a.throughput
	dp := math.Abs(float64(b.p50-a.p50)) / float64(a.p50)
	return dt <= tputTol && dp <= p50Tol
}

// warmupStep is the load of the run warm-up: half the ramp's largest
// concurrency (or rate, open loop) unless warmup.concurrency says.
func (r *runner) warmupStep() load.Step {
	c := r.c
	if len(c.Steps.Rates) > 0 {
		return load.Step{Concurrency: c.Steps.MaxConcurrency, Rate: c.Steps.Rates[len(c.Steps.Rates)-1] / 2}
	}
	n := c.Warmup.Concurrency
	if n == 0 {
		n = max(c.Steps.MaxConcurrency/2, 1)
	}
	return load.Step{Concurrency: n}
}

// warmup loads the target unmeasured before the first step: nothing goes
// to the CSV; meta.json's `warmup` says what was sent and how it ended.
func (s *scenarioState) warmup(ctx context.Context) error {
	r := s.r
	mode, fixed, _ := r.c.Warmup.ParseRun()
	base := r.warmupStep()
	w := &results.Warmup{Mode: mode, Concurrency: base.Concurrency, Reason: "off (warmup.run: 0)"}
	s.meta.Warmup = w
	s.sum.Warmup = w
	if mode == config.WarmupOff {
		return nil
	}
	limit := fixed
	if mode == config.WarmupAuto {
		limit = r.c.Warmup.Max.D()
	}
	lockstep := !s.start.IsZero()
	what := loadLabel(base)
	r.log.Printf("warm-up: %s, %s", what, map[string]string{config.WarmupFixed: "for " + limit.String(), config.WarmupAuto: "until steady, at most " + limit.String()}[mode])
	var judge warmupJudge
	began := r.o.Clock.Now()
	for {
		elapsed := r.o.Clock.Now().Sub(began)
		if lockstep {
			elapsed = r.o.Clock.Now().Sub(s.start)
		}
		left := limit - elapsed
		if left <= 0 || ctx.Err() != nil {
			break
		}
		st := base
		st.Duration = min(warmupWindow, left)
		if lockstep {
			st.StartAt = s.start.Add(elapsed)
		}
		stats := results.NewStats()
		s.sentAny = true
		if err := s.engine.Run(ctx, st, stats); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		snap := stats.Snapshot()
		w.Requests += snap.Requests
		w.Errors += snap.Errors
		if snap.Requests > 0 && snap.StatusCodes[0] == snap.Requests {
			return fmt.Errorf("warm-up: no request got a response from %s (%s): the target is down or unreachable", r.c.Target.URL, topError(snap))
		}
		steady := judge.add(windowStats(snap))
		r.log.Progress(fmt.Sprintf("warm-up: %s in, %.1f req/s, p50 %s (windows agreeing: %d/%d)", r.o.Clock.Now().Sub(began).Round(time.Second), snap.Throughput, fmtMS(snap.P50), min(judge.streak, warmupAgreed), warmupAgreed))
		if mode == config.WarmupAuto && steady && !w.Steady {
			w.Steady = true
			w.Reason = fmt.Sprintf("steady after %s: throughput and p50 of %d consecutive %s windows agreed", r.o.Clock.Now().Sub(began).Round(time.Second), warmupAgreed+1, warmupWindow)
			if !lockstep {
				break
			}
			w.Reason += "; kept loading to the end of warmup.max so the testers stay in step"
		}
	}
	r.log.Finish()
	w.DurationS = math.Round(r.o.Clock.Now().Sub(began).Seconds()*1000) / 1000
	switch {
	case ctx.Err() != nil:
		w.Reason = "interrupted"
		return ctx.Err()
	case mode == config.WarmupFixed:
		w.Reason = fmt.Sprintf("fixed: warmup.run %s", fixed)
	case !w.Steady:
		w.Reason = fmt.Sprintf("not steady by warmup.max %s", limit)
		warn := w.Warning()
		s.sum.Warnings = append(s.sum.Warnings, warn)
		r.log.Printf("WARNING: %s", warn)
		return nil
	}
	r.log.Printf("warm-up done: %d requests in %.0f s (%s)", w.Requests, w.DurationS, w.Reason)
	return nil
}
