package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

// credhub-perf summary on damaged CSVs (a stray quote, binary junk, NaN or
// out-of-range latencies, a repeated header, interleaved steps): one line
// FILE:LINE: ..., exit 2, and no summary.json written; never a panic or a
// summary of nonsense figures.
func TestSummaryOfDamagedCSV(t *testing.T) {
	good := "2026-01-01T00:00:00.000001Z,0.001000,0,0,0,0,0,200,0.000001,1,0,0,,get\n"
	for name, bad := range map[string]string{
		"quote":  "ab\"c,1,2\n",
		"binary": "\x00\xff\x89PNG\r\n",
		"nan":    strings.Replace(good, "0.001000", "nan", 1),
		"1e309":  strings.Replace(good, "0.001000", "1e309", 1),
		"1e300":  strings.Replace(good, "0.001000", "1e300", 1),
		// a concatenated file: the header again, then more rows
		"header repeated": results.CSVHeader + "\n",
		// step 2's row between step 1's: a sorted or concatenated file,
		// whose figures would come from reordered rows
		"steps interleaved": strings.Replace(good, ",200,0.000001,1,", ",200,0.000001,2,", 1),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "results.csv")
			want := ":4: "
			if name == "steps interleaved" {
				want = ":5: " // the step 1 row after it is what is out of order
			}
			if err := os.WriteFile(p, []byte(results.CSVHeader+"\n"+good+good+bad+good), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, arg := range []string{p, dir} {
				var out, errb bytes.Buffer
				code := Main([]string{"summary", arg}, &out, &errb)
				msg := strings.TrimSuffix(errb.String(), "\n")
				if code != 2 || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "credhub-perf summary: "+p+want) {
					t.Fatalf("summary %s: exit %d, stderr %q; want exit 2 and one line naming %s%s", arg, code, errb.String(), p, want)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "summary.json")); !os.IsNotExist(err) {
				t.Fatalf("summary.json written from a damaged CSV (%v)", err)
			}
		})
	}
}

// writeSlots writes one tester's CSV: slot i is the 10 s from 10·i s, 100
// requests of 5 ms at concurrency conc[i], none when conc[i] is 0.
func writeSlots(t *testing.T, path string, conc []int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := results.NewCSVWriter(f)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for si, c := range conc {
		for j := 0; c > 0 && j < 100; j++ {
			off := time.Duration(si)*10*time.Second + time.Duration(j)*100*time.Millisecond
			w.Record(&load.Result{Start: base.Add(off), Offset: off, Latency: 5 * time.Millisecond, Status: 200, Concurrency: c})
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// summary --json is what headroom-plot reads instead of merging and
// explaining itself: summary.json's object, the no-capacity reason, and
// which tester's own step each step is made of. It writes nothing.
func TestSummaryJSON(t *testing.T) {
	dir := t.TempDir()
	writeSlots(t, filepath.Join(dir, "results-0.csv"), []int{1, 2, 3})
	writeSlots(t, filepath.Join(dir, "results-1.csv"), []int{1, 0, 3})
	var out, errb bytes.Buffer
	if code := Main([]string{"summary", "--json", "--slo.latency", "100ms", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); !os.IsNotExist(err) {
		t.Fatalf("summary --json wrote summary.json (%v)", err)
	}
	var doc struct {
		Summary          json.RawMessage `json:"summary"`
		NoCapacityReason *string         `json:"no_capacity_reason"`
		MergeWarnings    []string        `json:"merge_warnings"`
		Steps            []struct {
			Step  int                `json:"step"`
			Parts []results.StepPart `json:"parts"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out.String())
	}
	// the summary part is summary.json's, byte for byte apart from indentation
	if code := Main([]string{"summary", "--slo.latency", "100ms", dir}, &bytes.Buffer{}, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	written, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := json.Compact(&a, doc.Summary); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&b, written); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("--json's summary differs from summary.json:\n%s\n%s", a.String(), b.String())
	}
	if doc.NoCapacityReason == nil || doc.MergeWarnings == nil {
		t.Fatalf("no_capacity_reason and merge_warnings must be present: %s", out.String())
	}
	type part struct {
		name  string
		local int
		rows  int64
	}
	var got [][]part
	for i, st := range doc.Steps {
		if st.Step != i+1 {
			t.Fatalf("step %d numbered %d", i+1, st.Step)
		}
		var ps []part
		for _, p := range st.Parts {
			ps = append(ps, part{p.Name, p.Local, p.Rows})
		}
		got = append(got, ps)
	}
	// tester 1 missed concurrency 2: its step 1 is the slot of concurrency 3
	want := [][]part{{{"results-0.csv", 0, 100}, {"results-1.csv", 0, 100}}, {{"results-0.csv", 1, 100}}, {{"results-0.csv", 2, 100}, {"results-1.csv", 1, 100}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parts %v, want %v", got, want)
	}
	// the CSV files of one run give the same merge
	out.Reset()
	if code := Main([]string{"summary", "--json", filepath.Join(dir, "results-0.csv"), filepath.Join(dir, "results-1.csv")}, &out, &errb); code != 0 || !strings.Contains(out.String(), `"local_step": 1`) {
		t.Fatalf("CSV files: exit %d, %s%s", code, out.String(), errb.String())
	}
}

// A run without a capacity though its steps met the SLO: --json gives the
// reason summary.txt gives, at the SLO of its flags even where
// summary.json has another.
func TestSummaryJSONNoCapacityReasonAtTheFlagsSLO(t *testing.T) {
	dir := t.TempDir()
	writeSlots(t, filepath.Join(dir, "results.csv"), []int{1, 2})
	var txt, out, errb bytes.Buffer
	if code := Main([]string{"summary", "--slo.latency", "1ms", dir}, &txt, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	if code := Main([]string{"summary", "--json", "--slo.latency", "100ms", dir}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	var doc struct {
		Summary struct {
			SLO results.SLO `json:"slo"`
		} `json:"summary"`
		NoCapacityReason string `json:"no_capacity_reason"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Summary.SLO.LatencyS != 0.1 {
		t.Fatalf("SLO %+v, want the flags' 100ms", doc.Summary.SLO)
	}
	// 10 s steps of constant latency are steady: each counts
	if doc.NoCapacityReason != "" {
		t.Fatalf("no_capacity_reason %q for a run with a capacity", doc.NoCapacityReason)
	}
	short := t.TempDir()
	f, err := os.Create(filepath.Join(short, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w := results.NewCSVWriter(f)
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for j := 0; j < 50; j++ { // one step of 1 s: too short to judge steady
		off := time.Duration(j) * 20 * time.Millisecond
		w.Record(&load.Result{Start: base.Add(off), Offset: off, Latency: 5 * time.Millisecond, Status: 200, Concurrency: 1})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	txt.Reset()
	if code := Main([]string{"summary", "--json", short}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{"summary", short}, &txt, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	if doc.NoCapacityReason == "" || !strings.Contains(txt.String(), "max throughput at SLO: "+doc.NoCapacityReason+"\n") {
		t.Fatalf("no_capacity_reason %q is not summary.txt's line:\n%s", doc.NoCapacityReason, txt.String())
	}
}
