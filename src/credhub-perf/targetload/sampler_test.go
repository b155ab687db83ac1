package targetload

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// scripted answers each Read with the next batch.
type scripted struct {
	batches  [][]Reading
	warnings []string
	n        int
}

func (s *scripted) Name() string            { return "test" }
func (s *scripted) Interval() time.Duration { return time.Hour }
func (s *scripted) Read(context.Context) ([]Reading, []string) {
	if s.n >= len(s.batches) {
		return nil, s.warnings
	}
	s.n++
	return s.batches[s.n-1], s.warnings
}

func TestSamplerTurnsCountersIntoShares(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := func(at float64, busy float64, cores float64) Reading {
		return Reading{Resource: CredHub, Instance: "i", At: t0.Add(sec(at)), Busy: sec(busy), Cores: cores, Share: math.NaN(), RSSBytes: -1}
	}
	src := &scripted{batches: [][]Reading{
		{r(0, 0, 2)},
		{r(2, 3, 2)},   // 3 core-s in 2 s on 2 cores: 0.75
		{r(4, 2, 2)},   // backwards: bogus
		{r(6, 2.2, 2)}, // 0.2 core-s in 2 s: 0.05
		{r(6, 2.2, 2)}, // no time passed: nothing
		{r(8, 100, 2)}, // 24 cores' worth: bogus
	}, warnings: []string{"flaky"}}
	var warned []string
	clock := t0
	path := filepath.Join(t.TempDir(), FileName)
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSampler([]Source{src}, t0, func() time.Time { return clock }, w, func(m string) { warned = append(warned, m) })
	for i := 0; i < 6; i++ {
		s.SampleNow(context.Background())
		clock = clock.Add(2 * time.Second)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	got := s.Between(0, sec(100))
	if len(got) != 2 || got[0].CPU != 0.75 || got[0].Start != 0 || got[0].End != sec(2) || math.Abs(got[1].CPU-0.05) > 1e-9 || got[1].Start != sec(4) {
		t.Fatalf("samples %+v", got)
	}
	if len(warned) != 3 || warned[0] != "warning: target load: flaky" || !strings.Contains(warned[1], "not a share") {
		t.Errorf("warnings %q: want flaky once and the two bogus readings", warned)
	}
	back, _, err := Read(path)
	if err != nil || len(back) != 2 {
		t.Errorf("file holds %v, %v", back, err)
	}
}
