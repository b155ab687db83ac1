package ramp

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

// warmupWindow is the length of the windows an auto warm-up measures.
const warmupWindow = 5 * time.Second

// The auto warm-up judges a trend, not an agreement between neighbours: a
// JVM's JIT keeps compiling rarer paths for minutes, each window a little
// faster than the last, and neighbouring windows that differ by 1-2 %
// agreed while the target still got 10-20 % faster over the next minute
// (CredHub on a busy host took about 2.5 minutes to finish). So over the
// last 12 to 48 windows it fits a least-squares line to
// log(throughput) and to log(p50) against time and reads the slopes, in
// relative change per minute, with their confidence intervals from the
// fit's own residuals (so a busy host's noisy windows widen them instead
// of passing for a trend or for its absence):
//   - steady: for some fit over the last 12, 18, 24, 36 or 48 windows (1 to
//     4 minutes) both 95 % intervals lie within ±trendTol (5 %/min): any
//     change left is smaller than that. Longer fits let a steady but
//     noisy target be recognised (the interval narrows as the span grows:
//     ±15 % noise per window gives ±27 %/min over 1 minute, ±5 %/min over
//     3); shorter ones let a target that has just stopped improving be
//     recognised without waiting for its improving windows to leave a
//     long fit;
//   - still improving at X %/min: over the last 2 minutes (or all the
//     windows there are) throughput rises, or p50 falls, by more than
//     trendTol a minute, and a one-sided interval at 1 - 3.4e-6 (zStrict)
//     excludes no change: far stricter than steady's, because the judge
//     looks again at every window and a noisy steady target must not read
//     as a warming one (only the label depends on it: what ends the
//     warm-up is steady, which the interval's width guards);
//   - getting slower at X %/min: the same the other way (a target that
//     degrades under load: a growing database, a leak);
//   - too noisy to tell: none of these.
//
// Fewer than trendMin windows (a minute) never judge.
const (
	trendMin   = 12
	trendTol   = 0.05
	trendLabel = 24 // windows of the fit that says which way a target moves
)

// trendFits are the fit lengths, in windows, steady is looked for in.
var trendFits = []int{12, 18, 24, 36, 48}

// Warm-up verdicts.
const (
	verdictEarly     = "early"
	verdictSteady    = "steady"
	verdictImproving = "improving"
	verdictSlower    = "slower"
	verdictNoisy     = "noisy"
)

// warmupWindowStats is what the judge knows of a window: when it ran
// (its middle, from the warm-up's start), its request count, throughput
// and p50.
type warmupWindowStats struct {
	at         time.Duration
	requests   int64
	throughput float64
	p50        time.Duration
}

// windowStats takes a window's figures from the engine's snapshot.
func windowStats(at time.Duration, s results.Snapshot) warmupWindowStats {
	return warmupWindowStats{at: at, requests: s.Requests, throughput: s.Throughput, p50: s.P50}
}

// slope is a fitted trend: relative change per minute (log units), with
// the half-widths of its 95 % confidence interval and of the strict one
// (zStrict) that names a direction.
type slope struct {
	b, h95, hStrict float64
}

// Normal quantiles of the intervals: 95 % two-sided, and a one-sided
// 1 - 3.4e-6. Why so strict for a direction: the judge looks again after
// every window (up to 60 looks in a 5-minute warm-up, 4 one-sided tests
// each), and at 99.9 % a flat target with ±15 % noise a window read as
// improving or getting slower at some look in 5 % of 1,500 seeded series.
// A real JVM warm-up, 10-20 %/min or more, stays far past it.
const (
	z95     = 1.959964
	zStrict = 4.5
)

// fitSlope fits log(y) = a + b·t (t in minutes) by least squares; ok is
// false when the figures cannot be fitted (fewer than 3 windows, a zero
// figure, all windows at one time).
func fitSlope(ws []warmupWindowStats, y func(w warmupWindowStats) float64) (slope, bool) {
	n := len(ws)
	if n < 3 {
		return slope{}, false
	}
	var mx, my float64
	xs, ys := make([]float64, n), make([]float64, n)
	for i, w := range ws {
		v := y(w)
		if !(v > 0) || math.IsInf(v, 0) {
			return slope{}, false
		}
		xs[i], ys[i] = w.at.Minutes(), math.Log(v)
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx <= 0 {
		return slope{}, false
	}
	b := sxy / sxx
	var rss float64
	for i := range xs {
		r := ys[i] - my - b*(xs[i]-mx)
		rss += r * r
	}
	df := float64(n - 2)
	se := math.Sqrt(rss / df / sxx)
	return slope{b: b, h95: tQuantile(z95, df) * se, hStrict: tQuantile(zStrict, df) * se}, true
}

// tQuantile is Student's t quantile for df degrees of freedom at the
// probability whose normal quantile is z, by the Cornish-Fisher expansion:
// within 0.3 % of the exact value at z95 from 10 degrees of freedom on
// (the fits here have 10 to 46), a few % under it at zStrict.
func tQuantile(z, df float64) float64 {
	z3, z5, z7 := z*z*z, z*z*z*z*z, z*z*z*z*z*z*z
	return z + (z3+z)/(4*df) + (5*z5+16*z3+3*z)/(96*df*df) + (3*z7+19*z5+17*z3-15*z)/(384*df*df*df)
}

// pctPerMin formats a log slope as a relative change per minute.
func pctPerMin(b float64) string {
	v := 100 * math.Expm1(b)
	if math.Abs(v) < 0.05 {
		v = 0 // no "-0.0"
	}
	return fmt.Sprintf("%+.1f %%/min", v)
}

// warmupVerdict is the judge's answer on a series of windows.
type warmupVerdict struct {
	Kind string // verdict* constants
	Text string
}

// judgeWarmup judges the windows so far (oldest first): a pure function,
// so tests feed it any series.
func judgeWarmup(ws []warmupWindowStats) warmupVerdict {
	if len(ws) < trendMin {
		return warmupVerdict{verdictEarly, fmt.Sprintf("%d of the %d windows a trend needs", len(ws), trendMin)}
	}
	tput := func(w warmupWindowStats) float64 { return w.throughput }
	p50 := func(w warmupWindowStats) float64 { return float64(w.p50) }
	span := func(k int) string {
		return (ws[len(ws)-1].at - ws[len(ws)-k].at + warmupWindow).Round(time.Second).String()
	}
	var widest string
	for _, k := range trendFits {
		if k > len(ws) {
			break
		}
		last := ws[len(ws)-k:]
		t, ok1 := fitSlope(last, tput)
		l, ok2 := fitSlope(last, p50)
		if !ok1 || !ok2 {
			return warmupVerdict{verdictNoisy, "too noisy to tell: a window without responses"}
		}
		within := func(s slope) bool { return s.b-s.h95 >= -trendTol && s.b+s.h95 <= trendTol }
		if within(t) && within(l) {
			return warmupVerdict{verdictSteady, fmt.Sprintf("steady: over the last %s throughput %s (95 %% interval %s..%s) and p50 %s (%s..%s), within ±%.0f %%/min",
				span(k), pctPerMin(t.b), pctPerMin(t.b-t.h95), pctPerMin(t.b+t.h95), pctPerMin(l.b), pctPerMin(l.b-l.h95), pctPerMin(l.b+l.h95), 100*trendTol)}
		}
		widest = fmt.Sprintf("over the last %s the 95 %% interval of throughput's change is %s..%s and of p50's %s..%s, wider than ±%.0f %%/min",
			span(k), pctPerMin(t.b-t.h95), pctPerMin(t.b+t.h95), pctPerMin(l.b-l.h95), pctPerMin(l.b+l.h95), 100*trendTol)
	}
	// Not steady: which way, if any, judged on one fit (the last two
	// minutes, or all there is), at the stricter level.
	k := min(len(ws), trendLabel)
	last := ws[len(ws)-k:]
	t, _ := fitSlope(last, tput)
	l, _ := fitSlope(last, p50)
	// Improvement per minute: throughput up, p50 down.
	gt, gl := t.b, -l.b
	better := func(g, h float64) bool { return g > trendTol && g-h > 0 }
	worse := func(g, h float64) bool { return g < -trendTol && g+h < 0 }
	figs := fmt.Sprintf("throughput %s, p50 %s over the last %s", pctPerMin(t.b), pctPerMin(l.b), span(k))
	switch {
	case better(gt, t.hStrict) || better(gl, l.hStrict):
		return warmupVerdict{verdictImproving, fmt.Sprintf("still improving at %.1f %%/min (%s)", 100*math.Expm1(math.Max(gt, gl)), figs)}
	case worse(gt, t.hStrict) || worse(gl, l.hStrict):
		return warmupVerdict{verdictSlower, fmt.Sprintf("getting slower at %.1f %%/min (%s)", -100*math.Expm1(math.Min(gt, gl)), figs)}
	}
	return warmupVerdict{verdictNoisy, "too noisy to tell: " + widest}
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
		r.log.Printf("warning: warm-up off (warmup.run: 0): the first steps may measure a cold target (a JVM still compiling); the capacity is labelled so unless its steps show the target warm (set warmup.run: auto)")
		return nil
	}
	limit := fixed
	if mode == config.WarmupAuto {
		limit = r.c.Warmup.Max.D()
	}
	lockstep := !s.start.IsZero()
	what := loadLabel(base)
	r.log.Printf("warm-up: %s, %s", what, map[string]string{config.WarmupFixed: "for " + limit.String(), config.WarmupAuto: "until steady, at most " + limit.String()}[mode])
	var windows []warmupWindowStats
	verdict := warmupVerdict{Kind: verdictEarly}
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
		// The window's middle, on the warm-up's clock: a short last
		// window (at warmup.max) sits where it ran.
		end := r.o.Clock.Now().Sub(began)
		windows = append(windows, windowStats(end-st.Duration/2, snap))
		if len(windows) > trendFits[len(trendFits)-1] {
			windows = windows[1:]
		}
		if mode == config.WarmupAuto && !w.Steady {
			verdict = judgeWarmup(windows)
			w.Verdict = verdict.Kind
		}
		r.log.Progress(fmt.Sprintf("warm-up: %s in, %.1f req/s, p50 %s (%s)", end.Round(time.Second), snap.Throughput, fmtMS(snap.P50), verdictShort(verdict)))
		if mode == config.WarmupAuto && verdict.Kind == verdictSteady && !w.Steady {
			w.Steady = true
			w.Reason = fmt.Sprintf("steady after %s: %s", end.Round(time.Second), strings.TrimPrefix(verdict.Text, "steady: "))
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
		w.Reason = fmt.Sprintf("not steady by warmup.max %s: %s", limit, verdict.Text)
		warn := w.Warning()
		s.sum.Warnings = append(s.sum.Warnings, warn)
		r.log.Printf("WARNING: %s", warn)
		return nil
	}
	r.log.Printf("warm-up done: %d requests in %.0f s (%s)", w.Requests, w.DurationS, w.Reason)
	return nil
}

// verdictShort is the progress line's word on the trend so far.
func verdictShort(v warmupVerdict) string {
	switch v.Kind {
	case verdictEarly:
		return "judging the trend after " + (trendMin * warmupWindow).String()
	case verdictImproving, verdictSlower:
		if i := strings.Index(v.Text, " ("); i > 0 {
			return v.Text[:i]
		}
	case verdictNoisy:
		return "too noisy to tell yet"
	}
	return v.Text
}
