package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/results"
)

// run --workload against credhub-sim, through the command line: the mix
// sent is the log's replayable part (get 60, interpolate 20, set 10 of
// 90) within 2 % (rows of the CSV by type), and summary.txt names what it
// could not send. The draws are seeded by the run id, so the counts are
// the same on every machine.
func TestRunWorkloadAgainstSim(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	wl := filepath.Join(t.TempDir(), "workload.json")
	if err := os.WriteFile(wl, []byte(`{"format": "credhub-perf-workload/1", "requests": 1000,
 "types": [
  {"type": "get_by_name", "requests": 600, "share": 0.6, "scenario": "get", "replayable": true},
  {"type": "interpolate", "requests": 200, "share": 0.2, "scenario": "interpolate", "replayable": true},
  {"type": "set", "requests": 100, "share": 0.1, "scenario": "set", "replayable": true},
  {"type": "generate", "requests": 100, "share": 0.1, "scenario": "", "replayable": false}],
 "popularity": {"zipf_s": 0.8}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, s.URL, "steps: {min_concurrency: 2, max_concurrency: 4, step: 2, requests: 2500}\n")
	r := perf(t, "run", "--config", cfg, "--workload", wl, "--run-id", "workload-it", "--confirm.open_loop=false")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dir := onlyRunDir(t, outputDir(t, cfg))
	if !strings.HasSuffix(strings.TrimRight(dir, "/"), "-mix-it") {
		t.Fatalf("run directory %s, want the mix scenario's", dir)
	}
	got := map[string]float64{}
	if _, err := results.ReadCSV(filepath.Join(dir, "results.csv"), func(row *results.Row) error {
		got[row.Request]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n := got["get"] + got["set"] + got["interpolate"]
	for k, want := range map[string]float64{"get": 6.0 / 9, "interpolate": 2.0 / 9, "set": 1.0 / 9} {
		if g := got[k] / n; n != 5000 || g < want-0.02 || g > want+0.02 {
			t.Errorf("%s: %.4f of %v, want %.4f ± 0.02", k, g, got, want)
		}
	}
	txt, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(txt), "workload: NOT SENT (10.0 % of its requests, not tested): generate 10.0 %") {
		t.Fatalf("summary.txt:\n%s", txt)
	}
}
