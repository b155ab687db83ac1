package ramp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results"
)

const testRendezvous = "credhub-perf-testers"

// putStale leaves what a previous run's tester 0 would have left behind had
// it died before deleting its rendezvous credential.
func putStale(f *fakeCredHub, name string, now time.Time, age time.Duration) {
	written := now.Add(-age).UTC()
	v, _ := json.Marshal(rendezvousValue{
		StartAt:   written.Add(30 * time.Second).Format(time.RFC3339),
		RunID:     written.Format(stampLayout) + "-stale0",
		WrittenAt: written.Format(time.RFC3339Nano),
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.put(rendezvousName(name), v)
}

func (f *fakeCredHub) has(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.creds[strings.ToLower(name)]
	return ok
}

// Two testers without tester.start_at, started 2.5 s apart (in either
// order) and each with its own output directory as on separate VMs, agree
// through the rendezvous credential on one run id and start every step in
// the same slot; a previous run's leftover value is not taken; tester 0
// deletes the credential at the end.
func TestRendezvousTestersStartedApart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first int // the tester that starts first
		stale bool
	}{
		{"tester 1 first, stale value left", 1, true},
		{"tester 0 first", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadtest.NewPKI(t, loadtest.ECDSA)
			fake := newFake()
			if tc.stale {
				putStale(fake, testRendezvous, simStart, time.Hour)
			}
			// Actors: the first tester, and this test until it starts
			// the second one.
			clk, srv := simFake(t, p, fake, 2)
			const slot, gap = time.Second, 2500 * time.Millisecond
			cfgs := make([]config.Config, 2)
			for i := range cfgs {
				c := fakeConfig(t, p, srv.URL)
				c.Target.Timeout = config.Duration(time.Second)
				c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 2, Step: 1, Duration: config.Duration(slot)}
				c.Tester = config.TesterConfig{Index: i, Count: 2, Rendezvous: testRendezvous, StartDelay: config.Duration(4 * time.Second),
					RendezvousTimeout: config.Duration(30 * time.Second), ScenarioGap: config.Duration(time.Minute)}
				cfgs[i] = c
			}
			codes := make([]int, 2)
			logs := make([]string, 2)
			started := make([]time.Time, 2)
			var wg sync.WaitGroup
			for _, i := range []int{tc.first, 1 - tc.first} {
				if i != tc.first {
					clk.SleepUntil(context.Background(), simStart.Add(gap))
				}
				wg.Add(1)
				started[i] = clk.Now()
				go func(i int) {
					defer wg.Done()
					codes[i], logs[i] = executeSim(t, clk, cfgs[i])
				}(i)
			}
			wg.Wait()
			for i := range codes {
				if codes[i] != 0 {
					t.Fatalf("tester %d: exit %d\n%s\nother tester:\n%s", i, codes[i], logs[i], logs[1-i])
				}
			}
			if fake.has(rendezvousName(testRendezvous)) {
				t.Fatalf("the rendezvous credential is still there after the run\n%s", logs[0])
			}
			if n := fake.count(); n != 0 {
				t.Fatalf("%d credentials left after the run", n)
			}
			if tc.stale && !strings.Contains(logs[1], "previous run's leftover") {
				t.Errorf("tester 1 does not say it ignored the leftover value:\n%s", logs[1])
			}

			names, metas := testerMetas(t, cfgs)
			if names[0] != names[1] || metas[0].RunID != metas[1].RunID || metas[0].StartAt != metas[1].StartAt {
				t.Fatalf("testers disagree: directories %v, run ids %s / %s, start_at %s / %s", names, metas[0].RunID, metas[1].RunID, metas[0].StartAt, metas[1].StartAt)
			}
			if strings.HasSuffix(metas[0].RunID, "-stale0") {
				t.Fatalf("the testers took the stale run id %s", metas[0].RunID)
			}
			start, err := time.Parse(time.RFC3339, metas[0].StartAt)
			if err != nil {
				t.Fatalf("meta.json start_at %q: %v", metas[0].StartAt, err)
			}
			// Tester 0 chose its own start (after its pre-flight requests,
			// a few ms of simulated time) + start_delay, rounded up to a
			// whole second.
			if want := started[0].Add(4 * time.Second).Truncate(time.Second).Add(time.Second); !start.Equal(want) {
				t.Errorf("first step at %s; tester 0 started at %s: want %s, start_delay (4s) later rounded up to a second", metas[0].StartAt, started[0].Format(time.RFC3339Nano), want.Format(time.RFC3339))
			}

			// Lockstep: each tester sends step j's requests in slot j.
			for i := range cfgs {
				dir := filepath.Join(cfgs[i].OutputDir, names[i])
				checkSlots(t, filepath.Join(dir, fmt.Sprintf("results-%d.csv", i)), start, slot, 2, logs[i])
			}
		})
	}
}

// testerMetas reads each tester's run directory name and its own meta
// file (meta.json for tester 0, meta-<i>.json for the others, never
// meta.json: extracted together, one would overwrite the other).
func testerMetas(t *testing.T, cfgs []config.Config) ([]string, []*results.Meta) {
	t.Helper()
	var names []string
	var metas []*results.Meta
	for i := range cfgs {
		dirs := runDirs(t, cfgs[i].OutputDir)
		if len(dirs) != 1 {
			t.Fatalf("tester %d: run directories %v, want one", i, dirs)
		}
		names = append(names, filepath.Base(dirs[0]))
		// Testers other than 0 write only meta-<i>.json.
		name := "meta.json"
		if i > 0 {
			name = fmt.Sprintf("meta-%d.json", i)
		}
		b, err := os.ReadFile(filepath.Join(dirs[0], name))
		if err != nil {
			t.Fatal(err)
		}
		m := &results.Meta{}
		if err := json.Unmarshal(b, m); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dirs[0], "meta.json")); i > 0 && err == nil {
			t.Errorf("tester %d wrote meta.json, which tester 0's would overwrite (or be overwritten by) when extracted together", i)
		}
		metas = append(metas, m)
	}
	return names, metas
}

// Tester 1 alone: no tester 0 ever publishes, and the leftover of an
// earlier run must not be taken for this run's value; it gives up after
// tester.rendezvous_timeout with one line saying what to check.
func TestRendezvousWithoutTesterZeroTimesOut(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	putStale(fake, testRendezvous, simStart, time.Hour)
	clk, srv := simFake(t, p, fake, 1)
	c := fakeConfig(t, p, srv.URL)
	c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 2, Step: 1, Duration: config.Duration(time.Second)}
	c.Tester = config.TesterConfig{Index: 1, Count: 2, Rendezvous: testRendezvous, StartDelay: config.Duration(time.Second),
		RendezvousTimeout: config.Duration(1500 * time.Millisecond), ScenarioGap: config.Duration(time.Minute)}
	code, log := executeSim(t, clk, c)
	gaveUp := clk.Now()
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, ExitUsage, log)
	}
	var errLine string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "credhub-perf: error: ") {
			errLine = l
		}
	}
	for _, want := range []string{"tester.rendezvous: tester 0 did not publish", rendezvousName(testRendezvous), "within 1.5s", "previous run's leftover", "is tester 0 running"} {
		if !strings.Contains(errLine, want) {
			t.Errorf("error line lacks %q:\n%s", want, log)
		}
	}
	// It polls every second and last at the deadline, began + 1.5 s
	// (began: before the pre-flight requests), and gives up after that
	// poll: on the simulated clock, within one 1 ms request of it.
	if !strings.Contains(log, "waiting up to 1.5s") || gaveUp.Before(simStart.Add(1500*time.Millisecond)) || gaveUp.After(simStart.Add(1600*time.Millisecond)) {
		t.Errorf("gave up %s after the tester started; want the first poll at or after tester.rendezvous_timeout (1.5s)\n%s", gaveUp.Sub(simStart), log)
	}
	if d := runDirs(t, c.OutputDir); len(d) != 0 {
		t.Errorf("a run directory was created: %v", d)
	}
	// Not tester 0's to delete; only tester 0 cleans up.
	if !fake.has(rendezvousName(testRendezvous)) {
		t.Error("tester 1 deleted the rendezvous credential")
	}
}

// When the run fails while the others still depend on tester 0, tester 0
// replaces its start value with its failure (which the others delete once
// they have all read it) instead of deleting it.
func TestRendezvousFailureReplacesStartValue(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 1)
	c := fakeConfig(t, p, srv.URL)
	c.Target.Timeout = config.Duration(time.Second)
	c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 2, Step: 1, Duration: config.Duration(500 * time.Millisecond)}
	c.Tester = config.TesterConfig{Index: 0, Count: 2, Rendezvous: testRendezvous, StartDelay: config.Duration(500 * time.Millisecond),
		RendezvousTimeout: config.Duration(time.Minute), ScenarioGap: config.Duration(time.Minute)}
	// The run fails after the rendezvous was published: the scenario's
	// request template is refused by the load engine (not an unwritable
	// output_dir, which is refused before CredHub is contacted).
	c.Scenarios = []string{"custom"}
	c.Custom.Path = "/api/v1/data?name={{nope}}"
	code, log := executeSim(t, clk, c)
	if code == 0 {
		t.Fatalf("the run should fail (unknown template placeholder)\n%s", log)
	}
	if !strings.Contains(log, "rendezvous: published the first step") {
		t.Fatalf("tester 0 did not publish before failing:\n%s", log)
	}
	fake.mu.Lock()
	raw := fake.creds[strings.ToLower(rendezvousName(testRendezvous))]
	fake.mu.Unlock()
	var v rendezvousValue
	if err := json.Unmarshal(raw, &v); err != nil || v.Failed == nil {
		t.Fatalf("the rendezvous credential holds %s (%v), want tester 0's failure\n%s", raw, err, log)
	}
	if v.StartAt != "" || v.RunID == "" || !strings.Contains(log, "run id "+v.RunID) || v.Failed.Tester != 0 ||
		v.Failed.Where != "in scenario custom (1 of 1), before its first step" || !strings.Contains(v.Failed.Reason, "unknown {{nope}}") {
		t.Errorf("failure value %s; want this run's id, where and reason", raw)
	}
	if strings.Contains(log, "rendezvous: deleted") {
		t.Errorf("tester 0 deleted its failure report before the others read it:\n%s", log)
	}
}

func TestAcceptRendezvous(t *testing.T) {
	began := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	now := began.Add(5 * time.Second)
	value := func(written time.Duration, start time.Duration, id string) rendezvousValue {
		return rendezvousValue{
			WrittenAt: began.Add(written).Format(time.RFC3339Nano),
			StartAt:   began.Add(start).Format(time.RFC3339),
			RunID:     id,
		}
	}
	cases := []struct {
		name   string
		delay  time.Duration
		v      rendezvousValue
		reject string // "" = accepted
	}{
		{"written after this tester started", 30 * time.Second, value(2*time.Second, 32*time.Second, "20261122T150032Z-abc123"), ""},
		{"tester 0 started 90 s earlier", 30 * time.Second, value(-90*time.Second, -60*time.Second, "r1"), ""},
		{"an hour old", 30 * time.Second, value(-time.Hour, -time.Hour+30*time.Second, "r1"), "previous run's leftover"},
		{"just over the 2 min allowance", 30 * time.Second, value(-121*time.Second, 60*time.Second, "r1"), "more than 2m0s before"},
		{"a long start_delay widens the window", 5 * time.Minute, value(-4*time.Minute, time.Minute, "r1"), ""},
		{"first step long past", 30 * time.Second, value(time.Second, -10*time.Minute, "r1"), "in the past"},
		{"bad run id", 30 * time.Second, value(time.Second, 30*time.Second, "../x"), "is not a run id"},
		{"bad written_at", 30 * time.Second, rendezvousValue{WrittenAt: "yesterday", StartAt: began.Format(time.RFC3339), RunID: "r1"}, "written_at"},
		{"bad start_at", 30 * time.Second, rendezvousValue{WrittenAt: began.Format(time.RFC3339Nano), StartAt: "soon", RunID: "r1"}, "start_at"},
	}
	for _, tc := range cases {
		c := config.Default()
		c.Tester.StartDelay = config.Duration(tc.delay)
		_, why := newTesterGroup(c, nil, nil).acceptRendezvous(tc.v, began, now)
		switch {
		case tc.reject == "" && why != "":
			t.Errorf("%s: rejected: %s", tc.name, why)
		case tc.reject != "" && !strings.Contains(why, tc.reject):
			t.Errorf("%s: got %q, want a rejection saying %q", tc.name, why, tc.reject)
		}
	}
}
