package ramp

import (
	"math"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
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

func TestWarmupJudgeNoiseAndDrift(t *testing.T) {
	// 8 % apart with 50 requests a window: within the noise, so agreeing.
	if !windowsAgree(warmupWindowStats{50, 10, 100 * time.Millisecond}, warmupWindowStats{54, 10.8, 108 * time.Millisecond}) {
		t.Fatal("small windows 8 % apart do not agree")
	}
	// 8 % apart with 50,000 requests a window: a real change.
	if windowsAgree(warmupWindowStats{50000, 10000, 4 * time.Millisecond}, warmupWindowStats{54000, 10800, 4 * time.Millisecond}) {
		t.Fatal("large windows 8 % apart in throughput agree")
	}
	if windowsAgree(warmupWindowStats{50000, 10000, 4 * time.Millisecond}, warmupWindowStats{50000, 10000, 4400 * time.Microsecond}) {
		t.Fatal("large windows 10 % apart in p50 agree")
	}
	// Empty windows (target down) never agree.
	if windowsAgree(warmupWindowStats{}, warmupWindowStats{}) {
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
