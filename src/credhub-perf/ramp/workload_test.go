package ramp

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/credhub"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/replay"
	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
)

// A production log's mix: 55 % get by name, 15 % interpolate, 5 % set,
// and 25 % the tool cannot send (find by path, generate).
const testWorkload = `{"format": "credhub-perf-workload/1", "tool_version": "test",
 "requests": 10000,
 "types": [
  {"type": "get_by_name", "method": "GET", "endpoint": "/api/v1/data", "requests": 5500, "share": 0.55, "scenario": "get", "replayable": true},
  {"type": "interpolate", "method": "POST", "endpoint": "/api/v1/interpolate", "requests": 1500, "share": 0.15, "scenario": "interpolate", "replayable": true},
  {"type": "find_by_path", "method": "GET", "endpoint": "/api/v1/data", "requests": 1500, "share": 0.15, "scenario": "", "replayable": false},
  {"type": "generate", "method": "POST", "endpoint": "/api/v1/data", "requests": 1000, "share": 0.10, "scenario": "", "replayable": false},
  {"type": "set", "method": "PUT", "endpoint": "/api/v1/data", "requests": 500, "share": 0.05, "scenario": "set", "replayable": true, "body_bytes": {"p50": 2000, "p95": 4000}}
 ],
 "rates": {"peak_second": {"at": "2026-12-07T10:00:00.000Z", "requests": 412}},
 "popularity": {"zipf_s": 1.0}}`

// nameCounter counts the seeded names the get requests read.
type nameCounter struct {
	next http.Handler
	mu   sync.Mutex
	gets map[string]int
	sets []int // body sizes of the load's set requests
}

func (n *nameCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if name := r.URL.Query().Get("name"); r.Method == "GET" && r.URL.Query().Get("current") == "true" && strings.Contains(name, "/seed/cred-") {
		n.mu.Lock()
		n.gets[name[strings.LastIndex(name, "-")+1:]]++
		n.mu.Unlock()
	}
	if r.Method == "PUT" && r.Header.Get("User-Agent") != credhub.UserAgent {
		n.mu.Lock()
		n.sets = append(n.sets, int(r.ContentLength))
		n.mu.Unlock()
	}
	n.next.ServeHTTP(w, r)
}

// run --workload replays the log's mix: the CSV's request types, ramp and
// open-loop confirmation alike, within 2 % of the replayable types'
// shares; the seeded names with the log's skew; the types it cannot send
// named with their shares in summary.txt, summary.json and meta.json,
// with the file's identity and the weights used.
func TestRunReplaysWorkload(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	counter := &nameCounter{next: newFake(), gets: map[string]int{}}
	clk := loadtest.NewSimClock(simStart, 1)
	srv := loadtest.NewMTLSServer(t, p, clk.Handler(counter, nil), true, false)
	c := fakeConfig(t, p, srv.URL)
	c.Workload = filepath.Join(t.TempDir(), "workload.json")
	if err := os.WriteFile(c.Workload, []byte(testWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	c.Tester.RunID = "replay-test" // the mix's draws are seeded by it
	c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 2, Step: 1, Duration: config.Duration(4 * time.Second)}
	c.SLO.Latency = config.Duration(2 * time.Second)
	c.Confirm = config.ConfirmConfig{OpenLoop: true, Fractions: []float64{1}, Duration: config.Duration(6 * time.Second)}
	w, err := replay.Configure(&c)
	if err != nil {
		t.Fatal(err)
	}
	defer clk.Leave()
	if errs := c.Validate(false); len(errs) > 0 {
		t.Fatalf("config: %v", errs)
	}
	var out, log strings.Builder
	if code := Execute(context.Background(), Options{Config: c, Stdout: &out, Log: &log, Version: "test", CPU: quietCPU, Clock: clk, Workload: w}); code != 0 {
		t.Fatalf("exit %d\n%s", code, log.String())
	}
	dir := runDirs(t, c.OutputDir)[0]
	checkReplayedShares(t, dir)
	checkPopularity(t, counter.gets)
	if len(counter.sets) < 100 {
		t.Fatalf("%d set requests", len(counter.sets))
	}
	for _, n := range counter.sets {
		if n < 1900 || n > 2200 {
			t.Fatalf("set bodies of %d bytes, want about the log's median 2000", n)
		}
	}
	checkWorkloadRecords(t, dir, log.String())
}

// checkReplayedShares counts the CSV's rows by type, the ramp's and the
// confirmation's apart: 55/75, 15/75 and 5/75 of each.
func checkReplayedShares(t *testing.T, dir string) {
	t.Helper()
	got := map[bool]map[string]float64{false: {}, true: {}}
	if _, err := results.ReadCSV(filepath.Join(dir, "results.csv"), func(r *results.Row) error {
		got[r.Rate > 0][r.Request]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"get": 55.0 / 75, "interpolate": 15.0 / 75, "set": 5.0 / 75}
	for open, byType := range got {
		n := byType["get"] + byType["set"] + byType["interpolate"]
		if n < 2000 || len(byType) != 3 {
			t.Fatalf("open loop %v: rows %v, want thousands of get, set and interpolate", open, byType)
		}
		for k, share := range want {
			if g := byType[k] / n; g < share-0.02 || g > share+0.02 {
				t.Errorf("open loop %v: %s share %.4f of %v, want %.4f ± 0.02", open, k, g, byType, share)
			}
		}
	}
}

// checkPopularity: with Zipf s 1 over the 20 seeded names, cred-0 gets
// 1/H(20) = 27.8 % of the reads and cred-1 half as many.
func checkPopularity(t *testing.T, gets map[string]int) {
	t.Helper()
	n := 0
	for _, v := range gets {
		n += v
	}
	h := 0.0
	for k := 1; k <= 20; k++ {
		h += 1 / float64(k)
	}
	p0, p1 := float64(gets["0"])/float64(n), float64(gets["1"])/float64(n)
	if n < 1000 || p0 < 1/h-0.02 || p0 > 1/h+0.02 || p1 < 0.5/h-0.02 || p1 > 0.5/h+0.02 {
		t.Fatalf("reads of %d: cred-0 %.3f, cred-1 %.3f, want %.3f and %.3f", n, p0, p1, 1/h, 0.5/h)
	}
}

func checkWorkloadRecords(t *testing.T, dir, log string) {
	t.Helper()
	sum, meta := resultstest.Run(t, dir)
	for _, w := range []*results.Workload{meta.Workload, sum.Workload} {
		if w == nil || len(w.SHA256) != 64 || !strings.HasSuffix(w.File, "workload.json") || w.Requests != 10000 ||
			w.Weights != (results.MetaMix{Get: 733333, Set: 66667, Interpolate: 200000}) || w.ZipfS != 1 || w.SetBytes != 2000 ||
			w.ReplayedShare != 0.75 || len(w.NotSent) != 2 || w.NotSent[0] != (results.WorkloadType{Type: "find_by_path", Share: 0.15}) {
			t.Fatalf("workload record %+v", w)
		}
	}
	if meta.Mix == nil || *meta.Mix != sum.Workload.Weights {
		t.Fatalf("meta mix %+v", meta.Mix)
	}
	txt, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := "workload: NOT SENT (25.0 % of its requests, not tested): find_by_path 15.0 %, generate 10.0 %"
	for _, s := range []string{string(txt), log} {
		if !strings.Contains(s, want) || !strings.Contains(s, "sends get 55.0 %, set 5.0 %, interpolate 15.0 % of its requests; name popularity Zipf s=1") {
			t.Fatalf("want %q in\n%s", want, s)
		}
	}
	// A summary recomputed from the directory keeps it (from meta.json).
	re, err := results.SummarizeDir(dir, sum.SLO)
	if err != nil || re.Workload == nil || re.Workload.SHA256 != sum.Workload.SHA256 {
		t.Fatalf("recomputed summary's workload %+v, %v", re.Workload, err)
	}
}
