package ramp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/cleanup"
	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/credhub"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/tlsclient"
)

// Exit statuses of run and capacity.
const (
	ExitOK     = 0
	ExitFailed = 1 // the run or its cleanup failed; results stay
	ExitUsage  = 2 // bad configuration or the target unusable at start
)

// Options are what a command line adds to the configuration.
type Options struct {
	Config   config.Config
	Capacity bool      // capacity search instead of the configured ramp
	Stdout   io.Writer // the summary tables
	Log      io.Writer // log lines and the live progress line
	TTY      bool      // Log is a terminal: draw a live progress line
	Version  string
	// ConfigFile is the --config file, if any, named in the recovery
	// command printed when credentials are left behind.
	ConfigFile string
	// Clock is the time source of the run's schedule: step slots, warm-up
	// windows, the rendezvous and every wait between testers, and the
	// Start and Latency of each request; nil is the system clock. Tests
	// pass one they move (load/loadtest.SimClock) so timing logic runs
	// without sleeps. Phase timings and CPU figures stay on the system
	// clock.
	Clock load.Clock
	// CPU reads the tester's CPU figures (tests may give a quiet or a
	// saturated machine); nil = cpuload.Take.
	CPU func(now time.Time) cpuload.Sample
	// Workload is the production workload the mix replays (package
	// replay, from Config.Workload; Config.Mix holds its weights), nil
	// without one.
	Workload *results.Workload
}

// SetupError marks a failure before any load was sent (exit status 2).
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }
func (e *SetupError) Unwrap() error { return e.Err }

type runner struct {
	o       Options
	c       config.Config
	log     *logger
	api     *credhub.Client
	token   *credhub.TokenSource
	runID   string
	stamp   string    // UTC yyyymmddThhmmssZ naming the run directories
	startAt time.Time // zero unless tester.start_at
	host    string
	// group is this tester's part among several testers: their meeting at
	// the start, at each seed and scenario start, and their stopping
	// together.
	group *testerGroup
	// prevStart is the agreed start of the previous scenario (lockstep),
	// which may be later than its schedule (agreeScenarioStart).
	prevStart time.Time
}

// apiClient is the CredHub API client of a configuration, with its UAA
// token source when uaa.url is set (nil otherwise).
//
// log hears of each call retried after a failure (a 5xx, a timeout): setup
// and cleanup calls retry quietly otherwise, and a target that failed them
// now and then would look healthy.
func apiClient(c config.Config, log func(format string, a ...any)) (*credhub.Client, *credhub.TokenSource, error) {
	var token *credhub.TokenSource
	if c.UAA.URL != "" {
		caFile := c.UAA.CACertFile
		if caFile == "" {
			caFile = c.Target.CACertFile
		}
		tc, err := tlsclient.Build(tlsclient.Options{CAFile: caFile, Insecure: c.Target.InsecureSkipVerify})
		if err != nil {
			return nil, nil, fmt.Errorf("uaa: %w", err)
		}
		token = credhub.NewTokenSource(c.UAA.URL, c.UAA.ClientID, c.UAA.ClientSecret, tc.TLS)
	}
	retrying := func(err error, attempt int, wait time.Duration) {
		log("warning: CredHub API call failed (attempt %d of 6), retrying in %s: %v", attempt, wait, err)
	}
	api, err := credhub.New(credhub.Options{URL: c.Target.URL, TLS: tlsOptions(c), Timeout: c.Target.Timeout.D(), Token: token, Retrying: retrying})
	if err != nil {
		return nil, nil, err
	}
	return api, token, nil
}

// tlsOptions is the one TLS client configuration of a run: the API client
// and the load engine present the same identity to the same server.
func tlsOptions(c config.Config) tlsclient.Options {
	return tlsclient.Options{
		CertFile: c.Target.ClientCertFile, KeyFile: c.Target.ClientKeyFile,
		CAFile: c.Target.CACertFile, ServerName: c.Target.ServerName, Insecure: c.Target.InsecureSkipVerify,
	}
}

// freshRunID names a run that starts at t: its stamp and a random suffix,
// because two runs (or two tester deployments) started in the same second
// must not share, and clean up, each other's credentials.
func freshRunID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format(stampLayout) + "-" + hex.EncodeToString(b[:])
}

// stampLayout is the run directory time format of docs/design.md.
const stampLayout = "20060102T150405Z"

// Execute runs every configured scenario and returns the exit status. All
// problems are reported on o.Log.
func Execute(ctx context.Context, o Options) int {
	if o.Clock == nil {
		o.Clock = load.System
	}
	if o.CPU == nil {
		o.CPU = cpuload.Take
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	r := &runner{o: o, c: o.Config, log: &logger{w: o.Log, tty: o.TTY}}
	r.group = newTesterGroup(o.Config, r.log, o.Clock)
	defer r.group.dropRendezvous()
	if err := r.setup(ctx); err != nil {
		r.log.Printf("error: %v", err)
		r.group.publishFailure("during setup", interruptedOr(ctx, err))
		if r.api != nil {
			r.api.Close()
		}
		var se *SetupError
		if errors.As(err, &se) {
			r.log.Printf("nothing was sent; exit status 2")
			return ExitUsage
		}
		return ExitFailed
	}
	defer r.api.Close()
	load.TuneGC()
	status := ExitOK
	for k, scenario := range r.c.Scenarios {
		st := r.scenario(ctx, k, scenario)
		if st != ExitOK {
			status = st
		}
		if st == ExitUsage {
			return st
		}
		if ctx.Err() != nil || st != ExitOK {
			if k+1 < len(r.c.Scenarios) {
				r.log.Printf("not running the remaining scenarios (%s)", strings.Join(r.c.Scenarios[k+1:], ", "))
			}
			break
		}
	}
	return status
}

// applyStartAt fixes the lockstep origin, the run directory stamp and (when
// none is configured) the run id from tester.start_at.
func (r *runner) applyStartAt(startAt string, now time.Time) error {
	t, err := time.Parse(time.RFC3339, startAt)
	if err != nil {
		return &SetupError{fmt.Errorf("tester.start_at: %w", err)}
	}
	r.c.Tester.StartAt = startAt
	r.startAt = t
	r.stamp = t.UTC().Format(stampLayout)
	end := t.Add(r.warmupSlot() + time.Duration(len(planSteps(r.c)))*r.slot())
	if !end.After(now) {
		return &SetupError{fmt.Errorf("tester.start_at %s: the whole ramp (until %s) lies in the past; give every tester a time a little in the future", startAt, end.Format(time.RFC3339))}
	}
	if r.runID == "" {
		r.setRunID(r.stamp)
	}
	return nil
}

// setRunID fixes the run id, which the tester group judges failure
// reports against.
func (r *runner) setRunID(id string) {
	r.runID = id
	r.group.runID = id
}

func (r *runner) setup(ctx context.Context) error {
	c := r.c
	// The API client first (it sends nothing): tester 0 needs it to tell
	// the others when a check below stops it.
	api, token, err := apiClient(c, r.log.Printf)
	if err != nil {
		return &SetupError{err}
	}
	r.token = token
	r.api = api
	r.group.api = api
	if err := r.checkBeforeTarget(ctx); err != nil {
		return err
	}
	r.host, _ = os.Hostname()
	began := r.o.Clock.Now().UTC()
	r.group.began = began
	rendezvous := r.group.rendezvousMode() && c.Tester.StartAt == ""
	r.setRunID(c.Tester.RunID)
	switch {
	case c.Tester.StartAt != "":
		if err := r.applyStartAt(c.Tester.StartAt, began); err != nil {
			return err
		}
	case rendezvous:
		// Start time and run id come from tester 0, once CredHub answers.
	default:
		r.stamp = began.Format(stampLayout)
		if r.runID == "" {
			r.setRunID(freshRunID(began))
		}
	}

	// Reachability (TLS to CredHub with our CA), then authentication, both
	// before any load: a wrong URL, CA or certificate is a setup error.
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := api.Info(pctx); err != nil {
		return &SetupError{fmt.Errorf("target %s unreachable at start: %w", c.Target.URL, err)}
	}
	if r.token != nil {
		if _, err := r.token.Token(pctx); err != nil {
			return &SetupError{err}
		}
	}
	probe := "/credhub-perf/" + r.runID
	if rendezvous {
		probe = rendezvousName(c.Tester.Rendezvous)
	}
	inUse, err := api.FindPath(pctx, probe)
	if err != nil {
		if credhub.IsAuth(err) {
			return &SetupError{fmt.Errorf("authentication check: %w", err)}
		}
		return &SetupError{fmt.Errorf("target %s does not answer the CredHub API: %w", c.Target.URL, err)}
	}
	if !rendezvous && r.tester0() && len(inUse) > 0 {
		// Another run (or one that never cleaned up) has this run id: the
		// two would mix their set credentials and this run's cleanup would
		// delete the other's. Tester 0 only: other testers of a run
		// sharing tester.run_id may find tester 0's seed already there.
		r.log.Printf("warning: run id %s is already in use: %d credentials under /credhub-perf/%s/ (another run, or one not cleaned up); this run's cleanup will delete them too. Use a fresh --run-id, or remove them first with: %s",
			r.runID, len(inUse), r.runID, r.recoveryCommand())
	}
	if err := r.preflight(pctx); err != nil {
		return err
	}
	if !rendezvous {
		r.log.Printf("target %s reachable and accepts this client (pre-flight: wrote, read and deleted a credential under /credhub-perf/); run id %s", c.Target.URL, r.runID)
		return nil
	}
	r.log.Printf("target %s reachable and accepts this client (pre-flight: wrote, read and deleted a credential under /credhub-perf/)", c.Target.URL)
	var v rendezvousValue
	var rerr error
	if r.tester0() {
		v, rerr = r.group.publishRendezvous(ctx)
	} else {
		v, rerr = r.group.awaitRendezvous(ctx)
	}
	if rerr != nil {
		return &SetupError{rerr}
	}
	r.setRunID(v.RunID)
	return r.applyStartAt(v.StartAt, r.o.Clock.Now().UTC())
}

func (r *runner) tester0() bool { return r.c.Tester.Index == 0 }

// plan is the list of measured steps of a ramp.
func planSteps(c config.Config) []load.Step {
	var steps []load.Step
	if len(c.Steps.Rates) > 0 {
		for _, rate := range c.Steps.Rates {
			steps = append(steps, load.Step{Concurrency: c.Steps.MaxConcurrency, Rate: rate, Duration: c.Steps.Duration.D()})
		}
		return steps
	}
	add := func(conc int) {
		st := load.Step{Concurrency: conc}
		if c.Steps.Duration > 0 {
			st.Duration = c.Steps.Duration.D()
		} else {
			st.Requests = c.Steps.Requests
		}
		steps = append(steps, st)
	}
	for conc := c.Steps.MinConcurrency; conc < c.Steps.MaxConcurrency; conc += c.Steps.Step {
		add(conc)
	}
	add(c.Steps.MaxConcurrency)
	return steps
}

// slot is the wall-clock length of one step in lockstep mode.
func (r *runner) slot() time.Duration { return r.c.Steps.Warmup.D() + r.c.Steps.Duration.D() }

// scenarioStart is when scenario k starts on every tester: its warm-up
// slot, then its first step.
func (r *runner) scenarioStart(k int) time.Time {
	if r.startAt.IsZero() {
		return time.Time{}
	}
	n := len(planSteps(r.c))
	every := r.warmupSlot() + time.Duration(n)*r.slot() + r.c.Tester.ScenarioGap.D()
	if k > 0 && !r.prevStart.IsZero() {
		return r.prevStart.Add(every)
	}
	return r.startAt.Add(time.Duration(k) * every)
}

// warmupSlot is the wall-clock length of a scenario's run warm-up in
// lockstep mode: testers cannot agree on when an auto warm-up ends, so
// each warms up for the longest it may take.
func (r *runner) warmupSlot() time.Duration {
	mode, d, _ := r.c.Warmup.ParseRun()
	switch mode {
	case config.WarmupFixed:
		return d
	case config.WarmupAuto:
		return r.c.Warmup.Max.D()
	}
	return 0
}

func (r *runner) template(scenario string, n credhub.Names) (load.Template, error) {
	base := strings.TrimRight(r.c.Target.URL, "/")
	json := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	switch scenario {
	case "get":
		return load.Template{Name: "get", Method: "GET", URL: base + "/api/v1/data?current=true&name=" + n.SeedTemplate(r.c.Seed.Credentials, r.zipfS()), Header: http.Header{"Accept": {"application/json"}}}, nil
	case "set":
		return load.Template{Name: "set", Method: "PUT", URL: base + "/api/v1/data", Header: json, Body: credhub.SetBodyTemplate(n, r.c.Tester.Index, r.setBytes(), r.c.Set.Names)}, nil
	case "interpolate":
		return load.Template{Name: "interpolate", Method: "POST", URL: base + "/api/v1/interpolate", Header: json, Body: credhub.InterpolateBodyTemplate(n, r.c.Seed.Credentials, r.zipfS())}, nil
	case "mix":
		return load.Template{}, nil // mixEngine builds the mix from the others
	case "custom":
		rep := strings.NewReplacer("((prefix))", n.Prefix(), "((seed_count))", fmt.Sprint(r.c.Seed.Credentials))
		h := http.Header{}
		for _, line := range r.c.Custom.Headers {
			k, v, _ := strings.Cut(line, ":")
			h.Add(strings.TrimSpace(k), rep.Replace(strings.TrimSpace(v)))
		}
		return load.Template{Name: "custom", Method: r.c.Custom.Method, URL: base + rep.Replace(r.c.Custom.Path), Header: h, Body: rep.Replace(r.c.Custom.Body)}, nil
	}
	return load.Template{}, fmt.Errorf("unknown scenario %q", scenario)
}

// zipfS is the skew of the seeded names get and interpolate read: the
// workload's, else 0 (uniform).
func (r *runner) zipfS() float64 {
	if r.o.Workload != nil {
		return r.o.Workload.ZipfS
	}
	return 0
}

// setBytes is the size of a set request's value: the workload's median
// set body where its log shows one, else seed.bytes.
func (r *runner) setBytes() int {
	if w := r.o.Workload; w != nil && w.SetBytes > 0 {
		return w.SetBytes
	}
	return r.c.Seed.Bytes
}

func (r *runner) clientOptions() load.ClientOptions {
	o := load.ClientOptions{
		TLS:       tlsOptions(r.c),
		KeepAlive: r.c.Keepalive,
		HTTP2:     r.c.Target.HTTP2,
		FastHTTP:  r.c.Tester.FastHTTP,
		Timeout:   r.c.Target.Timeout.D(),
		Clock:     r.o.Clock,
	}
	if r.token != nil {
		o.Authorize = r.token.Authorize
	}
	return o
}

func (r *runner) tlsMode() string {
	u, _ := url.Parse(r.c.Target.URL)
	switch {
	case u == nil || u.Scheme != "https":
		return "plain"
	case r.c.Target.ClientCertFile != "":
		return "mtls"
	}
	return "tls"
}

// runDir creates the scenario's run directory. Testers of one run that
// share an output directory (one machine) share the run directory too.
func (r *runner) runDir(scenario string) (string, error) {
	name := r.stamp + "-" + scenario
	if l := dirLabel(r.c.Label); l != "" {
		name += "-" + l
	}
	if err := os.MkdirAll(r.c.OutputDir, 0o755); err != nil {
		return "", fmt.Errorf("output_dir: %w", err)
	}
	dir := filepath.Join(r.c.OutputDir, name)
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("run directory: %w", err)
		}
		if r.c.Tester.Count > 1 {
			if _, err := os.Stat(filepath.Join(dir, r.resultsName())); errors.Is(err, os.ErrNotExist) {
				return dir, nil
			}
		}
		dir = filepath.Join(r.c.OutputDir, fmt.Sprintf("%s.%d", name, i))
	}
}

func (r *runner) resultsName() string {
	if r.c.Tester.Count > 1 {
		return fmt.Sprintf("results-%d.csv", r.c.Tester.Index)
	}
	return "results.csv"
}

func (r *runner) newMeta(scenario string, n credhub.Names, planned int) *results.Meta {
	c := r.c
	m := &results.Meta{
		ToolVersion: r.o.Version, Scenario: scenario, TargetURL: c.Target.URL, Label: c.Label,
		Tester: c.Tester.Index, Testers: c.Tester.Count, Mode: "closed", Keepalive: c.Keepalive, FastHTTP: c.Tester.FastHTTP,
		TLS: r.tlsMode(), Seed: results.Seed{Credentials: c.Seed.Credentials, Bytes: c.Seed.Bytes},
		Cleanup: c.Cleanup.Mode, SLO: results.MetaSLO{Percentile: c.SLO.Percentile, LatencyS: c.SLO.Latency.D().Seconds(), LatencyByRequestS: r.slo().LatencyByRequestS},
		StartedAt: r.o.Clock.Now().UTC().Format(time.RFC3339Nano), Host: r.host,
		RunID: r.runID, Command: "run", Auth: "mtls", StartAt: c.Tester.StartAt,
		WarmupS: c.Steps.Warmup.D().Seconds(), PlannedSteps: planned,
		Abort:  results.Abort{MaxErrorRate: c.Abort.MaxErrorRate, MaxLatencyS: c.Abort.MaxLatency.D().Seconds(), Percentile: c.Abort.Percentile, ConsecutiveSteps: c.Abort.ConsecutiveSteps},
		Status: "running", CleanupStatus: "not-run", CredentialPath: n.Prefix(), ResultsFile: r.resultsName(),
		Steps: []results.MetaStep{},
	}
	if c.Instances > 0 {
		k := c.Instances
		m.Instances = &k
	}
	if scenario == "mix" {
		m.Mix = &results.MetaMix{Get: c.Mix.Get, Set: c.Mix.Set, Interpolate: c.Mix.Interpolate}
		m.Workload = r.o.Workload
	}
	if scenario == "set" || scenario == "mix" {
		m.SetNames = c.Set.Names
	}
	if len(c.Steps.Rates) > 0 {
		m.Mode = "open"
	}
	if r.o.Capacity {
		m.Command = "capacity"
	}
	if r.token != nil {
		m.Auth = "uaa"
	}
	if !r.tester0() {
		m.Cleanup = "none"
		m.CleanupStatus = "skipped"
	}
	m.SeededByTester0 = c.Tester.Count > 1
	l := r.cpuLimits()
	m.Saturation = &results.Saturation{MaxTesterCPU: l.TesterCPU, MaxHostCPU: l.HostCPU, MaxSteal: l.HostSteal, MaxTesterWait: l.TesterWait}
	m.Insecure = insecureModes(c)
	return m
}

func (r *runner) cpuLimits() cpuload.Limits {
	l := r.c.Saturation
	return cpuload.Limits{TesterCPU: l.MaxTesterCPU, HostCPU: l.MaxHostCPU, HostSteal: l.MaxSteal, TesterWait: l.MaxTesterWait}
}

func (r *runner) slo() results.SLO {
	s := results.SLO{Percentile: r.c.SLO.Percentile, LatencyS: r.c.SLO.Latency.D().Seconds(), MaxErrorRate: r.c.SLO.MaxErrorRate}
	// Only the bounds set: a type without one is held to LatencyS.
	for k, d := range map[string]config.Duration{"get": r.c.SLO.LatencyGet, "set": r.c.SLO.LatencySet, "interpolate": r.c.SLO.LatencyInterpolate} {
		if d > 0 {
			if s.LatencyByRequestS == nil {
				s.LatencyByRequestS = map[string]float64{}
			}
			s.LatencyByRequestS[k] = d.D().Seconds()
		}
	}
	return s
}

// mixEngine draws get, set and interpolate requests by the mix.* weights.
// The draws are seeded from the run id and tester index: reproducible for a
// run, different between testers.
func (r *runner) mixEngine(n credhub.Names) (*load.Engine, error) {
	var ts []load.Template
	for _, s := range []string{"get", "set", "interpolate"} {
		t, err := r.template(s, n)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", r.runID, r.c.Tester.Index)
	return load.NewMix(r.clientOptions(), ts, []int{r.c.Mix.Get, r.c.Mix.Set, r.c.Mix.Interpolate}, h.Sum64())
}

func (r *runner) cleanup(ctx context.Context, n credhub.Names) (cleanup.Result, error) {
	switch r.c.Cleanup.Mode {
	case "api":
		r.log.Printf("cleanup: deleting the run's credentials under %s", n.Prefix())
		return cleanup.API(ctx, r.api, n)
	case "database":
		d := r.c.Cleanup.Database
		db := cleanup.Database{Type: d.Type, Host: d.Host, Port: d.Port, User: d.User, Password: d.Password, Name: d.Name, TLS: d.TLS, CACertFile: d.CACertFile}
		r.log.Printf("cleanup: emptying CredHub's credential tables in %s database %q on %s", d.Type, d.Name, d.Host)
		return db.Truncate(ctx, credhub.Names{RunID: r.runID}.Prefix()+"/")
	}
	return cleanup.Result{Mode: "none"}, nil
}

var errSetup = errors.New("setup")

// interruptedOr is the reason tester 0 gives the others for stopping.
func interruptedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return errors.New("interrupted by a signal (bosh cancel-task or SIGTERM)")
	}
	return err
}

// recoveryCommand is the command that removes what this run left in
// CredHub (and records it in the run directories given), printed wherever a
// failure leaves credentials behind.
func (r *runner) recoveryCommand(dirs ...string) string {
	args := []string{"credhub-perf", "cleanup"}
	if r.o.ConfigFile != "" {
		args = append(args, "--config", shellQuote(r.o.ConfigFile))
	} else {
		args = append(args, "--target.url", shellQuote(r.c.Target.URL), "(and the run's other target.* / uaa.* flags)")
	}
	args = append(args, "--run-id", r.runID)
	for _, d := range dirs {
		args = append(args, shellQuote(d))
	}
	return strings.Join(args, " ")
}

// shellQuote leaves a word a shell reads as it is alone and quotes others.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dirLabel is the label as it appears in a run directory name.
func dirLabel(label string) string {
	b := []byte(strings.TrimSpace(label))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), ".")
}
