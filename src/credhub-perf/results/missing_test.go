package results

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// missingDir holds run directories of several testers shared with
// headroom-plot's tests (plotting/tests/test_missing.py), which hold the
// plotter to answers.json, what summary says about them:
//   - three-testers-one-file: meta.json says 3 testers, only tester 0's
//     files are there (its own summary.json, as a tester writes it, gives a
//     capacity): only tester 0's tarball was collected, or the others never
//     ran;
//   - two-testers-both: the control, both testers' files.
//
// `go test ./results -update` rewrites the directories and answers.json.
const missingDir = "testdata/missing-testers"

// MissingFixtures are the fixture run directories, by name.
var missingFixtures = []struct {
	name          string
	testers, have int
}{
	{"three-testers-one-file", 3, 1},
	{"two-testers-both", 2, 2},
}

// The fixture's ramp: step k runs 4 s from 5·k s at concurrency conc[k],
// one request every 100 ms / conc[k] taking lat[k], on every tester: the
// SLO (p95 <= 100 ms) holds at steps 0 and 1 and not at 2.
var (
	fixtureConc = []int{1, 2, 4}
	fixtureLat  = []time.Duration{20 * time.Millisecond, 60 * time.Millisecond, 150 * time.Millisecond}
)

func writeMissingFixture(t *testing.T, dir string, tester, testers int) {
	t.Helper()
	name := "results-" + itoa(tester) + ".csv"
	writeCSVFile(t, filepath.Join(dir, name), func(rec func(off, latency time.Duration, c int)) {
		for k, c := range fixtureConc {
			every := 100 * time.Millisecond / time.Duration(c)
			for j := 0; j < 40*c; j++ {
				rec(time.Duration(k)*5*time.Second+time.Duration(j)*every, fixtureLat[k], c)
			}
		}
	})
	// The tester's own summary, as the run writes it: it sees its file only.
	own, err := SummarizeFiles([]string{filepath.Join(dir, name)}, mergeSLO)
	if err != nil {
		t.Fatal(err)
	}
	m := &Meta{ToolVersion: "fixture", Scenario: "get", Label: "missing-testers", Tester: tester, Testers: testers, Mode: "closed",
		Status: "ok", Command: "run", ResultsFile: name, StartedAt: "2026-01-02T03:04:05Z", EndedAt: "2026-01-02T03:04:19Z",
		SLO: MetaSLO{Percentile: 95, LatencyS: 0.1}}
	for _, st := range own.Steps {
		m.Steps = append(m.Steps, MetaStep{Concurrency: st.Concurrency, Requests: st.Requests, DurationS: st.DurationS})
	}
	base := "summary"
	if tester > 0 {
		base = "summary-" + itoa(tester)
	}
	if err := own.WriteFilesAs(dir, base); err != nil {
		t.Fatal(err)
	}
	if err := WriteMetaFile(filepath.Join(dir, metaFile(tester)), m); err != nil {
		t.Fatal(err)
	}
}

func itoa(i int) string { return string(rune('0' + i)) }

// copyFixture copies a fixture run directory into a fresh directory, so
// summary's rewrite never touches testdata.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(missingDir, name)
	dst := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

type missingAnswer struct {
	// Summary: summary.json as `credhub-perf summary DIR` writes it.
	Summary *Summary `json:"summary"`
	// NoCapacity: summary.txt's reason for no capacity without its
	// "unknown: " ("" when the run has one).
	NoCapacity string `json:"no_capacity"`
}

type reasonCase struct {
	Planned int    `json:"planned"`
	Have    []int  `json:"have"`
	Missing []int  `json:"missing"`
	Reason  string `json:"reason"`
}

type missingAnswers struct {
	Runs    map[string]missingAnswer `json:"runs"`
	Reasons []reasonCase             `json:"reasons"`
}

// rewriteMissingFixtures writes the fixtures' run directories afresh (-update).
func rewriteMissingFixtures(t *testing.T) {
	for _, f := range missingFixtures {
		dir := filepath.Join(missingDir, f.name)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < f.have; i++ {
			writeMissingFixture(t, dir, i, f.testers)
		}
	}
}

func TestMissingTestersFixture(t *testing.T) {
	if *update {
		rewriteMissingFixtures(t)
	}
	got := missingAnswers{Runs: map[string]missingAnswer{}}
	for _, f := range missingFixtures {
		dir := copyFixture(t, f.name)
		sum, err := SummarizeDir(dir, SLO{Percentile: 99, LatencyS: 5, MaxErrorRate: 0.5}) // the fixture's own SLO wins
		if err != nil {
			t.Fatal(err)
		}
		got.Runs[f.name] = missingAnswer{sum, strings.TrimPrefix(sum.NoCapacityReason(), "unknown: ")}
	}

	// The known answers.
	three, two := got.Runs["three-testers-one-file"].Summary, got.Runs["two-testers-both"].Summary
	want := "testers 1, 2 of 3 left no results file: their load is in no figure"
	if !three.Incomplete || three.IncompleteReason != want || !reflect.DeepEqual(three.MissingTesters, []int{1, 2}) {
		t.Fatalf("3 testers, 1 file: incomplete %v %q, missing %v; want %q", three.Incomplete, three.IncompleteReason, three.MissingTesters, want)
	}
	if len(three.Steps) != 3 {
		t.Fatalf("3 testers, 1 file: %d steps", len(three.Steps))
	}
	for _, st := range three.Steps {
		if !st.Incomplete || st.IncompleteReason != want {
			t.Fatalf("step %d: incomplete %v %q; want %q", st.Step, st.Incomplete, st.IncompleteReason, want)
		}
	}
	if three.MaxThroughputAtSLO != nil || three.Knee != nil || got.Runs["three-testers-one-file"].NoCapacity != "incomplete run: "+want {
		t.Fatalf("3 testers, 1 file: max throughput at SLO %v, knee %v, reason %q", three.MaxThroughputAtSLO, three.Knee, got.Runs["three-testers-one-file"].NoCapacity)
	}
	if two.Incomplete || two.IncompleteReason != "" || two.MissingTesters == nil || len(two.MissingTesters) != 0 {
		t.Fatalf("control: incomplete %v %q, missing %v", two.Incomplete, two.IncompleteReason, two.MissingTesters)
	}
	for _, st := range two.Steps {
		if st.Incomplete {
			t.Fatalf("control: step %d incomplete: %s", st.Step, st.IncompleteReason)
		}
	}
	// Between step 1 (160 requests over 4.01 s, p95 60 ms) and step 2 (320
	// over 4.125 s, p95 150 ms), 4/9 of the way.
	capacity := 160/4.01 + 4.0/9*(320/4.125-160/4.01)
	if two.MaxThroughputAtSLO == nil || math.Abs(*two.MaxThroughputAtSLO-capacity) > 0.01*capacity || got.Runs["two-testers-both"].NoCapacity != "" {
		t.Fatalf("control: max throughput at SLO %v, want %.1f", two.MaxThroughputAtSLO, capacity)
	}

	for _, c := range []struct {
		planned int
		have    []int
	}{
		{3, []int{0}}, {3, []int{0, 1}}, {3, []int{1, 2}}, {2, []int{0, 1}}, {5, []int{0, 3}},
		{15, []int{0, 1, 2}}, // more than 10 missing: the first 10 named
	} {
		have := map[int]bool{}
		for _, h := range c.have {
			have[h] = true
		}
		missing := MissingTesters(c.planned, have)
		why := ""
		if len(missing) > 0 {
			why = MissingTestersReason(c.planned, missing)
		}
		got.Reasons = append(got.Reasons, reasonCase{c.planned, c.have, missing, why})
	}
	if r := got.Reasons[1].Reason; r != "tester 2 of 3 left no results file: its load is in no figure" {
		t.Fatalf("one missing tester: %q", r)
	}
	if r := got.Reasons[5].Reason; r != "testers 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 and 2 more of 15 left no results file: their load is in no figure" {
		t.Fatalf("12 missing testers: %q", r)
	}

	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	answers := filepath.Join(missingDir, "answers.json")
	if *update {
		if err := os.WriteFile(answers, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old, err := os.ReadFile(answers)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, old) {
		t.Errorf("%s is not what summary says now: if the change is meant, run go test ./results -update and make headroom-plot say the same (cd plotting && python -m pytest tests/test_missing.py)", answers)
	}
}

// summary.txt of a run with missing testers says so, and gives no figure
// on its capacity lines.
func TestIncompleteRunSummaryText(t *testing.T) {
	dir := copyFixture(t, "three-testers-one-file")
	if _, err := SummarizeDir(dir, mergeSLO); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	txt := string(b)
	why := "testers 1, 2 of 3 left no results file: their load is in no figure"
	for _, want := range []string{
		"INCOMPLETE RUN: " + why + "; every step is incomplete and the run gives no capacity\n",
		"max throughput at SLO: unknown: incomplete run: " + why + "\n",
		"knee: none (incomplete run)\n",
		"warning: step 3 (concurrency 4) is incomplete: " + why + ";",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("summary.txt lacks %q:\n%s", want, txt)
		}
	}
	if n := strings.Count(txt, "incomplete\n"); n != 3 {
		t.Errorf("%d step lines flagged incomplete, want 3:\n%s", n, txt)
	}

	// A capacity search's answer kept from the tester's own summary.json
	// is not given as the run's capacity either.
	s, err := ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	s.Capacity = &Capacity{Concurrency: 2, Throughput: 20, Probes: 3, Found: true}
	var sb strings.Builder
	s.WriteTable(&sb)
	if !strings.Contains(sb.String(), "capacity: unknown: incomplete run") || strings.Contains(sb.String(), "meets the SLO at") {
		t.Errorf("capacity of an incomplete run:\n%s", sb.String())
	}
}

// A hand-made Summary that says the run is incomplete gives no figure even
// when its steps are not flagged.
func TestIncompleteRunFinishDropsFigures(t *testing.T) {
	s := &Summary{SLO: mergeSLO, Incomplete: true, IncompleteReason: "tester 1 of 2 left no results file: its load is in no figure"}
	for i, c := range []int{1, 2} {
		s.Steps = append(s.Steps, SummaryStep{Step: i, Concurrency: c, Tally: Tally{Requests: 100}, Throughput: float64(10 * c),
			Latencies: Latencies{MeanS: 0.01, SLOPercentileS: 0.02}, MeetsSLO: true, Steady: bp(true)})
	}
	s.Finish()
	if s.MaxThroughputAtSLO != nil || s.Knee != nil || s.NoCapacityReason() != "unknown: incomplete run: "+s.IncompleteReason {
		t.Fatalf("max %v knee %v reason %q", s.MaxThroughputAtSLO, s.Knee, s.NoCapacityReason())
	}
}
