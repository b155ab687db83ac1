package api

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-sim/internal/capacity"
)

// coresPlateaus are the plateaus of plateauHarness's sim by -cores: reads
// use every core's workers, writes one at a time per instance.
var coresPlateaus = []coresPlateau{
	{3, 300, 100},
	{1, 100, 100},
}

type coresPlateau struct {
	cores            int
	reads, writeRate float64
}

// plateauLoad is one closed loop of a plateau test and its known rate.
type plateauLoad struct {
	name   string
	newReq func(*harness) *http.Request
	want   float64
}

// loads: every client gets, then every client sets.
func (p coresPlateau) loads() []plateauLoad {
	return []plateauLoad{{"get", getOne, p.reads}, {"set", setOne, p.writeRate}}
}

// plateauHarness is the sim of the plateau tests: -workers 2 -cores cores
// -service-time 20ms fixed, one credential to read; on clk when not nil.
func plateauHarness(t *testing.T, cores int, clk *capacity.VirtualClock) *harness {
	h := newHarness(t, dbURL(t, "sqlite-memory"), func(c *Config) {
		c.Workers, c.Cores, c.ServiceTime = 2, cores, 20*time.Millisecond
		if clk != nil {
			c.Clock = clk
		}
	})
	h.set("/cap/one", "json", map[string]any{"k": "v"})
	return h
}

// TestCoresPlateaus checks the known answers over real mTLS, on a virtual
// clock (exact, however slow the machine): -workers 2 -service-time 20ms
// fixed with 12 closed-loop clients levels at 2*3/20ms = 300 reads/s with
// -cores 3 but 2/20ms = 100 sets/s, as one write at a time per instance;
// with -cores 1 reads level at 100/s too.
func TestCoresPlateaus(t *testing.T) {
	for _, tc := range coresPlateaus {
		t.Run(fmt.Sprintf("cores=%d", tc.cores), func(t *testing.T) {
			clk := capacity.NewVirtualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			h := plateauHarness(t, tc.cores, clk)
			for _, load := range tc.loads() {
				rate, lat := closedLoop(t, h, clk, 12, 1500*time.Millisecond, load.newReq)
				t.Logf("12 %s clients: %.0f req/s, mean latency %v", load.name, rate, lat)
				if rate != load.want {
					t.Errorf("12 %s clients: %.0f req/s, want %.0f", load.name, rate, load.want)
				}
			}
		})
	}
	// Mixed: 6 writers keep both write locks busy and 6 readers the other
	// cores; all 2*3 cores stay busy, so the total is the read plateau.
	// Writes get at most their own plateau, less when a read takes the
	// core a finished write freed (as CPU-bound reads delay a JVM's writer),
	// and reads at least the 4 cores the writes leave them.
	t.Run("mixed", func(t *testing.T) {
		clk := capacity.NewVirtualClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		h := plateauHarness(t, 3, clk)
		r := closedLoops(t, h, clk, 1500*time.Millisecond, load{6, getOne}, load{6, setOne})
		reads, writes := r[0].rate, r[1].rate
		t.Logf("6 get + 6 set clients: %.0f gets/s, %.0f sets/s", reads, writes)
		switch total := reads + writes; {
		case total != 300:
			t.Errorf("%.0f req/s in all, want 300", total)
		case writes > 100 || writes < 0.4*100:
			t.Errorf("%.0f sets/s, want at most 100 and not starved", writes)
		case reads < 200:
			t.Errorf("%.0f gets/s, want at least 200 (4 cores)", reads)
		}
	})
}

// TestCoresPlateausRealTime: TestCoresPlateaus's known answers in real
// time, where the model's virtual clocks must pay back timer overshoot.
// They measure the machine too (closed-loop clients starved of CPU cannot
// offer the load), so scripts/test-all runs them alone, on a quiet
// machine, and not under -race.
func TestCoresPlateausRealTime(t *testing.T) {
	quietMachine(t)
	if raceEnabled {
		t.Skip("throughput in real time: under -race it measures the race detector (TestCoresPlateaus checks the plateaus on a virtual clock)")
	}
	for _, tc := range coresPlateaus {
		t.Run(fmt.Sprintf("cores=%d", tc.cores), func(t *testing.T) {
			h := plateauHarness(t, tc.cores, nil)
			for _, load := range tc.loads() {
				var lastErr string
				for attempt := 1; attempt <= 3; attempt++ {
					rate, lat := closedLoop(t, h, nil, 12, 1500*time.Millisecond, load.newReq)
					t.Logf("attempt %d: 12 %s clients: %.0f req/s, mean latency %v", attempt, load.name, rate, lat)
					if rate >= 0.85*load.want && rate <= 1.15*load.want {
						lastErr = ""
						break
					}
					lastErr = fmt.Sprintf("12 %s clients: %.0f req/s, want %.0f ± 15%%", load.name, rate, load.want)
				}
				if lastErr != "" {
					t.Error(lastErr)
				}
			}
		})
	}
	// Mixed: 6 writers keep both write locks busy and 6 readers the other
	// cores; all 2*3 cores stay busy, so the total is the read plateau.
	// Writes get at most their own plateau, less when a read takes the
	// core a finished write freed (as CPU-bound reads delay a JVM's writer),
	// and reads at least the 4 cores the writes leave them.
	t.Run("mixed", func(t *testing.T) {
		h := plateauHarness(t, 3, nil)
		var lastErr string
		for attempt := 1; attempt <= 3; attempt++ {
			r := closedLoops(t, h, nil, 1500*time.Millisecond, load{6, getOne}, load{6, setOne})
			reads, writes := r[0].rate, r[1].rate
			t.Logf("attempt %d: 6 get + 6 set clients: %.0f gets/s, %.0f sets/s", attempt, reads, writes)
			switch total := reads + writes; {
			case total < 0.85*300 || total > 1.15*300:
				lastErr = fmt.Sprintf("%.0f req/s in all, want 300 ± 15%%", total)
			case writes > 1.15*100 || writes < 0.4*100:
				lastErr = fmt.Sprintf("%.0f sets/s, want at most 100 and not starved", writes)
			case reads < 0.85*200:
				lastErr = fmt.Sprintf("%.0f gets/s, want at least 200 (4 cores)", reads)
			default:
				return
			}
		}
		t.Error(lastErr)
	})
}
