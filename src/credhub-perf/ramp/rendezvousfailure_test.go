package ramp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/credhub"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results"
)

// testerRun is one tester's outcome on the simulated clock.
type testerRun struct {
	code int
	log  string
	end  time.Time // the run's clock as Execute returned
}

func executeSimCtx(t *testing.T, ctx context.Context, clk *loadtest.SimClock, c config.Config) testerRun {
	t.Helper()
	defer clk.Leave()
	if errs := c.Validate(false); len(errs) > 0 {
		t.Errorf("config: %v", errs)
		return testerRun{code: -1}
	}
	var out, log bytes.Buffer
	code := Execute(ctx, Options{Config: c, Stdout: &out, Log: &log, Version: "test", CPU: quietCPU, Clock: clk})
	return testerRun{code, log.String(), clk.Now()}
}

// executeSimRuns runs the testers side by side on clk, tester i with
// ctxs[i] (context.Background() past the end of ctxs), and waits for all.
func executeSimRuns(t *testing.T, clk *loadtest.SimClock, cfgs []config.Config, ctxs ...context.Context) []testerRun {
	runs := make([]testerRun, len(cfgs))
	var wg sync.WaitGroup
	for i := range cfgs {
		ctx := context.Background()
		if i < len(ctxs) {
			ctx = ctxs[i]
		}
		wg.Add(1)
		go func() { defer wg.Done(); runs[i] = executeSimCtx(t, ctx, clk, cfgs[i]) }()
	}
	wg.Wait()
	return runs
}

// stoppedWithinAPoll checks that a tester waiting on tester 0 failed, and
// within one rendezvous poll of what tester 0 could not do (at).
func stoppedWithinAPoll(t *testing.T, run testerRun, at time.Time, what string) {
	t.Helper()
	if run.code != ExitFailed {
		t.Fatalf("tester 1: exit %d, want %d\n%s", run.code, ExitFailed, run.log)
	}
	if took := run.end.Sub(at); took > rendezvousPoll+100*time.Millisecond {
		t.Errorf("tester 1 stopped %s after %s; want within one poll (%s)\n%s", took, what, rendezvousPoll, run.log)
	}
}

// rendezvousPair is two testers agreeing through the rendezvous, each
// with its own output directory as on two VMs; nothing in it times out
// before 10 minutes, so a tester stopping within seconds stopped on news.
func rendezvousPair(t *testing.T, p *loadtest.PKI, url string, scenarios ...string) []config.Config {
	cfgs := make([]config.Config, 2)
	for i := range cfgs {
		c := fakeConfig(t, p, url)
		c.Target.Timeout = config.Duration(time.Second)
		c.Scenarios = scenarios
		c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 2, Step: 1, Duration: config.Duration(time.Second)}
		c.Tester = config.TesterConfig{Index: i, Count: 2, Rendezvous: testRendezvous, StartDelay: config.Duration(4 * time.Second),
			RendezvousTimeout: config.Duration(10 * time.Minute), ScenarioGap: config.Duration(config.MinScenarioGap(time.Second))}
		cfgs[i] = c
	}
	return cfgs
}

// errorLine is the last "error:" line of a tester's log.
func errorLine(log string) string {
	var line string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "credhub-perf: error: ") {
			line = l
		}
	}
	return line
}

// refusedAt records when the fake first refused a request.
type refusedAt struct {
	mu sync.Mutex
	at time.Time
}

func (r *refusedAt) mark(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at.IsZero() {
		r.at = now
	}
}

func (r *refusedAt) get() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.at
}

// Tester 0 stops before it publishes the first step's time, 3 s after tester 1
// began waiting: its output_dir cannot be created (configuration caught
// late), or it is cancelled (bosh cancel-task) while it checks CredHub.
// Tester 1 stops on its next poll, not after tester.rendezvous_timeout
// (10 min), with one line naming tester 0's reason and its log; the
// failure report is deleted by tester 1 (the last to read it) and nothing
// else is left.
func TestRendezvousTesterZeroFailsBeforePublishing(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel bool
		reason []string // in tester 1's error line
	}{
		{"output_dir", false, []string{"output_dir", "cannot be created"}},
		{"cancelled", true, []string{"interrupted by a signal"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadtest.NewPKI(t, loadtest.ECDSA)
			fake := newFake()
			// Actors: tester 1, and this test until it starts tester 0.
			clk, srv := simFake(t, p, fake, 2)
			cfgs := rendezvousPair(t, p, srv.URL, "get")
			ctx0, cancel0 := context.WithCancel(context.Background())
			defer cancel0()
			if tc.cancel {
				// The second /info is tester 0's first request.
				var infos atomic.Int64
				fake.refuse = func(r *http.Request, _ []byte) int {
					if r.URL.Path == "/info" && infos.Add(1) == 2 {
						cancel0()
					}
					return 0
				}
			} else {
				blocker := filepath.Join(t.TempDir(), "a-file")
				if err := os.WriteFile(blocker, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				cfgs[0].OutputDir = filepath.Join(blocker, "out")
			}

			runs := make([]testerRun, 2)
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); runs[1] = executeSimCtx(t, context.Background(), clk, cfgs[1]) }()
			clk.SleepUntil(context.Background(), simStart.Add(3*time.Second))
			started0 := clk.Now()
			go func() { defer wg.Done(); runs[0] = executeSimCtx(t, ctx0, clk, cfgs[0]) }()
			wg.Wait()

			if runs[0].code != ExitUsage || !strings.Contains(runs[0].log, "told the other testers through "+rendezvousName(testRendezvous)+" that tester 0 stopped during setup") {
				t.Fatalf("tester 0: exit %d, want %d after telling the others\n%s", runs[0].code, ExitUsage, runs[0].log)
			}
			line := errorLine(runs[1].log)
			if runs[1].code != ExitUsage {
				t.Fatalf("tester 1: exit %d, want %d\n%s", runs[1].code, ExitUsage, runs[1].log)
			}
			for _, want := range append([]string{"tester 0 stopped during setup (at ", "Tester 0's log", "credhub-perf-0.stderr.log", rendezvousName(testRendezvous)}, tc.reason...) {
				if !strings.Contains(line, want) {
					t.Errorf("tester 1's error line lacks %q:\n%s", want, runs[1].log)
				}
			}
			if strings.Contains(line, "did not publish") {
				t.Errorf("tester 1 timed out instead of reading tester 0's failure:\n%s", runs[1].log)
			}
			// Tester 1 polls every second: it reads the failure at most one
			// poll (and a few 1 ms requests) after tester 0 wrote it, which
			// tester 0 does within a few requests of starting.
			if took := runs[1].end.Sub(started0); took > rendezvousPoll+100*time.Millisecond {
				t.Errorf("tester 1 stopped %s after tester 0 started (and failed); want within one poll (%s)\n%s", took, rendezvousPoll, runs[1].log)
			}
			if d := runDirs(t, cfgs[1].OutputDir); len(d) != 0 {
				t.Errorf("tester 1 created run directories %v", d)
			}
			if !strings.Contains(runs[1].log, "every tester has read tester 0's failure report; deleted") {
				t.Errorf("tester 1, the only other tester, did not delete the failure report:\n%s", runs[1].log)
			}
			if n := fake.count(); n != 0 {
				t.Errorf("%d credentials left (pre-flight, rendezvous or failure report)", n)
			}
		})
	}
}

// seedRefusal makes the fake refuse tester 0's seed writes under
// /<scenario>/seed/ with 403, as CredHub without permission does; the
// first refusal comes 2 s (simulated) late, so that tester 1 has read
// the first step's time and waits for the seed, whatever the machine's speed.
func seedRefusal(fake *fakeCredHub, clk *loadtest.SimClock, scenario string, at *refusedAt) {
	var once sync.Once
	fake.refuse = func(r *http.Request, body []byte) int {
		var put struct{ Name string }
		if r.Method == http.MethodPut && json.Unmarshal(body, &put) == nil && strings.Contains(put.Name, "/"+scenario+"/seed/") {
			once.Do(func() { clk.SleepUntil(r.Context(), clk.Now().Add(2*time.Second)) })
			at.mark(clk.Now())
			return http.StatusForbidden
		}
		return 0
	}
}

// CredHub refuses tester 0's seed, after tester 0 published step 0's
// time: tester 1, waiting for the seed, stops on its next check with
// tester 0's reason, records the failure in its meta-1.json, and nothing
// is left in CredHub.
func TestRendezvousTesterZeroSeedRefused(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 2)
	var refused refusedAt
	seedRefusal(fake, clk, "get", &refused)
	cfgs := rendezvousPair(t, p, srv.URL, "get")
	runs := executeSimRuns(t, clk, cfgs)

	if runs[0].code == ExitOK || !strings.Contains(runs[0].log, "rendezvous: published the first step") {
		t.Fatalf("tester 0 should publish, then fail on the refused seed: exit %d\n%s", runs[0].code, runs[0].log)
	}
	if refused.get().IsZero() {
		t.Fatal("the seed was never refused")
	}
	stoppedWithinAPoll(t, runs[1], refused.get(), "the refusal")
	want := "tester 0 stopped in scenario get (1 of 1), before the others could start it (at "
	if !strings.Contains(errorLine(runs[1].log), want) || !strings.Contains(errorLine(runs[1].log), "403") {
		t.Errorf("tester 1's error line lacks %q and the refusal:\n%s", want, runs[1].log)
	}
	dirs := runDirs(t, cfgs[1].OutputDir)
	if len(dirs) != 1 {
		t.Fatalf("tester 1 run directories %v, want one", dirs)
	}
	m := readMetaAs(t, dirs[0], 1)
	if m.Status != "failed" || !strings.Contains(m.Error, want) {
		t.Errorf("tester 1 meta-1.json: status %q error %q; want failed with %q", m.Status, m.Error, want)
	}
	if n := fake.count(); n != 0 {
		t.Errorf("%d credentials left", n)
	}
}

func readMetaAs(t *testing.T, dir string, tester int) *results.Meta {
	t.Helper()
	name := "meta.json"
	if tester > 0 {
		name = "meta-" + string(rune('0'+tester)) + ".json"
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	m := &results.Meta{}
	if err := json.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Between scenarios: tester 0's seed of the second scenario is refused.
// Tester 1 keeps the first scenario's rows and status, stops waiting for
// the second scenario on its next check, not tester.rendezvous_timeout
// past its schedule, and nothing is left.
func TestRendezvousTesterZeroFailsBetweenScenarios(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 2)
	var refused refusedAt
	seedRefusal(fake, clk, "interpolate", &refused)
	cfgs := rendezvousPair(t, p, srv.URL, "get", "interpolate")
	runs := executeSimRuns(t, clk, cfgs)

	if refused.get().IsZero() || runs[0].code == ExitOK {
		t.Fatalf("tester 0 should fail seeding interpolate: exit %d\n%s", runs[0].code, runs[0].log)
	}
	stoppedWithinAPoll(t, runs[1], refused.get(), "the refusal")
	want := "tester 0 stopped in scenario interpolate (2 of 2), before the others could start it"
	if !strings.Contains(errorLine(runs[1].log), want) {
		t.Errorf("tester 1's error line lacks %q:\n%s", want, runs[1].log)
	}
	var get, interp string
	for _, d := range runDirs(t, cfgs[1].OutputDir) {
		switch {
		case strings.Contains(filepath.Base(d), "-get-"):
			get = d
		case strings.Contains(filepath.Base(d), "-interpolate-"):
			interp = d
		}
	}
	if get == "" || interp == "" {
		t.Fatalf("tester 1 run directories %v; want get and interpolate", runDirs(t, cfgs[1].OutputDir))
	}
	if m := readMetaAs(t, get, 1); m.Status != "ok" || len(m.Steps) != 2 {
		t.Errorf("tester 1 get meta-1.json: status %q with %d steps; want ok with 2", m.Status, len(m.Steps))
	}
	if rows, _ := countCSV(t, filepath.Join(get, "results-1.csv")); rows == 0 {
		t.Error("tester 1's get rows were not kept")
	}
	if m := readMetaAs(t, interp, 1); m.Status != "failed" || !strings.Contains(m.Error, want) {
		t.Errorf("tester 1 interpolate meta-1.json: status %q error %q", m.Status, m.Error)
	}
	if n := fake.count(); n != 0 {
		t.Errorf("%d credentials left", n)
	}
}

// Tester 0's cleanup of the first scenario is refused (CredHub answers
// its DELETEs 403): it does not start the second scenario and says so,
// and tester 1, waiting for that scenario's seed, stops on its next check.
func TestRendezvousTesterZeroCleanupFailsBetweenScenarios(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 2)
	var refused refusedAt
	fake.refuse = func(r *http.Request, body []byte) int {
		if r.Method == http.MethodDelete && strings.Contains(r.URL.Query().Get("name"), "/get/seed/") {
			refused.mark(clk.Now())
			return http.StatusForbidden
		}
		return 0
	}
	cfgs := rendezvousPair(t, p, srv.URL, "get", "interpolate")
	runs := executeSimRuns(t, clk, cfgs)

	if refused.get().IsZero() || runs[0].code != ExitFailed || !strings.Contains(runs[0].log, "that tester 0 stopped after scenario get (1 of 2)") {
		t.Fatalf("tester 0 should fail its cleanup and tell the others: exit %d\n%s", runs[0].code, runs[0].log)
	}
	stoppedWithinAPoll(t, runs[1], refused.get(), "the first refused delete")
	line := errorLine(runs[1].log)
	for _, want := range []string{"tester 0 stopped after scenario get (1 of 2) (at ", "cleanup (api) failed", "403"} {
		if !strings.Contains(line, want) {
			t.Errorf("tester 1's error line lacks %q:\n%s", want, runs[1].log)
		}
	}
	// What is left is the seed tester 0 could not delete, and nothing else.
	fake.mu.Lock()
	defer fake.mu.Unlock()
	for name := range fake.creds {
		if !strings.Contains(name, "/get/seed/") {
			t.Errorf("left in CredHub: %s", name)
		}
	}
}

// Tester 0 is cancelled (bosh cancel-task on its VM alone) during the set
// ramp of three 1 s steps: it tells the others and cleans up at once,
// while tester 1 still writes. Cancelled 0.1 s into step 2, tester 1 sees
// it just before step 3 (it looks 0.25 s ahead) and stops; cancelled in
// step 3, tester 1 finishes that step (writing after tester 0's cleanup)
// and sees it while waiting for the get scenario's seed. Either way it
// deletes what it wrote, keeps its rows, and nothing is left.
func TestRendezvousTesterZeroCancelledMidRamp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		at       time.Duration // after tester 0's first set request
		step     int           // tester 0's step when cancelled
		steps    int           // set steps tester 1 records
		scenario string        // where tester 1 stops
	}{
		{"before tester 1's next step", 1100 * time.Millisecond, 2, 2, "set"},
		{"in the last step", 2300 * time.Millisecond, 3, 3, "get"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, cfgs, runs := cancelTesterZeroInSet(t, tc.at, "set", "get")

			where := fmt.Sprintf("tester 0 stopped in scenario set (1 of 2), at step %d of 3", tc.step)
			if runs[0].code != ExitFailed || !strings.Contains(runs[0].log, "that "+where) {
				t.Fatalf("tester 0: exit %d; want 1 after telling the others %q\n%s", runs[0].code, where, runs[0].log)
			}
			line := errorLine(runs[1].log)
			if runs[1].code != ExitFailed || !strings.Contains(line, "error: scenario "+tc.scenario+": "+where+" (at ") ||
				!strings.Contains(line, "interrupted by a signal") {
				t.Fatalf("tester 1: exit %d; want 1 in scenario %s naming tester 0's interruption\n%s", runs[1].code, tc.scenario, runs[1].log)
			}
			if !strings.Contains(runs[1].log, "credentials this tester wrote under") {
				t.Errorf("tester 1 did not clean up its own writes:\n%s", runs[1].log)
			}
			var set string
			for _, d := range runDirs(t, cfgs[1].OutputDir) {
				if strings.Contains(filepath.Base(d), "-set-") {
					set = d
				}
			}
			if set == "" {
				t.Fatalf("tester 1 run directories %v; want the set run", runDirs(t, cfgs[1].OutputDir))
			}
			if rows, segments := countCSV(t, filepath.Join(set, "results-1.csv")); rows == 0 || segments != tc.steps {
				t.Errorf("tester 1 kept %d rows in %d steps; want rows of %d steps\n%s", rows, segments, tc.steps, runs[1].log)
			}
			if n := fake.count(); n != 0 {
				t.Errorf("%d credentials left\ntester 0:\n%s\ntester 1:\n%s", n, runs[0].log, runs[1].log)
			}
		})
	}
}

// cancelTesterZeroInSet runs two testers of the given scenarios (the first
// "set", at most 3 workers each) on the simulated clock, and cancels
// tester 0 at its first set request sent at least at after its first one.
func cancelTesterZeroInSet(t *testing.T, at time.Duration, scenarios ...string) (*fakeCredHub, []config.Config, []testerRun) {
	t.Helper()
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	// 0.1 ms a request, not simFake's 1 ms: work between requests (a
	// step's new connections, its files) takes real time in which the
	// other tester's requests move the shared clock; the smaller each
	// move, the closer the two testers stay in simulated time, so the
	// stop lands in the last step of both, as the tests below expect.
	clk := loadtest.NewSimClock(simStart, 2)
	srv := loadtest.NewMTLSServer(t, p, clk.Handler(fake, func(*http.Request) time.Duration { return 100 * time.Microsecond }), true, false)
	cfgs := rendezvousPair(t, p, srv.URL, scenarios...)
	for i := range cfgs {
		cfgs[i].Steps.MaxConcurrency = 3
	}
	ctx0, cancel0 := context.WithCancel(context.Background())
	defer cancel0()
	var mu sync.Mutex
	var first time.Time
	fake.refuse = func(r *http.Request, body []byte) int {
		if r.Method != http.MethodPut || r.Header.Get("User-Agent") == credhub.UserAgent || !bytes.Contains(body, []byte("/set/t0-")) {
			return 0
		}
		mu.Lock()
		defer mu.Unlock()
		now := clk.Now()
		if first.IsZero() {
			first = now
		}
		if !now.Before(first.Add(at)) {
			cancel0()
		}
		return 0
	}
	return fake, cfgs, executeSimRuns(t, clk, cfgs, ctx0)
}

// putRaw stores a raw JSON value as the rendezvous credential.
func putRaw(f *fakeCredHub, name string, v []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.put(rendezvousName(name), v)
}

// What tester 1 finds in the rendezvous credential before tester 0 (which
// never comes) writes it: failure reports of this run stop it at once;
// an earlier run's, and hostile values, are ignored (it then times out
// after tester.rendezvous_timeout) or give one clear line; never a panic.
func TestRendezvousFailureValuesJudged(t *testing.T) {
	failure := func(written time.Duration, mutate func(v *rendezvousValue)) []byte {
		v := rendezvousValue{WrittenAt: simStart.Add(written).Format(time.RFC3339Nano),
			Failed: &rendezvousFailure{Tester: 0, Where: "during setup", Reason: "output_dir \"/x\" is not writable"}}
		if mutate != nil {
			mutate(&v)
		}
		b, _ := json.Marshal(v)
		return b
	}
	huge := strings.Repeat("é", 1<<20)
	cases := []struct {
		name   string
		before []byte // an older version, when set
		value  []byte
		runID  string // tester.run_id of tester 1
		// stop: the error line holds this (tester 0's failure taken);
		// otherwise tester 1 times out and logs ignore.
		stop, ignore string
	}{
		{"written 30 s before this tester started", nil, failure(-30*time.Second, nil), "", "tester 0 stopped during setup", ""},
		{"an hour old", nil, failure(-time.Hour, nil), "", "", "previous run's leftover"},
		{"read before by this tester", nil, failure(-30*time.Second, func(v *rendezvousValue) { v.SeenBy = []int{1} }), "", "", "has read before: an earlier run's"},
		{"marked read by this tester in an older version", failure(-30*time.Second, func(v *rendezvousValue) { v.SeenBy = []int{1} }), failure(-30*time.Second, nil), "", "", "has read before: an earlier run's"},
		{"an older version of another report", failure(-40*time.Second, func(v *rendezvousValue) { v.SeenBy = []int{1} }), failure(-30*time.Second, nil), "", "tester 0 stopped during setup", ""},
		{"a garbage older version", []byte(`{"failed":{"tester":"x"}}`), failure(-30*time.Second, nil), "", "tester 0 stopped during setup", ""},
		{"another run's id (tester.run_id set)", nil, failure(-30*time.Second, func(v *rendezvousValue) { v.RunID = "nightly-1" }), "nightly-2", "", `for run "nightly-1", not this run's nightly-2`},
		{"this run's id (tester.run_id set)", nil, failure(-30*time.Second, func(v *rendezvousValue) { v.RunID = "nightly-2" }), "nightly-2", "tester 0 stopped during setup", ""},
		{"not from tester 0", nil, failure(-30*time.Second, func(v *rendezvousValue) { v.Failed.Tester = 3 }), "", "", "naming tester 3"},
		{"written_at garbage", nil, failure(0, func(v *rendezvousValue) { v.WrittenAt = "yesterday" }), "", "", `written_at "yesterday" is not an RFC3339 time`},
		{"written in the future", nil, failure(24*time.Hour, nil), "", "", "in the future"},
		{"huge reason", nil, failure(-time.Second, func(v *rendezvousValue) { v.Failed.Reason = huge }), "", "tester 0 stopped during setup", ""},
		{"reason with newlines and escapes", nil, failure(-time.Second, func(v *rendezvousValue) { v.Failed.Reason = "first\nsecond\x1b[31m red\r\n" }), "", "first second [31m red; this tester stops too", ""},
		{"empty failure", nil, failure(-time.Second, func(v *rendezvousValue) { v.Failed = &rendezvousFailure{} }), "", "(it did not say where) (at", ""},
		{"a JSON string", nil, []byte(`"tester 0 failed"`), "", "", "not the rendezvous JSON"},
		{"an array", nil, []byte(`[1,2,3]`), "", "", "not the rendezvous JSON"},
		{"failed not an object", nil, []byte(`{"failed":"yes","written_at":"2026-11-22T15:00:00Z"}`), "", "", "not the rendezvous JSON"},
		{"seen_by not numbers", nil, []byte(`{"failed":{"tester":0},"seen_by":["x"],"written_at":"2026-11-22T15:00:00Z"}`), "", "", "not the rendezvous JSON"},
		{"null", nil, []byte(`null`), "", "", "written_at"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := loadtest.NewPKI(t, loadtest.ECDSA)
			fake := newFake()
			if tc.before != nil {
				putRaw(fake, testRendezvous, tc.before)
			}
			putRaw(fake, testRendezvous, tc.value)
			clk, srv := simFake(t, p, fake, 1)
			c := rendezvousPair(t, p, srv.URL, "get")[1]
			c.Tester.RendezvousTimeout = config.Duration(1500 * time.Millisecond)
			c.Tester.RunID = tc.runID
			run := executeSimCtx(t, context.Background(), clk, c)
			line := errorLine(run.log)
			if run.code != ExitUsage || strings.Count(line, "\n") > 0 || len(line) > 3000 {
				t.Fatalf("exit %d (want %d), error line of %d bytes:\n%.3000s", run.code, ExitUsage, len(line), run.log)
			}
			if tc.stop != "" {
				if !strings.Contains(line, tc.stop) || run.end.After(simStart.Add(100*time.Millisecond)) {
					t.Errorf("want a stop at the first poll saying %q; stopped at +%s:\n%.3000s", tc.stop, run.end.Sub(simStart), run.log)
				}
				if fake.has(rendezvousName(testRendezvous)) {
					t.Error("the only other tester read the failure report and left it")
				}
				return
			}
			if !strings.Contains(line, "did not publish") || !strings.Contains(run.log, tc.ignore) {
				t.Errorf("want the value ignored (%q) and a timeout:\n%.3000s", tc.ignore, run.log)
			}
			if !fake.has(rendezvousName(testRendezvous)) {
				t.Error("tester 1 deleted a value it ignored")
			}
		})
	}
}

// Three testers: testers 1 and 2 both read tester 0's failure report at
// once; each marks it read, and whichever completes seen_by deletes it.
func TestRendezvousFailureReadByEveryTesterThenDeleted(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	v, _ := json.Marshal(rendezvousValue{WrittenAt: simStart.Add(-10 * time.Second).Format(time.RFC3339Nano),
		Failed: &rendezvousFailure{Tester: 0, Where: "during setup", Reason: "target unreachable"}})
	putRaw(fake, testRendezvous, v)
	clk, srv := simFake(t, p, fake, 2)
	cfgs := make([]config.Config, 2)
	for i := range cfgs {
		c := rendezvousPair(t, p, srv.URL, "get")[1]
		c.Tester.Index, c.Tester.Count = i+1, 3
		cfgs[i] = c
	}
	codes, logs := executeTestersSim(t, clk, cfgs)
	for i := range codes {
		if codes[i] != ExitUsage || !strings.Contains(errorLine(logs[i]), "tester 0 stopped during setup (at ") {
			t.Errorf("tester %d: exit %d, want %d on tester 0's report\n%s", i+1, codes[i], ExitUsage, logs[i])
		}
	}
	if fake.has(rendezvousName(testRendezvous)) {
		t.Errorf("the failure report is still there after both other testers read it\ntester 1:\n%s\ntester 2:\n%s", logs[0], logs[1])
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                   "plain",
		"  two\n\nlines\t":        "two lines",
		"bell\x07 and \x1b[0m":    "bell and [0m",
		"bad utf8 \xff\xfe":       "bad utf8 ?",
		strings.Repeat("x", 1000): strings.Repeat("x", maxReason) + "…",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%.40q) = %.60q, want %.60q", in, got, want)
		}
	}
	long := oneLine(strings.Repeat("a \n", 1000))
	if n := utf8.RuneCountInString(long); n != maxReason+1 || !strings.HasSuffix(long, "…") || strings.Contains(long, "  ") {
		t.Errorf("oneLine of 3000 runes gave %d runes: %.60q…", n, long)
	}
}

// A database password or UAA secret quoted by an error never reaches the
// other testers.
func TestFailureReasonRedacted(t *testing.T) {
	c := config.Default()
	c.Cleanup.Database.Password = "s3cret-pw"
	c.UAA.ClientSecret = "uaa-secret"
	got := oneLine(newTesterGroup(c, nil, nil).redact("dial postgres://perf:s3cret-pw@db/credhub: refused; token uaa-secret"))
	if strings.Contains(got, "s3cret") || strings.Contains(got, "uaa-secret") || !strings.Contains(got, "[redacted]") {
		t.Errorf("redacted reason %q", got)
	}
}

// Whatever the credential holds, judging it and the line made from it
// never panic, and the line stays one bounded line.
func FuzzRendezvousFailureValue(f *testing.F) {
	f.Add([]byte(`{"failed":{"tester":0,"where":"during setup","reason":"x"},"written_at":"2026-11-22T15:00:00Z"}`))
	f.Add([]byte(`{"failed":{"tester":0,"reason":"a\nb"},"written_at":"2026-11-22T15:00:00.5+01:00","seen_by":[1,2,-1],"run_id":"r"}`))
	f.Add([]byte(`{"start_at":"2026-11-22T15:00:30Z","run_id":"20261122T150030Z-abc123","written_at":"2026-11-22T15:00:00Z"}`))
	f.Add([]byte(`{"failed":{}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v rendezvousValue
		if json.Unmarshal(raw, &v) != nil || v.Failed == nil {
			return
		}
		c := config.Default()
		c.Tester = config.TesterConfig{Index: 1, Count: 3, Rendezvous: testRendezvous}
		g := newTesterGroup(c, nil, nil)
		g.began = simStart
		_ = g.judgeFailure(v, simStart)
		msg := failureError(rendezvousName(testRendezvous), v).Error()
		if strings.ContainsAny(msg, "\n\r") || len(msg) > 4*(2*maxReason+200)+400 {
			t.Fatalf("error line of %d bytes: %.200q", len(msg), msg)
		}
	})
}

// Tester 0 is cancelled during the last step of the last scenario, while
// tester 1 still loads it: tester 1 runs its step to the end and then
// exits 1 naming tester 0's stop, not 0, although it needs nothing more
// from tester 0: its last step lost tester 0's load. Their merged summary
// marks the step incomplete and names both testers' stops.
func TestRendezvousTesterZeroStopsInTheLastStep(t *testing.T) {
	// Step 3 of 3 starts 2 s after step 1; 0.1 s into it.
	fake, cfgs, runs := cancelTesterZeroInSet(t, 2100*time.Millisecond, "set")

	where := "tester 0 stopped in scenario set (1 of 1), at step 3 of 3"
	if runs[0].code != ExitFailed || !strings.Contains(runs[0].log, "that "+where) {
		t.Fatalf("tester 0: exit %d; want 1 after telling the others %q\n%s", runs[0].code, where, runs[0].log)
	}
	line := errorLine(runs[1].log)
	if runs[1].code != ExitFailed || !strings.Contains(line, "error: scenario set: "+where+" (at ") {
		t.Fatalf("tester 1: exit %d; want 1 naming tester 0's stop in the last step\n%s", runs[1].code, runs[1].log)
	}
	if n := fake.count(); n != 0 {
		t.Errorf("%d credentials left\ntester 0:\n%s\ntester 1:\n%s", n, runs[0].log, runs[1].log)
	}

	// As `credhub-perf collect` assembles them.
	merged := t.TempDir()
	for i, c := range cfgs {
		d := runDirs(t, c.OutputDir)
		if len(d) != 1 {
			t.Fatalf("tester %d run directories %v", i, d)
		}
		for _, f := range []string{"meta.json", fmt.Sprintf("meta-%d.json", i), fmt.Sprintf("results-%d.csv", i)} {
			if b, err := os.ReadFile(filepath.Join(d[0], f)); err == nil {
				if err := os.WriteFile(filepath.Join(merged, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	sum, err := results.SummarizeDir(merged, results.SLO{Percentile: 95, LatencyS: 1, MaxErrorRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Steps) != 3 {
		t.Fatalf("merged %d steps, want 3: %+v", len(sum.Steps), sum.Steps)
	}
	last := sum.Steps[2]
	if sum.Steps[0].Incomplete || sum.Steps[1].Incomplete || !last.Incomplete ||
		!strings.HasPrefix(last.IncompleteReason, "tester 0 sent load for ") || !strings.Contains(last.IncompleteReason, "interrupted") {
		t.Fatalf("merged steps: incomplete %v %v %v, reason %q", sum.Steps[0].Incomplete, sum.Steps[1].Incomplete, last.Incomplete, last.IncompleteReason)
	}
	if !strings.HasPrefix(sum.StoppedReason, "tester 0: interrupted; tester 1: tester 0 stopped") {
		t.Fatalf("merged stopped_reason %q", sum.StoppedReason)
	}
}

// Tester 0 seeds with parallel writers, so the last seeded name can be
// written while a middle one is still in flight (here held 5 s, simulated,
// long enough for tester 1 to read the first step's time and look at the seed).
// Tester 1 takes the last name as the sign of a complete seed, so tester 0
// must write it after every other, or tester 1 reads a middle name back as
// 404 and fails the scenario.
func TestRendezvousSeedLastNameBeforeMiddle(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 2)
	cfgs := rendezvousPair(t, p, srv.URL, "get")
	middle := fmt.Sprintf("/get/seed/cred-%d", cfgs[0].Seed.Credentials/2)
	var held refusedAt
	fake.refuse = func(r *http.Request, body []byte) int {
		var put struct{ Name string }
		if r.Method == http.MethodPut && json.Unmarshal(body, &put) == nil && strings.HasSuffix(put.Name, middle) {
			held.mark(clk.Now())
			clk.SleepUntil(r.Context(), clk.Now().Add(5*time.Second))
		}
		return 0
	}
	runs := executeSimRuns(t, clk, cfgs)
	if held.get().IsZero() {
		t.Fatal("the middle seed write was never held")
	}
	for i, run := range runs {
		if run.code != ExitOK {
			t.Errorf("tester %d exited %d, want %d:\n%s", i, run.code, ExitOK, run.log)
		}
	}
	if n := fake.count(); n != 0 {
		t.Errorf("%d credentials left", n)
	}
}
