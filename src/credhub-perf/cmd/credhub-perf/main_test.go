package main

// Integration tests: the real credhub-perf binary against the real
// credhub-sim (src/credhub-sim) over mutual TLS, and against throwaway
// PostgreSQL and MariaDB servers from scripts/test-db.

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/credhub"
	"github.com/credhub-perf/credhub-perf/internal/testpki"
	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
	"github.com/credhub-perf/credhub-perf/tlsclient"
)

var (
	binDir   string
	perfBin  string
	simBin   string
	certDir  string
	buildErr error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "credhub-perf-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var buildOnce sync.Once

// binaries builds credhub-perf and credhub-sim once and makes the sim's
// certificates.
func binaries(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test (builds and starts credhub-sim)")
	}
	buildOnce.Do(func() {
		perfBin = filepath.Join(binDir, "credhub-perf")
		simBin = filepath.Join(binDir, "credhub-sim")
		if out, err := exec.Command("go", "build", "-o", perfBin, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building credhub-perf: %v\n%s", err, out)
			return
		}
		cmd := exec.Command("go", "build", "-o", simBin, "./cmd/credhub-sim")
		cmd.Dir = "../../../credhub-sim"
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("building credhub-sim: %v\n%s", err, out)
			return
		}
		certDir = filepath.Join(binDir, "certs")
		if out, err := exec.Command(simBin, "certs", "--out", certDir).CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("credhub-sim certs: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

type sim struct {
	URL string
	cmd *exec.Cmd
	log *bytes.Buffer
}

// startSim starts credhub-sim on a free loopback port.
func startSim(t *testing.T, db string, args ...string) *sim {
	t.Helper()
	dir := t.TempDir()
	if db == "" {
		db = "sqlite:" + filepath.Join(dir, "credhub.db")
	}
	addrFile := filepath.Join(dir, "addr")
	all := append([]string{"serve", "-listen", "127.0.0.1:0", "-cert-dir", certDir, "-db", db,
		"-addr-file", addrFile, "-encryption-password", "integration-test-encryption-password"}, args...)
	s := &sim{cmd: exec.Command(simBin, all...), log: &bytes.Buffer{}}
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop() })
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(addrFile); err == nil && strings.HasSuffix(string(b), "\n") {
			s.URL = strings.TrimSpace(string(b))
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("credhub-sim did not start:\n%s", s.log)
	return nil
}

func (s *sim) stop() {
	if s.cmd.Process != nil && s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	}
}

func (s *sim) kill() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// client is our API client with the sim's client certificate, for checks.
func (s *sim) client(t *testing.T) *credhub.Client {
	c, err := credhub.New(credhub.Options{URL: s.URL, TLS: tlsclient.Options{CAFile: filepath.Join(certDir, "ca.crt"),
		CertFile: filepath.Join(certDir, "client.crt"), KeyFile: filepath.Join(certDir, "client.key")}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func writeConfig(t *testing.T, url, extra string) string {
	t.Helper()
	cfg := fmt.Sprintf(`target:
  url: %s
  ca_cert_file: %s
  client_cert_file: %s
  client_key_file: %s
  timeout: 5s
seed:
  credentials: 30
  bytes: 600
label: it
output_dir: %s
warmup:
  run: "0" # the warm-up tests turn it on
confirm:
  duration: 1s # a ramp that finds a capacity confirms it; briefly here
saturation:
  # Off: the target shares this machine on purpose, and on a busy machine
  # the tester waits for a CPU behind it and other work, and a virtual
  # machine's steal rises: any bound could then flag a step tester-bound,
  # and a test about something else would find no capacity, or a step
  # that does not count. The saturation test sets its bounds itself.
  max_tester_cpu: 1
  max_host_cpu: 1
  max_steal: 1
  max_tester_wait: 1
%s
`, url, filepath.Join(certDir, "ca.crt"), filepath.Join(certDir, "client.crt"), filepath.Join(certDir, "client.key"), t.TempDir(), extra)
	p := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func outputDir(t *testing.T, cfgPath string) string {
	b, _ := os.ReadFile(cfgPath)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "output_dir: ") {
			return strings.TrimPrefix(l, "output_dir: ")
		}
	}
	t.Fatal("no output_dir")
	return ""
}

type perfRun struct {
	code           int
	stdout, stderr string
}

func startPerf(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(perfBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out, &errb
}

func waitPerf(t *testing.T, cmd *exec.Cmd, out, errb *bytes.Buffer, limit time.Duration) perfRun {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("credhub-perf ran longer than %s\nstdout:\n%s\nstderr:\n%s", limit, out, errb)
	}
	return perfRun{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

func perf(t *testing.T, args ...string) perfRun {
	cmd, out, errb := startPerf(t, args...)
	// 4 minutes: an auto warm-up judges at least a minute of flat windows
	// after the target settles; a hung run still ends here.
	return waitPerf(t, cmd, out, errb, 4*time.Minute)
}

func onlyRunDir(t *testing.T, out string) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(dirs) != 1 {
		t.Fatalf("want one run directory in %s, got %v", out, dirs)
	}
	return dirs[0]
}

func countRows(t *testing.T, path string) (rows, failed int) {
	t.Helper()
	if _, err := results.ReadCSV(path, func(r *results.Row) error {
		rows++
		if r.Failed() {
			failed++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return
}

// checkSummaryMatchesCSV recomputes the summary from the CSV alone and
// compares it with what the run wrote.
func checkSummaryMatchesCSV(t *testing.T, dir string) *results.Summary {
	t.Helper()
	sum := resultstest.Summary(t, dir)
	files, err := results.ResultFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	re, err := results.SummarizeFiles(files, sum.SLO)
	if err != nil {
		t.Fatal(err)
	}
	// The tester's CPU figures are not in the CSV: they come from meta.json.
	if len(files) == 1 {
		meta := resultstest.Meta(t, dir)
		re.AddTesterUsage([]*results.Meta{meta})
		re.Finish()
	}
	a, _ := json.Marshal(sum.Steps)
	b, _ := json.Marshal(re.Steps)
	if !bytes.Equal(a, b) || sum.Requests != re.Requests || sum.Errors != re.Errors {
		t.Fatalf("summary.json differs from a recomputation from the CSV:\n%s\n%s", a, b)
	}
	return sum
}

func TestScenariosOverMTLS(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	api := s.client(t)
	for _, scenario := range []string{"get", "set", "interpolate"} {
		t.Run(scenario, func(t *testing.T) {
			cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 1, max_concurrency: 4, step: 3, duration: 700ms}
keepalive: false
instances: 1`)
			runID := "it-" + scenario
			prefix := "/credhub-perf/" + runID + "/" + scenario
			// Watch the target during the ramp: the seeded credentials must
			// be there while it runs.
			var seenMu sync.Mutex
			seen := 0
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
					names, err := api.FindPath(context.Background(), prefix+"/seed")
					if err == nil {
						seenMu.Lock()
						seen = max(seen, len(names))
						seenMu.Unlock()
					}
				}
			}()
			r := perf(t, "run", "--config", cfg, "--scenario", scenario, "--run-id", runID)
			close(stop)
			wg.Wait()
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			dir := onlyRunDir(t, outputDir(t, cfg))
			rows, failed := countRows(t, filepath.Join(dir, "results.csv"))
			sum := checkSummaryMatchesCSV(t, dir)
			meta := resultstest.Meta(t, dir)
			if rows == 0 || int64(rows) != sum.Requests || failed != 0 || len(sum.Steps) != 2 {
				t.Fatalf("rows %d failed %d, summary %d requests, %d steps", rows, failed, sum.Requests, len(sum.Steps))
			}
			if sum.Steps[0].Concurrency != 1 || sum.Steps[1].Concurrency != 4 {
				t.Fatalf("steps %+v", sum.Steps)
			}
			if meta.Scenario != scenario || meta.TLS != "mtls" || meta.Keepalive || meta.Status != "ok" || meta.CleanupStatus != "ok" ||
				meta.Instances == nil || *meta.Instances != 1 || meta.RunID != runID || !strings.HasSuffix(dir, "-"+scenario+"-it") {
				t.Fatalf("meta %+v", meta)
			}
			if scenario != "set" && seen != 30 {
				t.Fatalf("saw %d of 30 seeded credentials during the ramp", seen)
			}
			left, err := api.FindPath(context.Background(), "/credhub-perf/"+runID)
			if err != nil || len(left) != 0 {
				t.Fatalf("after cleanup: %d credentials left (%v)", len(left), err)
			}
			// set writes its pool of names (set.names, 500) in turn: never
			// more than 500 to delete, and every name a recorded write
			// reached, less the few whose only write was one cut off at a
			// step's end (at most the concurrency, 4, per step).
			if scenario == "set" && (meta.CleanupDeleted > 500 || meta.CleanupDeleted < int64(min(rows, 500)-2*4)) {
				t.Fatalf("cleanup deleted %d, set wrote %d requests to a pool of 500 names", meta.CleanupDeleted, rows)
			}
			// The summary subcommand recomputes the same figures.
			before, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
			if r := perf(t, "summary", dir); r.code != 0 || !strings.Contains(r.stdout, "max throughput at SLO") {
				t.Fatalf("summary: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			after, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
			if !bytes.Equal(before, after) {
				t.Fatalf("credhub-perf summary changed summary.json:\n%s\n%s", before, after)
			}
		})
	}
}

func TestFailuresAreRecorded(t *testing.T) {
	binaries(t)
	s := startSim(t, "", "-error-rate", "0.2", "-error-status", "503")
	cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 2, max_concurrency: 2, requests: 1000}
abort: {max_error_rate: 1}`)
	// Setup and cleanup calls meet the injected errors too; they retry
	// (up to 6 attempts), and a small seed keeps the odds of 6 failures in
	// a row negligible.
	r := perf(t, "run", "--config", cfg, "--scenario", "get", "--seed.credentials", "5")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dir := onlyRunDir(t, outputDir(t, cfg))
	rows, failed := countRows(t, filepath.Join(dir, "results.csv"))
	sum := checkSummaryMatchesCSV(t, dir)
	if rows != 1000 || sum.Errors != int64(failed) || failed < 100 || failed > 300 {
		t.Fatalf("rows %d (want 1000), failed %d (want about 200), summary errors %d", rows, failed, sum.Errors)
	}
}

func TestTargetDownAtStart(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	url := s.URL
	s.stop()
	cfg := writeConfig(t, url, "")
	r := perf(t, "run", "--config", cfg)
	if r.code != 2 || !strings.Contains(r.stderr, "unreachable at start") || !strings.Contains(r.stderr, "nothing was sent") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if dirs, _ := filepath.Glob(filepath.Join(outputDir(t, cfg), "*")); len(dirs) != 0 {
		t.Fatalf("run directories were created: %v", dirs)
	}
}

// badClientCert writes a client certificate signed by the sim's CA whose
// OU is not CredHub's app:<v4 uuid>.
func badClientCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	ca := testpki.LoadCA(t, filepath.Join(certDir, "ca.crt"), filepath.Join(certDir, "ca.key"))
	leaf := ca.Issue(t, testpki.Spec{CommonName: "wrong-client", OU: []string{"app:not-a-uuid"}})
	return leaf.Write(t, t.TempDir(), "bad")
}

func TestWrongClientCertificate(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	certFile, keyFile := badClientCert(t)
	cfg := writeConfig(t, s.URL, "")
	r := perf(t, "run", "--config", cfg, "--target.client_cert_file", certFile, "--target.client_key_file", keyFile)
	if r.code != 2 || !strings.Contains(r.stderr, "401 Unauthorized") || !strings.Contains(r.stderr, "OU=app:not-a-uuid") ||
		!strings.Contains(r.stderr, "does not provide a valid identity") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "PRIVATE KEY") {
		t.Fatal("key material in the log")
	}
}

func TestBadConfigOneLineEach(t *testing.T) {
	binaries(t)
	cfg := writeConfig(t, "https://127.0.0.1:1", `steps: {min_concurrency: 0, max_concurrency: 4, step: 1, requests: 100}
slo: {percentile: 120}
cleanup: {mode: wipe}`)
	r := perf(t, "run", "--config", cfg, "--scenario", "gett", "--tester.start_at", "noon")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	want := []string{"steps.min_concurrency: ", "slo.percentile: ", "cleanup.mode: ", "scenarios: ", "tester.start_at: "}
	if r.code != 2 || len(lines) != len(want) {
		t.Fatalf("exit %d, want %d lines:\n%s", r.code, len(want), r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, "config: "+w) {
			t.Errorf("no line for %s in\n%s", w, r.stderr)
		}
	}
	r = perf(t, "run", "--config", cfg, "--steps.requests", "lots")
	if r.code != 2 || !strings.Contains(r.stderr, `--steps.requests: "lots" is not an integer`) {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// A check only credhub-perf makes (a BOSH deploy cannot: docs/design.md,
	// "Checked when the errand starts") is one line too, before any load.
	good := writeConfig(t, "https://127.0.0.1:1", "steps: {duration: 1s}\nscenarios: [get, set]")
	r = perf(t, "run", "--config", good, "--testers", "2", "--start-at", time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "--tester.scenario_gap", "5s")
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code != 2 || len(lines) != 1 || !strings.Contains(r.stderr, "config: tester.scenario_gap: 5s is too short") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

// waitForRows waits until the run has flushed at least one step of rows.
func waitForRows(t *testing.T, out string, min int) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(out, "*", "results*.csv"))
		if len(files) == 1 {
			if b, err := os.ReadFile(files[0]); err == nil && bytes.Count(b, []byte("\n")) > min {
				return filepath.Dir(files[0])
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no rows appeared in %s", out)
	return ""
}

// waitForSteps waits until the run's results file holds rows of at least
// steps steps: the run is that far into its ramp, whatever the machine's
// load made of the time it took.
func waitForSteps(t *testing.T, out string, steps int) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	seen := 0
	for time.Now().Before(deadline) {
		files, _ := filepath.Glob(filepath.Join(out, "*", "results*.csv"))
		if len(files) == 1 {
			// A row cut off mid-write is skipped, not an error.
			_, err := results.ReadCSV(files[0], func(r *results.Row) error {
				seen = max(seen, r.Segment+1)
				return nil
			})
			if err == nil && seen >= steps {
				return filepath.Dir(files[0])
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the run in %s did not reach step %d in 60 s (rows of %d steps)", out, steps, seen)
	return ""
}

func TestTargetKilledMidRamp(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 1, max_concurrency: 20, step: 1, duration: 500ms}`)
	cmd, out, errb := startPerf(t, "run", "--config", cfg, "--scenario", "get")
	// Killed once the ramp is in its third step: some steps measured, most
	// still ahead.
	dir := waitForSteps(t, outputDir(t, cfg), 3)
	s.kill()
	r := waitPerf(t, cmd, out, errb, time.Minute)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	meta := resultstest.Meta(t, dir)
	rows, _ := countRows(t, filepath.Join(dir, "results.csv"))
	sum := checkSummaryMatchesCSV(t, dir)
	if rows == 0 || int64(rows) != sum.Requests || meta.Status != "failed" || meta.CleanupStatus != "failed" ||
		!strings.Contains(r.stderr, "cleanup (api) failed") || len(meta.Steps) >= 20 {
		t.Fatalf("rows %d, meta %+v\n%s", rows, meta, r.stderr)
	}
	// The credentials left are named with the command that removes them.
	if want := "remove them with: credhub-perf cleanup --config " + cfg + " --run-id " + meta.RunID + " " + dir; !strings.Contains(r.stderr, want) {
		t.Fatalf("no recovery command %q in\n%s", want, r.stderr)
	}
}

func TestSIGINTMidRamp(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	api := s.client(t)
	cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 1, max_concurrency: 20, step: 1, duration: 500ms}`)
	cmd, out, errb := startPerf(t, "run", "--config", cfg, "--scenario", "set", "--run-id", "sigint")
	dir := waitForSteps(t, outputDir(t, cfg), 3)
	_ = cmd.Process.Signal(syscall.SIGINT)
	r := waitPerf(t, cmd, out, errb, time.Minute)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	meta, _ := results.ReadMeta(dir)
	rows, _ := countRows(t, filepath.Join(dir, "results.csv"))
	checkSummaryMatchesCSV(t, dir)
	if rows == 0 || meta.Status != "interrupted" || meta.CleanupStatus != "ok" || meta.CleanupDeleted == 0 {
		t.Fatalf("rows %d meta %+v\n%s", rows, meta, r.stderr)
	}
	if left, err := api.FindPath(context.Background(), "/credhub-perf/sigint"); err != nil || len(left) != 0 {
		t.Fatalf("%d credentials left after an interrupted run (%v)", len(left), err)
	}
}

// Two testers started as separate processes with one --start-at: every
// request of step j of either tester is stamped within the shared slot j
// on the wall clock (start_at + j*duration), which a busy machine cannot
// break (it only delays requests, and none is sent after its step's end),
// while a tester that ignored the shared start or counted its steps from
// its own would. How closely the two start each step in real time is the
// schedule's business, checked on the simulated clock
// (ramp.TestLockstepScenarios); over real processes it would measure the
// machine's timer jitter (more than 50 ms now and then on a loaded one).
func TestTwoTestersInLockstep(t *testing.T) {
	binaries(t)
	twoTesters(t)
}

func twoTesters(t *testing.T) {
	t.Helper()
	s := startSim(t, "")
	api := s.client(t)
	cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 2, max_concurrency: 4, step: 2, duration: 1s}`)
	start := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second).Add(time.Second).Format(time.RFC3339)
	var cmds []*exec.Cmd
	var outs, errs []*bytes.Buffer
	for i := 0; i < 2; i++ {
		c, o, e := startPerf(t, "run", "--config", cfg, "--scenario", "get", "--testers", "2", "--tester-index", fmt.Sprint(i), "--start-at", start, "--target.timeout", "1s")
		cmds, outs, errs = append(cmds, c), append(outs, o), append(errs, e)
	}
	for i := range cmds {
		if r := waitPerf(t, cmds[i], outs[i], errs[i], time.Minute); r.code != 0 {
			t.Fatalf("tester %d: exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
	}
	dir := onlyRunDir(t, outputDir(t, cfg))
	origin, err := time.Parse(time.RFC3339, start)
	if err != nil {
		t.Fatal(err)
	}
	if meta, err := results.ReadMeta(dir); err != nil || meta.ScenarioStartAt == "" {
		t.Fatalf("meta.json: %v, scenario_start_at %q", err, meta.ScenarioStartAt)
	} else if agreed, err := time.Parse(time.RFC3339Nano, meta.ScenarioStartAt); err != nil || !agreed.Equal(origin) {
		t.Fatalf("scenario_start_at %q (%v), want --start-at %s", meta.ScenarioStartAt, err, start)
	}
	const slot = time.Second // steps.duration, no step warm-up
	steps := make([]map[int]int, 2)
	singles := make([]*results.Summary, 2)
	for i := 0; i < 2; i++ {
		f := filepath.Join(dir, fmt.Sprintf("results-%d.csv", i))
		steps[i] = map[int]int{}
		if _, err := results.ReadCSV(f, func(r *results.Row) error {
			// The slots' ends are whole seconds and the CSV rounds stamps
			// to the microsecond: one stamped just before the end may read
			// as the end itself.
			from := origin.Add(time.Duration(r.Segment) * slot)
			if r.Start.Before(from) || r.Start.After(from.Add(slot)) {
				t.Errorf("tester %d: step %d request at %s, outside its slot %s..%s", i, r.Segment,
					r.Start.Format(time.RFC3339Nano), from.Format(time.RFC3339Nano), from.Add(slot).Format(time.RFC3339Nano))
			}
			steps[i][r.Segment]++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		sum, err := results.SummarizeFiles([]string{f}, results.SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		singles[i] = sum
	}
	if len(steps[0]) != 2 || len(steps[1]) != 2 {
		t.Fatalf("requests per step of each tester: %v, %v; want 2 steps each", steps[0], steps[1])
	}
	r := perf(t, "merge", dir)
	if r.code != 0 {
		t.Fatalf("merge: exit %d\n%s", r.code, r.stderr)
	}
	merged := resultstest.Summary(t, dir)
	if merged.Testers != 2 || len(merged.Steps) != 2 {
		t.Fatalf("merged %+v", merged)
	}
	for k, st := range merged.Steps {
		want := singles[0].Steps[k].Throughput + singles[1].Steps[k].Throughput
		if st.Throughput < 0.9*want || st.Throughput > 1.1*want || st.Requests != singles[0].Steps[k].Requests+singles[1].Steps[k].Requests {
			t.Errorf("step %d: merged throughput %.1f, sum of testers %.1f", k, st.Throughput, want)
		}
	}
	if left, _ := api.FindPath(context.Background(), "/credhub-perf/"+strings.NewReplacer("-", "", ":", "").Replace(start)); len(left) != 0 {
		t.Fatalf("tester 0 left %d credentials", len(left))
	}
}

func TestCapacitySearch(t *testing.T) {
	binaries(t)
	s := startSim(t, "", "-workers", "2", "-service-time", "16ms")
	// 2 workers x 16 ms: 125 req/s at most; latency ~ concurrency x 8 ms
	// once queueing. SLO p95 <= 100 ms is met up to about 11 workers (fewer
	// on a loaded machine, hence the wide bounds below). Slow requests:
	// the search's CPU is its requests, and a slower target has the same
	// knee in a quarter of them.
	// Probes of 3 s are long enough to be judged steady, so they count
	// without a run warm-up (whose auto mode judges minutes of load).
	cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 1, max_concurrency: 32, step: 1, duration: 3s}
slo: {percentile: 95, latency: 100ms}
capacity: {max_probes: 8}`)
	r := perf(t, "capacity", "--config", cfg, "--scenario", "get")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dir := onlyRunDir(t, outputDir(t, cfg))
	sum := checkSummaryMatchesCSV(t, dir)
	meta, _ := results.ReadMeta(dir)
	c := sum.Capacity
	if c == nil || !c.Found || c.Probes > 8 || c.Concurrency < 1 || c.Concurrency > 24 || meta.Command != "capacity" {
		t.Fatalf("capacity %+v\n%s", c, r.stderr)
	}
	if !strings.Contains(r.stdout, "capacity: concurrency") {
		t.Fatalf("no capacity line:\n%s", r.stdout)
	}
}

func uaaConfig(t *testing.T, url, secret string) string {
	t.Helper()
	cfg := fmt.Sprintf(`target:
  url: %s
  ca_cert_file: %s
  timeout: 5s
uaa: {url: %s, client_id: perf-client, client_secret: %q}
steps: {min_concurrency: 2, max_concurrency: 4, step: 2, duration: 2s}
seed: {credentials: 10, bytes: 256}
output_dir: %s
warmup: {run: "0"}
saturation: {max_tester_cpu: 1, max_host_cpu: 1, max_steal: 1, max_tester_wait: 1} # off, as in writeConfig
`, url, filepath.Join(certDir, "ca.crt"), url, secret, t.TempDir())
	p := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A bearer token that lives 3 s must be renewed during a 4 s ramp, or the
// later requests would fail with 401.
func TestUAATokenRenewedDuringRamp(t *testing.T) {
	binaries(t)
	const secret = "uaa-secret-never-logged"
	// A capacity model caps the load (400 req/s): what is tested is the
	// token renewed over the ramp's time, not how many requests it sends.
	s := startSim(t, "", "-uaa-client", "perf-client:"+secret, "-token-ttl", "4s", "-token-clock-skew", "0", "-workers", "2", "-service-time", "5ms")
	cfg := uaaConfig(t, s.URL, secret)
	r := perf(t, "run", "--config", cfg, "--scenario", "interpolate")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dir := onlyRunDir(t, outputDir(t, cfg))
	rows, failed := countRows(t, filepath.Join(dir, "results.csv"))
	meta, _ := results.ReadMeta(dir)
	if rows == 0 || failed != 0 || meta.Auth != "uaa" || meta.TLS != "tls" {
		t.Fatalf("rows %d failed %d meta %+v", rows, failed, meta)
	}
	if strings.Contains(r.stderr+r.stdout, secret) {
		t.Fatal("the UAA secret reached the log")
	}

	bad := uaaConfig(t, s.URL, "wrong-secret")
	r = perf(t, "run", "--config", bad)
	if r.code != 2 || !strings.Contains(r.stderr, `UAA token for client "perf-client"`) || strings.Contains(r.stderr, "wrong-secret") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

// With ACLs on, each missing permission on /credhub-perf/* is named before
// any load, with the actor to grant it to; all three let the run through.
func TestPreflightNamesMissingPermission(t *testing.T) {
	binaries(t)
	actor := "mtls-app:" + strings.TrimPrefix(readOU(t, filepath.Join(certDir, "client.crt")), "app:")
	for _, tc := range []struct {
		ops, want string
		code      int
	}{
		{"read,delete", "lacks write permission", 2},
		{"write,delete", "lacks read permission", 2},
		{"read,write", "lacks delete permission, which the cleanup needs", 2},
		{"read,write,delete", "", 0},
	} {
		t.Run(tc.ops, func(t *testing.T) {
			s := startSim(t, "", "-acls", "-permission", "/credhub-perf/* "+actor+" "+tc.ops)
			cfg := writeConfig(t, s.URL, "scenarios: [get]\nsteps: {min_concurrency: 1, max_concurrency: 1, requests: 20, duration: \"0\", warmup: \"0\"}\n")
			r := perf(t, "run", "--config", cfg)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", r.code, tc.code, r.stderr)
			}
			if tc.code == 0 {
				return
			}
			if !strings.Contains(r.stderr, "pre-flight: ") || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "grant "+actor+" read, write and delete on /credhub-perf/*") {
				t.Fatalf("the missing permission is not named:\n%s", r.stderr)
			}
			if dirs, _ := filepath.Glob(filepath.Join(outputDir(t, cfg), "*")); len(dirs) != 0 {
				t.Errorf("run directories written before the pre-flight passed: %v", dirs)
			}
		})
	}
}

func readOU(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil || len(c.Subject.OrganizationalUnit) == 0 {
		t.Fatalf("%s: %v, OU %v", path, err, c.Subject.OrganizationalUnit)
	}
	return c.Subject.OrganizationalUnit[0]
}

// A client certificate signed by an intermediate of the CA CredHub trusts
// (cf-deployment's diego_instance_identity_ca) works when the certificate
// file carries the intermediate after the leaf: the API client and the
// load engine both send the whole chain. The leaf alone is refused before
// any load.
func TestIntermediateCAClientCertificate(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	root := testpki.LoadCA(t, filepath.Join(certDir, "ca.crt"), filepath.Join(certDir, "ca.key"))
	inter := root.Issue(t, testpki.Spec{CommonName: "intermediate", IsCA: true})
	leaf := inter.AsCA().Issue(t, testpki.Spec{CommonName: "chained-client", OU: []string{"app:2f0e4f53-5e8b-4a47-9d3c-7d1f2f1b9a10"}})
	dir := t.TempDir()
	chainFile, keyFile := leaf.Write(t, dir, "chain", inter)
	leafFile := testpki.WriteCerts(t, filepath.Join(dir, "leaf.crt"), leaf.DER())
	steps := "scenarios: [get]\nsteps: {min_concurrency: 2, max_concurrency: 2, requests: 50, duration: \"0\", warmup: \"0\"}\nkeepalive: false\n"

	cfg := writeConfig(t, s.URL, steps)
	r := perf(t, "run", "--config", cfg, "--target.client_cert_file", chainFile, "--target.client_key_file", keyFile)
	if r.code != 0 {
		t.Fatalf("leaf + intermediate: exit %d\n%s", r.code, r.stderr)
	}
	if rows, failed := countRows(t, filepath.Join(onlyRunDir(t, outputDir(t, cfg)), "results.csv")); rows != 50 || failed != 0 {
		t.Fatalf("leaf + intermediate: %d rows, %d failed; want 50 full handshakes that succeed", rows, failed)
	}
	cfg = writeConfig(t, s.URL, steps)
	r = perf(t, "run", "--config", cfg, "--target.client_cert_file", leafFile, "--target.client_key_file", keyFile)
	// A Go client does not offer a leaf that does not chain to a CA the
	// server advertises, so CredHub sees no identity (401 or 403).
	if r.code != 2 || !strings.Contains(r.stderr, "nothing was sent") || !(strings.Contains(r.stderr, "401") || strings.Contains(r.stderr, "403")) {
		t.Fatalf("leaf alone: exit %d; want 2, refused before any load\n%s", r.code, r.stderr)
	}
}
