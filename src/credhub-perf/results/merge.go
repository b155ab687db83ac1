package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
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
	spans       []testerSpan // one per tester that recorded the step
}

// testerSpan is when one tester's rows of one step started and ended
// (offsets share one origin across testers, docs/csv-format.md).
type testerSpan struct {
	tester                         int
	firstStart, lastStart, lastEnd time.Duration
	rate                           float64
}

func (sp *testerSpan) record(r *Row, first bool) {
	if first || r.Offset < sp.firstStart {
		sp.firstStart = r.Offset
	}
	if first || r.Offset > sp.lastStart {
		sp.lastStart = r.Offset
	}
	if end := r.Offset + r.Latency; first || end > sp.lastEnd {
		sp.lastEnd = end
	}
}

var testerFile = regexp.MustCompile(`^results-(\d+)\.csv$`)

// fileTester is the tester index a results-<i>.csv names, else its
// position among the files.
func fileTester(path string, position int) int {
	if m := testerFile.FindStringSubmatch(filepath.Base(path)); m != nil {
		if i, err := strconv.Atoi(m[1]); err == nil {
			return i
		}
	}
	return position
}

// SummarizeFiles recomputes a summary from CSV files. Several files are the
// per-tester files of one run: step i of every file is the same step
// (testers run the same plan in lockstep), so their requests add up, as do
// concurrency and rate.
func SummarizeFiles(files []string, slo SLO) (*Summary, error) {
	return summarizeFiles(files, slo, nil)
}

// summarizeFiles is SummarizeFiles; ends names why a tester stopped (from
// its meta.json) for the steps it left incomplete.
func summarizeFiles(files []string, slo SLO, ends map[int]string) (*Summary, error) {
	sum := &Summary{SLO: slo, Testers: len(files)}
	var merged []*stepAcc
	var testers []int
	for fi, path := range files {
		var steps []*stepAcc
		tester := fileTester(path, fi)
		testers = append(testers, tester)
		info, err := ReadCSV(path, func(r *Row) error {
			for len(steps) <= r.Segment {
				steps = append(steps, &stepAcc{concurrency: r.Concurrency, rate: r.Rate, stats: NewStats(), steady: NewSteadiness(), byType: NewTypeStats(),
					spans: []testerSpan{{tester: tester, rate: r.Rate}}})
			}
			sp := &steps[r.Segment].spans[0]
			sp.record(r, steps[r.Segment].stats.requests == 0)
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
			m.spans = append(m.spans, st.spans...)
		}
	}
	for i, m := range merged {
		step := NewSummaryStep(i, m.concurrency, m.rate, m.stats.Snapshot(), slo)
		step.Judge(m.steady.Verdict())
		step.SetByRequest(m.byType.Figures(step.DurationS, slo))
		if len(files) > 1 {
			if why := incompleteReason(m.spans, testers, ends); why != "" {
				step.Incomplete, step.IncompleteReason = true, why
			}
		}
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
	metas, metaWarnings := testerMetas(dir)
	ends := map[int]string{}
	for _, m := range metas {
		if e := m.endReason(); e != "" {
			ends[m.Tester] = e
		}
	}
	sum, err := summarizeFiles(files, slo, ends)
	if err != nil {
		return nil, err
	}
	sum.Warnings = append(sum.Warnings, metaWarnings...)
	if old != nil {
		sum.StoppedReason = old.StoppedReason
		sum.Capacity = old.Capacity
	}
	sum.AddTesterUsage(metas)
	for _, m := range metas {
		if sum.StoppedReason == "" && m.Tester == 0 {
			sum.StoppedReason = m.StoppedReason
		}
		if w := m.Warmup.Warning(); w != "" {
			sum.Warnings = append(sum.Warnings, w)
		}
	}
	several := len(files) > 1
	for _, m := range metas {
		several = several || m.Testers > 1
	}
	if several {
		sum.checkTesters(files, metas, ends)
	}
	sum.Finish()
	if err := sum.WriteFiles(dir); err != nil {
		return nil, err
	}
	return sum, nil
}

// checkTesters names, in the run's stopped_reason, every tester that
// stopped and why (tester 0's reason alone said nothing of the others),
// warns of testers whose meta.json is missing, and marks every step
// incomplete when a tester the run had left no results file: its load
// reached the target but is in no figure.
func (s *Summary) checkTesters(files []string, metas []*Meta, ends map[int]string) {
	byTester := map[int]*Meta{}
	planned := 0
	for _, m := range metas {
		byTester[m.Tester] = m
		planned = max(planned, m.Testers)
	}
	if planned > maxTesters {
		s.Warnings = append(s.Warnings, fmt.Sprintf("a meta.json says %d testers, more than %d: not checked for missing results files", planned, maxTesters))
		planned = 0
	}
	have := map[int]bool{}
	for fi, f := range files {
		t := fileTester(f, fi)
		have[t] = true
		if byTester[t] == nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("tester %d (%s) has no readable %s: its CPU figures and why it stopped are unknown; its steps are judged complete or not from its rows alone", t, filepath.Base(f), metaFile(t)))
		}
	}
	var missing []string
	for t := 0; t < planned; t++ {
		if !have[t] {
			missing = append(missing, fmt.Sprintf("results-%d.csv", t))
		}
	}
	if len(missing) > 0 {
		why := fmt.Sprintf("the run had %d testers, %s missing: their load is in no figure", planned, strings.Join(missing, ", "))
		for i := range s.Steps {
			st := &s.Steps[i]
			if st.Incomplete {
				st.IncompleteReason = why + "; " + st.IncompleteReason
			} else {
				st.Incomplete, st.IncompleteReason = true, why
			}
		}
	}
	var stopped []string
	for _, m := range metas {
		if e := m.endReason(); e != "" {
			stopped = append(stopped, fmt.Sprintf("tester %d: %s", m.Tester, e))
		}
	}
	// One tester 0 reason alone keeps its old form.
	if len(stopped) > 1 || (len(stopped) == 1 && !strings.HasPrefix(stopped[0], "tester 0: ")) {
		s.StoppedReason = strings.Join(stopped, "; ")
	} else if len(stopped) == 1 && s.StoppedReason == "" {
		s.StoppedReason = strings.TrimPrefix(stopped[0], "tester 0: ")
	}
}

// maxTesters bounds a meta.json's `testers` believed (a hostile value
// must not make the merge list millions of missing files).
const maxTesters = 1000

func metaFile(tester int) string {
	if tester == 0 {
		return "meta.json"
	}
	return fmt.Sprintf("meta-%d.json", tester)
}

// testerMetas reads the testers' meta.json (and meta-<i>.json) of a run
// directory, one per tester, with a warning for each that cannot be read.
func testerMetas(dir string) ([]*Meta, []string) {
	paths, _ := filepath.Glob(filepath.Join(dir, "meta-*.json"))
	paths = append([]string{filepath.Join(dir, "meta.json")}, paths...)
	seen := map[int]bool{}
	var out []*Meta
	var warnings []string
	for _, p := range paths {
		m, err := ReadMetaFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s is unreadable, left out: %v", filepath.Base(p), oneLineErr(err)))
			continue
		}
		if seen[m.Tester] {
			continue
		}
		seen[m.Tester] = true
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tester < out[j].Tester })
	return out, warnings
}

func oneLineErr(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// IsRunDir reports whether dir looks like a run directory.
func IsRunDir(dir string) bool {
	files, err := ResultFiles(dir)
	return err == nil && len(files) > 0 && !strings.HasSuffix(dir, ".csv")
}

// incompleteReason says which testers did not load a merged step for its
// whole slot, or "" when every tester did. The step's throughput is its
// requests over the span of all testers' rows, so a tester that missed
// part of that span (stopped, crashed, started late) or all of it makes
// the sum undercount the load the target carried, and its latencies were
// measured under less load than the step names. tol absorbs the natural
// spread: requests in flight at the deadline, a closed loop's last start
// one latency before it, an open loop's gap between arrivals.
func incompleteReason(spans []testerSpan, testers []int, ends map[int]string) string {
	if len(spans) == 0 {
		return ""
	}
	start, lastStart, end := spans[0].firstStart, spans[0].lastStart, spans[0].lastEnd
	have := map[int]bool{}
	for _, sp := range spans {
		have[sp.tester] = true
		start = min(start, sp.firstStart)
		lastStart = max(lastStart, sp.lastStart)
		end = max(end, sp.lastEnd)
	}
	span := end - start
	var why []string
	for _, t := range testers {
		if !have[t] {
			why = append(why, fmt.Sprintf("tester %d sent no load in it%s", t, endNote(ends, t)))
		}
	}
	for _, sp := range spans {
		tol := max(500*time.Millisecond, span/20)
		if sp.rate > 0 {
			tol = max(tol, time.Duration(2*float64(time.Second)/sp.rate))
		}
		// Stopped early: both its last start and its last end fall short,
		// so one slow request of the others' does not count against it.
		early := lastStart-sp.lastStart > tol && end-sp.lastEnd > tol
		late := sp.firstStart-start > tol
		if !early && !late {
			continue
		}
		what := fmt.Sprintf("tester %d sent load for %.1f of the step's %.1f s", sp.tester, (sp.lastEnd - sp.firstStart).Seconds(), span.Seconds())
		switch {
		case early && late:
			what += fmt.Sprintf(" (started %.1f s late, stopped %.1f s early)", (sp.firstStart - start).Seconds(), (end - sp.lastEnd).Seconds())
		case early:
			what += fmt.Sprintf(" (stopped %.1f s early)", (end - sp.lastEnd).Seconds())
		default:
			what += fmt.Sprintf(" (started %.1f s late)", (sp.firstStart - start).Seconds())
		}
		why = append(why, what+endNote(ends, sp.tester))
	}
	return strings.Join(why, "; ")
}

func endNote(ends map[int]string, tester int) string {
	if e := ends[tester]; e != "" {
		return ": " + e
	}
	return ""
}

// endReason is why a tester ended other than by completing its plan, from
// its meta.json ("" when it completed it).
func (m *Meta) endReason() string {
	clip := func(s string) string {
		if r := []rune(s); len(r) > 200 {
			return string(r[:200]) + "…"
		}
		return s
	}
	switch {
	case m.StoppedReason != "":
		return clip(m.StoppedReason)
	case m.Status == "failed" || m.Status == "interrupted":
		if m.Error != "" {
			return m.Status + ": " + clip(m.Error)
		}
		return m.Status
	case m.Status == "running":
		return "its meta.json still says running: it was killed or lost its VM before it finished"
	}
	return ""
}
