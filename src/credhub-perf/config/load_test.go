package config

import (
	"strings"
	"testing"
)

// A value of the wrong type must be an error naming its key, in YAML and
// in JSON, never a silent zero or default.
func TestConfigWrongTypesNameTheKey(t *testing.T) {
	for _, tc := range []struct{ doc, key string }{
		{"steps:\n  duration: [30s]\n", "steps.duration"},
		{"abort:\n  max_latency: {x: 1}\n", "abort.max_latency"},
		{"steps:\n  duration:\n    - 30s\n", "steps.duration"},
		{`{"steps": {"duration": ["30s"]}}`, "steps.duration"},
		{`{"abort": {"max_latency": {"x": 1}}}`, "abort.max_latency"},
		{"steps: {warmup: 5 parsecs}\n", "steps.warmup"},
		{"steps: {max_concurrency: [3]}\n", "steps.max_concurrency"},
		{"steps: {max_concurrency: lots}\n", "steps.max_concurrency"},
		{`{"steps": {"max_concurrency": "lots"}}`, "steps.max_concurrency"},
		{"slo: {percentile: {p: 95}}\n", "slo.percentile"},
		{"keepalive: [true]\n", "keepalive"},
		{"keepalive: maybe\n", "keepalive"},
		{"label: {a: b}\n", "label"},
		{"target:\n  url: [https://x]\n", "target.url"},
		{"scenarios: get\n", "scenarios"},
		{"scenarios: [[get]]\n", "scenarios"},
		{"steps: {rates: 100}\n", "steps.rates"},
		{"steps: {rates: [a]}\n", "steps.rates"},
		{"custom: {headers: {X-A: b}}\n", "custom.headers"},
		{"steps: 5\n", "steps"},
		{"tester: {scenario_gap: [1m]}\n", "tester.scenario_gap"},
		{"base: &d [30s]\nsteps: {duration: *d}\n", "steps.duration"},
		{"seed: {bytes: \"1k\"}\n", "seed.bytes"},
		{"seed: {bytes: 1.5}\n", "seed.bytes"},
		{"seed: {bytes: 99999999999999999999}\n", "seed.bytes"},
		{"slo: {max_error_rate: .nan}\n", "slo.max_error_rate"},
		{"slo: {percentile: .inf}\n", "slo.percentile"},
		{"slo: {percentile: \"95\"}\n", "slo.percentile"},
		{"keepalive: \"true\"\n", "keepalive"},
		{"steps: {rates: [.inf]}\n", "steps.rates"},
		{"steps: {rates: [\"10\"]}\n", "steps.rates"},
		{"scenarios: [get, ~]\n", "scenarios"},
	} {
		c := Default()
		err := LoadBytes(&c, []byte(tc.doc), "c.yml")
		if err == nil {
			t.Errorf("%q: accepted (steps.duration %s, abort.max_latency %s)", tc.doc, c.Steps.Duration, c.Abort.MaxLatency)
			continue
		}
		if !strings.Contains(err.Error(), tc.key+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: want one line naming %s, got %v", tc.doc, tc.key, err)
		}
	}
}

func TestConfigRightTypesStillRead(t *testing.T) {
	c := Default()
	doc := "steps: {duration: 30, warmup: 1.5s, rates: [10, 20.5]}\nabort: {max_latency: ~}\nscenarios: [get, set]\nkeepalive: false\n"
	if err := LoadBytes(&c, []byte(doc), "c.yml"); err != nil {
		t.Fatal(err)
	}
	if c.Steps.Duration.String() != "30s" || c.Steps.Warmup.String() != "1.5s" || len(c.Steps.Rates) != 2 ||
		c.Abort.MaxLatency.String() != "5s" || len(c.Scenarios) != 2 || c.Keepalive {
		t.Fatalf("%+v", c)
	}
	for _, empty := range []string{"", "~\n", "# nothing\n"} {
		c := Default()
		if err := LoadBytes(&c, []byte(empty), "c.yml"); err != nil {
			t.Fatalf("%q: %v", empty, err)
		}
	}
	if err := LoadBytes(&c, []byte("[1, 2]\n"), "c.yml"); err == nil || !strings.Contains(err.Error(), "mapping") {
		t.Fatalf("a list as the document: %v", err)
	}
}

// Hostile documents: an error or a configuration, never a panic.
func FuzzLoadBytes(f *testing.F) {
	for _, s := range []string{
		"steps:\n  duration: [30s]\n", "abort: {max_latency: {x: 1}}", `{"steps": {"duration": ["30s"]}}`,
		"a: &a [*a]", "steps: {duration: !!binary AAAA}", "? [a]\n: b\n", "steps: {duration: 1e309}",
		"target: {url: \"\\xff\"}", "---\n---\n", "scenarios: [get, *x]", "label: !!int 5",
		"slo: {max_error_rate: .nan}", "steps: {rates: [1, -0.0, 1e308], duration: 1e-9}", "warmup: {run: \"-0\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Default()
		if LoadBytes(&c, data, "fuzz.yml") != nil {
			return
		}
		// What loads goes through every rule: errors are lines, never a panic.
		for _, err := range c.Validate(false) {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
		}
	})
}
