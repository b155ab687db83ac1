package ramp

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
)

// series makes a warm-up's windows: window i (5 s each, from the start)
// has throughput tput(t) and p50 p50(t) at its middle t, each times its
// own noise factor.
func series(n int, tput func(t time.Duration) float64, p50 func(t time.Duration) time.Duration, noise func() (float64, float64)) []warmupWindowStats {
	ws := make([]warmupWindowStats, n)
	for i := range ws {
		at := time.Duration(i)*warmupWindow + warmupWindow/2
		nt, nl := noise()
		ws[i] = warmupWindowStats{at: at, requests: 1000, throughput: tput(at) * nt, p50: time.Duration(float64(p50(at)) * nl)}
	}
	return ws
}

// gaussian is multiplicative noise of relative standard deviation sd.
func gaussian(rng *rand.Rand, sd float64) func() (float64, float64) {
	return func() (float64, float64) { return 1 + sd*rng.NormFloat64(), 1 + sd*rng.NormFloat64() }
}

// judgeEach judges the series after each window, as the warm-up does
// (the judge keeps the last 48 windows).
func judgeEach(ws []warmupWindowStats) []warmupVerdict {
	out := make([]warmupVerdict, len(ws))
	for i := range ws {
		out[i] = judgeWarmup(ws[max(0, i+1-trendFits[len(trendFits)-1]) : i+1])
	}
	return out
}

func TestTQuantile(t *testing.T) {
	// Exact values: 0.975 and 0.9995 quantiles (z 3.290527).
	for _, c := range []struct{ z, df, want float64 }{
		{z95, 10, 2.228}, {z95, 16, 2.120}, {z95, 46, 2.013}, {3.290527, 10, 4.587}, {3.290527, 46, 3.515},
	} {
		if got := tQuantile(c.z, c.df); math.Abs(got-c.want)/c.want > 0.003 {
			t.Errorf("t(z %g, %g) = %.4f, want %.3f", c.z, c.df, got, c.want)
		}
	}
}

// A target that keeps getting faster slowly (8 %/min in throughput and
// p50, well past the 5 %/min tolerance) for 2 minutes, then stays flat, is
// never steady before it stops improving, and is within 2 minutes after;
// from 90 s on it reads as still improving, whatever the seed (1.5 % noise
// a window, a quiet host).
func TestWarmupSlowImproverNotSteadyEarly(t *testing.T) {
	const stop = 2 * time.Minute
	rate := math.Log(1.08) // per minute
	gain := func(at time.Duration) float64 { return math.Exp(rate * math.Min(at.Minutes(), stop.Minutes())) }
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		ws := series(60, func(at time.Duration) float64 { return 1000 * gain(at) },
			func(at time.Duration) time.Duration { return time.Duration(float64(8*time.Millisecond) / gain(at)) }, gaussian(rng, 0.015))
		steadyAt := time.Duration(0)
		for i, v := range judgeEach(ws) {
			end := ws[i].at + warmupWindow/2
			if v.Kind == verdictSteady && steadyAt == 0 {
				steadyAt = end
			}
			if end <= stop && v.Kind == verdictSteady {
				t.Fatalf("seed %d: steady at %s, while it still improved 8 %%/min: %s", seed, end, v.Text)
			}
			// Its direction is named once a 90 s fit holds it at the strict
			// level (before, it may be too noisy to tell).
			if end >= 90*time.Second && end <= stop && v.Kind != verdictImproving {
				t.Errorf("seed %d at %s: %s, want still improving", seed, end, v.Text)
			}
		}
		if steadyAt == 0 || steadyAt > stop+2*time.Minute {
			t.Errorf("seed %d: steady at %s, want within 2 minutes of the stop", seed, steadyAt)
		}
	}
}

// credhub-sim's warm-up curve (service time 1 + (K-1)(1-t/D)^2 times the
// warm one, K 5 as CredHub's p50 19.6 ms → 4 ms) stretched over 2.5
// minutes, as CredHub's JIT on a busy host: never steady before D.
func TestWarmupJVMCurveNotSteadyBeforeItEnds(t *testing.T) {
	const d = 150 * time.Second
	f := func(at time.Duration) float64 {
		if at >= d {
			return 1
		}
		left := 1 - at.Seconds()/d.Seconds()
		return 1 + 4*left*left
	}
	for seed := int64(1); seed <= 10; seed++ {
		rng := rand.New(rand.NewSource(seed))
		ws := series(60, func(at time.Duration) float64 { return 1000 / f(at) },
			func(at time.Duration) time.Duration { return time.Duration(float64(4*time.Millisecond) * f(at)) }, gaussian(rng, 0.02))
		steadyAt := time.Duration(0)
		for i, v := range judgeEach(ws) {
			if v.Kind == verdictSteady {
				steadyAt = ws[i].at + warmupWindow/2
				break
			}
		}
		if steadyAt <= d || steadyAt > d+2*time.Minute {
			t.Errorf("seed %d: steady at %s, want after the curve ends (%s) and within 2 minutes of it", seed, steadyAt, d)
		}
	}
}

// A steady target on a busy host: ±10-15 % noise a window, independent
// in throughput and p50 (uniform ±15 %, normal with 10 % sd) or tied as in
// a closed loop (12 % sd). Over 5 minutes it is judged steady or too noisy
// to tell, never improving or slower, at every window, whatever the seed.
func TestWarmupNoisySteadyNeverImproving(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		uniform := func() (float64, float64) { return 1 + 0.3*(rng.Float64()-0.5), 1 + 0.3*(rng.Float64()-0.5) }
		// Closed loop on a busy host: a window whose requests were slower
		// sent fewer of them.
		closed := func() (float64, float64) { n := 1 + 0.12*rng.NormFloat64(); return 1 / n, n }
		for name, noise := range map[string]func() (float64, float64){"uniform 15 %": uniform, "normal 10 %": gaussian(rng, 0.10), "closed loop 12 %": closed} {
			ws := series(60, func(time.Duration) float64 { return 900 }, func(time.Duration) time.Duration { return 5 * time.Millisecond }, noise)
			for i, v := range judgeEach(ws) {
				switch v.Kind {
				case verdictSteady, verdictNoisy:
				case verdictEarly:
					if i+1 >= trendMin {
						t.Fatalf("%s seed %d window %d: early", name, seed, i)
					}
				default:
					t.Fatalf("%s seed %d window %d: %s", name, seed, i, v.Text)
				}
			}
		}
	}
}

// The verdicts' edges: under a minute nothing is judged; a quiet flat
// target is steady as soon as it is; a target losing 10 %/min reads as
// getting slower; a window without responses is never steady.
func TestWarmupJudgeEdges(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	flat := series(trendMin, func(time.Duration) float64 { return 500 }, func(time.Duration) time.Duration { return 4 * time.Millisecond }, gaussian(rng, 0.01))
	if v := judgeWarmup(flat[:trendMin-1]); v.Kind != verdictEarly {
		t.Fatalf("11 windows: %+v", v)
	}
	if v := judgeWarmup(flat); v.Kind != verdictSteady || !strings.HasPrefix(v.Text, "steady: over the last 1m0s throughput") {
		t.Fatalf("a quiet flat minute: %+v", v)
	}
	slower := series(trendMin, func(at time.Duration) float64 { return 500 * math.Pow(0.9, at.Minutes()) },
		func(at time.Duration) time.Duration {
			return time.Duration(float64(4*time.Millisecond) / math.Pow(0.9, at.Minutes()))
		}, gaussian(rng, 0.01))
	if v := judgeWarmup(slower); v.Kind != verdictSlower || !strings.HasPrefix(v.Text, "getting slower at 10.") {
		t.Fatalf("losing 10 %%/min: %+v", v)
	}
	down := append([]warmupWindowStats(nil), flat...)
	down[5].requests, down[5].throughput, down[5].p50 = 0, 0, 0
	if v := judgeWarmup(down); v.Kind != verdictNoisy {
		t.Fatalf("a window without responses: %+v", v)
	}
}

func TestWarmupRunParsing(t *testing.T) {
	for _, tc := range []struct {
		in   string
		mode string
		d    time.Duration
	}{
		{"auto", config.WarmupAuto, 0}, {"AUTO", config.WarmupAuto, 0}, {"0", config.WarmupOff, 0}, {"0s", config.WarmupOff, 0},
		{"90s", config.WarmupFixed, 90 * time.Second}, {"2.5", config.WarmupFixed, 2500 * time.Millisecond},
	} {
		mode, d, err := config.WarmupConfig{Run: tc.in}.ParseRun()
		if err != nil || mode != tc.mode || d != tc.d {
			t.Errorf("%q: %s %v %v", tc.in, mode, d, err)
		}
	}
	for _, bad := range []string{"", "yes", "-5s", "nan", "auto30s"} {
		if _, _, err := (config.WarmupConfig{Run: bad}).ParseRun(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
