package config

import (
	"fmt"
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

// A file that is not a small YAML document is refused in one line naming
// the problem and the fix, without expanding or reading what it holds.
func TestConfigReaderRefusesHostileDocuments(t *testing.T) {
	bomb := func(depth int, indent string) string {
		var b strings.Builder
		b.WriteString(indent + "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
		for i := 1; i < depth; i++ {
			p := fmt.Sprintf("*a%d", i-1)
			fmt.Fprintf(&b, "%sa%d: &a%d [%s]\n", indent, i, i, strings.TrimSuffix(strings.Repeat(p+", ", 9), ", "))
		}
		return b.String()
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"too large", "label: x\n" + strings.Repeat("#\n", MaxConfigBytes/2), "larger than 1024 KiB; a configuration is a small YAML file"},
		{"alias bomb under unknown keys", bomb(9, ""), "YAML aliases expand to more than 10000 values"},
		{"alias bomb under a section", "steps:\n" + bomb(9, "  "), "YAML aliases expand to more than 10000 values"},
		{"alias bomb as a key's value", bomb(30, "") + "scenarios: *a29\n", "YAML aliases expand to more than 10000 values"},
		{"two documents", "label: a\n---\nlabel: b\n", "holds more than one YAML document (a second one holds line 3)"},
		{"a broken second document", "label: a\n---\n[\n", "holds more than one YAML document, and a later one does not parse"},
		{"misspelt key", "steps:\n  max_concurency: 5\n", "steps.max_concurency: unknown key (line 2); did you mean steps.max_concurrency?"},
		{"misspelt section", "stpes: {duration: 1s}\n", "stpes: unknown key (line 1); did you mean steps?"},
	} {
		c := Default()
		err := LoadBytes(&c, []byte(tc.doc), "c.yml")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line containing %q", tc.name, err, tc.want)
		}
	}
	// Aliases that expand to a few values are still read.
	c := Default()
	if err := LoadBytes(&c, []byte("steps: {rates: &r [10, 20]}\nsaturation: {max_host_cpu: &h 1, max_tester_cpu: *h}\n"), "c.yml"); err != nil || c.Saturation.MaxTesterCPU != 1 {
		t.Fatalf("small aliases: %v, %+v", err, c.Saturation)
	}
	// A leading `---` and a trailing `...` are one document.
	if err := LoadBytes(&c, []byte("---\nlabel: a\n...\n"), "c.yml"); err != nil || c.Label != "a" {
		t.Fatalf("one marked document: %v", err)
	}
}

// Hostile documents: an error or a configuration, never a panic.
func FuzzLoadBytes(f *testing.F) {
	for _, s := range []string{
		"steps:\n  duration: [30s]\n", "abort: {max_latency: {x: 1}}", `{"steps": {"duration": ["30s"]}}`,
		"a: &a [*a]", "steps: {duration: !!binary AAAA}", "? [a]\n: b\n", "steps: {duration: 1e309}",
		"target: {url: \"\\xff\"}", "---\n---\n", "scenarios: [get, *x]", "label: !!int 5",
		"slo: {max_error_rate: .nan}", "steps: {rates: [1, -0.0, 1e308], duration: 1e-9}", "warmup: {run: \"-0\"}",
		"a: &a [x, x, x]\nb: &b [*a, *a, *a]\nsteps: {rates: *b}", "label: a\n---\nlabel: b\n", "steps: {max_concurency: 5}",
		"steps: {duration: 2540400h, warmup: 1e9, max_concurrency: 1000000, rates: [1e12]}", "tester: {start_at: \"9999-01-01T00:00:00Z\"}",
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
