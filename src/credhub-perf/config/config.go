// Package config is credhub-perf's configuration: the types, the defaults,
// the key table (keys.go) that every other form is generated from (flags,
// docs/configuration.md, the BOSH job's spec properties and the rule table
// its validation_properties.yml.erb checks at deploy time), loading and
// validation.
package config

import (
	"fmt"
	"math"
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
		// Beyond ±292 years a float does not convert to a Duration (Go
		// leaves the result undefined): refuse it like any non-duration.
		if ns := f * float64(time.Second); math.IsNaN(ns) || !(math.Abs(ns) < 1<<63) {
			return 0, fmt.Errorf("%q is not a duration (use e.g. 30s, 250ms, or a number of seconds)", s)
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
// documents every key and is generated from Keys.
type Config struct {
	Target     TargetConfig     `yaml:"target"`
	UAA        UAAConfig        `yaml:"uaa"`
	Scenarios  []string         `yaml:"scenarios"`
	Custom     CustomConfig     `yaml:"custom"`
	Mix        MixConfig        `yaml:"mix"`
	Workload   string           `yaml:"workload"`
	Steps      StepsConfig      `yaml:"steps"`
	Warmup     WarmupConfig     `yaml:"warmup"`
	Keepalive  bool             `yaml:"keepalive"`
	Seed       SeedConfig       `yaml:"seed"`
	Set        SetConfig        `yaml:"set"`
	Cleanup    CleanupConfig    `yaml:"cleanup"`
	SLO        SLOConfig        `yaml:"slo"`
	Abort      AbortConfig      `yaml:"abort"`
	Capacity   CapacityConfig   `yaml:"capacity"`
	Confirm    ConfirmConfig    `yaml:"confirm"`
	Label      string           `yaml:"label"`
	Instances  int              `yaml:"instances"`
	OutputDir  string           `yaml:"output_dir"`
	Tester     TesterConfig     `yaml:"tester"`
	Saturation SaturationConfig `yaml:"saturation"`
	TargetLoad TargetLoadConfig `yaml:"target_load"`
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

// SetConfig bounds what set requests write: new versions of a fixed pool
// of names rather than a new name per request, so the API cleanup of a run
// is at most that many deletes however long or heavy the run.
type SetConfig struct {
	Names int `yaml:"names"`
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

// MixConfig weighs the request types of the mix scenario.
type MixConfig struct {
	Get         int `yaml:"get"`
	Set         int `yaml:"set"`
	Interpolate int `yaml:"interpolate"`
}

type SLOConfig struct {
	Percentile   float64  `yaml:"percentile"`
	Latency      Duration `yaml:"latency"`
	MaxErrorRate float64  `yaml:"max_error_rate"`
	// Bounds per request type of a mix run; 0 = Latency.
	LatencyGet         Duration `yaml:"latency_get"`
	LatencySet         Duration `yaml:"latency_set"`
	LatencyInterpolate Duration `yaml:"latency_interpolate"`
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

// ConfirmConfig is the open-loop confirmation of a closed-loop capacity.
type ConfirmConfig struct {
	OpenLoop  bool      `yaml:"open_loop"`
	Fractions []float64 `yaml:"fractions"`
	Duration  Duration  `yaml:"duration"`
	Refine    int       `yaml:"refine"`
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
	FastHTTP          bool     `yaml:"fast_http"`
}

// TargetLoadConfig names what to sample of the target while it is loaded
// (package targetload): processes on this machine, credhub-sim's model,
// or a BOSH deployment's VMs through the director.
type TargetLoadConfig struct {
	Processes        []string `yaml:"processes"`
	CredHubSim       bool     `yaml:"credhub_sim"`
	Interval         Duration `yaml:"interval"`
	BoshDeployment   string   `yaml:"bosh_deployment"`
	BoshGroups       []string `yaml:"bosh_groups"`
	BoshEnvironment  string   `yaml:"bosh_environment"`
	BoshClient       string   `yaml:"bosh_client"`
	BoshClientSecret string   `yaml:"bosh_client_secret"`
	BoshCACert       string   `yaml:"bosh_ca_cert"`
	BoshTimeout      Duration `yaml:"bosh_timeout"`
}

// SaturationConfig bounds the tester's own resources: past them a step
// measured the tester, not CredHub (cpuload).
type SaturationConfig struct {
	MaxTesterCPU float64 `yaml:"max_tester_cpu"`
	MaxHostCPU   float64 `yaml:"max_host_cpu"`
	MaxSteal     float64 `yaml:"max_steal"`
	// MaxTesterWait bounds the tester's own starvation: its threads'
	// run-queue wait per wall second per core.
	MaxTesterWait float64 `yaml:"max_tester_wait"`
}

// Default returns the documented defaults.
func Default() Config {
	return Config{
		Target:     TargetConfig{Timeout: Duration(30 * time.Second)},
		Scenarios:  []string{"get"},
		Custom:     CustomConfig{Method: "GET"},
		Steps:      StepsConfig{MinConcurrency: 1, MaxConcurrency: 10, Step: 1, Requests: 1000},
		Warmup:     WarmupConfig{Run: WarmupAuto, Max: Duration(5 * time.Minute)},
		Keepalive:  true,
		Seed:       SeedConfig{Credentials: 100, Bytes: 1024},
		Set:        SetConfig{Names: 500},
		Cleanup:    CleanupConfig{Mode: "api", Database: DatabaseConfig{Name: "credhub"}},
		SLO:        SLOConfig{Percentile: 95, Latency: Duration(100 * time.Millisecond), MaxErrorRate: 0.01},
		Abort:      AbortConfig{MaxErrorRate: 0.1, MaxLatency: Duration(5 * time.Second), Percentile: 99, ConsecutiveSteps: 2},
		Capacity:   CapacityConfig{MaxProbes: 12},
		Confirm:    ConfirmConfig{OpenLoop: true, Fractions: []float64{0.5, 0.7, 0.85, 1}, Duration: Duration(30 * time.Second), Refine: 2},
		OutputDir:  "out",
		Tester:     TesterConfig{Count: 1, ScenarioGap: Duration(60 * time.Second), StartDelay: Duration(30 * time.Second), RendezvousTimeout: Duration(10 * time.Minute)},
		Saturation: SaturationConfig{MaxTesterCPU: cpuload.DefaultLimits.TesterCPU, MaxHostCPU: cpuload.DefaultLimits.HostCPU, MaxSteal: cpuload.DefaultLimits.HostSteal, MaxTesterWait: cpuload.DefaultLimits.TesterWait},
		TargetLoad: TargetLoadConfig{Interval: Duration(time.Second), BoshGroups: []string{"credhub=credhub", "database=database"}, BoshTimeout: Duration(60 * time.Second)},
	}
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

// UnusedDatabaseKeys lists the cleanup.database.* keys set (away from
// their defaults) while cleanup.mode is not database: they do nothing
// then, and an operator who set them most likely meant the database
// cleanup (a run that then deletes through the API, or leaves everything,
// is not what they asked for), so the run warns.
func (c Config) UnusedDatabaseKeys() []string {
	if c.Cleanup.Mode == "database" {
		return nil
	}
	d, def := c.Cleanup.Database, Default().Cleanup.Database
	var keys []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"type", d.Type != def.Type}, {"host", d.Host != def.Host}, {"port", d.Port != def.Port},
		{"user", d.User != def.User}, {"password", d.Password != def.Password}, {"name", d.Name != def.Name},
		{"tls", d.TLS != def.TLS}, {"ca_cert_file", d.CACertFile != def.CACertFile},
	} {
		if k.set {
			keys = append(keys, "cleanup.database."+k.name)
		}
	}
	return keys
}
