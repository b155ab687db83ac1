package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// summary.json holds the no-capacity reason summary.txt prints, so a
// reader needs no credhub-perf to learn it; with a capacity the key is
// still written, empty, which tells a current summary.json from an older
// one.
func TestSummaryJSONHoldsTheNoCapacityReason(t *testing.T) {
	slo := SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}
	for _, c := range []struct {
		warmup *Warmup
		want   string
	}{
		{&Warmup{Mode: "off", Reason: "off (warmup.run: 0)"},
			"unknown: 3 of 3 steps met the SLO but none counts: 3 too short to judge steady, and the run warm-up was off"},
		{&Warmup{Mode: "auto", Steady: true, Reason: "steady after 15s"}, ""},
	} {
		dir := writeShortSteps(t, c.warmup)
		sum, err := SummarizeDir(dir, slo)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatal(err)
		}
		got, ok := raw["no_capacity_reason"]
		if !ok || got != c.want || sum.NoCapacityReason() != c.want {
			t.Errorf("warm-up %s: summary.json no_capacity_reason %q (present %v), NoCapacityReason %q, want %q",
				c.warmup.Mode, got, ok, sum.NoCapacityReason(), c.want)
		}
		if (c.want == "") != (sum.MaxThroughputAtSLO != nil) {
			t.Errorf("warm-up %s: capacity %v with reason %q", c.warmup.Mode, sum.MaxThroughputAtSLO, c.want)
		}
	}
}
