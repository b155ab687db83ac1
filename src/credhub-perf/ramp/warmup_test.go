package ramp

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

// The judge sees only window figures: a warming target (p50 falling 20 %
// per window) is not steady until three consecutive pairs agree.
func TestWarmupJudge(t *testing.T) {
	var j warmupJudge
	p50 := 20 * time.Millisecond
	steadyAt := 0
	for i := 1; i <= 12; i++ {
		if i <= 5 {
			p50 = p50 * 8 / 10
		}
		w := warmupWindowStats{requests: 5000, throughput: 1000 * float64(20*time.Millisecond) / float64(p50), p50: p50}
		if j.add(w) && steadyAt == 0 {
			steadyAt = i
		}
	}
	// Windows 5..8 are flat: agreements at 6, 7, 8.
	if steadyAt != 8 {
		t.Fatalf("steady at window %d, want 8", steadyAt)
	}
}

// window is a 5 s warm-up window of the given latencies, spread evenly
// over it, as the engine's snapshot gives it to the judge.
func window(lat []time.Duration) warmupWindowStats {
	st := results.NewStats()
	for i, d := range lat {
		st.Record(&load.Result{Offset: time.Duration(i) * warmupWindow / time.Duration(len(lat)), Latency: d, Status: 200})
	}
	return windowStats(st.Snapshot())
}

// gridWindow holds n latencies at the quantiles (i+0.5)/n of a
// distribution (inverse CDF q): its order statistics are known exactly.
func gridWindow(n int, q func(p float64) float64) warmupWindowStats {
	lat := make([]time.Duration, n)
	for i := range lat {
		lat[i] = time.Duration(q((float64(i) + 0.5) / float64(n)))
	}
	return window(lat)
}

// expQ is the inverse CDF of an exponential latency with median m.
func expQ(m time.Duration) func(float64) float64 {
	return func(p float64) float64 { return -math.Log(1-p) / math.Ln2 * float64(m) }
}

// narrowQ: a warm JVM's gets, a tight log-normal cluster (σ 0.05) around m.
func narrowQ(m time.Duration) func(float64) float64 {
	return func(p float64) float64 { return float64(m) * math.Exp(0.05*normQ(p)) }
}

// normQ is the standard normal inverse CDF (bisection on Erf: tests only).
func normQ(p float64) float64 {
	lo, hi := -10.0, 10.0
	for i := 0; i < 100; i++ {
		mid := (lo + hi) / 2
		if 0.5*(1+math.Erf(mid/math.Sqrt2)) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// The median's standard error comes from the window's own spread: known
// answers for an exponential (≈1.44/sqrt(n), what the old fixed 1.5/sqrt(n)
// assumed) and a narrow log-normal (≈1.25 σ/sqrt(n)).
func TestWarmupMedianSE(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		q    func(float64) float64
		want float64 // (Q(0.5+1/sqrt n) - Q(0.5-1/sqrt n)) / 4 / Q(0.5)
	}{
		{"exponential 750", 750, expQ(4 * time.Millisecond), 0.0527},
		// Nearest rank in 50: ranks 18, 25, 33, at quantiles 0.35, 0.49, 0.65
		// of the grid, not the continuous 0.210.
		{"exponential 50", 50, expQ(100 * time.Millisecond), 0.230},
		{"narrow 750", 750, narrowQ(4 * time.Millisecond), 0.00229},
	} {
		w := gridWindow(tc.n, tc.q)
		if got := medianSE(w); math.Abs(got-tc.want) > 0.03*tc.want+0.0005 {
			t.Errorf("%s: median SE %.4f, want %.4f (window %+v)", tc.name, got, tc.want, w)
		}
	}
}

// A narrow target still getting 10 % faster a window at 750 requests a
// window: the old fixed rule allowed ±23 % and agreed; the window's own
// spread allows 5 % (the floor), so no pair agrees until it stops.
func TestWarmupJudgeNarrowDrift(t *testing.T) {
	var j warmupJudge
	m := 8 * time.Millisecond
	for i := 1; i <= 8; i++ {
		m = m * 9 / 10
		if j.add(gridWindow(750, narrowQ(m))) || j.streak != 0 {
			t.Fatalf("window %d: a p50 falling 10 %% a window agreed (streak %d)", i, j.streak)
		}
	}
	// Then flat: agreements at the next three windows.
	for i := 1; i <= 3; i++ {
		if steady := j.add(gridWindow(750, narrowQ(m))); steady != (i == 3) {
			t.Fatalf("flat window %d: steady %v, streak %d", i, steady, j.streak)
		}
	}
}

// An exponential, steady target sampled at random (fixed seeds) at 750
// requests a window: steady within a few windows (4 is the earliest).
func TestWarmupJudgeExponentialSteady(t *testing.T) {
	worst := 0
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var j warmupJudge
		at := 0
		for i := 1; i <= 12 && at == 0; i++ {
			lat := make([]time.Duration, 750)
			for k := range lat {
				lat[k] = time.Duration(rng.ExpFloat64() / math.Ln2 * float64(4*time.Millisecond))
			}
			if j.add(window(lat)) {
				at = i
			}
		}
		if at == 0 || at > 6 {
			t.Fatalf("seed %d: steady at window %d, want 4..6", seed, at)
		}
		worst = max(worst, at)
	}
	t.Logf("steady by window %d at worst over 20 seeds", worst)
}

func TestWarmupJudgeNoiseAndDrift(t *testing.T) {
	// A slow target, 50 requests a window, exponential-like: p50 8 % apart
	// is within the noise (tolerance about ±90 %), so the windows agree.
	a, b := gridWindow(50, expQ(100*time.Millisecond)), gridWindow(54, expQ(108*time.Millisecond))
	b.throughput = a.throughput * 1.08
	if !windowsAgree(a, b) {
		t.Fatalf("small windows 8 %% apart do not agree: %+v %+v", a, b)
	}
	// 8 % apart with 50,000 requests a window: a real change.
	if windowsAgree(warmupWindowStats{requests: 50000, throughput: 10000, p50: 4 * time.Millisecond}, warmupWindowStats{requests: 54000, throughput: 10800, p50: 4 * time.Millisecond}) {
		t.Fatal("large windows 8 % apart in throughput agree")
	}
	big := gridWindow(50000, expQ(4*time.Millisecond))
	bigger := gridWindow(50000, expQ(4400*time.Microsecond))
	bigger.throughput = big.throughput
	if windowsAgree(big, bigger) {
		t.Fatal("large windows 10 % apart in p50 agree")
	}
	// Empty windows (target down) never agree.
	if windowsAgree(warmupWindowStats{}, warmupWindowStats{}) || windowsAgree(window(nil), window(nil)) {
		t.Fatal("empty windows agree")
	}
	// A slow drift that never settles is never steady.
	var j warmupJudge
	for i := 0; i < 36; i++ {
		if j.add(warmupWindowStats{requests: 20000, throughput: 4000 * math.Pow(1.07, float64(i)), p50: 5 * time.Millisecond}) {
			t.Fatalf("a throughput rising 7 %% a window judged steady at window %d", i)
		}
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
