package results

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
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
	// key is the per-tester (concurrency, rate) every row of the step
	// carries: the same on every tester in one slot, since they run one plan.
	key     stepKey
	stats   *Stats
	steady  *Steadiness
	byType  *TypeStats
	tail    *TailCause     // one tester's completions; nil once merged
	spans   []testerSpan   // one per tester that recorded the step
	strange map[int]string // a tester absent from the step: what its rows in the slot said instead
	parts   []StepPart     // the testers' own steps it is made of, in the order they joined
}

// StepPart is one tester's own step within a merged step: the rows of
// file File (its index among the run's files) whose step within that file
// is Local (Row.Segment). headroom-plot assigns its rows by it instead of
// merging the testers' steps itself.
type StepPart struct {
	File   int    `json:"file"`
	Name   string `json:"name"`
	Tester int    `json:"tester"`
	Local  int    `json:"local_step"`
	Rows   int64  `json:"rows"`
}

type stepKey struct {
	concurrency int
	rate        float64
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
// per-tester files of one run: their steps are paired by slot (see
// pairSlots), so the requests of one slot add up, as do concurrency and rate.
func SummarizeFiles(files []string, slo SLO) (*Summary, error) {
	return summarizeFiles(files, slo, nil)
}

// summarizeFiles is SummarizeFiles; ends names why a tester stopped (from
// its meta.json) for the steps it left incomplete.
func summarizeFiles(files []string, slo SLO, ends map[int]string) (*Summary, error) {
	sum := &Summary{SLO: slo, Testers: len(files)}
	var perFile [][]*stepAcc
	var testers []int
	keyed := true
	for fi, path := range files {
		var steps []*stepAcc
		tester := fileTester(path, fi)
		testers = append(testers, tester)
		info, err := ReadCSV(path, func(r *Row) error {
			for len(steps) <= r.Segment {
				steps = append(steps, &stepAcc{concurrency: r.Concurrency, rate: r.Rate, key: stepKey{r.Concurrency, r.Rate}, stats: NewStats(), steady: NewSteadiness(), byType: NewTypeStats(),
					tail:  NewTailCause(time.Duration(math.Round(slo.LatencyS * 1e9))),
					spans: []testerSpan{{tester: tester, rate: r.Rate}},
					parts: []StepPart{{File: fi, Name: filepath.Base(path), Tester: tester, Local: len(steps)}}})
			}
			steps[r.Segment].parts[0].Rows++
			sp := &steps[r.Segment].spans[0]
			sp.record(r, steps[r.Segment].stats.requests == 0)
			steps[r.Segment].stats.Record(&r.Result)
			steps[r.Segment].byType.Record(&r.Result)
			steps[r.Segment].steady.Record(&r.Result)
			steps[r.Segment].tail.Record(&r.Result)
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
		// A hey header block starts a step but names no concurrency: there
		// is no key to pair steps by.
		keyed = keyed && info.Format == FormatOurs
		perFile = append(perFile, steps)
	}
	var merged []*stepAcc
	if keyed {
		var w []string
		merged, w = pairSlots(perFile)
		sum.Warnings = append(sum.Warnings, w...)
		sum.mergeWarnings = w
	} else {
		merged = pairByPosition(perFile, files, sum)
	}
	for i, m := range merged {
		step := NewSummaryStep(i, m.concurrency, m.rate, m.stats.Snapshot(), slo)
		if m.rate > 0 {
			// The stalls are one tester's: a merge of several has none.
			var tail *TailCause
			if len(files) == 1 {
				tail = m.tail
			}
			step.Judge(m.steady.OpenLoopVerdict(tail))
		} else {
			step.Judge(m.steady.Verdict())
		}
		step.SetByRequest(m.byType.Figures(step.DurationS, slo))
		if m.tail != nil && len(files) == 1 {
			step.Tail = m.tail.Figures()
		}
		if keyed && len(files) > 1 {
			step.rampKey = m.key
		}
		step.parts = m.parts
		if start, _, end := m.span(); end > start {
			step.SetSpan(start, end)
		}
		if len(files) > 1 {
			if why := incompleteReason(m.spans, testers, ends, m.strange); why != "" {
				step.Incomplete, step.IncompleteReason = true, why
			}
		}
		sum.Steps = append(sum.Steps, step)
	}
	sum.Finish()
	return sum, nil
}

// pairByPosition merges step i of every file (hey CSVs, whose steps carry
// no concurrency to pair them by slot).
func pairByPosition(perFile [][]*stepAcc, files []string, sum *Summary) []*stepAcc {
	merged := perFile[0]
	for fi, steps := range perFile[1:] {
		if len(steps) != len(merged) {
			sum.Warnings = append(sum.Warnings, fmt.Sprintf("%s has %d steps, %s has %d: merging the steps they share", filepath.Base(files[fi+1]), len(steps), filepath.Base(files[0]), len(merged)))
		}
		for i, st := range steps {
			if i >= len(merged) {
				merged = append(merged, st)
				continue
			}
			merged[i].add(st)
		}
	}
	return merged
}

func (m *stepAcc) add(st *stepAcc) {
	m.concurrency += st.concurrency
	m.rate += st.rate
	m.stats.Merge(st.stats)
	m.steady.Merge(st.steady)
	m.byType.Merge(st.byType)
	m.tail = nil // completions of several testers interleave: no stalls to see
	m.spans = append(m.spans, st.spans...)
	m.parts = append(m.parts, st.parts...)
}

// span is when the step's rows (of every tester in it) started and ended.
func (m *stepAcc) span() (start, lastStart, end time.Duration) {
	start, lastStart, end = m.spans[0].firstStart, m.spans[0].lastStart, m.spans[0].lastEnd
	for _, sp := range m.spans[1:] {
		start, lastStart, end = min(start, sp.firstStart), max(lastStart, sp.lastStart), max(end, sp.lastEnd)
	}
	return start, lastStart, end
}

// pairSlots merges the testers' steps by slot, the rule of docs/design.md
// ("Steps of several testers"), which headroom-plot takes from summary
// --json (each merged step's parts) rather than applying a copy: a
// tester's step joins the merged step with its (concurrency, rate) whose
// rows' time span on the shared origin overlaps its own (of several, the
// one that starts latest); otherwise it is a step of its own, which the
// testers absent from it leave incomplete. Merged steps of one key that
// share no time are then one when no tester is in both and no other
// step's requests start between them. Pairing by position would add a
// tester's step 3 to another's step 2 as soon as one tester missed a step.
// Finish puts the merged steps in the order of their key (the ramp's).
// Look-ups go through steps sorted by start, so a hostile file whose pair
// changes on every row costs a search per step, not a scan of them all.
func pairSlots(perFile [][]*stepAcc) ([]*stepAcc, []string) {
	merged, idx, all := joinOverlapping(perFile)
	sorted := append([]ownStep(nil), all...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].start < sorted[j].start })
	merged = joinAcrossGaps(merged, idx, sorted)
	return merged, planWarnings(merged, all, sorted)
}

// ownStep is one tester's own step, as pairSlots' later passes need it.
type ownStep struct {
	order            int // creation order, for a stable report
	tester           int
	key              stepKey
	start, lastStart time.Duration
}

// slotIndex holds the merged steps of each key sorted by start, and the
// longest span among them, so a look-up is a search, not a scan.
type slotIndex struct {
	byKey   map[stepKey][]*stepAcc
	longest map[stepKey]time.Duration
}

func startOf(m *stepAcc) time.Duration { s, _, _ := m.span(); return s }

func (x *slotIndex) place(m *stepAcc) {
	list := x.byKey[m.key]
	s, _, e := m.span()
	i := sort.Search(len(list), func(j int) bool { return startOf(list[j]) > s })
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = m
	x.byKey[m.key] = list
	x.longest[m.key] = max(x.longest[m.key], e-s)
}

func (x *slotIndex) unplace(m *stepAcc) {
	list := x.byKey[m.key]
	for i := range list {
		if list[i] == m {
			x.byKey[m.key] = append(list[:i], list[i+1:]...)
			return
		}
	}
}

// overlapping is the merged step of key whose span overlaps [a, b] and
// starts latest, or nil.
func (x *slotIndex) overlapping(key stepKey, a, b time.Duration) *stepAcc {
	list := x.byKey[key]
	// A step starting before a - longest ends before a.
	for j := sort.Search(len(list), func(j int) bool { return startOf(list[j]) > b }) - 1; j >= 0; j-- {
		ms, _, me := list[j].span()
		if ms < a-x.longest[key] {
			break
		}
		if me >= a {
			return list[j]
		}
	}
	return nil
}

// joinOverlapping puts each tester's step into the merged step of its key
// whose span overlaps its own, or makes it a merged step of its own. It
// returns the merged steps in creation order, their index, and every
// tester's own steps.
func joinOverlapping(perFile [][]*stepAcc) ([]*stepAcc, *slotIndex, []ownStep) {
	var merged []*stepAcc
	var all []ownStep
	idx := &slotIndex{byKey: map[stepKey][]*stepAcc{}, longest: map[stepKey]time.Duration{}}
	for _, steps := range perFile {
		for _, st := range steps {
			a, l, b := st.span()
			all = append(all, ownStep{len(all), st.spans[0].tester, st.key, a, l})
			into := idx.overlapping(st.key, a, b)
			if into == nil {
				merged = append(merged, st)
				idx.place(st)
				continue
			}
			idx.unplace(into)
			if i := spanOf(into, st.spans[0].tester); i >= 0 {
				// The same tester again (rows out of order): one tester's load, counted once.
				sp, o := &into.spans[i], st.spans[0]
				sp.firstStart, sp.lastStart, sp.lastEnd = min(sp.firstStart, o.firstStart), max(sp.lastStart, o.lastStart), max(sp.lastEnd, o.lastEnd)
				into.stats.Merge(st.stats)
				into.steady.Merge(st.steady)
				into.byType.Merge(st.byType)
				into.parts = append(into.parts, st.parts...)
			} else {
				into.add(st)
			}
			idx.place(into)
		}
	}
	return merged, idx, all
}

// joinAcrossGaps makes one of merged steps of one key whose spans do not
// touch when they have no tester in common and no other step's requests
// (of any tester) start between the earlier one's last start and the
// later one's first: a tester that stopped early in a slot and one that
// began it late (busy host, slow connections) leave a gap, and kept apart
// the slot would read as two, each with one tester missing. A key
// repeated later in a file has the file's other steps between. sorted:
// every tester's own steps by start.
func joinAcrossGaps(merged []*stepAcc, idx *slotIndex, sorted []ownStep) []*stepAcc {
	// latestBefore(t) is the latest last start of the own steps that start
	// before t.
	prefix := make([]time.Duration, len(sorted))
	for j, o := range sorted {
		prefix[j] = o.lastStart
		if j > 0 {
			prefix[j] = max(prefix[j], prefix[j-1])
		}
	}
	latestBefore := func(t time.Duration) (time.Duration, bool) {
		j := sort.Search(len(sorted), func(j int) bool { return sorted[j].start >= t })
		if j == 0 {
			return 0, false
		}
		return prefix[j-1], true
	}
	pos := map[*stepAcc]int{}
	for i, m := range merged {
		pos[m] = i
	}
	gone := map[*stepAcc]bool{}
	for _, m := range merged {
		list := idx.byKey[m.key]
		if len(list) < 2 || list[0] != m {
			continue // each key once, from its first step by start
		}
		cur := list[0]
		for _, next := range list[1:] {
			_, cl, _ := cur.span()
			if latest, ok := latestBefore(startOf(next)); !ok || latest > cl || sharesTester(cur, next) {
				cur = next
				continue
			}
			keep, drop := cur, next
			if pos[next] < pos[cur] {
				keep, drop = next, cur
			}
			keep.add(drop)
			gone[drop] = true
			cur = keep
		}
	}
	if len(gone) == 0 {
		return merged
	}
	kept := merged[:0]
	for _, m := range merged {
		if !gone[m] {
			kept = append(kept, m)
		}
	}
	return kept
}

// planWarnings notes, in each merged step's strange, the testers whose
// rows in its slot carry another key: they did not run the same plan, so
// the steps stay apart (each incomplete, as some tester is absent from
// it), and the run says so, once per pair of steps. all and sorted:
// every tester's own steps in creation order and by start.
func planWarnings(merged []*stepAcc, all, sorted []ownStep) []string {
	var longestOwn time.Duration
	for _, o := range all {
		longestOwn = max(longestOwn, o.lastStart-o.start)
	}
	var warnings []string
	seen := map[string]bool{}
	for _, m := range merged {
		ma, ml, _ := m.span()
		var hits []ownStep
		for j := sort.Search(len(sorted), func(j int) bool { return sorted[j].start > ml }) - 1; j >= 0 && sorted[j].start >= ma-longestOwn; j-- {
			st := sorted[j]
			if st.key == m.key || spanOf(m, st.tester) >= 0 {
				continue
			}
			// Most of the shorter of the two start spans: neighbouring steps
			// touch at their edges (requests in flight at a slot's end).
			shorter := min(ml-ma, st.lastStart-st.start)
			if min(ml, st.lastStart)-max(ma, st.start) <= shorter/2 {
				continue
			}
			hits = append(hits, st)
		}
		sort.Slice(hits, func(i, j int) bool { return hits[i].order < hits[j].order })
		for _, st := range hits {
			t, sa, sl := st.tester, st.start, st.lastStart
			if m.strange == nil {
				m.strange = map[int]string{}
			}
			m.strange[t] = fmt.Sprintf("its rows in this slot say %s", keyLabel(st.key))
			// Once per pair of steps: from the side of the later tester.
			if t < m.spans[0].tester {
				continue
			}
			w := fmt.Sprintf("in the slot at offsets %.1f-%.1f s tester %d's rows say %s, tester %d's %s: the testers did not run the same plan; the two steps are kept apart, each incomplete", max(ma, sa).Seconds(), min(ml, sl).Seconds(), m.spans[0].tester, keyLabel(m.key), t, keyLabel(st.key))
			if !seen[w] {
				seen[w] = true
				warnings = append(warnings, w)
			}
		}
	}
	return warnings
}

func sharesTester(a, b *stepAcc) bool {
	for _, sp := range b.spans {
		if spanOf(a, sp.tester) >= 0 {
			return true
		}
	}
	return false
}

func spanOf(m *stepAcc, tester int) int {
	for i, sp := range m.spans {
		if sp.tester == tester {
			return i
		}
	}
	return -1
}

func keyLabel(k stepKey) string {
	if k.rate > 0 {
		return fmt.Sprintf("concurrency %d, rate %g/s", k.concurrency, k.rate)
	}
	return fmt.Sprintf("concurrency %d", k.concurrency)
}

// SummarizeDir recomputes and rewrites summary.json and summary.txt of a
// run directory from its CSV files, keeping what only the run knew (the
// stop reason, a capacity answer) from an existing summary.json.
func SummarizeDir(dir string, defaultSLO SLO) (*Summary, error) {
	sum, err := SummarizeDirAt(dir, defaultSLO, false)
	if err != nil {
		return nil, err
	}
	if err := sum.WriteFiles(dir); err != nil {
		return nil, err
	}
	return sum, nil
}

// SummarizeDirAt is SummarizeDir without writing anything. With force the
// summary is for slo (a mix run's per-type bounds still come from its
// summary.json), otherwise for the SLO of the run's summary.json, slo
// when it has none.
func SummarizeDirAt(dir string, slo SLO, force bool) (*Summary, error) {
	files, err := ResultFiles(dir)
	if err != nil {
		return nil, err
	}
	var old *Summary
	if o, err := ReadSummary(filepath.Join(dir, "summary.json")); err == nil {
		old = o
		switch {
		case force && slo.LatencyByRequestS == nil:
			slo.LatencyByRequestS = o.SLO.LatencyByRequestS
		case !force && o.SLO.LatencyS > 0:
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
		sum.TargetSources = old.TargetSources
	}
	sum.attachTargetFile(dir)
	sum.AddTesterUsage(metas)
	for _, m := range metas {
		if sum.StoppedReason == "" && m.Tester == 0 {
			sum.StoppedReason = m.StoppedReason
		}
		if w := m.Warmup.Warning(); w != "" {
			sum.Warnings = append(sum.Warnings, w)
		}
		if m.Tester == 0 && m.Warmup != nil {
			sum.Warmup = m.Warmup
		}
		if m.Tester == 0 && m.Workload != nil {
			sum.Workload = m.Workload
		}
		if m.Tester == 0 && m.TargetLoad != nil {
			sum.TargetProblems = m.TargetLoad.ProblemList()
		}
	}
	if sum.Warmup == nil && old != nil {
		sum.Warmup = old.Warmup
	}
	several := len(files) > 1
	for _, m := range metas {
		several = several || m.Testers > 1
	}
	if several {
		sum.checkTesters(files, metas, ends)
	}
	sum.Finish()
	var first *Meta
	for _, m := range metas {
		if first == nil || m.Tester == 0 {
			first = m
		}
	}
	rec, err := ReadCleanupRecord(dir)
	if err != nil {
		sum.Warnings = append(sum.Warnings, err.Error())
	}
	sum.Stopped = StoppedNote(first, sum.RampSteps(), sum.StoppedReason, rec)
	return sum, nil
}

// checkTesters names, in the run's stopped_reason, every tester that
// stopped and why (tester 0's reason alone said nothing of the others),
// warns of testers whose meta.json is missing, and marks the run and
// every step incomplete when a tester the run had left no results file
// (only tester 0's tarball collected, a tester that never ran): its load
// reached the target but is in no figure, so no capacity can be given.
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
	if planned > 0 {
		s.MissingTesters = MissingTesters(planned, have)
	}
	if len(s.MissingTesters) > 0 {
		why := MissingTestersReason(planned, s.MissingTesters)
		s.Incomplete, s.IncompleteReason = true, why
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

// MissingTesters lists, in order, the testers of a run of planned testers
// (meta.json's `testers`) that left no results file (have: the testers
// whose results-<i>.csv is there); empty, not nil, when none is missing.
// headroom-plot's runs.missing_testers applies the same rule to a run
// directory whose summary.json does not say (docs/csv-format.md,
// "Incomplete runs").
func MissingTesters(planned int, have map[int]bool) []int {
	missing := []int{}
	for t := 0; t < planned; t++ {
		if !have[t] {
			missing = append(missing, t)
		}
	}
	return missing
}

// MissingTestersReason is the incomplete_reason of a run whose testers
// missing (of planned) left no results file, and of each of its steps:
// "testers 1, 2 of 3 left no results file: their load is in no figure".
// headroom-plot says the same (runs.missing_testers_reason); both are
// held to testdata/missing-testers/answers.json.
func MissingTestersReason(planned int, missing []int) string {
	if len(missing) == 1 {
		return fmt.Sprintf("tester %d of %d left no results file: its load is in no figure", missing[0], planned)
	}
	// A hostile meta.json may plan up to maxTesters: name a few.
	const named = 10
	var ids []string
	for _, t := range missing[:min(len(missing), named)] {
		ids = append(ids, strconv.Itoa(t))
	}
	list := strings.Join(ids, ", ")
	if len(missing) > named {
		list += fmt.Sprintf(" and %d more", len(missing)-named)
	}
	return fmt.Sprintf("testers %s of %d left no results file: their load is in no figure", list, planned)
}

// PlannedTesters is the number of testers a run directory's meta.json
// files say the run had (the largest; 0 when none is readable).
func PlannedTesters(dir string) int {
	metas, _ := testerMetas(dir)
	planned := 0
	for _, m := range metas {
		planned = max(planned, m.Testers)
	}
	return planned
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
func incompleteReason(spans []testerSpan, testers []int, ends map[int]string, strange map[int]string) string {
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
			note := ""
			if strange[t] != "" {
				note = " (" + strange[t] + ")"
			}
			why = append(why, fmt.Sprintf("tester %d sent no load in it%s%s", t, note, endNote(ends, t)))
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
