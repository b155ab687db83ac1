package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// rampP50 is a ramp of steps at 100*c req/s whose medians are p50s
// (seconds), judged steady, within the SLO, with warm-up w.
func rampP50(w *Warmup, p50s ...float64) *Summary {
	s := &Summary{SLO: SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}, Warmup: w}
	for i, p := range p50s {
		st := headlineStep(i + 1)
		st.P50S = p
		s.Steps = append(s.Steps, st)
	}
	s.Finish()
	return s
}

// Warm-up off on a cold target (medians falling as the load rises): the
// capacity is labelled in summary.txt, the headline, summary.json's
// capacity_label and its warnings (once, however often Finish runs).
func TestColdTargetLabelled(t *testing.T) {
	s := rampP50(&Warmup{Mode: "off"}, 0.0196, 0.012, 0.006, 0.004)
	s.Finish()
	if !strings.HasPrefix(s.CapacityLabel, "warm-up off: the capacity may be a cold target's (step 1, concurrency 1, had a median of 19.60 ms, the heavier step 2, concurrency 2, 12.00 ms") {
		t.Fatalf("label %q", s.CapacityLabel)
	}
	n := 0
	for _, w := range s.Warnings {
		if w == s.CapacityLabel {
			n++
		}
	}
	if n != 1 || !strings.Contains(s.Headline, "[warm-up off: may be a cold target's]") {
		t.Fatalf("warnings %q, headline %q", s.Warnings, s.Headline)
	}
	var sb strings.Builder
	s.WriteTable(&sb)
	if !strings.Contains(sb.String(), "max throughput at SLO: 400.0 req/s [warm-up off: may be a cold target's]\n") ||
		!strings.Contains(sb.String(), "warning: "+s.CapacityLabel+"\n") {
		t.Fatalf("summary.txt:\n%s", sb.String())
	}
	b, _ := json.Marshal(s)
	if !strings.Contains(string(b), `"capacity_label":"warm-up off: the capacity may be a cold target's`) {
		t.Fatalf("summary.json: %s", b)
	}
	// Too few steps to tell: labelled too.
	if s := rampP50(&Warmup{Mode: "off"}, 0.004, 0.005); !strings.Contains(s.CapacityLabel, "2 step(s) cannot show it warm") {
		t.Fatalf("two steps: %q", s.CapacityLabel)
	}
}

// Warm-up off, but the steps show the target warm (medians rising, or
// flat within 10 %, with the load), or the warm-up ran: no label.
func TestWarmTargetNotLabelled(t *testing.T) {
	for _, s := range []*Summary{
		rampP50(&Warmup{Mode: "off"}, 0.004, 0.0038, 0.005, 0.009),
		rampP50(&Warmup{Mode: "auto", Steady: true}, 0.0196, 0.012, 0.006),
		rampP50(nil, 0.0196, 0.012, 0.006),
	} {
		if s.CapacityLabel != "" || strings.Contains(s.Headline, "cold") || len(s.Warnings) != 0 {
			t.Fatalf("label %q, headline %q, warnings %q", s.CapacityLabel, s.Headline, s.Warnings)
		}
	}
}
