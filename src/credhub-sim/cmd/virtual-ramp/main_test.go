package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// With fixed 8 ms service times, 2 instances of 2 cores serve 8 closed-loop
// clients exactly 500 requests/s, each waiting one round for a core: the
// file holds the model's plateau, and meta.json the steps credhub-perf's
// reader expects.
func TestVirtualRampWritesThePlateau(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	o, err := parse([]string{"-out", dir, "-service-dist", "fixed", "-concurrency", "4,8", "-step-duration", "2s"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if lines[0]+"\n" != header {
		t.Fatalf("header %q", lines[0])
	}
	count := map[string]int{}
	lat := map[string]map[string]bool{}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 14 {
			t.Fatalf("row with %d fields: %q", len(f), l)
		}
		count[f[9]]++
		if lat[f[9]] == nil {
			lat[f[9]] = map[string]bool{}
		}
		lat[f[9]][f[1]] = true
	}
	// 4 clients start every 8 ms: 250 each in 2 s. 8 clients: half are served at once and start again every
	// 16 ms from 8 ms on (126 starts before 2 s, the first at 0), half wait a round first (125).
	if count["4"] != 1000 || count["8"] != 4*126+4*125 {
		t.Errorf("requests per step %v, want 1000 at 4 clients and 1004 at 8", count)
	}
	if len(lat["4"]) != 1 || !lat["4"]["0.008000"] || !lat["8"]["0.016000"] {
		t.Errorf("latencies %v, want 8 ms alone, 16 ms (one round queued) with 8 clients", lat)
	}
	var meta struct {
		Instances int
		Steps     []struct{ Concurrency, Requests int }
		SLO       struct {
			LatencyS float64 `json:"latency_s"`
		} `json:"slo"`
	}
	mb, _ := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err := json.Unmarshal(mb, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Instances != 2 || len(meta.Steps) != 2 || meta.Steps[1].Requests != count["8"] || meta.SLO.LatencyS != 0.06 {
		t.Errorf("meta.json %s", mb)
	}
}

// The same seed writes the same file, however the goroutines ran.
func TestVirtualRampIsReproducible(t *testing.T) {
	var files [2][]byte
	for i := range files {
		dir := filepath.Join(t.TempDir(), "run")
		o, err := parse([]string{"-out", dir, "-seed", "7", "-concurrency", "2,6,12", "-step-duration", "1s"}, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		if err := run(o); err != nil {
			t.Fatal(err)
		}
		files[i], _ = os.ReadFile(filepath.Join(dir, "results.csv"))
	}
	if !bytes.Equal(files[0], files[1]) || len(files[0]) < 1000 {
		t.Error("two runs with seed 7 wrote different files")
	}
}

func TestVirtualRampRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-out", "x", "-concurrency", "4,0"},
		{"-out", "x", "-concurrency", "a"},
		{"-out", "x", "-step-duration", "0s"},
		{"-out", "x", "-step-duration", "2h"},
	} {
		if _, err := parse(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	o, _ := parse([]string{"-out", t.TempDir(), "-cores", "0"}, os.Stderr)
	if err := run(o); err == nil {
		t.Error("-cores 0: no error")
	}
}

// With -db-capacity the instances share the database, and the run
// directory gets each step's modelled utilisation: 2 instances of one
// 10 ms core behind a 150 requests/s database serve 150/s, the database
// all busy and the instances three quarters.
func TestVirtualRampSharedDatabaseSamples(t *testing.T) {
	b, lines := rampSamples(t, "-workers", "2", "-cores", "1", "-service-time", "10ms", "-service-dist", "fixed",
		"-concurrency", "8", "-step-duration", "2s", "-db-capacity", "150")
	if len(lines) != 4 || lines[0] != "source,resource,instance,start,end,cpu,rss_bytes" {
		t.Fatalf("samples:\n%s", b)
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		want := 0.75
		if f[1] == "database" {
			want = 1
		}
		// The step's end waits out the requests in flight: a little idle.
		cpu, err := strconv.ParseFloat(f[5], 64)
		if f[0] != "credhub-sim" || f[3] != "0.000" || err != nil || math.Abs(cpu-want) > 0.01 {
			t.Errorf("sample %q: want cpu %g", l, want)
		}
	}
	// Without a database, no samples file: the run is as before.
	dir2 := filepath.Join(t.TempDir(), "run")
	o, err := parse([]string{"-out", dir2, "-concurrency", "1", "-step-duration", "100ms"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir2, "target-samples.csv")); !os.IsNotExist(err) {
		t.Errorf("samples without a database: %v", err)
	}
}

// With -shared-cores the samples name the machine: 2 instances of one 4 ms
// core and a 500 requests/s database on one core, half of it a
// neighbour's, serve 1 / 6 ms halved, 83/s: each instance and the
// database a sixth busy, the machine all busy, half of it other work.
func TestVirtualRampSharedMachineSamples(t *testing.T) {
	b, lines := rampSamples(t, "-workers", "2", "-cores", "1", "-service-time", "4ms", "-service-dist", "fixed",
		"-concurrency", "8", "-step-duration", "2s", "-db-capacity", "500", "-shared-cores", "1", "-neighbour", "0.5")
	if len(lines) != 4 || lines[0] != "source,resource,instance,start,end,cpu,rss_bytes,cpus,machine,machine_busy,machine_steal,machine_iowait,machine_other" {
		t.Fatalf("samples:\n%s", b)
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return v
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != 13 || f[6] != "" || f[7] != "0" || f[8] != "host" || f[11] != "" {
			t.Fatalf("sample %q", l)
		}
		// The step's end waits out the requests in flight: a little idle.
		if cpu, busy, steal, other := num(f[5]), num(f[9]), num(f[10]), num(f[12]); math.Abs(cpu-1.0/6) > 0.01 ||
			math.Abs(busy-1) > 0.01 || steal != 0 || math.Abs(other-0.5) > 0.0001 {
			t.Errorf("sample %q: want cpu 0.167, machine 1 busy, half of it other work", l)
		}
	}
	o, err := parse([]string{"-out", filepath.Join(t.TempDir(), "x"), "-shared-cores", "1"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err == nil || !strings.Contains(err.Error(), "-shared-cores needs -db-capacity") {
		t.Errorf("-shared-cores without a database: %v", err)
	}
}

// rampSamples runs a virtual ramp with args into a new directory and
// returns its target-samples.csv, whole and as lines.
func rampSamples(t *testing.T, args ...string) ([]byte, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	o, err := parse(append([]string{"-out", dir}, args...), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "target-samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return b, strings.Split(strings.TrimSpace(string(b)), "\n")
}
