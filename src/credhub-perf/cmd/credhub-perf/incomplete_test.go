package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/results"
)

// fixtures: run directories shared with headroom-plot's tests, and what
// summary says about them (answers.json, results/missing_test.go).
var fixtures = filepath.Join("..", "..", "results", "testdata", "missing-testers")

const missingWhy = "testers 1, 2 of 3 left no results file: their load is in no figure"

func copyRun(t *testing.T, name, into string) string {
	t.Helper()
	dst := filepath.Join(into, name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(fixtures, name, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// answer is the run's summary.json as answers.json has it, re-encoded.
func answer(t *testing.T, name string) []byte {
	t.Helper()
	var a struct {
		Runs map[string]struct {
			Summary *results.Summary `json:"summary"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(filepath.Join(fixtures, "answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(a.Runs[name].Summary)
	return out
}

func sameSummary(t *testing.T, dir, name string) *results.Summary {
	t.Helper()
	s, err := results.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(s)
	if want := answer(t, name); !bytes.Equal(got, want) {
		t.Fatalf("%s/summary.json\n%s\nwant (answers.json)\n%s", dir, got, want)
	}
	return s
}

// `credhub-perf summary` and `merge` on a run of 3 testers of which only
// tester 0's files are there: every step incomplete, the reason naming
// testers 1 and 2, no capacity figure; on both testers' files of a run of
// 2, the capacity.
func TestSummaryAndMergeIncompleteRun(t *testing.T) {
	for _, cmd := range []string{"summary", "merge"} {
		for _, name := range []string{"three-testers-one-file", "two-testers-both"} {
			t.Run(cmd+"/"+name, func(t *testing.T) {
				dir := copyRun(t, name, t.TempDir())
				var out, errb bytes.Buffer
				if code := Main([]string{cmd, dir}, &out, &errb); code != 0 {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
				s := sameSummary(t, dir, name)
				txt := out.String()
				if name == "two-testers-both" {
					if s.Incomplete || s.MaxThroughputAtSLO == nil || !strings.Contains(txt, "max throughput at SLO: 56.6 req/s") || strings.Contains(txt, "incomplete") {
						t.Fatalf("control:\n%s", txt)
					}
					return
				}
				for _, want := range []string{
					"INCOMPLETE RUN: " + missingWhy,
					"max throughput at SLO: unknown: incomplete run: " + missingWhy + "\n",
					"knee: none (incomplete run)\n",
				} {
					if !strings.Contains(txt, want) {
						t.Errorf("%s prints no %q:\n%s", cmd, want, txt)
					}
				}
				// Tester 0's own summary said 28.3 req/s.
				if strings.Contains(txt, "28.3") || s.MaxThroughputAtSLO != nil || s.Knee != nil {
					t.Errorf("a capacity figure for an incomplete run:\n%s", txt)
				}
			})
		}
	}
}

// `credhub-perf collect` with only tester 0's tarball of a run of 3 warns,
// naming the missing testers, and writes summary's summary.json.
func TestCollectIncompleteRunCommand(t *testing.T) {
	src := copyRun(t, "three-testers-one-file", t.TempDir())
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	files, _ := filepath.Glob(filepath.Join(src, "*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if err := tw.WriteHeader(&tar.Header{Name: "./credhub-perf/20260102T030405Z-get-missing-testers/" + filepath.Base(f), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(b)
	}
	tw.Close()
	zw.Close()
	tgz := filepath.Join(t.TempDir(), "credhub-perf-0.tgz")
	if err := os.WriteFile(tgz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"collect", "--out", out, tgz}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	dir := strings.TrimSpace(stdout.String())
	want := "credhub-perf collect: warning: " + dir + ": incomplete run: " + missingWhy + "; every step is incomplete and the run gives no capacity"
	if !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr %q; want %q", stderr.String(), want)
	}
	sameSummary(t, dir, "three-testers-one-file")
}
