package collect

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/results"
)

type entry struct {
	name, body string
	typ        byte
	link       string // a link's target; "" = /etc/passwd
}

func tgz(t *testing.T, dir, name string, entries ...entry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: 0o644, Size: int64(len(e.body))}
		if typ == tar.TypeSymlink || typ == tar.TypeLink {
			h.Linkname, h.Size = e.link, 0
			if h.Linkname == "" {
				h.Linkname = "/etc/passwd"
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw.Close()
	zw.Close()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const header = "start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset,concurrency,rate,sched-lag,error\n"

func rows(start string) string {
	return header +
		start + ",0.010000,0,0,0,0.009,0.001,200,0.000000,1,0,0,\n" +
		start + ",0.012000,0,0,0,0.011,0.001,200,0.020000,1,0,0,\n"
}

const run = "./credhub-perf/20261124T230000Z-get-2-instances/"

var slo = results.SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}

// Two testers' tarballs, as --download-logs writes them: one run directory
// with both CSVs, tester 0's meta.json, a summary over both, both logs.
func TestTwoTesters(t *testing.T) {
	in := t.TempDir()
	a := tgz(t, in, "credhub-perf-0.tgz",
		entry{name: "./credhub-perf/", typ: tar.TypeDir},
		entry{name: run + "meta.json", body: `{"scenario":"get","tester":0,"testers":2,"label":"2-instances"}`},
		entry{name: run + "results-0.csv", body: rows("2026-11-24T23:00:00.000000Z")},
		entry{name: run + "summary.json", body: `{"slo":{"percentile":95,"latency_s":0.1,"max_error_rate":0.01},"steps":[]}`},
		entry{name: "./credhub-perf/credhub-perf-0.stdout.log", body: "tester 0\n"})
	b := tgz(t, in, "credhub-perf-1.tgz",
		entry{name: run + "meta-1.json", body: `{"scenario":"get","tester":1,"testers":2}`},
		entry{name: run + "results-1.csv", body: rows("2026-11-24T23:00:00.001000Z")},
		entry{name: run + "summary-1.json", body: `{}`},
		entry{name: "./credhub-perf/credhub-perf-1.stdout.log", body: "tester 1\n"},
		entry{name: "./other-job/x.log", body: "not ours"})
	out := filepath.Join(t.TempDir(), "runs")
	rep, err := Tarballs(out, []string{a, b}, slo)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.RunDirs) != 1 || len(rep.Logs) != 2 || len(rep.Warnings) != 0 {
		t.Fatalf("report %+v", rep)
	}
	dir := rep.RunDirs[0]
	for _, f := range []string{"meta.json", "meta-1.json", "results-0.csv", "results-1.csv", "summary.json", "summary.txt", "summary-1.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	m, err := results.ReadMeta(dir)
	if err != nil || m.Tester != 0 {
		t.Fatalf("meta.json %+v %v; want tester 0's", m, err)
	}
	sum, err := results.ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil || sum.Requests != 4 || sum.Testers != 2 {
		t.Fatalf("summary %+v %v; want 4 requests from 2 testers", sum, err)
	}
	if _, err := os.Stat(filepath.Join(out, "other-job")); err == nil {
		t.Error("another job's logs were extracted")
	}
	// Collecting the same tarballs again changes nothing and is no error.
	if _, err := Tarballs(out, []string{a, b}, slo); err != nil {
		t.Fatalf("second collect: %v", err)
	}
}

func TestMissingTesterZero(t *testing.T) {
	in := t.TempDir()
	b := tgz(t, in, "b.tgz",
		entry{name: run + "meta-1.json", body: `{"scenario":"get","tester":1,"testers":2}`},
		entry{name: run + "results-1.csv", body: rows("2026-11-24T23:00:00.001000Z")})
	rep, err := Tarballs(t.TempDir(), []string{b}, slo)
	if err != nil {
		t.Fatal(err)
	}
	// Without tester 0's files the run lacks its load: incomplete, no capacity.
	if len(rep.Warnings) != 2 || !strings.Contains(rep.Warnings[0], "meta.json is a copy of meta-1.json") ||
		!strings.Contains(rep.Warnings[1], "incomplete run: tester 0 of 2 left no results file: its load is in no figure") {
		t.Fatalf("warnings %v", rep.Warnings)
	}
	sum, err := results.ReadSummary(filepath.Join(rep.RunDirs[0], "summary.json"))
	if err != nil || !sum.Incomplete || sum.MaxThroughputAtSLO != nil {
		t.Fatalf("summary.json %+v %v; want incomplete without a capacity", sum, err)
	}
}

func TestHostileTarballs(t *testing.T) {
	in := t.TempDir()
	notGzip := filepath.Join(in, "plain.tgz")
	_ = os.WriteFile(notGzip, []byte("not a tarball"), 0o644)
	truncated := filepath.Join(in, "truncated.tgz")
	whole, _ := os.ReadFile(tgz(t, in, "whole.tgz", entry{name: run + "results.csv", body: strings.Repeat(rows("2026-11-24T23:00:00Z"), 50)}))
	_ = os.WriteFile(truncated, whole[:len(whole)/2], 0o644)
	for _, tc := range []struct {
		name, want string
		file       string
	}{
		{"missing file", "no such file", filepath.Join(in, "nope.tgz")},
		{"not gzip", "not a gzip tarball", notGzip},
		{"truncated", "", truncated},
		{"dot-dot", "points outside the tarball", tgz(t, in, "dotdot.tgz", entry{name: "./credhub-perf/../../etc/x", body: "x"})},
		{"absolute", "points outside the tarball", tgz(t, in, "abs.tgz", entry{name: "/credhub-perf/20261124T230000Z-get/results.csv", body: "x"})},
		{"only other files", "no credhub-perf run directory", tgz(t, in, "other.tgz",
			entry{name: "./credhub-perf/notes.txt", body: "x"},
			entry{name: run + "evil.sh", body: "x"},
			entry{name: "./credhub-perf/20261124T230000Z-get/link.csv", typ: tar.TypeSymlink, link: "results.csv"})},
		{"symlink to an absolute path", `entry "./credhub-perf/20261124T230000Z-get/results.csv" is a symbolic link to "/etc/passwd", outside the output directory`,
			tgz(t, in, "symabs.tgz", entry{name: "./credhub-perf/20261124T230000Z-get/results.csv", typ: tar.TypeSymlink})},
		{"symlink climbing out", `is a symbolic link to "../../../etc/shadow", outside the output directory`,
			tgz(t, in, "symup.tgz", entry{name: run + "meta.json", typ: tar.TypeSymlink, link: "../../../etc/shadow"})},
		{"hard link outside", `is a hard link to "etc/passwd", outside the output directory`,
			tgz(t, in, "hard.tgz", entry{name: run + "results.csv", body: rows("2026-11-24T23:00:00Z")}, entry{name: run + "results-1.csv", typ: tar.TypeLink, link: "etc/passwd"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			_, err := Tarballs(out, []string{tc.file}, slo)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one containing %q", err, tc.want)
			}
		})
	}
	t.Run("a link inside is skipped and said", func(t *testing.T) {
		a := tgz(t, in, "inside.tgz", entry{name: run + "results.csv", body: rows("2026-11-24T23:00:00Z")},
			entry{name: run + "results-1.csv", typ: tar.TypeLink, link: strings.TrimPrefix(run, "./") + "results.csv"})
		out := t.TempDir()
		rep, err := Tarballs(out, []string{a}, slo)
		if err != nil || len(rep.Warnings) == 0 || !strings.Contains(strings.Join(rep.Warnings, "\n"), `skipped entry "`+run+`results-1.csv", a hard link`) {
			t.Fatalf("err %v, report %+v", err, rep)
		}
		if _, err := os.Lstat(filepath.Join(out, "20261124T230000Z-get-2-instances", "results-1.csv")); !os.IsNotExist(err) {
			t.Fatalf("the link's name was created (%v)", err)
		}
	})
	t.Run("two runs with one name", func(t *testing.T) {
		a := tgz(t, in, "a.tgz", entry{name: run + "results.csv", body: rows("2026-11-24T23:00:00Z")})
		b := tgz(t, in, "b.tgz", entry{name: run + "results.csv", body: rows("2026-11-24T23:00:01Z")})
		out := t.TempDir()
		_, err := Tarballs(out, []string{a, b}, slo)
		if err == nil || !strings.Contains(err.Error(), "differs from the one collected from "+a) {
			t.Fatalf("error %v", err)
		}
		got, _ := os.ReadFile(filepath.Join(out, "20261124T230000Z-get-2-instances", "results.csv"))
		if string(got) != rows("2026-11-24T23:00:00Z") {
			t.Fatal("the first run's file was overwritten")
		}
	})
}

// The shared fixture (results/testdata/missing-testers): the tarballs of a
// run, collected as they come. Only tester 0's of a run of 3: every step
// incomplete, no capacity, the reason naming testers 1 and 2, summary.json
// what `credhub-perf summary` writes (answers.json); tester 0's own
// summary ("max throughput at SLO: 28.3 req/s") is not kept. Both of a run
// of 2: complete, with its capacity.
func TestCollectIncompleteRun(t *testing.T) {
	fixtures := filepath.Join("..", "results", "testdata", "missing-testers")
	var answers struct {
		Runs map[string]struct {
			Summary json.RawMessage `json:"summary"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(filepath.Join(fixtures, "answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &answers); err != nil {
		t.Fatal(err)
	}
	const name = "20260102T030405Z-get-missing-testers"
	for _, tc := range []struct {
		fixture string
		testers int
		warn    string
	}{
		{"three-testers-one-file", 1, "incomplete run: testers 1, 2 of 3 left no results file: their load is in no figure; every step is incomplete and the run gives no capacity"},
		{"two-testers-both", 2, ""},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			in := t.TempDir()
			var tarballs []string
			for i := 0; i < tc.testers; i++ {
				var es []entry
				files, _ := filepath.Glob(filepath.Join(fixtures, tc.fixture, "*"))
				for _, f := range files {
					base := filepath.Base(f)
					own := strings.Contains(base, fmt.Sprintf("-%d.", i)) || (i == 0 && !strings.Contains(base, "-"))
					if !own {
						continue
					}
					body, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					es = append(es, entry{name: "./credhub-perf/" + name + "/" + base, body: string(body)})
				}
				tarballs = append(tarballs, tgz(t, in, fmt.Sprintf("credhub-perf-%d.tgz", i), es...))
			}
			rep, err := Tarballs(t.TempDir(), tarballs, slo)
			if err != nil {
				t.Fatal(err)
			}
			if tc.warn == "" && len(rep.Warnings) != 0 || tc.warn != "" && (len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], tc.warn)) {
				t.Fatalf("warnings %q; want one saying %q", rep.Warnings, tc.warn)
			}
			dir := rep.RunDirs[0]
			got, err := results.ReadSummary(filepath.Join(dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var want results.Summary
			if err := json.Unmarshal(answers.Runs[tc.fixture].Summary, &want); err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(&want)
			if !bytes.Equal(gj, wj) {
				t.Fatalf("collected summary.json\n%s\nwant (answers.json)\n%s", gj, wj)
			}
			txt, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
			if tc.warn != "" && (!strings.Contains(string(txt), "max throughput at SLO: unknown: incomplete run: testers 1, 2 of 3") || strings.Contains(string(txt), "28.3")) {
				t.Fatalf("summary.txt:\n%s", txt)
			}
		})
	}
}
