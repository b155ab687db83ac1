package results

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

// writeTester writes one tester's CSV of a lockstep run: step i is the
// 10 s slot from 10·i s, one request every 100 ms taking 5 ms, at
// concurrency conc[i]; the tester stops sending at offset stopAt (0: never).
func writeTester(t *testing.T, path string, conc []int, stopAt time.Duration) {
	writeCSVFile(t, path, func(rec func(off, latency time.Duration, c int)) {
		for si, c := range conc {
			for j := 0; j < 100; j++ {
				off := time.Duration(si)*10*time.Second + time.Duration(j)*100*time.Millisecond
				if stopAt > 0 && off >= stopAt {
					break
				}
				rec(off, 5*time.Millisecond, c)
			}
		}
	})
}

// writeCSVFile writes a tester's CSV at path with the requests rows
// records: each a 200 at offset off from one fixed start.
func writeCSVFile(t *testing.T, path string, rows func(rec func(off, latency time.Duration, c int))) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewCSVWriter(f)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rows(func(off, latency time.Duration, c int) {
		w.Record(&load.Result{Start: base.Add(off), Offset: off, Latency: latency, Status: 200, Concurrency: c})
	})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeMetaFixture(t *testing.T, path string, tester, steps int, status, stopped, errText string) {
	t.Helper()
	m := &Meta{Tester: tester, Testers: 2, Status: status, StoppedReason: stopped, Error: errText}
	for i := 0; i < steps; i++ {
		m.Steps = append(m.Steps, MetaStep{Concurrency: i + 1, Requests: 100, DurationS: 9.905})
	}
	if err := WriteMetaFile(path, m); err != nil {
		t.Fatal(err)
	}
}

var mergeSLO = SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}

func TestMergeCompleteRunIsUnmarked(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		writeTester(t, filepath.Join(dir, "results-"+string(rune('0'+i))+".csv"), []int{1, 2, 3}, 0)
	}
	writeMetaFixture(t, filepath.Join(dir, "meta.json"), 0, 3, "ok", "", "")
	writeMetaFixture(t, filepath.Join(dir, "meta-1.json"), 1, 3, "ok", "", "")
	sum, err := SummarizeDir(dir, mergeSLO)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sum.Steps {
		if st.Incomplete || !st.Counts(mergeSLO) {
			t.Fatalf("step %d: complete run marked %+v", st.Step, st)
		}
	}
	// 200 requests over 9.905 s: the last step counts.
	if sum.MaxThroughputAtSLO == nil || math.Abs(*sum.MaxThroughputAtSLO-200/9.905) > 0.01 {
		t.Fatalf("max throughput at SLO %v, want %.3f", sum.MaxThroughputAtSLO, 200/9.905)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if strings.Contains(string(b), "incomplete") || sum.StoppedReason != "" || len(sum.Warnings) != 0 {
		t.Fatalf("complete run: summary.json mentions incomplete, or stopped %q, warnings %v", sum.StoppedReason, sum.Warnings)
	}
}

// Tester 0 dies halfway through the last step; tester 1 runs it to the end
// and then stops because tester 0 failed.
func TestMergeTesterStoppedMidStep(t *testing.T) {
	dir := t.TempDir()
	writeTester(t, filepath.Join(dir, "results-0.csv"), []int{1, 2, 3}, 25*time.Second)
	writeTester(t, filepath.Join(dir, "results-1.csv"), []int{1, 2, 3}, 0)
	writeMetaFixture(t, filepath.Join(dir, "meta.json"), 0, 3, "failed", "", "step 3: the VM went away")
	writeMetaFixture(t, filepath.Join(dir, "meta-1.json"), 1, 3, "failed", "tester 0 stopped", "tester 0 stopped at step 3 of 3")
	sum, err := SummarizeDir(dir, mergeSLO)
	if err != nil {
		t.Fatal(err)
	}
	last := sum.Steps[2]
	want := "tester 0 sent load for 4.9 of the step's 9.9 s (stopped 5.0 s early): failed: step 3: the VM went away"
	if !last.Incomplete || last.IncompleteReason != want || last.Counts(mergeSLO) {
		t.Fatalf("last step: incomplete %v reason %q, want %q", last.Incomplete, last.IncompleteReason, want)
	}
	if sum.Steps[0].Incomplete || sum.Steps[1].Incomplete {
		t.Fatal("the steps both testers completed are marked incomplete")
	}
	// Capacity is step 1's 200 requests over 9.905 s, not the short step's.
	if sum.MaxThroughputAtSLO == nil || math.Abs(*sum.MaxThroughputAtSLO-200/9.905) > 0.01 {
		t.Fatalf("max throughput at SLO %v, want step 1's %.3f", sum.MaxThroughputAtSLO, 200/9.905)
	}
	if sum.KneeStep == nil || *sum.KneeStep == 3 {
		t.Fatalf("knee on the incomplete step: %v", sum.KneeStep)
	}
	wantStop := "tester 0: failed: step 3: the VM went away; tester 1: tester 0 stopped"
	if sum.StoppedReason != wantStop {
		t.Fatalf("stopped_reason %q, want %q", sum.StoppedReason, wantStop)
	}
	txt, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if !strings.Contains(string(txt), "incomplete") || !strings.Contains(string(txt), "step 3 (concurrency 6) is incomplete: tester 0 sent load") {
		t.Fatalf("summary.txt does not flag the step:\n%s", txt)
	}
	var raw struct {
		Steps []map[string]any `json:"steps"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Steps[2]["incomplete"] != true || raw.Steps[2]["incomplete_reason"] != want || raw.Steps[1]["incomplete"] != nil {
		t.Fatalf("summary.json steps: %v / %v", raw.Steps[2], raw.Steps[1])
	}
}

// Tester 1 stops after step 1 (before the last step); tester 0 runs it alone.
func TestMergeTesterStoppedBeforeLastStep(t *testing.T) {
	dir := t.TempDir()
	writeTester(t, filepath.Join(dir, "results-0.csv"), []int{1, 2, 3}, 0)
	writeTester(t, filepath.Join(dir, "results-1.csv"), []int{1, 2}, 0)
	writeMetaFixture(t, filepath.Join(dir, "meta.json"), 0, 3, "ok", "", "")
	writeMetaFixture(t, filepath.Join(dir, "meta-1.json"), 1, 2, "interrupted", "interrupted", "interrupted by a signal")
	sum, err := SummarizeDir(dir, mergeSLO)
	if err != nil {
		t.Fatal(err)
	}
	// Concurrency 3 (tester 0's alone) stays last, the ramp's order, not
	// before the complete step at concurrency 4 as its sum would put it.
	last := sum.Steps[2]
	if last.Concurrency != 3 || sum.Steps[1].Concurrency != 4 || sum.Steps[1].Incomplete {
		t.Fatalf("steps %+v", sum.Steps)
	}
	if want := "tester 1 sent no load in it: interrupted"; !last.Incomplete || last.IncompleteReason != want {
		t.Fatalf("last step: %v %q, want %q", last.Incomplete, last.IncompleteReason, want)
	}
	// One tester's 100 requests: the merge does not count them as a
	// throughput drop at the highest load.
	if sum.MaxThroughputAtSLO == nil || math.Abs(*sum.MaxThroughputAtSLO-200/9.905) > 0.01 {
		t.Fatalf("max throughput at SLO %v", sum.MaxThroughputAtSLO)
	}
	if sum.StoppedReason != "tester 1: interrupted" {
		t.Fatalf("stopped_reason %q", sum.StoppedReason)
	}
}

func TestMergeMissingTesterResults(t *testing.T) {
	dir := t.TempDir()
	writeTester(t, filepath.Join(dir, "results-0.csv"), []int{1, 2}, 0)
	writeMetaFixture(t, filepath.Join(dir, "meta.json"), 0, 2, "ok", "", "")
	sum, err := SummarizeDir(dir, mergeSLO)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sum.Steps {
		if !st.Incomplete || st.IncompleteReason != "tester 1 of 2 left no results file: its load is in no figure" {
			t.Fatalf("step %d: %v %q", st.Step, st.Incomplete, st.IncompleteReason)
		}
	}
	if sum.MaxThroughputAtSLO != nil || sum.NoCapacityReason() != "unknown: incomplete run: tester 1 of 2 left no results file: its load is in no figure" {
		t.Fatalf("capacity %v from incomplete steps; reason %q", sum.MaxThroughputAtSLO, sum.NoCapacityReason())
	}
}

// A garbled or missing meta.json: a warning naming it, the steps judged
// from the rows alone, no panic.
func TestMergeHostileMeta(t *testing.T) {
	for name, body := range map[string]string{
		"garbled":   "{not json",
		"truncated": `{"tester": 1, "steps": [`,
		"wrong":     `{"tester": "one", "testers": -5}`,
		"huge":      `{"tester": 1, "testers": 1000000000}`,
		"missing":   "",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeTester(t, filepath.Join(dir, "results-0.csv"), []int{1, 2}, 0)
			writeTester(t, filepath.Join(dir, "results-1.csv"), []int{1, 2}, 15*time.Second)
			writeMetaFixture(t, filepath.Join(dir, "meta.json"), 0, 2, "ok", "", "")
			if body != "" {
				if err := os.WriteFile(filepath.Join(dir, "meta-1.json"), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sum, err := SummarizeDir(dir, mergeSLO)
			if err != nil {
				t.Fatal(err)
			}
			w := strings.Join(sum.Warnings, "\n")
			if name != "huge" && !strings.Contains(w, "tester 1 (results-1.csv) has no readable meta-1.json") {
				t.Fatalf("no warning about meta-1.json: %v", sum.Warnings)
			}
			if name == "huge" && !strings.Contains(w, "more than 1000") {
				t.Fatalf("huge testers: %v", sum.Warnings)
			}
			if body != "" && name != "wrong" && name != "huge" && !strings.Contains(w, "meta-1.json is unreadable") {
				t.Fatalf("no warning that meta-1.json is unreadable: %v", sum.Warnings)
			}
			for _, x := range sum.Warnings {
				if strings.Contains(x, "\n") {
					t.Fatalf("multi-line warning %q", x)
				}
			}
			st := sum.Steps[1]
			if !st.Incomplete || !strings.HasPrefix(st.IncompleteReason, "tester 1 sent load for 4.9 of the step's 9.9 s (stopped 5.0 s early)") {
				t.Fatalf("step 1: %v %q", st.Incomplete, st.IncompleteReason)
			}
		})
	}
}

// The tolerance: an open loop's last arrival and a request in flight at
// the end do not make a tester's step incomplete.
func TestIncompleteReasonTolerance(t *testing.T) {
	s := func(tester int, first, lastStart, lastEnd float64, rate float64) testerSpan {
		d := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
		return testerSpan{tester: tester, firstStart: d(first), lastStart: d(lastStart), lastEnd: d(lastEnd), rate: rate}
	}
	for _, c := range []struct {
		name  string
		spans []testerSpan
		want  string
	}{
		{"same", []testerSpan{s(0, 0, 59.9, 60, 0), s(1, 0, 59.9, 60, 0)}, ""},
		{"one slow request", []testerSpan{s(0, 0, 59.9, 90, 0), s(1, 0, 59.9, 60, 0)}, ""},
		{"low rate", []testerSpan{s(0, 0, 59, 59.01, 0.5), s(1, 0, 60, 60.01, 0.5)}, ""},
		{"2 s short of 60", []testerSpan{s(0, 0, 59.9, 60, 0), s(1, 0, 57.9, 58, 0)}, ""},
		{"4 s short of 60", []testerSpan{s(0, 0, 59.9, 60, 0), s(1, 0, 55.9, 56, 0)}, "tester 1 sent load for 56.0 of the step's 60.0 s (stopped 4.0 s early)"},
		{"late start", []testerSpan{s(0, 0, 59.9, 60, 0), s(1, 5, 59.9, 60, 0)}, "tester 1 sent load for 55.0 of the step's 60.0 s (started 5.0 s late)"},
	} {
		if got := incompleteReason(c.spans, []int{0, 1}, nil, nil); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// writeSlots writes one tester's CSV like writeTester, but slot i holds
// concurrency conc[i] starting shift later, and no rows when conc[i] is 0.
func writeSlots(t *testing.T, path string, conc []int, shift time.Duration) {
	writeCSVFile(t, path, func(rec func(off, latency time.Duration, c int)) {
		for si, c := range conc {
			for j := 0; c > 0 && j < 100; j++ {
				rec(shift+time.Duration(si)*10*time.Second+time.Duration(j)*100*time.Millisecond, time.Duration(c)*time.Millisecond, c)
			}
		}
	})
}

func writeMetaSteps(t *testing.T, path string, tester int, conc []int, cpu float64) {
	t.Helper()
	m := &Meta{Tester: tester, Testers: 2, Status: "ok"}
	for _, c := range conc {
		if c > 0 {
			x := cpu * float64(c)
			m.Steps = append(m.Steps, MetaStep{Concurrency: c, Requests: 100, DurationS: 9.905, TesterUsage: TesterUsage{TesterCPU: &x}})
		}
	}
	if err := WriteMetaFile(path, m); err != nil {
		t.Fatal(err)
	}
}

type wantStep struct {
	conc, requests int
	meanMS         float64
	incomplete     string // "" complete, else a substring of the reason
}

func checkSteps(t *testing.T, sum *Summary, want []wantStep) {
	t.Helper()
	if len(sum.Steps) != len(want) {
		t.Fatalf("%d steps, want %d: %+v", len(sum.Steps), len(want), sum.Steps)
	}
	for i, w := range want {
		st := sum.Steps[i]
		if st.Concurrency != w.conc || st.Requests != int64(w.requests) || math.Abs(st.MeanS*1000-w.meanMS) > 1e-6 {
			t.Errorf("step %d: concurrency %d, %d requests, mean %.3f ms; want %d, %d, %.3f ms", i, st.Concurrency, st.Requests, st.MeanS*1000, w.conc, w.requests, w.meanMS)
		}
		if st.Incomplete != (w.incomplete != "") || !strings.Contains(st.IncompleteReason, w.incomplete) {
			t.Errorf("step %d: incomplete %v %q, want %q", i, st.Incomplete, st.IncompleteReason, w.incomplete)
		}
	}
}

// Tester 1 has no rows in the second of four slots (it missed it): the
// merge pairs its later steps with tester 0's of the same slot, not by
// position (which added its concurrency-3 step to tester 0's 2).
func TestMergePairsBySlotAcrossAMissedStep(t *testing.T) {
	dir := t.TempDir()
	writeSlots(t, filepath.Join(dir, "results-0.csv"), []int{1, 2, 3, 4}, 0)
	writeSlots(t, filepath.Join(dir, "results-1.csv"), []int{1, 0, 3, 4}, 0)
	writeMetaSteps(t, filepath.Join(dir, "meta.json"), 0, []int{1, 2, 3, 4}, 0.01)
	writeMetaSteps(t, filepath.Join(dir, "meta-1.json"), 1, []int{1, 0, 3, 4}, 0.1)
	sum, err := SummarizeDir(dir, mergeSLO)
	if err != nil {
		t.Fatal(err)
	}
	checkSteps(t, sum, []wantStep{{2, 200, 1, ""}, {2, 100, 2, "tester 1 sent no load in it"}, {6, 200, 3, ""}, {8, 200, 4, ""}})
	// Each tester's CPU figures land on its own steps (the worst tester's).
	for i, want := range []float64{0.1, 0.02, 0.3, 0.4} {
		if c := sum.Steps[i].TesterCPU; c == nil || math.Abs(*c-want) > 1e-9 {
			t.Errorf("step %d: tester CPU %v, want %v", i, c, want)
		}
	}
	if len(sum.Warnings) != 0 {
		t.Errorf("warnings %q", sum.Warnings)
	}
}

// A tester whose rows in one slot carry another concurrency did not run
// the same plan: its step and the others' stay apart, both incomplete,
// with one warning; nothing is summed across the two.
func TestMergeSlotWithAnotherConcurrency(t *testing.T) {
	dir := t.TempDir()
	writeSlots(t, filepath.Join(dir, "results-0.csv"), []int{1, 2, 3}, 0)
	writeSlots(t, filepath.Join(dir, "results-1.csv"), []int{1, 5, 3}, 0)
	sum, err := SummarizeDir(dir, mergeSLO)
	if err != nil {
		t.Fatal(err)
	}
	checkSteps(t, sum, []wantStep{
		{2, 200, 1, ""},
		{2, 100, 2, "tester 1 sent no load in it (its rows in this slot say concurrency 5)"},
		{6, 200, 3, ""},
		{5, 100, 5, "tester 0 sent no load in it (its rows in this slot say concurrency 2)"},
	})
	var plan []string
	for _, w := range sum.Warnings {
		if strings.Contains(w, "did not run the same plan") {
			plan = append(plan, w)
		}
	}
	if want := "in the slot at offsets 10.0-19.9 s tester 0's rows say concurrency 2, tester 1's concurrency 5: the testers did not run the same plan; the two steps are kept apart, each incomplete"; len(plan) != 1 || plan[0] != want {
		t.Fatalf("plan warnings %q, want [%q]", plan, want)
	}
}

// Tester 1's slots run half a slot late (overlapping two of tester 0's):
// each step pairs with its own concurrency and is incomplete on both
// sides; no plan warning (the keys agree).
func TestMergeOverlappingSlots(t *testing.T) {
	dir := t.TempDir()
	writeSlots(t, filepath.Join(dir, "results-0.csv"), []int{1, 2, 3}, 0)
	writeSlots(t, filepath.Join(dir, "results-1.csv"), []int{1, 2, 3}, 5*time.Second)
	sum, err := SummarizeDir(dir, mergeSLO)
	if err != nil {
		t.Fatal(err)
	}
	want := "tester 0 sent load for 9.9 of the step's 14.9 s (stopped 5.0 s early); tester 1 sent load for 9.9 of the step's 14.9 s (started 5.0 s late)"
	checkSteps(t, sum, []wantStep{{2, 200, 1, want}, {4, 200, 2, want}, {6, 200, 3, want}})
	for _, w := range sum.Warnings {
		if strings.Contains(w, "same plan") {
			t.Errorf("warning %q", w)
		}
	}
}

// writeRows writes a tester's CSV: for each step, one request every 100 ms
// taking conc ms, from offset from up to (not at) to.
func writeRows(t *testing.T, path string, steps ...rowSpan) {
	writeCSVFile(t, path, func(rec func(off, latency time.Duration, c int)) {
		for _, st := range steps {
			for off := st.from; off < st.to; off += 100 * time.Millisecond {
				rec(off, time.Duration(st.conc)*time.Millisecond, st.conc)
			}
		}
	})
}

type rowSpan struct {
	conc     int
	from, to time.Duration
}

// One tester stops 0.5 s into the last slot; the other, busy, sends its
// first request of that slot only 1 s in, after the first one's last
// ended: their rows share no time, yet they are one step, incomplete for
// both, whichever file comes first, and no plan warning.
func TestMergeSlotWithAGapBetweenTesters(t *testing.T) {
	full := []rowSpan{{1, 0, 10 * time.Second}, {2, 10 * time.Second, 20 * time.Second}}
	stopped := append(full[:2:2], rowSpan{3, 20 * time.Second, 20500 * time.Millisecond})
	late := append(full[:2:2], rowSpan{3, 21 * time.Second, 30 * time.Second})
	for _, stops := range []int{0, 1} {
		dir := t.TempDir()
		writeRows(t, filepath.Join(dir, fmt.Sprintf("results-%d.csv", stops)), stopped...)
		writeRows(t, filepath.Join(dir, fmt.Sprintf("results-%d.csv", 1-stops)), late...)
		sum, err := SummarizeDir(dir, mergeSLO)
		if err != nil {
			t.Fatal(err)
		}
		why := []string{fmt.Sprintf("tester %d sent load for 0.4 of the step's 9.9 s (stopped 9.5 s early)", stops),
			fmt.Sprintf("tester %d sent load for 8.9 of the step's 9.9 s (started 1.0 s late)", 1-stops)}
		if stops == 1 {
			why[0], why[1] = why[1], why[0]
		}
		checkSteps(t, sum, []wantStep{{2, 200, 1, ""}, {4, 200, 2, ""}, {6, 95, 3, strings.Join(why, "; ")}})
		for _, w := range sum.Warnings {
			if strings.Contains(w, "same plan") {
				t.Errorf("tester %d stopped: warning %q", stops, w)
			}
		}
	}
}

// The gap rule does not join steps of one key that another step lies
// between: tester 1 ran concurrency 3 in the slot where tester 0 stopped
// early at 2, so its own step at 2 a slot later is another step, and the
// testers did not run the same plan.
func TestMergeGapWithAnotherStepBetween(t *testing.T) {
	dir := t.TempDir()
	writeRows(t, filepath.Join(dir, "results-0.csv"), rowSpan{1, 0, 10 * time.Second}, rowSpan{2, 10 * time.Second, 10500 * time.Millisecond})
	writeRows(t, filepath.Join(dir, "results-1.csv"), rowSpan{1, 0, 10 * time.Second}, rowSpan{3, 10 * time.Second, 20 * time.Second}, rowSpan{2, 20 * time.Second, 30 * time.Second})
	sum, err := SummarizeDir(dir, mergeSLO)
	if err != nil {
		t.Fatal(err)
	}
	checkSteps(t, sum, []wantStep{{2, 200, 1, ""},
		{2, 5, 2, "tester 1 sent no load in it (its rows in this slot say concurrency 3)"},
		{2, 100, 2, "tester 0 sent no load in it"},
		{3, 100, 3, "tester 0 sent no load in it (its rows in this slot say concurrency 2)"}})
	var plan []string
	for _, w := range sum.Warnings {
		if strings.Contains(w, "same plan") {
			plan = append(plan, w)
		}
	}
	if want := "in the slot at offsets 10.0-10.4 s tester 0's rows say concurrency 2, tester 1's concurrency 3: the testers did not run the same plan; the two steps are kept apart, each incomplete"; len(plan) != 1 || plan[0] != want {
		t.Errorf("plan warnings %q, want [%q]", plan, want)
	}
	// The same with the testers' keys swapped: nothing between them, so
	// tester 1's late start and tester 0's early stop are one step.
	dir = t.TempDir()
	writeRows(t, filepath.Join(dir, "results-0.csv"), rowSpan{1, 0, 10 * time.Second}, rowSpan{2, 10 * time.Second, 10500 * time.Millisecond})
	writeRows(t, filepath.Join(dir, "results-1.csv"), rowSpan{1, 0, 10 * time.Second}, rowSpan{2, 15 * time.Second, 20 * time.Second})
	if sum, err = SummarizeDir(dir, mergeSLO); err != nil {
		t.Fatal(err)
	}
	checkSteps(t, sum, []wantStep{{2, 200, 1, ""}, {4, 55, 2, "tester 0 sent load for 0.4 of the step's 9.9 s (stopped 9.5 s early); tester 1 sent load for 4.9 of the step's 9.9 s (started 5.0 s late)"}})
}

// Tester 0 stopped 0.1 s into concurrency 3, tester 1 began it 0.2 s in, tester 2
// ran it later and then concurrency 1 again, after that step.
func TestPairSlotsGapKnownAnswer(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * 100 * time.Millisecond }
	step := func(tester, conc, a, l, b int) *stepAcc {
		st := &stepAcc{concurrency: conc, key: stepKey{conc, 0}, stats: NewStats(), steady: NewSteadiness(), byType: NewTypeStats(),
			spans: []testerSpan{{tester: tester, firstStart: ms(a), lastStart: ms(l), lastEnd: ms(b)}}}
		r := load.Result{Offset: ms(a), Status: 200, Concurrency: conc}
		st.stats.Record(&r)
		return st
	}
	merged, warnings := pairSlots([][]*stepAcc{
		{step(0, 1, 0, 9, 10), step(0, 2, 10, 19, 20), step(0, 3, 20, 21, 21)},
		{step(1, 1, 0, 9, 10), step(1, 2, 10, 19, 20), step(1, 3, 22, 29, 30)},
		{step(2, 3, 35, 39, 40), step(2, 1, 40, 49, 50)},
	})
	var got []string
	for _, m := range merged {
		var testers []string
		for _, sp := range m.spans {
			testers = append(testers, fmt.Sprint(sp.tester))
		}
		got = append(got, fmt.Sprintf("%d:%s", m.key.concurrency, strings.Join(testers, ",")))
	}
	// In creation order; Finish sorts them by key.
	if want := "1:0,1 2:0,1 3:0,1,2 1:2"; strings.Join(got, " ") != want || len(warnings) != 0 {
		t.Fatalf("merged %q, warnings %q; want %q and none", got, warnings, want)
	}
	if m := merged[2]; m.concurrency != 9 || m.stats.Snapshot().Requests != 3 {
		t.Fatalf("concurrency 3 step: concurrency %d, %d requests; want 9, 3", m.concurrency, m.stats.Snapshot().Requests)
	}
}

// A row of a step written after the next step's first rows (rows out of
// order: a sorted or concatenated file, never what the writer does) is
// refused with the file and line, not folded into a figure.
func TestMergeSameTesterRowsOutOfOrder(t *testing.T) {
	dir := t.TempDir()
	writeSlots(t, filepath.Join(dir, "results-0.csv"), []int{1, 2}, 0)
	writeCSVFile(t, filepath.Join(dir, "results-1.csv"), func(row func(off, latency time.Duration, c int)) {
		rec := func(off time.Duration, c int) { row(off, time.Duration(c)*time.Millisecond, c) }
		for j := 0; j < 99; j++ {
			rec(time.Duration(j)*100*time.Millisecond, 1)
		}
		for j := 0; j < 50; j++ {
			rec(10*time.Second+time.Duration(j)*100*time.Millisecond, 2)
		}
		rec(9900*time.Millisecond, 1)
		for j := 50; j < 100; j++ {
			rec(10*time.Second+time.Duration(j)*100*time.Millisecond, 2)
		}
	})
	_, err := SummarizeDir(dir, mergeSLO)
	if err == nil || !strings.Contains(err.Error(), "results-1.csv:151: rows of the step at concurrency 1, rate 0 appear again") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want a one-line refusal naming results-1.csv:151, got %v", err)
	}
}

// FuzzPairSlots: whatever the testers' steps (keys, times, overlaps, rows
// out of order), pairing keeps every request once, one span per tester in
// a merged step, one key per merged step, and sums each tester's
// concurrency once.
func FuzzPairSlots(f *testing.F) {
	f.Add([]byte{0, 1, 0, 9, 0, 2, 10, 9, 1, 1, 0, 9, 1, 3, 10, 9})
	f.Add([]byte{0, 1, 0, 9, 1, 1, 5, 9, 1, 1, 0, 2, 0, 2, 3, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4*500 {
			return
		}
		perFile := make([][]*stepAcc, 3)
		total := int64(0)
		for i := 0; i+4 <= len(data); i += 4 {
			file, conc := int(data[i]%3), int(data[i+1]%4)+1
			start, length := time.Duration(data[i+2])*time.Second, time.Duration(data[i+3]%20)*time.Second
			st := &stepAcc{concurrency: conc, key: stepKey{conc, 0}, stats: NewStats(), steady: NewSteadiness(), byType: NewTypeStats(),
				spans: []testerSpan{{tester: file, firstStart: start, lastStart: start + length, lastEnd: start + length + time.Millisecond}}}
			for _, off := range []time.Duration{start, start + length} {
				r := load.Result{Offset: off, Latency: time.Millisecond, Status: 200, Concurrency: conc}
				st.stats.Record(&r)
				st.steady.Record(&r)
				total++
			}
			perFile[file] = append(perFile[file], st)
		}
		merged, _ := pairSlots(perFile)
		got := int64(0)
		for _, m := range merged {
			got += m.stats.Snapshot().Requests
			seen := map[int]bool{}
			for _, sp := range m.spans {
				if seen[sp.tester] {
					t.Fatalf("tester %d twice in one merged step", sp.tester)
				}
				seen[sp.tester] = true
			}
			if m.concurrency != m.key.concurrency*len(m.spans) {
				t.Fatalf("concurrency %d for key %d and %d testers", m.concurrency, m.key.concurrency, len(m.spans))
			}
		}
		if got != total {
			t.Fatalf("%d requests merged, %d recorded", got, total)
		}
	})
}
