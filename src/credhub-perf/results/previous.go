package results

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// A target can become slow without drifting: after a cleanup and re-seed,
// PostgreSQL spent 1.1-1.3 ms of CPU per get instead of 0.15 ms for 14
// minutes (sequential scans of the credential table). Every step was
// steady and passed every check; only a comparison with the run before
// showed it. So a run's summary compares its figures with the previous
// run of the same set-up in the same output directory, and warns when
// they differ by more than a run-to-run spread explains.

// PreviousCapacityChange: a capacity (to size with) that moved more than
// this share from the previous run's is a large unexplained difference.
// Runs of one set-up on a quiet target repeat within a few per cent (the
// closed loop against CredHub: 1,332 and 1,278 req/s, 4 %).
const PreviousCapacityChange = 0.20

// PreviousMedianChange: a step whose median latency moved more than this
// share (and PreviousMedianMinS) from the previous run's step at the same
// concurrency is one too: the same load on the same set-up should take
// the same time.
const PreviousMedianChange = 0.50

// PreviousMedianMinS: median changes smaller than this (seconds) are
// noise, whatever their share.
const PreviousMedianMinS = 0.0005

// PreviousRun is summary.json's `previous`: the comparison with the
// previous run of the same set-up (label, scenario, target, instances,
// testers, command, SLO) in the same output directory.
type PreviousRun struct {
	Dir       string   `json:"dir"`
	StartedAt string   `json:"started_at"`
	SizeWith  *float64 `json:"size_with"`
	// CapacityChange: (this run's size_with - the previous one's) / the
	// previous one's; null when either has none.
	CapacityChange *float64 `json:"capacity_change"`
	// MedianChange: the largest relative change of a step's median
	// latency at a concurrency both runs measured (closed loop), at
	// MedianConcurrency; null when they share none.
	MedianChange      *float64 `json:"median_change"`
	MedianConcurrency int      `json:"median_concurrency,omitempty"`
	// Warning says what moved past the thresholds ("" when nothing did);
	// it is in the summary's warnings too.
	Warning string `json:"warning,omitempty"`
}

// sameSetup: b could be compared with a, figure for figure.
func sameSetup(a, b *Meta) bool {
	inst := (a.Instances == nil) == (b.Instances == nil) && (a.Instances == nil || *a.Instances == *b.Instances)
	return inst && a.Label == b.Label && a.Scenario == b.Scenario && a.TargetURL == b.TargetURL &&
		a.Testers == b.Testers && a.Command == b.Command && a.Mode == b.Mode &&
		a.SLO.Percentile == b.SLO.Percentile && a.SLO.LatencyS == b.SLO.LatencyS
}

// FindPrevious finds, in outDir, the run directory other than dir of the
// same set-up as m that started last before it and ended ok with a
// summary.json; "" when there is none. Unreadable directories are passed
// over: a comparison is a courtesy, not a check.
func FindPrevious(outDir, dir string, m *Meta) (string, *Meta, *Summary) {
	this, err := time.Parse(time.RFC3339Nano, m.StartedAt)
	if err != nil {
		return "", nil, nil
	}
	entries, err := os.ReadDir(outDir)
	if err != nil {
		return "", nil, nil
	}
	type cand struct {
		dir   string
		start time.Time
		meta  *Meta
	}
	var cands []cand
	for _, e := range entries {
		d := filepath.Join(outDir, e.Name())
		if !e.IsDir() || filepath.Clean(d) == filepath.Clean(dir) {
			continue
		}
		pm, err := ReadMeta(d)
		if err != nil || pm.Status != "ok" || !sameSetup(m, pm) {
			continue
		}
		start, err := time.Parse(time.RFC3339Nano, pm.StartedAt)
		if err != nil || !start.Before(this) {
			continue
		}
		cands = append(cands, cand{d, start, pm})
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].start.After(cands[j].start) })
	for _, c := range cands {
		if ps, err := ReadSummary(filepath.Join(c.dir, "summary.json")); err == nil {
			return c.dir, c.meta, ps
		}
	}
	return "", nil, nil
}

// ComparePrevious sets Previous from the previous run (dir, its meta.json
// and summary.json) and adds its warning to Warnings.
func (s *Summary) ComparePrevious(dir string, pm *Meta, ps *Summary) {
	p := &PreviousRun{Dir: filepath.Base(dir), StartedAt: pm.StartedAt, SizeWith: ps.SizeWith}
	if p.SizeWith == nil && ps.OpenLoop == nil {
		// A summary written before size_with; one with a confirmation
		// whose open arrivals held at no rate has none to compare.
		p.SizeWith = ps.MaxThroughputAtSLO
	}
	if s.SizeWith != nil && p.SizeWith != nil && *p.SizeWith > 0 {
		c := round3(*s.SizeWith / *p.SizeWith - 1)
		p.CapacityChange = &c
	}
	prev := map[int]SummaryStep{}
	for _, st := range ps.Steps {
		if st.Rate == 0 && st.Requests > 0 {
			prev[st.Concurrency] = st
		}
	}
	for _, st := range s.Steps[:s.rampSteps()] {
		o, ok := prev[st.Concurrency]
		if st.Rate != 0 || st.Requests == 0 || !ok || o.P50S <= 0 || math.Abs(st.P50S-o.P50S) < PreviousMedianMinS {
			continue
		}
		if c := round3(st.P50S/o.P50S - 1); p.MedianChange == nil || math.Abs(c) > math.Abs(*p.MedianChange) {
			p.MedianChange, p.MedianConcurrency = &c, st.Concurrency
		}
	}
	var what []string
	if c := p.CapacityChange; c != nil && math.Abs(*c) > PreviousCapacityChange {
		what = append(what, fmt.Sprintf("the capacity to size with is %.1f req/s, %+.0f %% from its %.1f req/s", *s.SizeWith, 100**c, *p.SizeWith))
	}
	if c := p.MedianChange; c != nil && math.Abs(*c) > PreviousMedianChange {
		what = append(what, fmt.Sprintf("the median latency at concurrency %d moved %+.0f %%", p.MedianConcurrency, 100**c))
	}
	if len(what) > 0 {
		p.Warning = fmt.Sprintf("compared with the previous run of this set-up (%s, started %s): %s; nothing in the configuration explains it: check the target (its database's plans and CPU per request, a restart, other load) before trusting either run", p.Dir, pm.StartedAt, joinAnd(what))
		s.Warnings = append(s.Warnings, p.Warning)
	}
	s.Previous = p
}

func joinAnd(parts []string) string {
	if len(parts) < 2 {
		return fmt.Sprint(parts[0])
	}
	return parts[0] + ", and " + parts[1]
}
