// Package ramp runs a headroom study: it loads the configuration, seeds the
// target, drives the concurrency (or rate) steps through the load engine,
// applies the abort policy, cleans up and writes the run directory.
package ramp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
	"gopkg.in/yaml.v3"
)

// Duration accepts Go duration strings ("30s", "250ms") and plain numbers
// of seconds, because BOSH properties rendered to JSON/YAML may carry either.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: expected a duration (e.g. 30s), got a list or mapping", n.Line)
	}
	v, err := parseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (use e.g. 30s, 250ms, or a number of seconds)", s)
	}
	return v, nil
}

// Config is the whole configuration of a run; docs/configuration.md
// documents every key and is checked against configKeys by a test.
type Config struct {
	Target     TargetConfig     `yaml:"target"`
	UAA        UAAConfig        `yaml:"uaa"`
	Scenarios  []string         `yaml:"scenarios"`
	Custom     CustomConfig     `yaml:"custom"`
	Steps      StepsConfig      `yaml:"steps"`
	Warmup     WarmupConfig     `yaml:"warmup"`
	Keepalive  bool             `yaml:"keepalive"`
	Seed       SeedConfig       `yaml:"seed"`
	Cleanup    CleanupConfig    `yaml:"cleanup"`
	SLO        SLOConfig        `yaml:"slo"`
	Abort      AbortConfig      `yaml:"abort"`
	Capacity   CapacityConfig   `yaml:"capacity"`
	Label      string           `yaml:"label"`
	Instances  int              `yaml:"instances"`
	OutputDir  string           `yaml:"output_dir"`
	Tester     TesterConfig     `yaml:"tester"`
	Saturation SaturationConfig `yaml:"saturation"`
}

type TargetConfig struct {
	URL                string   `yaml:"url"`
	CACertFile         string   `yaml:"ca_cert_file"`
	ClientCertFile     string   `yaml:"client_cert_file"`
	ClientKeyFile      string   `yaml:"client_key_file"`
	ServerName         string   `yaml:"server_name"`
	InsecureSkipVerify bool     `yaml:"insecure_skip_verify"`
	Timeout            Duration `yaml:"timeout"`
	HTTP2              bool     `yaml:"http2"`
}

type UAAConfig struct {
	URL          string `yaml:"url"`
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	CACertFile   string `yaml:"ca_cert_file"`
	// AllowPlaintextSecret accepts an http:// uaa.url, which sends the
	// client secret unencrypted.
	AllowPlaintextSecret bool `yaml:"allow_plaintext_secret"`
}

type CustomConfig struct {
	Method  string   `yaml:"method"`
	Path    string   `yaml:"path"`
	Body    string   `yaml:"body"`
	Headers []string `yaml:"headers"`
}

type StepsConfig struct {
	MinConcurrency int       `yaml:"min_concurrency"`
	MaxConcurrency int       `yaml:"max_concurrency"`
	Step           int       `yaml:"step"`
	Requests       int       `yaml:"requests"`
	Duration       Duration  `yaml:"duration"`
	Warmup         Duration  `yaml:"warmup"`
	Rates          []float64 `yaml:"rates"`
}

// WarmupConfig is the run warm-up: unmeasured load before each scenario's
// first step, so a target that has just started (a JVM compiling its hot
// paths after every bosh deploy) is measured warm.
type WarmupConfig struct {
	// Run is "auto", "0" (off) or a duration; see ParseRun.
	Run         string   `yaml:"run"`
	Concurrency int      `yaml:"concurrency"`
	Max         Duration `yaml:"max"`
}

// Warm-up modes.
const (
	WarmupOff   = "off"
	WarmupFixed = "fixed"
	WarmupAuto  = "auto"
)

// ParseRun reads warmup.run: the mode, and the duration of a fixed one.
func (w WarmupConfig) ParseRun() (mode string, d time.Duration, err error) {
	v := strings.TrimSpace(w.Run)
	if strings.EqualFold(v, WarmupAuto) {
		return WarmupAuto, 0, nil
	}
	d, err = parseDuration(v)
	switch {
	case err != nil || v == "":
		return "", 0, fmt.Errorf("%q is not auto, 0 (off) or a duration like 90s", w.Run)
	case d < 0:
		return "", 0, fmt.Errorf("must not be negative, got %s", v)
	case d == 0:
		return WarmupOff, 0, nil
	}
	return WarmupFixed, d, nil
}

type SeedConfig struct {
	Credentials int `yaml:"credentials"`
	Bytes       int `yaml:"bytes"`
}

type CleanupConfig struct {
	Mode     string         `yaml:"mode"`
	Database DatabaseConfig `yaml:"database"`
}

type DatabaseConfig struct {
	Type       string `yaml:"type"`
	Host       string `yaml:"host"`
	Port       int    `yaml:"port"`
	User       string `yaml:"user"`
	Password   string `yaml:"password"`
	Name       string `yaml:"name"`
	TLS        bool   `yaml:"tls"`
	CACertFile string `yaml:"ca_cert_file"`
}

type SLOConfig struct {
	Percentile   float64  `yaml:"percentile"`
	Latency      Duration `yaml:"latency"`
	MaxErrorRate float64  `yaml:"max_error_rate"`
}

type AbortConfig struct {
	MaxErrorRate     float64  `yaml:"max_error_rate"`
	MaxLatency       Duration `yaml:"max_latency"`
	Percentile       float64  `yaml:"percentile"`
	ConsecutiveSteps int      `yaml:"consecutive_steps"`
}

type CapacityConfig struct {
	MaxProbes  int     `yaml:"max_probes"`
	Resolution float64 `yaml:"resolution"`
}

type TesterConfig struct {
	Index             int      `yaml:"index"`
	Count             int      `yaml:"count"`
	StartAt           string   `yaml:"start_at"`
	Rendezvous        string   `yaml:"rendezvous"`
	StartDelay        Duration `yaml:"start_delay"`
	RendezvousTimeout Duration `yaml:"rendezvous_timeout"`
	RunID             string   `yaml:"run_id"`
	ScenarioGap       Duration `yaml:"scenario_gap"`
	FastRSA           bool     `yaml:"fast_rsa"`
}

// SaturationConfig bounds the tester's own resources: past them a step
// measured the tester, not CredHub (cpuload).
type SaturationConfig struct {
	MaxTesterCPU float64 `yaml:"max_tester_cpu"`
	MaxHostCPU   float64 `yaml:"max_host_cpu"`
	MaxSteal     float64 `yaml:"max_steal"`
}

// configKey describes one configuration key: its YAML path is also its
// flag name (e.g. --steps.max_concurrency), so a BOSH template and a
// command line speak the same names.
type configKey struct {
	Name    string
	Type    string
	Default string
	Alias   string // an extra, shorter flag name
	Help    string
	set     func(c *Config, v string) error
}

func setString(p func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *p(c) = v; return nil }
}

func setInt(p func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		*p(c) = n
		return nil
	}
}

func setFloat(p func(*Config) *float64) func(*Config, string) error {
	return func(c *Config, v string) error {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%q is not a number", v)
		}
		*p(c) = f
		return nil
	}
}

func setBool(p func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		*p(c) = b
		return nil
	}
}

func setDuration(p func(*Config) *Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := parseDuration(v)
		if err != nil {
			return err
		}
		*p(c) = Duration(d)
		return nil
	}
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ConfigKeys lists every key in documentation order.
var configKeys = []configKey{
	{"target.url", "string", "(required)", "", "CredHub base URL, e.g. `https://credhub.service.cf.internal:8844`.", setString(func(c *Config) *string { return &c.Target.URL })},
	{"target.ca_cert_file", "string", `""`, "", "PEM file with the CA(s) that signed CredHub's server certificate; empty = system roots.", setString(func(c *Config) *string { return &c.Target.CACertFile })},
	{"target.client_cert_file", "string", `""`, "", "PEM client certificate for mutual TLS (OU `app:<v4 uuid>`, clientAuth EKU). Needed unless `uaa.*` is set.", setString(func(c *Config) *string { return &c.Target.ClientCertFile })},
	{"target.client_key_file", "string", `""`, "", "PEM private key of the client certificate (RSA or ECDSA). Never logged.", setString(func(c *Config) *string { return &c.Target.ClientKeyFile })},
	{"target.server_name", "string", `""`, "", "TLS server name to verify instead of the URL's host.", setString(func(c *Config) *string { return &c.Target.ServerName })},
	{"target.insecure_skip_verify", "bool", "false", "", "Do not verify CredHub's server certificate (tests only).", setBool(func(c *Config) *bool { return &c.Target.InsecureSkipVerify })},
	{"target.timeout", "duration", "30s", "", "Per-request timeout; a request that takes longer is recorded as a failure.", setDuration(func(c *Config) *Duration { return &c.Target.Timeout })},
	{"target.http2", "bool", "false", "", "Use HTTP/2 (CredHub serves HTTP/1.1 by default).", setBool(func(c *Config) *bool { return &c.Target.HTTP2 })},
	{"uaa.url", "string", `""`, "", "UAA base URL. When set, requests carry a bearer token from the client_credentials grant (refreshed before it expires) instead of relying on a client certificate.", setString(func(c *Config) *string { return &c.UAA.URL })},
	{"uaa.client_id", "string", `""`, "", "UAA client with authorities `credhub.read,credhub.write`.", setString(func(c *Config) *string { return &c.UAA.ClientID })},
	{"uaa.client_secret", "string", `""`, "", "Secret of `uaa.client_id`. Never logged.", setString(func(c *Config) *string { return &c.UAA.ClientSecret })},
	{"uaa.ca_cert_file", "string", `""`, "", "PEM CA for UAA's certificate; empty = `target.ca_cert_file`.", setString(func(c *Config) *string { return &c.UAA.CACertFile })},
	{"uaa.allow_plaintext_secret", "bool", "false", "", "Accept an `http://` `uaa.url`: the client secret then crosses the network unencrypted. Without it such a URL is refused. Tests only; recorded in meta.json's `insecure`.", setBool(func(c *Config) *bool { return &c.UAA.AllowPlaintextSecret })},
	{"scenarios", "list of string", "[get]", "scenario", "Scenarios to run, each in its own run directory, in order: `get`, `set`, `interpolate`, `custom`. Flag form: comma-separated.", func(c *Config, v string) error { c.Scenarios = splitList(v); return nil }},
	{"custom.method", "string", "GET", "", "HTTP method of the `custom` scenario.", setString(func(c *Config) *string { return &c.Custom.Method })},
	{"custom.path", "string", `""`, "", "Path and query of the `custom` scenario, appended to `target.url`; may use `{{seq}}`, `{{uuid}}`, `{{rand N}}`, `((prefix))`.", setString(func(c *Config) *string { return &c.Custom.Path })},
	{"custom.body", "string", `""`, "", "Request body of the `custom` scenario (same placeholders as `custom.path`).", setString(func(c *Config) *string { return &c.Custom.Body })},
	{"custom.headers", "list of string", "[]", "", "Extra headers of the `custom` scenario, each `Name: value`. Flag form: repeat the flag.", func(c *Config, v string) error { c.Custom.Headers = append(c.Custom.Headers, v); return nil }},
	{"steps.min_concurrency", "int", "1", "", "Concurrency (workers) of the first closed-loop step.", setInt(func(c *Config) *int { return &c.Steps.MinConcurrency })},
	{"steps.max_concurrency", "int", "10", "", "Concurrency of the last closed-loop step; also the worker cap of open-loop (`steps.rates`) steps.", setInt(func(c *Config) *int { return &c.Steps.MaxConcurrency })},
	{"steps.step", "int", "1", "", "Concurrency increment between steps (the last step is always `max_concurrency`).", setInt(func(c *Config) *int { return &c.Steps.Step })},
	{"steps.requests", "int", "1000", "", "Measured requests per step (closed loop), when `steps.duration` is 0.", setInt(func(c *Config) *int { return &c.Steps.Requests })},
	{"steps.duration", "duration", "0", "", "Measured time per step; when > 0 it replaces `steps.requests`. Required with several testers.", setDuration(func(c *Config) *Duration { return &c.Steps.Duration })},
	{"steps.warmup", "duration", "0", "", "Warm-up at the start of every step: requests are sent at the step's load but not written to the CSV and not counted.", setDuration(func(c *Config) *Duration { return &c.Steps.Warmup })},
	{"steps.rates", "list of number", "[]", "", "Open-loop mode: one step per target rate (requests/s, total for this tester), increasing; replaces the concurrency ramp. Flag form: comma-separated.", func(c *Config, v string) error {
		c.Steps.Rates = nil
		for _, s := range splitList(v) {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", s)
			}
			c.Steps.Rates = append(c.Steps.Rates, f)
		}
		return nil
	}},
	{"warmup.run", "string", "auto", "", "Run warm-up before each scenario's first measured step: load sent but not recorded (counted in meta.json `warmup`; what it writes is cleaned up with the run). `auto`: until throughput and p50 of consecutive 5 s windows agree within 5 % (or within their noise) three times in a row, at most `warmup.max`; a duration: that long; `0`: off. With several testers every tester warms up for the whole duration (`auto`: `warmup.max`), so they stay in step.", setString(func(c *Config) *string { return &c.Warmup.Run })},
	{"warmup.concurrency", "int", "0", "", "Concurrency of the run warm-up; 0 = half the ramp's largest concurrency (at least 1). Open-loop ramps warm up at half their largest rate instead.", setInt(func(c *Config) *int { return &c.Warmup.Concurrency })},
	{"warmup.max", "duration", "3m0s", "", "Longest `auto` warm-up; a target not steady by then gets a warning in the summary, and the first steps' `steady` flags tell whether it mattered.", setDuration(func(c *Config) *Duration { return &c.Warmup.Max })},
	{"keepalive", "bool", "true", "", "Reuse connections; false = a new TCP+TLS handshake per request, as in the 2017 study.", setBool(func(c *Config) *bool { return &c.Keepalive })},
	{"seed.credentials", "int", "100", "", "JSON credentials seeded before the ramp: the pool `get` reads at random and `interpolate` references.", setInt(func(c *Config) *int { return &c.Seed.Credentials })},
	{"seed.bytes", "int", "1024", "", "Approximate size of each seeded (and `set`) JSON credential value, in bytes.", setInt(func(c *Config) *int { return &c.Seed.Bytes })},
	{"cleanup.mode", "string", "api", "", "`api`: delete every credential the run created through the API; `database`: empty CredHub's credential tables directly; `none`: leave data.", setString(func(c *Config) *string { return &c.Cleanup.Mode })},
	{"cleanup.database.type", "string", `""`, "", "`postgres` or `mysql` (also for MariaDB). Required when `cleanup.mode` is `database`.", setString(func(c *Config) *string { return &c.Cleanup.Database.Type })},
	{"cleanup.database.host", "string", `""`, "", "Database host. Required for `database` cleanup.", setString(func(c *Config) *string { return &c.Cleanup.Database.Host })},
	{"cleanup.database.port", "int", "0", "", "Database port; 0 = 5432 (postgres) or 3306 (mysql).", setInt(func(c *Config) *int { return &c.Cleanup.Database.Port })},
	{"cleanup.database.user", "string", `""`, "", "Database user with DELETE/TRUNCATE rights on CredHub's tables.", setString(func(c *Config) *string { return &c.Cleanup.Database.User })},
	{"cleanup.database.password", "string", `""`, "", "Database password. Never logged.", setString(func(c *Config) *string { return &c.Cleanup.Database.Password })},
	{"cleanup.database.name", "string", "credhub", "", "Database (schema) name.", setString(func(c *Config) *string { return &c.Cleanup.Database.Name })},
	{"cleanup.database.tls", "bool", "false", "", "Connect with TLS (verified against `cleanup.database.ca_cert_file`, or system roots when empty).", setBool(func(c *Config) *bool { return &c.Cleanup.Database.TLS })},
	{"cleanup.database.ca_cert_file", "string", `""`, "", "PEM CA for the database server certificate.", setString(func(c *Config) *string { return &c.Cleanup.Database.CACertFile })},
	{"slo.percentile", "number", "95", "", "Latency percentile of the SLO (0 < p ≤ 100).", setFloat(func(c *Config) *float64 { return &c.SLO.Percentile })},
	{"slo.latency", "duration", "100ms", "", "Latency bound of the SLO.", setDuration(func(c *Config) *Duration { return &c.SLO.Latency })},
	{"slo.max_error_rate", "number", "0.01", "", "Steps with a higher error rate (0..1) never count as capacity (knee, max throughput at SLO, capacity search).", setFloat(func(c *Config) *float64 { return &c.SLO.MaxErrorRate })},
	{"abort.max_error_rate", "number", "0.1", "", "Stop ramping when a step's error rate (0..1) is above this for `abort.consecutive_steps` steps; 1 = never.", setFloat(func(c *Config) *float64 { return &c.Abort.MaxErrorRate })},
	{"abort.max_latency", "duration", "5s", "", "Stop ramping when a step's `abort.percentile` latency is above this for `abort.consecutive_steps` steps; 0 = never.", setDuration(func(c *Config) *Duration { return &c.Abort.MaxLatency })},
	{"abort.percentile", "number", "99", "", "Percentile compared with `abort.max_latency`.", setFloat(func(c *Config) *float64 { return &c.Abort.Percentile })},
	{"abort.consecutive_steps", "int", "2", "", "How many consecutive steps over a bound stop the ramp.", setInt(func(c *Config) *int { return &c.Abort.ConsecutiveSteps })},
	{"capacity.max_probes", "int", "12", "", "`capacity` subcommand: most probe steps (doubling, then bisection).", setInt(func(c *Config) *int { return &c.Capacity.MaxProbes })},
	{"capacity.resolution", "number", "0", "", "`capacity`: stop bisecting when the bracket is this narrow (workers, or req/s with `steps.rates`); 0 = `steps.step`, or 2 % of the rate.", setFloat(func(c *Config) *float64 { return &c.Capacity.Resolution })},
	{"label", "string", `""`, "", "Label of the cluster under test, for the plots' legend (e.g. `2 instances`); the run directory name holds it with every character other than letters, digits, `.`, `_`, `-` replaced by `-`.", setString(func(c *Config) *string { return &c.Label })},
	{"instances", "int", "0", "", "Number of CredHub instances under test, recorded in meta.json (0 = unknown, written as null).", setInt(func(c *Config) *int { return &c.Instances })},
	{"output_dir", "string", "out", "out", "Directory that receives the run directories.", setString(func(c *Config) *string { return &c.OutputDir })},
	{"tester.index", "int", "0", "tester-index", "This tester's index (0..count-1). Only tester 0 seeds and cleans up.", setInt(func(c *Config) *int { return &c.Tester.Index })},
	{"tester.count", "int", "1", "testers", "Number of testers running the same plan in lockstep.", setInt(func(c *Config) *int { return &c.Tester.Count })},
	{"tester.start_at", "string", `""`, "start-at", "RFC3339 time at which step 0 starts on every tester; step k starts at start_at + k × (warmup + duration). Empty = now, or with `tester.rendezvous` the time tester 0 publishes.", setString(func(c *Config) *string { return &c.Tester.StartAt })},
	{"tester.rendezvous", "string", `""`, "", "Several testers without `tester.start_at`: name (letters, digits, `._-`, at most 100) of the JSON credential `/credhub-perf/rendezvous/<name>` in which tester 0 publishes step 0's time (its start + `tester.start_delay`) and the run id before seeding, and which the others wait for; a previous run's leftover is ignored (see Rendezvous below). Tester 0 deletes it at the end.", setString(func(c *Config) *string { return &c.Tester.Rendezvous })},
	{"tester.start_delay", "duration", "30s", "", "With `tester.rendezvous`: how long after tester 0 is ready step 0 starts; long enough for every tester to start and for tester 0 to seed.", setDuration(func(c *Config) *Duration { return &c.Tester.StartDelay })},
	{"tester.rendezvous_timeout", "duration", "10m0s", "", "With `tester.rendezvous`: how long testers other than 0 wait for tester 0's value before giving up (exit status 2, nothing sent). Several testers: also how long past its scheduled start the others wait for tester 0 to publish a later scenario's start (exit status 1).", setDuration(func(c *Config) *Duration { return &c.Tester.RendezvousTimeout })},
	{"tester.scenario_gap", "duration", "1m0s", "", "Several testers: least pause between one scenario's last step and the next scenario's first, for tester 0's cleanup and seeding (it first waits 2 s + target.timeout, at most 10 s, for the others' requests in flight; the gap must exceed that by 1 s). When the cleanup and seeding take longer, the next scenario starts later: tester 0 publishes its start (at least 2 s ahead) as the credential `/credhub-perf/<run id>/<scenario>/control/start`, which the others wait for; meta.json's `scenario_start_at` records it.", setDuration(func(c *Config) *Duration { return &c.Tester.ScenarioGap })},
	{"tester.run_id", "string", `""`, "run-id", "Run id shared by all testers (letters, digits, `-_.`); names the seeded credentials and the run directory. Empty = the `tester.start_at` time (yyyymmddThhmmssZ); with `tester.rendezvous`, tester 0's start_at plus a random suffix, published to the others; else the start time plus a random suffix. `rendezvous` is reserved.", setString(func(c *Config) *string { return &c.Tester.RunID })},
	{"tester.fast_rsa", "bool", "false", "", "Sign this tester's TLS client handshakes (an RSA-2048 `target.client_key_file`) with the hand-written AVX-512 IFMA signer `rsasign` instead of Go's crypto/rsa. It saves tester CPU only with `keepalive: false`; on a CPU without IFMA, or with another key, crypto/rsa signs anyway. meta.json's `rsa_signer` records which one ran (docs/benchmarks.md: the trade-off).", setBool(func(c *Config) *bool { return &c.Tester.FastRSA })},
	{"saturation.max_tester_cpu", "number", "0.8", "", "A step in which this tester's process used more than this share of the cores it may use (rusage CPU / wall / cores) is `tester_bound`: flagged, and not counted as capacity. 1 = never.", setFloat(func(c *Config) *float64 { return &c.Saturation.MaxTesterCPU })},
	{"saturation.max_host_cpu", "number", "0.9", "", "Same for the busy share of the host CPUs this tester may run on (/proc/stat, whoever used them: a target on the same machine, a neighbour). 1 = never.", setFloat(func(c *Config) *float64 { return &c.Saturation.MaxHostCPU })},
	{"saturation.max_steal", "number", "0.1", "", "Same for the share of those CPUs' time the hypervisor gave to other guests (steal). 1 = never.", setFloat(func(c *Config) *float64 { return &c.Saturation.MaxSteal })},
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Target:     TargetConfig{Timeout: Duration(30 * time.Second)},
		Scenarios:  []string{"get"},
		Custom:     CustomConfig{Method: "GET"},
		Steps:      StepsConfig{MinConcurrency: 1, MaxConcurrency: 10, Step: 1, Requests: 1000},
		Warmup:     WarmupConfig{Run: WarmupAuto, Max: Duration(3 * time.Minute)},
		Keepalive:  true,
		Seed:       SeedConfig{Credentials: 100, Bytes: 1024},
		Cleanup:    CleanupConfig{Mode: "api", Database: DatabaseConfig{Name: "credhub"}},
		SLO:        SLOConfig{Percentile: 95, Latency: Duration(100 * time.Millisecond), MaxErrorRate: 0.01},
		Abort:      AbortConfig{MaxErrorRate: 0.1, MaxLatency: Duration(5 * time.Second), Percentile: 99, ConsecutiveSteps: 2},
		Capacity:   CapacityConfig{MaxProbes: 12},
		OutputDir:  "out",
		Tester:     TesterConfig{Count: 1, ScenarioGap: Duration(60 * time.Second), StartDelay: Duration(30 * time.Second), RendezvousTimeout: Duration(10 * time.Minute)},
		Saturation: SaturationConfig{MaxTesterCPU: cpuload.DefaultLimits.TesterCPU, MaxHostCPU: cpuload.DefaultLimits.HostCPU, MaxSteal: cpuload.DefaultLimits.HostSteal},
	}
}

// LoadConfigFile overlays the YAML (or JSON) file on c. Unknown keys are
// errors so that a typo never silently falls back to a default.
func LoadConfigFile(c *Config, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	return LoadConfigBytes(c, data, path)
}

// LoadConfigBytes is LoadConfigFile on bytes already read.
func LoadConfigBytes(c *Config, data []byte, name string) error {
	lines, err := checkConfigShape(data)
	if err != nil {
		return fmt.Errorf("config file %s: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file is all defaults
		}
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return fmt.Errorf("config file %s: %s", name, strings.Join(nameKeys(te.Errors, lines), "; "))
		}
		return fmt.Errorf("config file %s: %w", name, err)
	}
	return nil
}

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// rendezvousPattern keeps the name a single CredHub path segment (CredHub
// allows more characters, but not every one is safe in a path or a URL).
var rendezvousPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// labelPattern: printable text for legends; the run directory name uses
// a file-name-safe form of it (see dirLabel).
var labelPattern = regexp.MustCompile(`^[^/\\\x00-\x1f\x7f]{0,64}$`)

// Validate returns one error per bad value, each a complete line naming
// the key, what is wrong and what is accepted.
func (c *Config) Validate(capacity bool) []error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, a...)))
	}
	fileOK := func(key, path string) {
		if path == "" {
			return
		}
		if _, err := os.Stat(path); err != nil {
			bad(key, "cannot read %q: %v", path, errors.Unwrap(err))
		}
	}

	if c.Target.URL == "" {
		bad("target.url", "is required (e.g. https://credhub.service.cf.internal:8844)")
	} else if u, err := url.Parse(c.Target.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		bad("target.url", "%q is not an http(s) URL with a host", c.Target.URL)
	}
	fileOK("target.ca_cert_file", c.Target.CACertFile)
	fileOK("target.client_cert_file", c.Target.ClientCertFile)
	fileOK("target.client_key_file", c.Target.ClientKeyFile)
	if (c.Target.ClientCertFile == "") != (c.Target.ClientKeyFile == "") {
		bad("target.client_key_file", "client_cert_file and client_key_file must be given together")
	}
	if c.Target.Timeout <= 0 {
		bad("target.timeout", "must be > 0, got %s", c.Target.Timeout)
	}
	if c.UAA.URL != "" {
		if u, err := url.Parse(c.UAA.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("uaa.url", "%q is not an http(s) URL with a host", c.UAA.URL)
		} else if u.Scheme == "http" && !c.UAA.AllowPlaintextSecret {
			bad("uaa.url", "%q is plain http: the client secret would cross the network unencrypted; use https, or set uaa.allow_plaintext_secret: true to accept that (tests only)", c.UAA.URL)
		}
		if c.UAA.ClientID == "" {
			bad("uaa.client_id", "is required when uaa.url is set")
		}
		if c.UAA.ClientSecret == "" {
			bad("uaa.client_secret", "is required when uaa.url is set")
		}
		fileOK("uaa.ca_cert_file", c.UAA.CACertFile)
	} else if c.Target.ClientCertFile == "" && c.Target.URL != "" && strings.HasPrefix(c.Target.URL, "https") {
		bad("target.client_cert_file", "is required unless uaa.url is set (CredHub needs a client certificate or a UAA token)")
	}

	if len(c.Scenarios) == 0 {
		bad("scenarios", "is empty; use one or more of get, set, interpolate, custom")
	}
	seen := map[string]bool{}
	for _, s := range c.Scenarios {
		switch s {
		case "get", "set", "interpolate", "custom":
		default:
			bad("scenarios", "unknown scenario %q; use get, set, interpolate or custom", s)
		}
		if seen[s] {
			bad("scenarios", "%q listed twice", s)
		}
		seen[s] = true
	}
	if seen["custom"] {
		if c.Custom.Path == "" || !strings.HasPrefix(c.Custom.Path, "/") {
			bad("custom.path", "must start with / (e.g. /api/v1/data?name=/x), got %q", c.Custom.Path)
		}
		switch c.Custom.Method {
		case "GET", "PUT", "POST", "DELETE", "PATCH", "HEAD":
		default:
			bad("custom.method", "%q is not one of GET, PUT, POST, DELETE, PATCH, HEAD", c.Custom.Method)
		}
		for _, h := range c.Custom.Headers {
			if k, _, ok := strings.Cut(h, ":"); !ok || strings.TrimSpace(k) == "" {
				bad("custom.headers", "%q is not `Name: value`", h)
			}
		}
	}

	s := c.Steps
	if len(s.Rates) == 0 {
		if s.MinConcurrency < 1 {
			bad("steps.min_concurrency", "must be >= 1, got %d", s.MinConcurrency)
		}
		if s.MaxConcurrency < s.MinConcurrency {
			bad("steps.max_concurrency", "must be >= steps.min_concurrency (%d), got %d", s.MinConcurrency, s.MaxConcurrency)
		}
		if s.Step < 1 {
			bad("steps.step", "must be >= 1, got %d", s.Step)
		}
	} else {
		if s.MaxConcurrency < 1 {
			bad("steps.max_concurrency", "must be >= 1 (the worker cap of open-loop steps), got %d", s.MaxConcurrency)
		}
		for i, r := range s.Rates {
			if !(r > 0) {
				bad("steps.rates", "rate #%d must be > 0 requests/s, got %g", i+1, r)
			} else if i > 0 && r <= s.Rates[i-1] {
				// Steps are told apart by their rate in the CSV.
				bad("steps.rates", "rates must increase: rate #%d (%g) is not above rate #%d (%g)", i+1, r, i, s.Rates[i-1])
			}
		}
	}
	if s.Duration < 0 {
		bad("steps.duration", "must be >= 0, got %s", s.Duration)
	}
	if s.Duration == 0 {
		if len(s.Rates) > 0 {
			bad("steps.duration", "is required (> 0) with steps.rates (open-loop steps are timed)")
		} else if s.Requests < 1 {
			bad("steps.requests", "must be >= 1 when steps.duration is 0, got %d", s.Requests)
		} else if len(s.Rates) == 0 && s.Requests < s.MaxConcurrency && s.MaxConcurrency >= 1 {
			bad("steps.requests", "must be >= steps.max_concurrency (%d) so every worker sends, got %d", s.MaxConcurrency, s.Requests)
		}
	}
	if s.Warmup < 0 {
		bad("steps.warmup", "must be >= 0, got %s", s.Warmup)
	}
	if mode, _, err := c.Warmup.ParseRun(); err != nil {
		bad("warmup.run", "%v", err)
	} else if mode == WarmupAuto && c.Warmup.Max <= 0 {
		bad("warmup.max", "must be > 0 with warmup.run auto, got %s", c.Warmup.Max)
	}
	if c.Warmup.Concurrency < 0 {
		bad("warmup.concurrency", "must be >= 0 (0 = half the largest step's concurrency), got %d", c.Warmup.Concurrency)
	}

	if c.Seed.Credentials < 1 {
		bad("seed.credentials", "must be >= 1, got %d", c.Seed.Credentials)
	} else if c.Seed.Credentials > 1000000 {
		bad("seed.credentials", "must be <= 1000000, got %d", c.Seed.Credentials)
	}
	if c.Seed.Bytes < 64 || c.Seed.Bytes > 60000 {
		bad("seed.bytes", "must be between 64 and 60000 (CredHub's limit is 64 KiB), got %d", c.Seed.Bytes)
	}

	switch c.Cleanup.Mode {
	case "none", "api":
	case "database":
		d := c.Cleanup.Database
		switch d.Type {
		case "postgres", "postgresql", "mysql", "mariadb":
		case "":
			bad("cleanup.database.type", "is required when cleanup.mode is database (postgres or mysql)")
		default:
			bad("cleanup.database.type", "%q is not postgres or mysql", d.Type)
		}
		if d.Host == "" {
			bad("cleanup.database.host", "is required when cleanup.mode is database")
		}
		if d.Port < 0 || d.Port > 65535 {
			bad("cleanup.database.port", "must be 0..65535, got %d", d.Port)
		}
		if d.User == "" {
			bad("cleanup.database.user", "is required when cleanup.mode is database")
		}
		if d.Name == "" {
			bad("cleanup.database.name", "is required when cleanup.mode is database")
		}
		fileOK("cleanup.database.ca_cert_file", d.CACertFile)
	default:
		bad("cleanup.mode", "%q is not none, api or database", c.Cleanup.Mode)
	}

	if !(c.SLO.Percentile > 0 && c.SLO.Percentile <= 100) {
		bad("slo.percentile", "must be > 0 and <= 100, got %g", c.SLO.Percentile)
	}
	if c.SLO.Latency <= 0 {
		bad("slo.latency", "must be > 0, got %s", c.SLO.Latency)
	}
	if c.SLO.MaxErrorRate < 0 || c.SLO.MaxErrorRate > 1 {
		bad("slo.max_error_rate", "must be between 0 and 1, got %g", c.SLO.MaxErrorRate)
	}
	if c.Abort.MaxErrorRate < 0 || c.Abort.MaxErrorRate > 1 {
		bad("abort.max_error_rate", "must be between 0 and 1, got %g", c.Abort.MaxErrorRate)
	}
	if c.Abort.MaxLatency < 0 {
		bad("abort.max_latency", "must be >= 0, got %s", c.Abort.MaxLatency)
	}
	if !(c.Abort.Percentile > 0 && c.Abort.Percentile <= 100) {
		bad("abort.percentile", "must be > 0 and <= 100, got %g", c.Abort.Percentile)
	}
	if c.Abort.ConsecutiveSteps < 1 {
		bad("abort.consecutive_steps", "must be >= 1, got %d", c.Abort.ConsecutiveSteps)
	}
	if c.Capacity.MaxProbes < 2 || c.Capacity.MaxProbes > 100 {
		bad("capacity.max_probes", "must be between 2 and 100, got %d", c.Capacity.MaxProbes)
	}
	if c.Capacity.Resolution < 0 {
		bad("capacity.resolution", "must be >= 0, got %g", c.Capacity.Resolution)
	}

	if !labelPattern.MatchString(c.Label) {
		bad("label", "%q must be at most 64 characters without '/', '\\' or control characters", c.Label)
	}
	if c.Instances < 0 {
		bad("instances", "must be >= 0 (0 = unknown), got %d", c.Instances)
	}
	if c.OutputDir == "" {
		bad("output_dir", "must not be empty")
	}

	t := c.Tester
	if t.Count < 1 {
		bad("tester.count", "must be >= 1, got %d", t.Count)
	} else if t.Index < 0 || t.Index >= t.Count {
		bad("tester.index", "must be between 0 and tester.count-1 (%d), got %d", t.Count-1, t.Index)
	}
	if t.StartAt != "" {
		if _, err := time.Parse(time.RFC3339, t.StartAt); err != nil {
			bad("tester.start_at", "%q is not an RFC3339 time (e.g. 2026-01-02T15:04:05Z)", t.StartAt)
		}
	}
	for _, l := range []struct {
		key string
		v   float64
	}{{"saturation.max_tester_cpu", c.Saturation.MaxTesterCPU}, {"saturation.max_host_cpu", c.Saturation.MaxHostCPU}, {"saturation.max_steal", c.Saturation.MaxSteal}} {
		if !(l.v > 0 && l.v <= 1) {
			bad(l.key, "must be a fraction above 0 and at most 1 (1 = never flag), got %g", l.v)
		}
	}
	if t.ScenarioGap < 0 {
		bad("tester.scenario_gap", "must be >= 0, got %s", t.ScenarioGap)
	}
	if t.RunID != "" && !runIDPattern.MatchString(t.RunID) {
		bad("tester.run_id", "%q may only hold letters, digits, '.', '_' and '-' (at most 64, not starting with a symbol)", t.RunID)
	} else if strings.EqualFold(t.RunID, rendezvousDir) {
		bad("tester.run_id", "%q is reserved for tester.rendezvous credentials; choose another run id", t.RunID)
	}
	if t.StartDelay < 0 {
		bad("tester.start_delay", "must be >= 0, got %s", t.StartDelay)
	}
	if t.Rendezvous != "" {
		switch {
		case t.RendezvousTimeout <= 0:
			bad("tester.rendezvous_timeout", "must be > 0 with tester.rendezvous, got %s", t.RendezvousTimeout)
		case !rendezvousPattern.MatchString(t.Rendezvous):
			bad("tester.rendezvous", "%q may only hold letters, digits, '.', '_' and '-' (at most 100, starting with a letter or digit)", t.Rendezvous)
		case t.Count < 2:
			bad("tester.rendezvous", "only applies with tester.count > 1 (testers agreeing on a start time); remove it for a single tester")
		case t.StartAt != "":
			bad("tester.rendezvous", "and tester.start_at are alternatives: give the start time, or let tester 0 publish it through the rendezvous, not both")
		}
	}
	if t.Count > 1 {
		if s.Duration == 0 {
			bad("steps.duration", "is required (> 0) with several testers: they start each step at the same wall-clock time")
		}
		if t.StartAt == "" && t.Rendezvous == "" {
			bad("tester.start_at", "is required with several testers (the same RFC3339 time on every tester), unless tester.rendezvous names a credential through which tester 0 publishes it")
		}
		if capacity {
			bad("tester.count", "capacity search runs on one tester only, got %d", t.Count)
		}
		if len(c.Scenarios) > 1 && t.ScenarioGap >= 0 {
			if least := minScenarioGap(c.Target.Timeout.D()); t.ScenarioGap.D() < least {
				bad("tester.scenario_gap", "%s is too short with several testers and scenarios: tester 0 waits %s after a scenario for the others' requests in flight, then cleans up and seeds the next; set at least %s (more for large seeds) or lower target.timeout",
					t.ScenarioGap, cleanupWait(c.Target.Timeout.D()), least)
			}
		}
	}
	return errs
}

// cleanupWait is how long tester 0 waits after the planned end of a
// scenario before cleaning up: the others' last requests may still be in
// flight for up to the request timeout (capped: a stuck request must not
// hold the run).
func cleanupWait(timeout time.Duration) time.Duration {
	return 2*time.Second + min(timeout, 10*time.Second)
}

// minScenarioGap is the least gap that leaves tester 0 time to wait, clean
// up and seed before the next scenario's first step.
func minScenarioGap(timeout time.Duration) time.Duration {
	return cleanupWait(timeout) + time.Second
}

// UnmarshalText parses a duration string or a number of seconds.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := parseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
