package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// One core of fixed 1 ms service times, arrivals every 2 ms (500/s), and
// a 50 ms pause every second: between pauses no request waits (latency
// exactly 1 ms); the 25 arrivals of a pause queue behind it, and the
// backlog drains at 1,000 - 500 = 500/s, in 50 ms. So the arrivals of
// 100 ms in every 1,000 (10 %) wait, from 50 ms down to nothing, evenly:
// the worst latency is 51 ms and p95, the middle of that tenth, 26 ms.
func TestOpenLoopPausesKnownAnswer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	o, err := parse([]string{"-out", dir, "-workers", "1", "-cores", "1", "-service-time", "1ms", "-service-dist", "fixed",
		"-rates", "500,250", "-step-duration", "10s", "-pause-every", "1s", "-pause", "50ms"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := run(o); err != nil {
		t.Fatal(err)
	}
	lat := map[string][]float64{}
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs[1:] {
		v, _ := strconv.ParseFloat(r[1], 64)
		if r[9] != "1000" {
			t.Fatalf("concurrency column %q, want the open loop's 1000", r[9])
		}
		lat[r[10]] = append(lat[r[10]], v)
	}
	if n := len(lat["500"]); n != 5000 {
		t.Fatalf("%d requests at 500/s over 10 s, want 5000", n)
	}
	p := func(xs []float64, q float64) float64 {
		sort.Float64s(xs)
		return xs[int(math.Ceil(q*float64(len(xs))))-1]
	}
	if p95, worst := p(lat["500"], 0.95), p(lat["500"], 1); math.Abs(p95-0.026) > 0.002 || math.Abs(worst-0.051) > 0.001 {
		t.Errorf("500/s: p95 %.1f ms (want 26), max %.1f ms (want 51)", 1000*p95, 1000*worst)
	}
	// At 250/s a pause's backlog drains in under 17 ms: most requests
	// meet no pause and take the 1 ms service time.
	if p50 := p(lat["250"], 0.5); math.Abs(p50-0.001) > 1e-6 {
		t.Errorf("250/s: p50 %.3f ms, want 1", 1000*p50)
	}
	var meta struct {
		Mode  string `json:"mode"`
		Steps []struct {
			Rate     float64 `json:"rate"`
			Requests int     `json:"requests"`
		} `json:"steps"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err := json.Unmarshal(b, &meta); err != nil || meta.Mode != "open" || len(meta.Steps) != 2 || meta.Steps[1].Rate != 250 || meta.Steps[0].Requests != 5000 {
		t.Fatalf("meta.json %+v (%v)", meta, err)
	}
}

// -rates refuses what is not a list of rates, in one line.
func TestOpenLoopRefusesBadRates(t *testing.T) {
	for _, bad := range []string{"0", "-5", "abc", "1e9", "100,,200", "NaN"} {
		if _, err := parse([]string{"-out", "x", "-rates", bad}, os.Stderr); err == nil {
			t.Errorf("-rates %q accepted", bad)
		}
	}
	if _, err := parse([]string{"-out", "x", "-pause", "50ms"}, os.Stderr); err != nil {
		t.Fatal(err) // caught when the model is set up, below
	}
	o, _ := parse([]string{"-out", filepath.Join(t.TempDir(), "r"), "-pause", "50ms", "-rates", "10"}, os.Stderr)
	if err := run(o); err == nil {
		t.Error("-pause without -pause-every accepted")
	}
}
