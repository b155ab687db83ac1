package results

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ResultFiles lists the CSV files of a run directory: results.csv, or
// results-<tester>.csv, one per tester.
func ResultFiles(dir string) ([]string, error) {
	// results.csv is a single tester's file; results-<i>.csv are the testers
	// of one run. The plotter applies the same rule, so both count the same rows.
	single := filepath.Join(dir, "results.csv")
	if _, err := os.Stat(single); err == nil {
		return []string{single}, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "results-*.csv"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no results.csv or results-<tester>.csv", dir)
	}
	return files, nil
}

type stepAcc struct {
	concurrency int // this tester's; the merged step reports the sum
	rate        float64
	stats       *Stats
	steady      *Steadiness
	byType      *TypeStats
}

// SummarizeFiles recomputes a summary from CSV files. Several files are the
// per-tester files of one run: step i of every file is the same step
// (testers run the same plan in lockstep), so their requests add up, as do
// concurrency and rate.
func SummarizeFiles(files []string, slo SLO) (*Summary, error) {
	sum := &Summary{SLO: slo, Testers: len(files)}
	var merged []*stepAcc
	for fi, path := range files {
		var steps []*stepAcc
		info, err := ReadCSV(path, func(r *Row) error {
			for len(steps) <= r.Segment {
				steps = append(steps, &stepAcc{concurrency: r.Concurrency, rate: r.Rate, stats: NewStats(), steady: NewSteadiness(), byType: NewTypeStats()})
			}
			steps[r.Segment].stats.Record(&r.Result)
			steps[r.Segment].byType.Record(&r.Result)
			steps[r.Segment].steady.Record(&r.Result)
			return nil
		})
		if err != nil {
			return nil, err
		}
		sum.Sources = append(sum.Sources, filepath.Base(path))
		sum.Warnings = append(sum.Warnings, info.Warnings...)
		if !info.HasStatus {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("%s: %s format has no status or error column: failed requests were never written, error counts are unknown", filepath.Base(path), info.Format))
		}
		if fi == 0 {
			merged = steps
			continue
		}
		if len(steps) != len(merged) {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("%s has %d steps, %s has %d: merging the steps they share", filepath.Base(path), len(steps), filepath.Base(files[0]), len(merged)))
		}
		for i, st := range steps {
			if i >= len(merged) {
				merged = append(merged, st)
				continue
			}
			m := merged[i]
			m.concurrency += st.concurrency
			m.rate += st.rate
			m.stats.Merge(st.stats)
			m.steady.Merge(st.steady)
			m.byType.Merge(st.byType)
		}
	}
	for i, m := range merged {
		step := NewSummaryStep(i, m.concurrency, m.rate, m.stats.Snapshot(), slo)
		step.Judge(m.steady.Verdict())
		step.SetByRequest(m.byType.Figures(step.DurationS, slo))
		sum.Steps = append(sum.Steps, step)
	}
	sum.Finish()
	return sum, nil
}

// SummarizeDir recomputes and rewrites summary.json and summary.txt of a
// run directory from its CSV files, keeping what only the run knew (the
// stop reason, a capacity answer) from an existing summary.json.
func SummarizeDir(dir string, defaultSLO SLO) (*Summary, error) {
	files, err := ResultFiles(dir)
	if err != nil {
		return nil, err
	}
	slo := defaultSLO
	var old *Summary
	if o, err := ReadSummary(filepath.Join(dir, "summary.json")); err == nil {
		old = o
		if o.SLO.LatencyS > 0 {
			slo = o.SLO
		}
	}
	sum, err := SummarizeFiles(files, slo)
	if err != nil {
		return nil, err
	}
	if old != nil {
		sum.StoppedReason = old.StoppedReason
		sum.Capacity = old.Capacity
	}
	metas := testerMetas(dir)
	sum.AddTesterUsage(metas)
	for _, m := range metas {
		if sum.StoppedReason == "" && m.Tester == 0 {
			sum.StoppedReason = m.StoppedReason
		}
		if w := m.Warmup.Warning(); w != "" {
			sum.Warnings = append(sum.Warnings, w)
		}
	}
	sum.Finish()
	if err := sum.WriteFiles(dir); err != nil {
		return nil, err
	}
	return sum, nil
}

// testerMetas reads the testers' meta.json (and meta-<i>.json) of a run
// directory, one per tester.
func testerMetas(dir string) []*Meta {
	paths, _ := filepath.Glob(filepath.Join(dir, "meta-*.json"))
	paths = append([]string{filepath.Join(dir, "meta.json")}, paths...)
	seen := map[int]bool{}
	var out []*Meta
	for _, p := range paths {
		m, err := ReadMetaFile(p)
		if err != nil || seen[m.Tester] {
			continue
		}
		seen[m.Tester] = true
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tester < out[j].Tester })
	return out
}

// IsRunDir reports whether dir looks like a run directory.
func IsRunDir(dir string) bool {
	files, err := ResultFiles(dir)
	return err == nil && len(files) > 0 && !strings.HasSuffix(dir, ".csv")
}
