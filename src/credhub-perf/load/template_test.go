package load

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// {{cycle N}} names N things in turn: request seq names (seq-1) mod N, so
// a set ramp's requests write a bounded pool of names, and requests in
// flight together (consecutive numbers) never share one while fewer than N
// are in flight.
func TestTemplateCycle(t *testing.T) {
	tx, err := compileText("/set/t0-{{cycle 3}}", "body", pickCache{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var got []string
	for seq := uint64(1); seq <= 7; seq++ {
		got = append(got, string(tx.render(nil, seq, rng)))
	}
	if want := "/set/t0-0 /set/t0-1 /set/t0-2 /set/t0-0 /set/t0-1 /set/t0-2 /set/t0-0"; strings.Join(got, " ") != want {
		t.Fatalf("got %v, want %s", got, want)
	}
	for _, bad := range []string{"{{cycle}}", "{{cycle 0}}", "{{cycle x}}"} {
		if _, err := compileText(bad, "body", pickCache{}); err == nil || !strings.Contains(err.Error(), "{{cycle N}} needs a positive integer") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// {{zipf N S}} draws k with probability (k+1)^-S / sum: with N 4 and S 1
// the shares are 12/25, 6/25, 4/25, 3/25. 100000 draws hold each within
// 0.01 (about 6 standard deviations of the largest share); the draws are
// seeded, so the test is exact on every machine.
func TestTemplateZipf(t *testing.T) {
	tx, err := compileText("{{zipf 4 1}}", "url", pickCache{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	counts := map[string]int{}
	const n = 100000
	for i := 0; i < n; i++ {
		counts[string(tx.render(nil, 1, rng))]++
	}
	for k, want := range map[string]float64{"0": 12.0 / 25, "1": 6.0 / 25, "2": 4.0 / 25, "3": 3.0 / 25} {
		if got := float64(counts[k]) / n; got < want-0.01 || got > want+0.01 {
			t.Errorf("share of %s: %.4f, want %.4f", k, got, want)
		}
	}
	if len(counts) != 4 {
		t.Errorf("drew %v, want only 0..3", counts)
	}
	// S 0 is uniform.
	tx, _ = compileText("{{zipf 2 0}}", "url", pickCache{})
	counts = map[string]int{}
	for i := 0; i < n; i++ {
		counts[string(tx.render(nil, 1, rng))]++
	}
	if d := counts["0"] - counts["1"]; d > 2000 || d < -2000 {
		t.Errorf("S 0: %v, want about even", counts)
	}
	for _, bad := range []string{"{{zipf}}", "{{zipf 4}}", "{{zipf 0 1}}", "{{zipf 4 -1}}", "{{zipf 4 NaN}}", "{{zipf 4 6}}", "{{zipf 2000000 1}}", "{{zipf 4 1 2}}", "{{zipf x 1}}"} {
		if _, err := compileText(bad, "url", pickCache{}); err == nil || !strings.Contains(err.Error(), "{{zipf N S}} needs") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
