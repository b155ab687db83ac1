package ramp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/credhub"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
)

// fakeCredHub is an in-memory stand-in for the parts of the CredHub API a
// run uses; the integration tests in cmd/credhub-perf use the real
// credhub-sim. It answers 404 for unknown names like CredHub, so a get or
// interpolate ramp only has no errors if the seed really was there.
type fakeCredHub struct {
	mu    sync.Mutex
	creds map[string]json.RawMessage
	// older holds each name's earlier versions, oldest first, for GET
	// with versions=K.
	older    map[string][]json.RawMessage
	requests atomic.Int64
	failFrom int64 // load requests after this many answer 500 (0 = never)
	loadReqs atomic.Int64
	maxSeen  atomic.Int64 // most credentials present at once
	// deleteStall holds the first DELETE under /set/ this long: a cleanup
	// slower than any scenario gap.
	deleteStall time.Duration
	stalled     atomic.Bool
	// clock the stall passes on (nil: the system clock).
	clock load.Clock
	// refuse, when set, sees every request (and a PUT's body) first; a
	// non-zero status is the answer (403: CredHub refusing it).
	refuse func(r *http.Request, body []byte) int
}

func newFake() *fakeCredHub {
	return &fakeCredHub{creds: map[string]json.RawMessage{}, older: map[string][]json.RawMessage{}}
}

// put writes a new version of name; the caller holds f.mu.
func (f *fakeCredHub) put(name string, v json.RawMessage) {
	name = strings.ToLower(name)
	if cur, ok := f.creds[name]; ok {
		f.older[name] = append(f.older[name], cur)
	}
	f.creds[name] = v
}

func (f *fakeCredHub) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.creds)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeCredHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if f.refuse != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if status := f.refuse(r, body); status != 0 {
			writeJSON(w, status, map[string]string{"error": "refused by the test"})
			return
		}
	}
	notFound := map[string]string{"error": "The request could not be completed because the credential does not exist or you do not have sufficient authorization."}
	if r.URL.Path == "/info" {
		writeJSON(w, 200, map[string]any{"auth-server": map[string]string{"url": "https://uaa"}, "app": map[string]string{"name": "CredHub"}})
		return
	}
	isLoad := (r.Method == "GET" && r.URL.Query().Get("current") == "true" && strings.Contains(r.URL.Query().Get("name"), "/seed/") && r.Header.Get("User-Agent") != credhub.UserAgent) ||
		r.URL.Path == "/api/v1/interpolate" || (r.Method == "PUT" && r.Header.Get("User-Agent") != credhub.UserAgent)
	if isLoad && f.failFrom > 0 && f.loadReqs.Add(1) > f.failFrom {
		writeJSON(w, 500, map[string]string{"error": "injected"})
		return
	}
	if r.Method == "DELETE" && f.deleteStall > 0 && strings.Contains(r.URL.Query().Get("name"), "/set/") && f.stalled.CompareAndSwap(false, true) {
		if f.clock != nil {
			f.clock.SleepUntil(r.Context(), f.clock.Now().Add(f.deleteStall))
		} else {
			time.Sleep(f.deleteStall)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/api/v1/data" && r.Method == "PUT":
		var body struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Type != "json" {
			writeJSON(w, 400, map[string]string{"error": "bad request"})
			return
		}
		f.put(body.Name, body.Value)
		if n := int64(len(f.creds)); n > f.maxSeen.Load() {
			f.maxSeen.Store(n)
		}
		writeJSON(w, 200, map[string]any{"type": "json", "name": body.Name, "value": body.Value})
	case r.URL.Path == "/api/v1/data" && r.Method == "GET" && r.URL.Query().Has("path"):
		p := strings.ToLower(strings.TrimSuffix(r.URL.Query().Get("path"), "/") + "/")
		var out []map[string]string
		for name := range f.creds {
			if strings.HasPrefix(name, p) {
				out = append(out, map[string]string{"name": name, "version_created_at": "2026-01-01T00:00:00Z"})
			}
		}
		writeJSON(w, 200, map[string]any{"credentials": out})
	case r.URL.Path == "/api/v1/data" && r.Method == "GET":
		name := strings.ToLower(r.URL.Query().Get("name"))
		v, ok := f.creds[name]
		if !ok {
			writeJSON(w, 404, notFound)
			return
		}
		data := []map[string]any{{"type": "json", "name": r.URL.Query().Get("name"), "value": v}}
		if k, err := strconv.Atoi(r.URL.Query().Get("versions")); err == nil {
			older := f.older[name]
			for i := len(older) - 1; i >= 0 && len(data) < k; i-- {
				data = append(data, map[string]any{"type": "json", "name": r.URL.Query().Get("name"), "value": older[i]})
			}
		}
		writeJSON(w, 200, map[string]any{"data": data})
	case r.URL.Path == "/api/v1/data" && r.Method == "DELETE":
		name := strings.ToLower(r.URL.Query().Get("name"))
		if _, ok := f.creds[name]; !ok {
			writeJSON(w, 404, notFound)
			return
		}
		delete(f.creds, name)
		delete(f.older, name)
		w.WriteHeader(204)
	case r.URL.Path == "/api/v1/interpolate" && r.Method == "POST":
		f.interpolate(w, r, notFound)
	default:
		w.WriteHeader(404)
	}
}

// interpolate answers POST /api/v1/interpolate: every credhub-ref replaced
// by the credential's value, 404 when one does not exist. f.mu is held.
func (f *fakeCredHub) interpolate(w http.ResponseWriter, r *http.Request, notFound map[string]string) {
	var body map[string][]map[string]any
	data, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(data, &body); err != nil {
		writeJSON(w, 400, map[string]string{"error": "bad json"})
		return
	}
	for _, list := range body {
		for _, b := range list {
			cr, _ := b["credentials"].(map[string]any)
			ref, _ := cr["credhub-ref"].(string)
			ref = strings.TrimSuffix(strings.TrimPrefix(ref, "(("), "))")
			v, ok := f.creds[strings.ToLower(ref)]
			if !ok {
				writeJSON(w, 404, notFound)
				return
			}
			b["credentials"] = v
		}
	}
	writeJSON(w, 200, body)
}

func fakeConfig(t *testing.T, p *loadtest.PKI, url string) config.Config {
	c := config.Default()
	c.Target.URL = url
	c.Target.CACertFile = p.CAFile
	c.Target.ClientCertFile = p.ClientCert
	c.Target.ClientKeyFile = p.ClientKey
	c.Target.Timeout = config.Duration(5 * time.Second)
	c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 4, Step: 1, Requests: 100}
	c.Seed = config.SeedConfig{Credentials: 20, Bytes: 512}
	c.OutputDir = t.TempDir()
	c.Label = "fake"
	c.Warmup.Run = "0" // tests of the warm-up turn it on
	return c
}

func execute(t *testing.T, c config.Config, capacity bool) (int, string, string) {
	t.Helper()
	if errs := c.Validate(capacity); len(errs) > 0 {
		t.Fatalf("config: %v", errs)
	}
	return executeOn(t, c, capacity, quietCPU)
}

// executeOn runs with the tester's CPU figures read from cpu: these tests
// share one machine with their fake target (and other tests), whose load
// must not decide what they test.
func executeOn(t *testing.T, c config.Config, capacity bool, cpu func(time.Time) cpuload.Sample) (int, string, string) {
	t.Helper()
	var out, log bytes.Buffer
	code := Execute(context.Background(), Options{Config: c, Capacity: capacity, Stdout: &out, Log: &log, Version: "test", CPU: cpu})
	return code, out.String(), log.String()
}

// simStart is where the simulated clock of the timing tests starts.
var simStart = time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)

// simFake serves fake through a simulated clock on which every answered
// request takes 1 ms, and returns the clock, with actors actors (the
// testers the test will run, see executeSim), and the server.
func simFake(t *testing.T, p *loadtest.PKI, fake *fakeCredHub, actors int) (*loadtest.SimClock, *loadtest.Server) {
	clk := loadtest.NewSimClock(simStart, actors)
	return clk, loadtest.NewMTLSServer(t, p, clk.Handler(fake, nil), true, false)
}

// slowSimFake is simFake with every answered request taking 25 ms: a
// minute of simulated load in 2,400 requests at concurrency 1.
func slowSimFake(t *testing.T, p *loadtest.PKI, fake *fakeCredHub) (*loadtest.SimClock, *loadtest.Server) {
	clk := loadtest.NewSimClock(simStart, 1)
	service := func(*http.Request) time.Duration { return 25 * time.Millisecond }
	return clk, loadtest.NewMTLSServer(t, p, clk.Handler(fake, service), true, false)
}

// executeSim runs one tester on clk (one of its actors), which it leaves
// when done.
func executeSim(t *testing.T, clk *loadtest.SimClock, c config.Config) (int, string) {
	t.Helper()
	code, _, log := executeSimAs(t, clk, c, false)
	return code, log
}

// executeSimAs is executeSim for a run or (capacity) a capacity search,
// returning the exit code, stdout and the log.
func executeSimAs(t *testing.T, clk *loadtest.SimClock, c config.Config, capacity bool) (int, string, string) {
	t.Helper()
	defer clk.Leave()
	if errs := c.Validate(capacity); len(errs) > 0 {
		t.Errorf("config: %v", errs)
		return -1, "", ""
	}
	var out, log bytes.Buffer
	code := Execute(context.Background(), Options{Config: c, Capacity: capacity, Stdout: &out, Log: &log, Version: "test", CPU: quietCPU, Clock: clk})
	return code, out.String(), log.String()
}

// steadyCapacitySearch is a capacity search on a simulated clock after an
// auto run warm-up, which a constant target passes once the trend judge
// has its minute of windows: its probes count whether or not they are
// long enough to judge steady, and none drifts with the machine's load.
// That minute is simulated time, so its cost is its number of requests:
// serve them through slowSimFake, not 1 ms each (60,000 TLS requests).
func steadyCapacitySearch(t *testing.T, c config.Config, clk *loadtest.SimClock) (int, string, string) {
	t.Helper()
	c.Warmup = config.WarmupConfig{Run: "auto", Concurrency: 1, Max: config.Duration(2 * time.Minute)}
	return executeSimAs(t, clk, c, true)
}

// lockstepPair is two testers writing into out, started together at start
// (tester.start_at) and gap apart between scenarios, each step one slot
// at concurrency 1 then 2; no scenarios: fakeConfig's.
func lockstepPair(t *testing.T, p *loadtest.PKI, url, out string, start time.Time, slot, timeout, gap time.Duration, scenarios ...string) []config.Config {
	cfgs := make([]config.Config, 2)
	for i := range cfgs {
		c := fakeConfig(t, p, url)
		c.OutputDir = out
		c.Target.Timeout = config.Duration(timeout)
		if len(scenarios) > 0 {
			c.Scenarios = scenarios
		}
		c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 2, Step: 1, Duration: config.Duration(slot)}
		c.Tester = config.TesterConfig{Index: i, Count: 2, StartAt: start.Format(time.RFC3339Nano), ScenarioGap: config.Duration(gap)}
		cfgs[i] = c
	}
	return cfgs
}

// executeTestersSim runs the testers side by side on clk, whose actors
// they are.
func executeTestersSim(t *testing.T, clk *loadtest.SimClock, cfgs []config.Config) ([]int, []string) {
	t.Helper()
	return sideBySide(len(cfgs), func(i int) (int, string) { return executeSim(t, clk, cfgs[i]) })
}

// executeTesters runs the testers' configurations side by side and returns
// their exit statuses and logs.
func executeTesters(t *testing.T, cfgs []config.Config) ([]int, []string) {
	t.Helper()
	return sideBySide(len(cfgs), func(i int) (int, string) {
		code, _, log := execute(t, cfgs[i], false)
		return code, log
	})
}

// sideBySide runs tester i's one(i) for n testers at once and collects
// their exit statuses and logs.
func sideBySide(n int, one func(i int) (int, string)) ([]int, []string) {
	codes := make([]int, n)
	logs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], logs[i] = one(i)
		}()
	}
	wg.Wait()
	return codes, logs
}

// machine returns CPU figures of a tester using share of its 2 cores, on
// a host busy by hostShare.
//
// Its CPU time grows with the very reading cpuload.Between divides it by.
// A time.Now() holds two readings, wall then monotonic (two vDSO calls on
// linux/amd64), and Between's span, b.Wall.Sub(a.Wall), is monotonic; so
// elapsed time here is now.Sub of an origin with a monotonic reading too.
// From a wall-only origin it followed the wall readings, and an interrupt
// between the two reads (20-70 µs, a few times in 10 000 readings on a
// shared VM) put a 20 ms step's share 0.1-0.3 % off.
func machine(share, hostShare float64) func(time.Time) cpuload.Sample {
	origin := time.Now()
	return func(now time.Time) cpuload.Sample {
		el := now.Sub(origin)
		ticks := uint64(el / time.Millisecond)
		return cpuload.Sample{Wall: now, Process: time.Duration(float64(el) * 2 * share), Cores: 2,
			Host: cpuload.Ticks{Busy: uint64(float64(ticks) * hostShare), Total: ticks}, ProcessOK: true, HostOK: true}
	}
}

var quietCPU = machine(0.1, 0.2)

// fraction shows a figure that may be unknown, for a failure message.
func fraction(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

func runDirs(t *testing.T, out string) []string {
	dirs, err := filepath.Glob(filepath.Join(out, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// A mix run sends all three request types on one ramp, names each in the
// CSV, cleans up the sets it wrote, and draws about the configured shares.
func TestRunMixAgainstFake(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	srv := loadtest.NewMTLSServer(t, p, fake, true, false)
	c := fakeConfig(t, p, srv.URL)
	c.Scenarios = []string{"mix"}
	c.Mix = config.MixConfig{Get: 6, Set: 2, Interpolate: 2}
	c.SLO.LatencySet = config.Duration(250 * time.Millisecond)
	code, out, log := execute(t, c, false)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, log)
	}
	dir := runDirs(t, c.OutputDir)[0]
	got := map[string]int{}
	if _, err := results.ReadCSV(filepath.Join(dir, "results.csv"), func(r *results.Row) error {
		if r.Status != 200 || r.Err != "" {
			return fmt.Errorf("line %d: %s request failed: %d %s", r.Line, r.Request, r.Status, r.Err)
		}
		got[r.Request]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n := got["get"] + got["set"] + got["interpolate"]
	if n != 400 || len(got) != 3 {
		t.Fatalf("request types %v, want 400 rows of get, set and interpolate\n%s", got, log)
	}
	// 4 standard errors of a 60 % share over 400 draws.
	if p := float64(got["get"]) / float64(n); p < 0.6-4*0.0245 || p > 0.6+4*0.0245 {
		t.Fatalf("get share %.3f of %v, want 0.6", p, got)
	}
	sum, meta := resultstest.Run(t, dir)
	if meta.Scenario != "mix" || meta.CleanupStatus != "ok" {
		t.Fatalf("meta %+v", meta)
	}
	// The result says how it was drawn and judged.
	if m := meta.Mix; m == nil || *m != (results.MetaMix{Get: 6, Set: 2, Interpolate: 2}) || len(meta.SLO.LatencyByRequestS) != 1 || meta.SLO.LatencyByRequestS["set"] != 0.25 {
		t.Fatalf("meta mix %+v, slo %+v", meta.Mix, meta.SLO)
	}
	for _, st := range sum.Steps {
		if f := st.ByRequest["set"]; f.SLOLatencyS != 0.25 || st.ByRequest["get"].SLOLatencyS != c.SLO.Latency.D().Seconds() {
			t.Fatalf("step %d: per-type bounds %+v", st.Step, st.ByRequest)
		}
	}
	if left := fake.count(); left != 0 {
		t.Fatalf("%d credentials left after cleanup", left)
	}
	// summary.json splits each step by type, as a re-summary of the CSV does.
	re, err := results.SummarizeFiles([]string{filepath.Join(dir, "results.csv")}, sum.SLO)
	if err != nil {
		t.Fatal(err)
	}
	perType := map[string]int64{}
	for i, st := range sum.Steps {
		var n int64
		for k, f := range st.ByRequest {
			n += f.Requests
			perType[k] += f.Requests
			if g := re.Steps[i].ByRequest[k]; g.Requests != f.Requests || g.P95S != f.P95S || g.SLOLatencyS != f.SLOLatencyS {
				t.Fatalf("step %d %s: live %+v, from the CSV %+v", i, k, f, g)
			}
		}
		if n != st.Requests {
			t.Fatalf("step %d: by_request %+v adds up to %d of %d requests", i, st.ByRequest, n, st.Requests)
		}
	}
	for k, v := range got {
		if perType[k] != int64(v) {
			t.Fatalf("summary.json counts %v, the CSV %v", perType, got)
		}
	}
}

func TestRunScenariosAgainstFake(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	srv := loadtest.NewMTLSServer(t, p, fake, true, false)
	c := fakeConfig(t, p, srv.URL)
	c.Scenarios = []string{"get", "set", "interpolate"}
	code, out, log := execute(t, c, false)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, log)
	}
	dirs := runDirs(t, c.OutputDir)
	if len(dirs) != 3 {
		t.Fatalf("want 3 run directories, got %v", dirs)
	}
	for _, dir := range dirs {
		sum, meta := resultstest.Run(t, dir)
		// 4 steps x 100 requests, all rows written, no errors: the seeded
		// names existed for every get and interpolate.
		rows := 0
		if _, err := results.ReadCSV(filepath.Join(dir, "results.csv"), func(r *results.Row) error {
			rows++
			if r.Request != meta.Scenario {
				return fmt.Errorf("line %d: request %q in a %s run", r.Line, r.Request, meta.Scenario)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if sum.Steps[0].ByRequest != nil {
			t.Fatalf("%s: a single-type run split by type: %+v", dir, sum.Steps[0].ByRequest)
		}
		if rows != 400 || sum.Requests != 400 || sum.Errors != 0 || len(sum.Steps) != 4 {
			t.Fatalf("%s: rows %d, summary %d requests %d errors %d steps\n%s", dir, rows, sum.Requests, sum.Errors, len(sum.Steps), log)
		}
		if meta.Status != "ok" || meta.CleanupStatus != "ok" || len(meta.Steps) != 4 || meta.TLS != "mtls" || meta.Instances != nil {
			t.Fatalf("%s: meta %+v", dir, meta)
		}
		re, err := results.SummarizeFiles([]string{filepath.Join(dir, "results.csv")}, sum.SLO)
		if err != nil {
			t.Fatal(err)
		}
		re.AddTesterUsage([]*results.Meta{meta}) // the CSV cannot hold the tester's CPU figures
		re.Finish()
		a, _ := json.Marshal(re.Steps)
		b, _ := json.Marshal(sum.Steps)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: summary differs from a recomputation from the CSV:\n%s\n%s", dir, b, a)
		}
		if meta.Scenario == "set" && fake.maxSeen.Load() < 400 {
			t.Fatalf("set wrote only %d distinct credentials at most", fake.maxSeen.Load())
		}
	}
	if n := fake.count(); n != 0 {
		t.Fatalf("%d credentials left after api cleanup", n)
	}
	if !strings.Contains(out, "max throughput at SLO") {
		t.Fatalf("summary table not printed:\n%s", out)
	}
}

func TestAbortPolicyStopsRamp(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	fake.failFrom = 250
	srv := loadtest.NewMTLSServer(t, p, fake, true, false)
	c := fakeConfig(t, p, srv.URL)
	c.Steps.MaxConcurrency = 8
	c.Abort.ConsecutiveSteps = 2
	c.Abort.MaxErrorRate = 0.2
	code, out, log := execute(t, c, false)
	if code != 0 {
		t.Fatalf("an abort by policy is a normal end; exit %d\n%s\n%s", code, out, log)
	}
	dir := runDirs(t, c.OutputDir)[0]
	sum, meta := resultstest.Run(t, dir)
	// Requests 251.. fail: step 3 is half failed (over 20 %), step 4 all:
	// two consecutive steps, so the ramp stops after step 4 of 8.
	if len(sum.Steps) != 4 || !strings.Contains(meta.StoppedReason, "abort policy after step 4 of 8") || sum.StoppedReason != meta.StoppedReason {
		t.Fatalf("steps %d, stopped %q / %q\n%s", len(sum.Steps), meta.StoppedReason, sum.StoppedReason, log)
	}
	if !strings.Contains(out, "stopped after 4 of 8 planned steps (abort policy after step 4 of 8: ") || sum.Stopped == "" {
		t.Fatalf("summary.txt lacks the reason:\n%s", out)
	}
	if fake.count() != 0 {
		t.Fatalf("cleanup left %d credentials", fake.count())
	}
}

func TestCapacitySearchBounded(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := slowSimFake(t, p, fake)
	c := fakeConfig(t, p, srv.URL)
	c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 16, Step: 1, Requests: 64}
	c.SLO.Latency = config.Duration(10 * time.Second) // always met: the search runs to the bound
	c.Capacity.MaxProbes = 4
	code, out, log := steadyCapacitySearch(t, c, clk)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, log)
	}
	sum := resultstest.Summary(t, runDirs(t, c.OutputDir)[0])
	if sum.Capacity == nil || !sum.Capacity.Found || sum.Capacity.Probes > 4 || sum.Capacity.Concurrency != 8 {
		t.Fatalf("capacity %+v (doubling 1,2,4,8 within 4 probes)\n%s", sum.Capacity, log)
	}
}

func TestTargetDownAtStart(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, newFake(), true, false)
	url := srv.URL
	srv.Close()
	c := fakeConfig(t, p, url)
	code, _, log := execute(t, c, false)
	if code != ExitUsage || !strings.Contains(log, "unreachable at start") || !strings.Contains(log, "nothing was sent") {
		t.Fatalf("exit %d\n%s", code, log)
	}
	if d := runDirs(t, c.OutputDir); len(d) != 0 {
		t.Fatalf("a run directory was created: %v", d)
	}
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}

func TestOpenLoopRatesAndWarmup(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 1)
	c := fakeConfig(t, p, srv.URL)
	c.Steps = config.StepsConfig{MaxConcurrency: 8, Rates: []float64{100, 200}, Duration: config.Duration(time.Second), Warmup: config.Duration(300 * time.Millisecond)}
	code, log := executeSim(t, clk, c)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	dir := runDirs(t, c.OutputDir)[0]
	var rates []float64
	rows := 0
	if _, err := results.ReadCSV(filepath.Join(dir, "results.csv"), func(r *results.Row) error {
		rows++
		if len(rates) == 0 || rates[len(rates)-1] != r.Rate {
			rates = append(rates, r.Rate)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// 100 + 200 scheduled requests measured, every one sent on the
	// simulated clock; the warm-ups (30 + 60) were sent but are not in the
	// CSV.
	if rows != 300 || len(rates) != 2 || rates[0] != 100 || rates[1] != 200 {
		t.Fatalf("rows %d rates %v", rows, rates)
	}
	meta := resultstest.Meta(t, dir)
	if meta.Mode != "open" || meta.WarmupS != 0.3 {
		t.Fatalf("meta %+v", meta)
	}
	// Load requests the target saw: measured ones plus the warm-up.
	seen := fake.requests.Load()
	if seen < int64(rows)+90 {
		t.Fatalf("the target saw %d requests, the CSV has %d: no warm-up was sent", seen, rows)
	}
}

func TestStartAtInThePastRefused(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, newFake(), true, false)
	c := fakeConfig(t, p, srv.URL)
	c.Steps.Duration = config.Duration(time.Second)
	c.Tester.StartAt = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	code, _, log := execute(t, c, false)
	if code != ExitUsage || !strings.Contains(log, "lies in the past") {
		t.Fatalf("exit %d\n%s", code, log)
	}
}

// Tester 0 stops by its abort policy after step 1; tester 1, whose own
// policy would carry on, must stop too (stop signal), and tester 0 must
// clean up only after tester 1 is done.
func TestTesterZeroStopSignal(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 2)
	out := t.TempDir()
	cfgs := lockstepPair(t, p, srv.URL, out, simStart.Add(1500*time.Millisecond), time.Second, time.Second, time.Second)
	for i := range cfgs {
		cfgs[i].Steps.MaxConcurrency = 4
	}
	cfgs[0].Abort = config.AbortConfig{MaxErrorRate: 1, MaxLatency: config.Duration(time.Nanosecond), Percentile: 50, ConsecutiveSteps: 1}
	type res struct {
		code      int
		log       string
		finished  time.Time
		leftAtEnd int
	}
	results1 := make([]res, 2)
	var wg sync.WaitGroup
	for i := range cfgs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			code, log := executeSim(t, clk, cfgs[i])
			results1[i] = res{code, log, clk.Now(), fake.count()}
		}(i)
	}
	wg.Wait()
	for i, r := range results1 {
		if r.code != 0 {
			t.Fatalf("tester %d: exit %d\n%s", i, r.code, r.log)
		}
	}
	if !strings.Contains(results1[1].log, "tester 0 stopped the ramp before step") {
		t.Fatalf("tester 1 did not get the stop signal:\n%s", results1[1].log)
	}
	if results1[0].finished.Before(results1[1].finished) {
		t.Fatalf("tester 0 cleaned up before tester 1 finished")
	}
	if fake.count() != 0 {
		t.Fatalf("%d credentials left", fake.count())
	}
	dir := runDirs(t, out)
	if len(dir) != 1 {
		t.Fatalf("want one shared run directory, got %v", dir)
	}
	for _, f := range []string{"meta.json", "meta-1.json", "results-0.csv", "results-1.csv", "summary.json", "summary-1.json"} {
		if _, err := os.Stat(filepath.Join(dir[0], f)); err != nil {
			t.Fatalf("missing %s", f)
		}
	}
	s1 := resultstest.SummaryFile(t, filepath.Join(dir[0], "summary-1.json"))
	if len(s1.Steps) >= 4 || len(s1.Steps) < 1 {
		t.Fatalf("tester 1 ran %d steps", len(s1.Steps))
	}
}

func TestCustomScenario(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	srv := loadtest.NewMTLSServer(t, p, fake, true, false)
	c := fakeConfig(t, p, srv.URL)
	c.Scenarios = []string{"custom"}
	c.Custom = config.CustomConfig{Method: "GET", Path: "/api/v1/data?current=true&name=((prefix))/seed/cred-{{rand ((seed_count))}}", Headers: []string{"X-Perf: yes"}}
	c.Steps = config.StepsConfig{MinConcurrency: 2, MaxConcurrency: 2, Step: 1, Requests: 50}
	var outb, logb bytes.Buffer
	code := Execute(context.Background(), Options{Config: c, Stdout: &outb, Log: &logb, TTY: true, Version: "test", CPU: quietCPU})
	out, log := outb.String(), logb.String()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, log)
	}
	// On a terminal the log carries a live line, redrawn in place.
	if !strings.Contains(log, "\r\033[Kseeding: ") {
		t.Fatalf("no live progress line on a terminal:\n%q", log)
	}
	sum := resultstest.Summary(t, runDirs(t, c.OutputDir)[0])
	// Every request named an existing seeded credential: no 404s.
	if sum.Requests != 50 || sum.Errors != 0 {
		t.Fatalf("requests %d errors %d\n%s", sum.Requests, sum.Errors, log)
	}
}

// An open loop's capacity search, in real time on a quiet machine: on the
// simulated clock an open loop's latencies vary with how the host
// schedules the pacer (the clock jumps to its next send while requests
// are in flight), so a run warm-up there is "too noisy to tell" now and
// then. Probes of 2.5 s are judged steady on their own.
func TestCapacitySearchOpenLoopRealTime(t *testing.T) {
	loadtest.QuietMachine(t)
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	// A 10 ms service time: the fake's own sub-millisecond answers vary
	// between a step's halves by more than the steadiness test's 10 % with
	// nothing but the host's caches and clocks; 10 ms of service makes that
	// a small share of each latency, as a real target's work is.
	fake := newFake()
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(10 * time.Millisecond)
		fake.ServeHTTP(w, r)
	})
	srv := loadtest.NewMTLSServer(t, p, slow, true, false)
	// A search the tool's own verdict on this process (tester and fake
	// target in one) says the machine disturbed is run again: its probes'
	// steadiness measured the machine.
	loadtest.OnQuietMachine(t, func() string {
		c := fakeConfig(t, p, srv.URL)
		c.Steps = config.StepsConfig{MaxConcurrency: 8, Rates: []float64{40}, Duration: config.Duration(2500 * time.Millisecond)}
		c.SLO.Latency = config.Duration(10 * time.Second)
		c.Capacity.MaxProbes = 3
		c.Warmup = config.WarmupConfig{Run: "0"}
		from := cpuload.Take(time.Now())
		code, out, log := execute(t, c, true)
		if busy := loadtest.SinceVerdict(from); busy != "" {
			return busy
		}
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, log)
		}
		sum := resultstest.Summary(t, runDirs(t, c.OutputDir)[0])
		cp := sum.Capacity
		// No upper bound given: doubling 40, 80, 160 within 3 probes.
		if cp == nil || !cp.Found || cp.Probes != 3 || cp.Rate != 160 || !strings.Contains(cp.Note, "max_probes") || len(sum.Steps) != 3 {
			t.Fatalf("capacity %+v steps %d\n%s", cp, len(sum.Steps), log)
		}
		return ""
	})
}

// Two testers in lockstep over two scenarios: every step of every tester
// starts in its shared slot (start_at + k*(steps*slot + gap) + j*slot),
// each scenario gets one run directory with both testers' files, and
// tester 0's cleanup leaves nothing behind, including tester 1's writes.
func TestLockstepScenarios(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 2)
	out := t.TempDir()
	start := simStart.Add(1500 * time.Millisecond)
	const slot, timeout, warm = time.Second, 500 * time.Millisecond, 700 * time.Millisecond
	gap := config.MinScenarioGap(timeout)
	cfgs := lockstepPair(t, p, srv.URL, out, start, slot, timeout, gap, "get", "set")
	for i := range cfgs {
		// Every tester warms up for the same fixed slot before each
		// scenario's first step.
		cfgs[i].Warmup.Run = warm.String()
	}
	codes, logs := executeTestersSim(t, clk, cfgs)
	for i := range codes {
		if codes[i] != 0 {
			t.Fatalf("tester %d: exit %d\n%s", i, codes[i], logs[i])
		}
	}
	if n := fake.count(); n != 0 {
		t.Fatalf("%d credentials left after tester 0's cleanup", n)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 2 {
		t.Fatalf("want one run directory per scenario, got %v", dirs)
	}
	for _, dir := range dirs {
		meta, err := os.ReadFile(filepath.Join(dir, "meta.json"))
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		if strings.Contains(string(meta), `"scenario": "set"`) {
			k = 1
		}
		// Scenario 1 starts on its schedule or, when tester 0's cleanup
		// and seeding leave less than scenarioLead before it, later: the
		// start tester 0 published, which meta.json records. Steps follow
		// the warm-up.
		scheduled := start.Add(time.Duration(k) * (warm + 2*slot + gap))
		var m results.Meta
		if err := json.Unmarshal(meta, &m); err != nil {
			t.Fatal(err)
		}
		agreed, err := time.Parse(time.RFC3339Nano, m.ScenarioStartAt)
		if err != nil || agreed.Before(scheduled) || (k == 0 && !agreed.Equal(scheduled)) {
			t.Fatalf("%s: scenario_start_at %q (%v); scheduled %s", filepath.Base(dir), m.ScenarioStartAt, err, scheduled.Format(time.RFC3339Nano))
		}
		// On the run's clock every request of step j falls in slot j.
		scenarioStart := agreed.Add(warm)
		for tester := 0; tester < 2; tester++ {
			checkSlots(t, filepath.Join(dir, fmt.Sprintf("results-%d.csv", tester)), scenarioStart, slot, 2, logs[0]+"\ntester 1:\n"+logs[1])
		}
	}
}

// A fixed run warm-up loads the target before the first step: its requests
// are counted in meta.json, never in the CSV, and what set writes during
// it is cleaned up with the run. On the simulated clock each answer takes
// 1 ms, so the warm-up lasts its 400 ms and at most the answer of the
// other worker's request in flight at the end, and sent one request per
// millisecond.
func TestRunWarmupFixed(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 1)
	c := fakeConfig(t, p, srv.URL)
	c.Scenarios = []string{"get", "set"}
	c.Warmup.Run = "400ms"
	code, log := executeSim(t, clk, c)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	for _, dir := range runDirs(t, c.OutputDir) {
		w := resultstest.Meta(t, dir).Warmup
		if w == nil || w.Mode != "fixed" || w.DurationS < 0.4 || w.DurationS > 0.401 || float64(w.Requests) != math.Round(w.DurationS*1000) || w.Concurrency != 2 || w.Steady {
			t.Fatalf("%s: warmup %+v", dir, w)
		}
		rows, _ := countCSV(t, filepath.Join(dir, "results.csv"))
		if rows != 400 {
			t.Fatalf("%s: %d rows, want exactly the 400 measured requests", dir, rows)
		}
	}
	if n := fake.count(); n != 0 {
		t.Fatalf("%d credentials left: the warm-up's writes were not cleaned up", n)
	}
}

func countCSV(t *testing.T, path string) (rows int, segments int) {
	t.Helper()
	seen := map[int]bool{}
	if _, err := results.ReadCSV(path, func(r *results.Row) error {
		rows++
		seen[r.Segment] = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return rows, len(seen)
}

// A tester short of CPU measures itself: every step is tester-bound, says
// which figure, and none counts as capacity.
func TestTesterBoundStepsAreFlagged(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, newFake(), true, false)
	c := fakeConfig(t, p, srv.URL)
	code, out, log := executeOn(t, c, false, machine(0.93, 0.95))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	dir := runDirs(t, c.OutputDir)[0]
	sum, meta := resultstest.Run(t, dir)
	if len(sum.Steps) == 0 || len(meta.Steps) != len(sum.Steps) {
		t.Fatalf("%d steps in summary.json, %d in meta.json, want the same, at least 1", len(sum.Steps), len(meta.Steps))
	}
	for i, st := range sum.Steps {
		ms := meta.Steps[i]
		if !st.TesterBound || !ms.TesterBound {
			t.Fatalf("step %d: tester_bound %v in summary.json (%q), %v in meta.json (%q), want both true",
				i, st.TesterBound, st.TesterBoundReason, ms.TesterBound, ms.TesterBoundReason)
		}
		if st.TesterCPU == nil || math.Abs(*st.TesterCPU-0.93) > 0.001 {
			t.Fatalf("step %d: tester_cpu %s in summary.json (%s in meta.json), want 0.93 ± 0.001; host_cpu %s, duration %.6f s",
				i, fraction(st.TesterCPU), fraction(ms.TesterCPU), fraction(st.HostCPU), st.DurationS)
		}
	}
	if sum.MaxThroughputAtSLO != nil || sum.Knee != nil {
		t.Fatalf("tester-bound steps counted as capacity: %v %v", sum.MaxThroughputAtSLO, sum.Knee)
	}
	if !strings.Contains(out, "tester CPU 93 % of 2 core(s) at step 1 (concurrency 1): add testers or use a bigger VM") || !strings.Contains(log, "TESTER-BOUND") {
		t.Fatalf("no warning naming the figure:\n%s\n%s", out, log)
	}
	// summary recomputes the flags from meta.json.
	re, err := results.SummarizeDir(dir, sum.SLO)
	if err != nil || !re.Steps[0].TesterBound || re.MaxThroughputAtSLO != nil {
		t.Fatalf("recomputed summary lost the tester figures: %+v %v", re.Steps[0], err)
	}
}

// Two testers in lockstep whose tester 0 cleans up the set scenario for
// longer than the whole tester.scenario_gap: the interpolate scenario
// starts when tester 0 is ready (it publishes the start), and both testers
// record requests in every interpolate step, instead of steps that pass
// with 0 requests because their slots ended during the cleanup.
func TestLockstepCleanupSlowerThanGap(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	fake.deleteStall = 3 * time.Second
	clk, srv := simFake(t, p, fake, 2)
	fake.clock = clk
	out := t.TempDir()
	start := simStart.Add(1500 * time.Millisecond)
	const slot, timeout = time.Second, 500 * time.Millisecond
	gap := config.MinScenarioGap(timeout) // tester 0 has 1 s after its wait; the delete takes 3
	cfgs := lockstepPair(t, p, srv.URL, out, start, slot, timeout, gap, "set", "interpolate")
	for i := range cfgs {
		cfgs[i].Tester.RendezvousTimeout = config.Duration(time.Minute)
	}
	codes, logs := executeTestersSim(t, clk, cfgs)
	for i := range codes {
		if codes[i] != 0 {
			t.Fatalf("tester %d: exit %d\ntester 0:\n%s\ntester 1:\n%s", i, codes[i], logs[0], logs[1])
		}
	}
	if !fake.stalled.Load() {
		t.Fatal("the cleanup never hit the slow delete")
	}
	if !strings.Contains(logs[0], "after its schedule") || !strings.Contains(logs[1], "tester 0 starts it at") {
		t.Errorf("the late start is not reported:\ntester 0:\n%s\ntester 1:\n%s", logs[0], logs[1])
	}
	var interp string
	for _, d := range runDirs(t, out) {
		if strings.Contains(filepath.Base(d), "-interpolate") {
			interp = d
		}
	}
	if interp == "" {
		t.Fatalf("no interpolate run directory in %v", runDirs(t, out))
	}
	scheduled := start.Add(2*slot + gap)
	m := resultstest.Meta(t, interp)
	if at, err := time.Parse(time.RFC3339Nano, m.ScenarioStartAt); err != nil || !at.After(scheduled.Add(time.Second)) {
		t.Errorf("interpolate scenario_start_at %q; want more than 1 s after its schedule %s", m.ScenarioStartAt, scheduled.Format(time.RFC3339Nano))
	}
	for tester := 0; tester < 2; tester++ {
		perStep := map[int]int{}
		_, err := results.ReadCSV(filepath.Join(interp, fmt.Sprintf("results-%d.csv", tester)), func(r *results.Row) error {
			perStep[r.Segment]++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(perStep) != 2 || perStep[0] == 0 || perStep[1] == 0 {
			t.Errorf("tester %d interpolate rows per step %v; want requests in both steps", tester, perStep)
		}
	}
	if n := fake.count(); n != 0 {
		t.Errorf("%d credentials left after the cleanup", n)
	}
}

// A step whose wall-clock slot ended before the tester was ready records
// 0 requests; that fails the run with the reason, never passes as ok.
func TestZeroRequestStepFails(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 1)
	c := fakeConfig(t, p, srv.URL)
	c.Target.Timeout = config.Duration(500 * time.Millisecond)
	c.Scenarios = []string{"get"}
	c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 3, Step: 1, Duration: config.Duration(time.Second)}
	// Step 1's slot ended half a second before the run starts; steps 2 and
	// 3 are still ahead.
	c.Tester = config.TesterConfig{Index: 0, Count: 2, StartAt: simStart.Add(-1500 * time.Millisecond).Format(time.RFC3339Nano), ScenarioGap: config.Duration(time.Minute), RendezvousTimeout: config.Duration(time.Minute)}
	code, log := executeSim(t, clk, c)
	if code != ExitFailed || !strings.Contains(log, "step 1 (concurrency 1) recorded 0 requests: this tester was ready at") {
		t.Fatalf("exit %d; want 1 with the 0-request step explained:\n%s", code, log)
	}
	dirs := runDirs(t, c.OutputDir)
	m, err := results.ReadMeta(dirs[0])
	if err != nil || m.Status != "failed" || !strings.Contains(m.Error, "recorded 0 requests") || m.CleanupStatus != "ok" {
		t.Fatalf("meta %+v, %v", m, err)
	}
	if n := fake.count(); n != 0 {
		t.Errorf("%d credentials left after the cleanup", n)
	}
}

// checkSlots reads a tester's CSV and checks, on the run's clock, that it
// ran steps steps and sent step j's requests within slot j: from start +
// j*slot (never before) to the slot's end (never at or after it).
func checkSlots(t *testing.T, csv string, start time.Time, slot time.Duration, steps int, log string) {
	t.Helper()
	rows := map[int]int{}
	if _, err := results.ReadCSV(csv, func(r *results.Row) error {
		from := start.Add(time.Duration(r.Segment) * slot)
		if r.Start.Before(from) || !r.Start.Before(from.Add(slot)) {
			t.Errorf("%s: step %d request at %s, outside its slot %s..%s", filepath.Base(csv), r.Segment, r.Start.Format(time.RFC3339Nano), from.Format(time.RFC3339Nano), from.Add(slot).Format(time.RFC3339Nano))
		}
		rows[r.Segment]++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(rows) != steps {
		t.Fatalf("%s: requests in steps %v, want %d steps\n%s", csv, rows, steps, log)
	}
}

// An auto warm-up against a target warming up like a fresh JVM: on the
// simulated clock its service time falls 20 % every 5 s for 25 s, then
// stays at 5 ms. The judge needs a minute of windows whose fitted trend
// is within ±5 %/min: windows 5..16 (5 s each from the warm-up's start)
// are the first 12 all at 5 ms (a fit that still holds window 4, 25 %
// slower, reads about 10 %/min), so steady after 17 windows, 85 s,
// whatever the machine's speed.
func TestRunWarmupAutoOnSimClock(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk := loadtest.NewSimClock(simStart, 1)
	var mu sync.Mutex
	var warmFrom time.Time // the first load request
	service := func(r *http.Request) time.Duration {
		if r.URL.Query().Get("current") != "true" || r.Header.Get("User-Agent") == credhub.UserAgent {
			return time.Millisecond // seeding and checks
		}
		mu.Lock()
		defer mu.Unlock()
		if warmFrom.IsZero() {
			warmFrom = clk.Now()
		}
		d := 5 * time.Millisecond
		for k := clk.Now().Sub(warmFrom) / (5 * time.Second); k < 5; k++ {
			d = d * 5 / 4
		}
		return d
	}
	srv := loadtest.NewMTLSServer(t, p, clk.Handler(fake, service), true, false)
	c := fakeConfig(t, p, srv.URL)
	c.Scenarios = []string{"get"}
	c.Warmup = config.WarmupConfig{Run: "auto", Concurrency: 1, Max: config.Duration(2 * time.Minute)}
	code, log := executeSim(t, clk, c)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	dirs := runDirs(t, c.OutputDir)
	if len(dirs) != 1 {
		t.Fatalf("run directories %v", dirs)
	}
	w := resultstest.Meta(t, dirs[0]).Warmup
	if w == nil || !w.Steady || w.Verdict != "steady" || !strings.HasPrefix(w.Reason, "steady after 1m25s: over the last 1m0s throughput +0.0 %/min") || w.DurationS < 85 || w.DurationS > 85.02 {
		t.Fatalf("warmup %+v, want steady after 17 windows (85 s)\n%s", w, log)
	}
}

// A run of 1 s steps with the run warm-up off: no step is judged steady
// (summary.json `steady` null), none counts, and the printed summary says
// why and that the JVM may have been cold.
func TestOneSecondStepsAreNotJudged(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	clk, srv := simFake(t, p, fake, 1)
	c := fakeConfig(t, p, srv.URL)
	c.Scenarios = []string{"get"}
	c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 2, Step: 1, Duration: config.Duration(time.Second)}
	code, out, log := executeSimAs(t, clk, c, false)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	dir := runDirs(t, c.OutputDir)[0]
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Steps []map[string]any `json:"steps"`
	}
	if err := json.Unmarshal(b, &raw); err != nil || len(raw.Steps) != 2 {
		t.Fatalf("summary.json: %v, %d steps", err, len(raw.Steps))
	}
	for i, st := range raw.Steps {
		if v, ok := st["steady"]; !ok || v != nil || st["step"] != float64(i+1) {
			t.Fatalf("step %v: steady %v, want null", st["step"], v)
		}
	}
	for _, want := range []string{
		"warm-up off: the first steps may measure a cold JVM\n",
		"max throughput at SLO: unknown: 2 of 2 steps met the SLO but none counts: 2 too short to judge steady, and the run warm-up was off\n",
		"steadiness: 2 of 2 steps could not be judged steady: steps of 1 s are too short to judge",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the run's printed summary lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(log, "too short to judge steady") {
		t.Errorf("the step lines do not say so:\n%s", log)
	}
}
