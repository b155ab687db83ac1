package results

import (
	"encoding/json"
	"fmt"
	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/targetload"
	"os"
	"path/filepath"
)

// MetaStep is one step of meta.json's `steps`.
type MetaStep struct {
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate"`
	Requests    int64   `json:"requests"`
	DurationS   float64 `json:"duration_s"`
	// This tester's resources during the step; the CSV cannot give them
	// back, so summary and merge read them from here.
	TesterUsage
	TesterCores int `json:"tester_cores"`
}

// TesterUsage is a tester's own resources during a step (cpuload): null
// fractions are unknown. TesterBound: past a saturation bound, so the step
// measured the tester; TesterBoundReason names the figure.
type TesterUsage struct {
	TesterCPU         *float64 `json:"tester_cpu"`
	HostCPU           *float64 `json:"host_cpu"`
	HostSteal         *float64 `json:"host_steal"`
	GCPauseS          float64  `json:"gc_pause_s"`
	TesterBound       bool     `json:"tester_bound"`
	TesterBoundReason string   `json:"tester_bound_reason,omitempty"`
	// TesterWait: the tester's threads' run-queue wait (schedstat) per wall
	// second per core (cpuload.Usage.TesterWait); TesterWaitS that wait in
	// seconds, summed over threads. Absent when unknown and in runs
	// written before them.
	TesterWait  *float64 `json:"tester_wait,omitempty"`
	TesterWaitS *float64 `json:"tester_wait_s,omitempty"`
	// HostBusy notes a host busy past its bound while the tester did not
	// wait for a CPU: reported, not a bound (cpuload.Judge).
	HostBusy string `json:"host_busy,omitempty"`
}

// NewMetaStep records a measured step with the tester's usage during it.
func NewMetaStep(st SummaryStep, u cpuload.Usage, l cpuload.Limits) MetaStep {
	m := MetaStep{Concurrency: st.Concurrency, Rate: st.Rate, Requests: st.Requests, DurationS: st.DurationS,
		TesterUsage: TesterUsage{TesterCPU: round4p(u.TesterCPU), HostCPU: round4p(u.HostCPU), HostSteal: round4p(u.HostSteal),
			GCPauseS: secs(u.GCPause)}, TesterCores: u.Cores}
	if u.TesterWait != nil {
		m.TesterWait = round4p(u.TesterWait)
		w := secs(u.TesterWaitTime)
		m.TesterWaitS = &w
	}
	if st.Throughput > 0 && st.MeanS > 0 {
		f := st.Throughput * st.MeanS
		u.InFlight = &f
	}
	v := cpuload.Judge(u, l)
	if v.Reason != "" {
		m.TesterBound, m.TesterBoundReason = true, v.Reason
	}
	m.HostBusy = v.HostBusy
	return m
}

func round4p(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := round4(*p)
	return &v
}

// Warmup is meta.json's `warmup`: the unmeasured load before a scenario's
// first step (warmup.run).
type Warmup struct {
	Mode        string  `json:"mode"` // off | fixed | auto
	Concurrency int     `json:"concurrency"`
	DurationS   float64 `json:"duration_s"`
	Requests    int64   `json:"requests"`
	Errors      int64   `json:"errors"`
	// Steady: auto found no trend beyond ±5 %/min (fixed and off: not
	// judged, false); Reason says how the warm-up ended.
	Steady bool   `json:"steady"`
	Reason string `json:"reason"`
	// Verdict is an auto warm-up's last judgement of the trend: steady,
	// improving, slower, noisy or early (under a minute of windows);
	// absent for off and fixed, and in runs written before it.
	Verdict string `json:"verdict,omitempty"`
}

// Seed is meta.json's `seed`.
type Seed struct {
	Credentials int `json:"credentials"`
	Bytes       int `json:"bytes"`
}

// MetaSLO is meta.json's `slo`.
type MetaSLO struct {
	Percentile float64 `json:"percentile"`
	LatencyS   float64 `json:"latency_s"`
	// LatencyByRequestS: the per request type bounds set for a mix run
	// (slo.latency_<type>); absent when none is.
	LatencyByRequestS map[string]float64 `json:"latency_by_request_s,omitempty"`
}

// MetaMix is a mix run's weights (mix.*), so a result says how it was
// drawn.
type MetaMix struct {
	Get         int `json:"get"`
	Set         int `json:"set"`
	Interpolate int `json:"interpolate"`
}

// Abort is the abort policy in force (an addition to the contract).
type Abort struct {
	MaxErrorRate     float64 `json:"max_error_rate"`
	MaxLatencyS      float64 `json:"max_latency_s"`
	Percentile       float64 `json:"percentile"`
	ConsecutiveSteps int     `json:"consecutive_steps"`
}

// Meta is meta.json: what was run. Fields are added, never renamed; the
// first block is the contract of docs/design.md.
type Meta struct {
	ToolVersion string     `json:"tool_version"`
	Scenario    string     `json:"scenario"`
	TargetURL   string     `json:"target_url"`
	Label       string     `json:"label"`
	Instances   *int       `json:"instances"`
	Tester      int        `json:"tester"`
	Testers     int        `json:"testers"`
	Mode        string     `json:"mode"`
	Steps       []MetaStep `json:"steps"`
	Keepalive   bool       `json:"keepalive"`
	TLS         string     `json:"tls"`
	Seed        Seed       `json:"seed"`
	Cleanup     string     `json:"cleanup"`
	SLO         MetaSLO    `json:"slo"`
	StartedAt   string     `json:"started_at"`
	EndedAt     string     `json:"ended_at"`
	Host        string     `json:"host"`
	// Mix: the weights of a mix run; absent for other scenarios.
	Mix *MetaMix `json:"mix,omitempty"`
	// Workload: the workload.json a mix replays (run --workload).
	Workload *Workload `json:"workload,omitempty"`

	// Additions.
	RunID          string  `json:"run_id"`
	Command        string  `json:"command"` // run | capacity
	Auth           string  `json:"auth"`    // mtls | uaa
	StartAt        string  `json:"start_at,omitempty"`
	WarmupS        float64 `json:"warmup_s"`
	PlannedSteps   int     `json:"planned_steps"`
	Abort          Abort   `json:"abort"`
	StoppedReason  string  `json:"stopped_reason"`
	Status         string  `json:"status"` // running | ok | failed | interrupted
	Error          string  `json:"error,omitempty"`
	CleanupStatus  string  `json:"cleanup_status"` // skipped | ok | failed | not-run | running (interrupted, cleanup under way)
	CleanupError   string  `json:"cleanup_error,omitempty"`
	CleanupDeleted int64   `json:"cleanup_deleted"`
	// CleanupForeign counts the credentials a database cleanup removed
	// that were not under the run's path (someone else's, an earlier
	// run's), CleanupForeignNames a few of their names; absent when none.
	CleanupForeign      int64    `json:"cleanup_foreign,omitempty"`
	CleanupForeignNames []string `json:"cleanup_foreign_names,omitempty"`
	CredentialPath      string   `json:"credential_path"`
	ResultsFile         string   `json:"results_file"`
	SeededByTester0     bool     `json:"seeded_by_tester_0"`
	// SetNames is set.names, the pool of names this tester's set requests
	// write new versions of (set and mix runs; absent otherwise and in
	// runs written before it).
	SetNames int     `json:"set_names,omitempty"`
	Warmup   *Warmup `json:"warmup,omitempty"`
	// Saturation: the bounds past which a step was tester-bound.
	Saturation *Saturation `json:"saturation,omitempty"`
	// ScenarioStartAt is when this scenario's first step started on every
	// tester (lockstep only); later than the schedule when tester 0's
	// cleanup and seeding took longer than tester.scenario_gap.
	ScenarioStartAt string `json:"scenario_start_at,omitempty"`
	// OffsetOrigin is the moment the CSV's offsets count from (RFC3339Nano),
	// so target samples taken elsewhere (credhub-perf vitals) can be put on
	// the run's time.
	OffsetOrigin string `json:"offset_origin,omitempty"`
	// FastHTTP is tester.fast_http; HTTPClient names the client that sent
	// the requests ("net/http", the default, or "lean"), and HTTPClientNote
	// why the lean client was asked for and not used (HTTP/2).
	FastHTTP       bool   `json:"fast_http"`
	HTTPClient     string `json:"http_client"`
	HTTPClientNote string `json:"http_client_note,omitempty"`
	// Insecure lists the configuration keys in force that weaken transport
	// security (target.insecure_skip_verify, uaa.allow_plaintext_secret).
	Insecure []string `json:"insecure"`
	// Confirmation: the open-loop confirmation (confirm.*) as configured,
	// the rates it ran, or why it did not run; absent in runs before it.
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	// TargetLoad: what sampled the target (sources, resources, the PIDs
	// and CPUs they resolved to) and the problems the sources reported;
	// tester 0's only, absent when nothing sampled it.
	TargetLoad *targetload.Settings `json:"target_load,omitempty"`
}

// Confirmation is meta.json's `confirmation`.
type Confirmation struct {
	Enabled   bool      `json:"enabled"`
	Fractions []float64 `json:"fractions"`
	DurationS float64   `json:"duration_s"`
	// Refine: the most bisection steps allowed after the fractions.
	Refine int `json:"refine"`
	// ClosedLoop: the capacity (req/s) the fractions were taken of.
	ClosedLoop float64   `json:"closed_loop,omitempty"`
	Rates      []float64 `json:"rates,omitempty"`
	// Note: why it did not run (off, an open-loop ramp, several testers,
	// no capacity); empty when it ran.
	Note string `json:"note,omitempty"`
}

// Saturation is meta.json's `saturation` (config saturation.*).
type Saturation struct {
	MaxTesterCPU  float64 `json:"max_tester_cpu"`
	MaxHostCPU    float64 `json:"max_host_cpu"`
	MaxSteal      float64 `json:"max_steal"`
	MaxTesterWait float64 `json:"max_tester_wait,omitempty"`
}

// WriteMeta writes meta.json into dir.
func WriteMeta(dir string, m *Meta) error {
	return WriteMetaFile(filepath.Join(dir, "meta.json"), m)
}

// WriteMetaFile writes m as JSON to path.
func WriteMetaFile(path string, m *Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// ReadMeta reads dir/meta.json.
func ReadMeta(dir string) (*Meta, error) { return ReadMetaFile(filepath.Join(dir, "meta.json")) }

// ReadMetaFile reads one meta.json (or meta-<i>.json).
func ReadMetaFile(path string) (*Meta, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// Warning is the summary's warning about a warm-up that ended before the
// target was steady, or "" (nil: a run directory from before warm-ups).
func (w *Warmup) Warning() string {
	if w == nil || w.Mode != "auto" || w.Steady {
		return ""
	}
	return fmt.Sprintf("warm-up: the target was not steady after %.0f s at concurrency %d (%s); the ramp started anyway, so the first steps may measure a target still warming up: check their steady flags, or raise warmup.max", w.DurationS, w.Concurrency, w.Reason)
}
