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
