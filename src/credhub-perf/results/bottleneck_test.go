package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/targetload"
)

// targetRunDir writes a run of two 3-s steps (concurrency 1 then 2) and the
// given samples file.
func targetRunDir(t *testing.T, samples string) string {
	dir := t.TempDir()
	var rows []string
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for step, conc := range []int{1, 2} {
		for i := 0; i < 75; i++ {
			off := time.Duration(step)*3*time.Second + time.Duration(i)*40*time.Millisecond
			rows = append(rows, fmt.Sprintf("%s,0.010000,0,0,0,0.010000,0,200,%.6f,%d,0,0.000000,,get", base.Add(off).Format(time.RFC3339Nano), off.Seconds(), conc))
		}
	}
	os.WriteFile(filepath.Join(dir, "results.csv"), []byte(CSVHeader+"\n"+strings.Join(rows, "\n")+"\n"), 0o644)
	if samples != "" {
		os.WriteFile(filepath.Join(dir, targetload.FileName), []byte(samples), 0o644)
	}
	return dir
}

var slo = SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}

func TestSummarizeDirAttributesTargetSamples(t *testing.T) {
	dir := targetRunDir(t, targetload.OldHeader+"\n"+
		"proc,credhub,pid 1,0,3,0.4000,1048576\n"+
		"proc,database,postgres,0,3,0.2000,\n"+
		"proc,credhub,pid 1,3,6,0.9000,1048576\n"+
		"proc,database,postgres,3,6,,10485760\n") // database CPU unknown at step 2
	sum, err := SummarizeDirAt(dir, slo, false)
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := sum.Steps[0].Target, sum.Steps[1].Target
	if s1 == nil || s2 == nil || *s1.Resources[0].CPU != 0.4 || *s2.Resources[0].CPU != 0.9 || s2.Resources[1].CPU != nil {
		t.Fatalf("steps' targets %+v %+v", s1, s2)
	}
	if strings.Join(sum.TargetSources, ",") != "proc" || sum.Bottleneck == nil || sum.Bottleneck.Resource != targetload.CredHub || sum.Bottleneck.Step != 2 {
		t.Errorf("bottleneck %+v sources %v", sum.Bottleneck, sum.TargetSources)
	}
	var b strings.Builder
	sum.WriteTable(&b)
	for _, want := range []string{"target at step 2 (", "CredHub instances 90 % CPU, 1 MiB; database CPU unknown, 10 MiB", "bottleneck: CredHub instances at 90 % CPU (step 2) [sampled: proc]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary.txt lacks %q:\n%s", want, b.String())
		}
	}
}

func TestSummarizeDirHostileTargetSamples(t *testing.T) {
	// Not a samples file: one warning, no figures, the summary still made.
	sum, err := SummarizeDirAt(targetRunDir(t, "offset,cpu\n1,2\n"), slo, false)
	if err != nil || sum.Steps[0].Target != nil || !strings.Contains(strings.Join(sum.Warnings, "|"), "target samples not used") {
		t.Fatalf("%v %+v %q", err, sum.Steps[0].Target, sum.Warnings)
	}
	// Bad lines are skipped with FILE:LINE; a file without usable samples
	// says the target was not measured, never zero.
	sum, err = SummarizeDirAt(targetRunDir(t, targetload.Header+"\nproc,credhub,x,0,3,NaN,\nproc,credhub,x,0,3,0.5\n"), slo, false)
	if err != nil || sum.Steps[0].Target != nil || sum.Bottleneck == nil || !strings.HasPrefix(sum.Bottleneck.Verdict, "not measured") {
		t.Fatalf("%v %+v", err, sum.Bottleneck)
	}
	if w := strings.Join(sum.Warnings, "|"); !strings.Contains(w, "target-samples.csv:2:") || !strings.Contains(w, "target-samples.csv:3:") {
		t.Errorf("warnings %q", sum.Warnings)
	}
	// No file: nothing in summary.json, one line in summary.txt.
	sum, _ = SummarizeDirAt(targetRunDir(t, ""), slo, false)
	var b strings.Builder
	sum.WriteTable(&b)
	if sum.Bottleneck != nil || strings.Count(b.String(), "bottleneck: not measured: no target source configured") != 1 || strings.Contains(b.String(), "target at step") {
		t.Errorf("%+v\n%s", sum.Bottleneck, b.String())
	}
}

// Samples with the machine columns: the shared core is the verdict and
// summary.txt shows the machine; a run whose director never answered says
// so beside "no target sample".
func TestSummarizeDirSharedCoreAndSilentDirector(t *testing.T) {
	dir := targetRunDir(t, targetload.Header+"\n"+
		"proc,credhub,pid 1,0,3,0.4000,,1,cpus 1,0.6000,0.0000,0.0000,0.0100\n"+
		"proc,database,pid 2,0,3,0.2000,,1,cpus 1,0.6000,0.0000,0.0000,0.0100\n"+
		"proc,credhub,pid 1,3,6,0.7300,,1,cpus 1,0.9700,0.0000,0.0000,0.0000\n"+
		"proc,database,pid 2,3,6,0.2400,,1,cpus 1,0.9700,0.0000,0.0000,0.0000\n")
	sum, err := SummarizeDirAt(dir, slo, false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Bottleneck == nil || sum.Bottleneck.Resource != "shared" || sum.Bottleneck.Step != 2 ||
		sum.Bottleneck.Verdict != "CPU 1, shared by CredHub (73 %) and the database (24 %), is 97 % busy: the core they share is the limit; give them separate cores or VMs" {
		t.Errorf("bottleneck %+v", sum.Bottleneck)
	}
	if m := sum.Steps[1].Target.Machines; len(m) != 1 || m[0].Machine != "cpus 1" || *m[0].Busy != 0.97 || strings.Join(m[0].Resources, ",") != "credhub,database" {
		t.Errorf("machines %+v", m)
	}
	var b strings.Builder
	sum.WriteTable(&b)
	if !strings.Contains(b.String(), "database 24 % CPU; CPU 1 97 % busy (0 % other work, 0 % stolen)") {
		t.Errorf("summary.txt:\n%s", b.String())
	}

	dir = targetRunDir(t, targetload.Header+"\n")
	meta := `{"tester":0,"testers":1,"target_load":{"sources":["bosh"],"resources":["credhub"],"problems":{"bosh":["bosh vms --vitals for deployment cf: the director did not answer within 1m0s; its samples are missing"]}}}`
	os.WriteFile(filepath.Join(dir, "meta.json"), []byte(meta), 0o644)
	sum, err = SummarizeDirAt(dir, slo, false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Bottleneck == nil || sum.Bottleneck.Verdict != "not measured: no target sample fell within any step; bosh: bosh vms --vitals for deployment cf: the director did not answer within 1m0s; its samples are missing" {
		t.Errorf("bottleneck %+v", sum.Bottleneck)
	}
}

// A 2 GB samples file of one line (sparse) costs the summary a bounded
// read and one warning, not its memory.
func TestSummarizeDirHugeSamplesLine(t *testing.T) {
	dir := targetRunDir(t, "")
	f, err := os.Create(filepath.Join(dir, targetload.FileName))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(targetload.Header + "\n")
	if err := f.Truncate(2 << 30); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	sum, err := SummarizeDirAt(dir, slo, false)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range sum.Warnings {
		if strings.Contains(w, "a line over 64 KiB") {
			n++
			if len(w) > 300 || strings.Contains(w, "\n") {
				t.Errorf("warning %.300q", w)
			}
		}
	}
	if n != 1 || sum.Steps[0].Target != nil {
		t.Errorf("warnings %q, step 1 target %+v", sum.Warnings, sum.Steps[0].Target)
	}
}
