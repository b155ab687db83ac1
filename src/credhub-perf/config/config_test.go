package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md's generated table")

const (
	docPath    = "../../../docs/configuration.md"
	tableBegin = "<!-- BEGIN GENERATED KEY TABLE (go test ./config -update) -->\n"
	tableEnd   = "<!-- END GENERATED KEY TABLE -->"
)

func TestConfigDocMatchesKeys(t *testing.T) {
	data, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatalf("read %s: %v", docPath, err)
	}
	doc := string(data)
	i := strings.Index(doc, tableBegin)
	j := strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated table markers", docPath)
	}
	want := doc[:i+len(tableBegin)] + ReferenceTable() + doc[j:]
	if want != doc {
		if *update {
			if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Fatalf("docs/configuration.md is out of date: run `go test ./config -run TestConfigDocMatchesKeys -update`")
	}
}

// The documented defaults must be the real ones: render every key's
// documented default through its setter and compare with Default().
func TestDocumentedDefaultsAreReal(t *testing.T) {
	def := Default()
	var fromDoc Config
	for _, k := range Keys {
		v := k.Default
		if v == "(required)" || k.Name == "custom.headers" {
			continue
		}
		v = strings.Trim(v, `"`)
		v = strings.Trim(v, "[]")
		if err := k.set(&fromDoc, v); err != nil {
			t.Fatalf("%s: documented default %q does not parse: %v", k.Name, k.Default, err)
		}
	}
	fromDoc.Custom.Headers = def.Custom.Headers
	if got, want := strings.Join(fromDoc.Scenarios, ","), strings.Join(def.Scenarios, ","); got != want {
		t.Fatalf("scenarios default: doc %q, code %q", got, want)
	}
	fromDoc.Scenarios = def.Scenarios
	if len(fromDoc.Steps.Rates) == 0 {
		fromDoc.Steps.Rates = def.Steps.Rates
	}
	a, b := mustYAML(t, fromDoc), mustYAML(t, def)
	if a != b {
		t.Fatalf("documented defaults differ from Default():\ndoc:\n%s\ncode:\n%s", a, b)
	}
}

func TestEveryStructFieldHasAKey(t *testing.T) {
	// A YAML key the table does not list would be undocumented.
	y := mustYAML(t, Default())
	known := map[string]bool{}
	for _, k := range Keys {
		known[k.Name] = true
	}
	var stack []string
	for _, line := range strings.Split(strings.TrimSpace(y), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "- ") {
			continue
		}
		indent := (len(line) - len(strings.TrimLeft(line, " "))) / 4
		name, _, _ := strings.Cut(strings.TrimSpace(line), ":")
		stack = append(stack[:indent], name)
		full := strings.Join(stack, ".")
		if strings.HasSuffix(line, ":") && !known[full] {
			continue // a section
		}
		if !known[full] {
			t.Errorf("config key %s has no entry in Keys", full)
		}
	}
}

func mustYAML(t *testing.T, c Config) string {
	t.Helper()
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(4)
	if err := enc.Encode(c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func validBase(t *testing.T) Config {
	dir := t.TempDir()
	for _, f := range []string{"ca.crt", "client.crt", "client.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := Default()
	c.Target.URL = "https://127.0.0.1:8844"
	c.Target.CACertFile = filepath.Join(dir, "ca.crt")
	c.Target.ClientCertFile = filepath.Join(dir, "client.crt")
	c.Target.ClientKeyFile = filepath.Join(dir, "client.key")
	return c
}

func TestValidateGood(t *testing.T) {
	c := validBase(t)
	if errs := c.Validate(false); len(errs) != 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
	// The mix scenario with one weight: the others may be 0.
	for _, m := range []MixConfig{{Get: 1}, {Set: 1}, {Interpolate: 1}, {Get: 80, Set: 5, Interpolate: 15}} {
		c.Scenarios, c.Mix = []string{"get", "mix"}, m
		if errs := c.Validate(false); len(errs) != 0 {
			t.Fatalf("mix %+v: unexpected errors: %v", m, errs)
		}
	}
}

// Each bad value gives exactly one line that names its key.
func TestValidateEachBadValueOneLine(t *testing.T) {
	cases := []struct {
		key string
		mod func(c *Config)
	}{
		{"target.url", func(c *Config) { c.Target.URL = "" }},
		{"target.url", func(c *Config) { c.Target.URL = "ftp://x" }},
		{"target.ca_cert_file", func(c *Config) { c.Target.CACertFile = "/nonexistent/ca.crt" }},
		{"target.client_key_file", func(c *Config) { c.Target.ClientKeyFile = "" }},
		{"target.timeout", func(c *Config) { c.Target.Timeout = 0 }},
		{"uaa.client_secret", func(c *Config) { c.UAA.URL = "https://uaa:8443"; c.UAA.ClientID = "x" }},
		{"scenarios", func(c *Config) { c.Scenarios = []string{"gett"} }},
		{"scenarios", func(c *Config) { c.Scenarios = nil }},
		{"mix.get", func(c *Config) { c.Scenarios = []string{"mix"} }},
		{"mix.get", func(c *Config) { c.Scenarios = []string{"mix"}; c.Mix = MixConfig{Get: -1, Set: 1} }},
		{"mix.set", func(c *Config) { c.Mix.Set = 1000001 }},
		{"mix.interpolate", func(c *Config) { c.Scenarios = []string{"mix"}; c.Mix = MixConfig{Get: 1, Interpolate: -5} }},
		{"custom.path", func(c *Config) { c.Scenarios = []string{"custom"}; c.Custom.Path = "api" }},
		{"steps.min_concurrency", func(c *Config) { c.Steps.MinConcurrency = 0 }},
		{"steps.max_concurrency", func(c *Config) { c.Steps.MaxConcurrency = 0 }},
		{"steps.step", func(c *Config) { c.Steps.Step = -1 }},
		{"steps.requests", func(c *Config) { c.Steps.Requests = 0 }},
		{"steps.requests", func(c *Config) { c.Steps.Requests = 5 }},
		{"steps.duration", func(c *Config) { c.Steps.Duration = -1 }},
		{"steps.warmup", func(c *Config) { c.Steps.Warmup = Duration(-time.Second) }},
		{"steps.rates", func(c *Config) { c.Steps.Rates = []float64{10, -1}; c.Steps.Duration = Duration(time.Second) }},
		{"steps.duration", func(c *Config) { c.Steps.Rates = []float64{10} }},
		{"steps.rates", func(c *Config) { c.Steps.Rates = []float64{10, 10}; c.Steps.Duration = Duration(time.Second) }},
		{"seed.credentials", func(c *Config) { c.Seed.Credentials = 0 }},
		{"seed.bytes", func(c *Config) { c.Seed.Bytes = 70000 }},
		{"cleanup.mode", func(c *Config) { c.Cleanup.Mode = "truncate" }},
		{"cleanup.database.type", func(c *Config) {
			c.Cleanup.Mode = "database"
			c.Cleanup.Database = DatabaseConfig{Type: "oracle", Host: "h", User: "u", Name: "credhub"}
		}},
		{"cleanup.database.host", func(c *Config) {
			c.Cleanup.Mode = "database"
			c.Cleanup.Database = DatabaseConfig{Type: "postgres", User: "u", Name: "credhub"}
		}},
		{"slo.percentile", func(c *Config) { c.SLO.Percentile = 101 }},
		{"slo.latency", func(c *Config) { c.SLO.Latency = 0 }},
		{"slo.max_error_rate", func(c *Config) { c.SLO.MaxErrorRate = 2 }},
		{"abort.max_error_rate", func(c *Config) { c.Abort.MaxErrorRate = -0.5 }},
		{"abort.percentile", func(c *Config) { c.Abort.Percentile = 0 }},
		{"abort.consecutive_steps", func(c *Config) { c.Abort.ConsecutiveSteps = 0 }},
		{"capacity.max_probes", func(c *Config) { c.Capacity.MaxProbes = 1 }},
		{"label", func(c *Config) { c.Label = "a b/c" }},
		{"label", func(c *Config) { c.Label = strings.Repeat("x", 65) }},
		{"instances", func(c *Config) { c.Instances = -2 }},
		{"tester.index", func(c *Config) { c.Tester.Index = 3 }},
		{"tester.start_at", func(c *Config) { c.Tester.StartAt = "tomorrow" }},
		{"tester.run_id", func(c *Config) { c.Tester.RunID = "../x" }},
		{"tester.rendezvous", func(c *Config) { c.severalTesters(); c.Tester.Rendezvous = "a/b" }},
		{"tester.rendezvous", func(c *Config) { c.severalTesters(); c.Tester.Rendezvous = "-x" }},
		{"tester.rendezvous", func(c *Config) { c.severalTesters(); c.Tester.Rendezvous = strings.Repeat("x", 101) }},
		{"tester.rendezvous", func(c *Config) { c.Tester.Rendezvous = "one-tester" }},
		{"tester.rendezvous", func(c *Config) {
			c.severalTesters()
			c.Tester.Rendezvous = "both"
			c.Tester.StartAt = soon()
		}},
		{"tester.start_at", func(c *Config) { c.severalTesters(); c.Tester.Rendezvous = "" }},
		{"tester.start_delay", func(c *Config) { c.Tester.StartDelay = Duration(-time.Second) }},
		{"tester.rendezvous_timeout", func(c *Config) { c.severalTesters(); c.Tester.RendezvousTimeout = 0 }},
		{"tester.run_id", func(c *Config) { c.Tester.RunID = "Rendezvous" }},
		{"tester.scenario_gap", func(c *Config) {
			// Two testers, two scenarios: a 5 s gap cannot hold the 12 s wait
			// for in-flight requests that a 30 s timeout implies.
			c.Tester = TesterConfig{Index: 0, Count: 2, StartAt: soon(), ScenarioGap: Duration(5 * time.Second)}
			c.Steps.Requests, c.Steps.Duration = 0, Duration(time.Second)
			c.Scenarios = []string{"get", "set"}
			c.Target.Timeout = Duration(30 * time.Second)
		}},
	}
	for _, tc := range cases {
		c := validBase(t)
		tc.mod(&c)
		errs := c.Validate(false)
		if len(errs) != 1 {
			t.Errorf("%s: want exactly 1 error, got %d: %v", tc.key, len(errs), errs)
			continue
		}
		msg := errs[0].Error()
		if !strings.HasPrefix(msg, tc.key+": ") || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q does not start with the key or spans lines", tc.key, msg)
		}
	}
}

// severalTesters makes c a valid configuration of tester 0 of two that
// agree on the start through a rendezvous.
func (c *Config) severalTesters() {
	c.Tester.Count = 2
	c.Tester.Rendezvous = "cf-credhub-perf"
	c.Steps.Duration = Duration(time.Second)
}

func TestValidateRendezvous(t *testing.T) {
	c := validBase(t)
	c.severalTesters()
	if errs := c.Validate(false); len(errs) != 0 {
		t.Fatalf("several testers with a rendezvous and no start_at: %v", errs)
	}
	c.Tester.Rendezvous = "my_deployment.credhub-perf-2"
	c.Tester.Index = 1
	if errs := c.Validate(false); len(errs) != 0 {
		t.Fatalf("%s: %v", c.Tester.Rendezvous, errs)
	}
}

func TestFlagsOverrideFile(t *testing.T) {
	c := Default()
	err := LoadBytes(&c, []byte(`
target: {url: "https://a:1", timeout: 5}
steps: {max_concurrency: 7, duration: "2s", rates: [1, 2.5]}
scenarios: [get, set]
slo: {latency: 0.25}
instances: null
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	o := BindFlags(fs)
	if err := fs.Parse([]string{"--steps.max_concurrency=9", "--scenario", "interpolate", "--tester-index", "1", "--testers=2"}); err != nil {
		t.Fatal(err)
	}
	if errs := o.Apply(&c); len(errs) != 0 {
		t.Fatal(errs)
	}
	if c.Target.Timeout.D() != 5*time.Second || c.Steps.Duration.D() != 2*time.Second || c.SLO.Latency.D() != 250*time.Millisecond {
		t.Fatalf("durations: %v %v %v", c.Target.Timeout, c.Steps.Duration, c.SLO.Latency)
	}
	if c.Steps.MaxConcurrency != 9 || c.Steps.MinConcurrency != 1 || len(c.Steps.Rates) != 2 {
		t.Fatalf("steps: %+v", c.Steps)
	}
	if strings.Join(c.Scenarios, ",") != "interpolate" || c.Tester.Index != 1 || c.Tester.Count != 2 {
		t.Fatalf("flags not applied: %+v %+v", c.Scenarios, c.Tester)
	}
}

func TestUnknownKeyRejected(t *testing.T) {
	c := Default()
	err := LoadBytes(&c, []byte("steps:\n  max_concurency: 3\n"), "t.yaml")
	if err == nil || !strings.Contains(err.Error(), "max_concurency") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("want one line naming the unknown key, got %v", err)
	}
}

func TestBadFlagValueOneLine(t *testing.T) {
	c := Default()
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	o := BindFlags(fs)
	if err := fs.Parse([]string{"--steps.requests=many", "--slo.latency=soon"}); err != nil {
		t.Fatal(err)
	}
	errs := o.Apply(&c)
	if len(errs) != 2 || !strings.HasPrefix(errs[0].Error(), "--steps.requests: ") || !strings.HasPrefix(errs[1].Error(), "--slo.latency: ") {
		t.Fatalf("got %v", errs)
	}
}

// scripts/demo.yml (make demo) still loads, and is valid once the demo's
// certificates and target URL are there.
func TestDemoConfigLoads(t *testing.T) {
	c := Default()
	if err := LoadFile(&c, "../../../scripts/demo.yml"); err != nil {
		t.Fatal(err)
	}
	base := validBase(t)
	c.Target.URL = base.Target.URL
	c.Target.CACertFile, c.Target.ClientCertFile, c.Target.ClientKeyFile = base.Target.CACertFile, base.Target.ClientCertFile, base.Target.ClientKeyFile
	c.Steps.MaxConcurrency, c.Steps.Step = 24, 4 // as scripts/demo sets them
	if errs := c.Validate(false); len(errs) != 0 {
		t.Fatalf("%v", errs)
	}
}

// soon is a tester.start_at within its 7-day limit.
func soon() string { return time.Now().Add(time.Hour).UTC().Format(time.RFC3339) }

// Database settings without the database cleanup are named (the run warns
// of them); with it, or left at their defaults, nothing is.
func TestUnusedDatabaseKeys(t *testing.T) {
	c := Default()
	if k := c.UnusedDatabaseKeys(); len(k) != 0 {
		t.Fatalf("defaults: %v", k)
	}
	c.Cleanup.Database.Host, c.Cleanup.Database.Password = "db.example", "secret"
	if k := strings.Join(c.UnusedDatabaseKeys(), ","); k != "cleanup.database.host,cleanup.database.password" {
		t.Fatalf("api mode: %q", k)
	}
	c.Cleanup.Mode = "database"
	if k := c.UnusedDatabaseKeys(); len(k) != 0 {
		t.Fatalf("database mode: %v", k)
	}
}
