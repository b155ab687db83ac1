package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"
)

// RendezvousDir is the path segment under /credhub-perf that holds the
// testers' rendezvous credentials; it is never a run id.
const RendezvousDir = "rendezvous"

// Validate returns one error per bad value, each a complete line naming
// the key, what is wrong and what is accepted. capacity is true for the
// capacity search, which runs on one tester only.
//
// Each key's own rules (Keys[i].Rules: ranges, enums, patterns, and
// comparisons the BOSH template can make too) run first, in key order;
// then the checks per section that only Go makes, because they look at the
// machine (files) or at several keys in ways the rule table does not
// express. docs/design.md lists the latter: a BOSH deploy cannot check
// them, the errand does when it starts, before any load.
func (c *Config) Validate(capacity bool) []error {
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, a...)))
	}
	ruleErr := map[string]bool{}
	for i := range Keys {
		k := &Keys[i]
		// A comparison with a key already refused would blame this one for
		// the other's value (steps.requests "must be >= 1000000" when
		// steps.max_concurrency 1000000 is the typo): the other's error
		// says enough.
		rules := make([]Rule, 0, len(k.Rules))
		for _, r := range k.Rules {
			if r.Check != "ge_key" || !ruleErr[r.Key] {
				rules = append(rules, r)
			}
		}
		for _, msg := range checkRules(rules, deref(k.field(c)), c.lookup) {
			errs = append(errs, fmt.Errorf("%s: %s", k.Name, msg))
			ruleErr[k.Name] = true
		}
	}
	for _, section := range []func(c *Config, ruleErr map[string]bool, bad func(key, format string, a ...any)){
		validateTarget, validateUAA, validateCleanup, validateTester, validateRamp,
	} {
		section(c, ruleErr, bad)
	}
	if capacity && c.Tester.Count > 1 {
		bad("tester.count", "capacity search runs on one tester only, got %d", c.Tester.Count)
	}
	return errs
}

// fileOK refuses a file that is named but cannot be read.
func fileOK(bad func(key, format string, a ...any), key, path string) {
	if path == "" {
		return
	}
	if _, err := os.Stat(path); err != nil {
		bad(key, "cannot read %q: %v", path, errors.Unwrap(err))
	}
}

// urlOK is what url.Parse makes of a URL the rule's pattern let through
// (escapes and host syntax the pattern does not look at).
func urlOK(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

func validateTarget(c *Config, ruleErr map[string]bool, bad func(key, format string, a ...any)) {
	t := c.Target
	if t.URL != "" && !ruleErr["target.url"] && !urlOK(t.URL) {
		bad("target.url", "%q is not an http(s) URL with a host", t.URL)
	}
	fileOK(bad, "target.ca_cert_file", t.CACertFile)
	fileOK(bad, "target.client_cert_file", t.ClientCertFile)
	fileOK(bad, "target.client_key_file", t.ClientKeyFile)
	if (t.ClientCertFile == "") != (t.ClientKeyFile == "") {
		bad("target.client_key_file", "client_cert_file and client_key_file must be given together")
	}
	if c.UAA.URL == "" && t.ClientCertFile == "" && strings.HasPrefix(t.URL, "https") {
		bad("target.client_cert_file", "is required unless uaa.url is set (CredHub needs a client certificate or a UAA token)")
	}
}

func validateUAA(c *Config, ruleErr map[string]bool, bad func(key, format string, a ...any)) {
	if c.UAA.URL == "" {
		return
	}
	if !ruleErr["uaa.url"] && !urlOK(c.UAA.URL) {
		bad("uaa.url", "%q is not an http(s) URL with a host", c.UAA.URL)
	}
	fileOK(bad, "uaa.ca_cert_file", c.UAA.CACertFile)
}

func validateCleanup(c *Config, _ map[string]bool, bad func(key, format string, a ...any)) {
	if c.Cleanup.Mode == "database" {
		fileOK(bad, "cleanup.database.ca_cert_file", c.Cleanup.Database.CACertFile)
	}
}

func validateTester(c *Config, ruleErr map[string]bool, bad func(key, format string, a ...any)) {
	t := c.Tester
	if t.Count >= 1 && (t.Index < 0 || t.Index >= t.Count) {
		bad("tester.index", "must be between 0 and tester.count-1 (%d), got %d", t.Count-1, t.Index)
	}
	if strings.EqualFold(t.RunID, RendezvousDir) {
		bad("tester.run_id", "%q is reserved for tester.rendezvous credentials; choose another run id", t.RunID)
	}
	if t.Rendezvous != "" && !ruleErr["tester.rendezvous"] && !ruleErr["tester.rendezvous_timeout"] {
		switch {
		case t.Count < 2:
			bad("tester.rendezvous", "only applies with tester.count > 1 (testers agreeing on a start time); remove it for a single tester")
		case t.StartAt != "":
			bad("tester.rendezvous", "and tester.start_at are alternatives: give the start time, or let tester 0 publish it through the rendezvous, not both")
		}
	}
	if t.Count > 1 {
		if t.StartAt == "" && t.Rendezvous == "" {
			bad("tester.start_at", "is required with several testers (the same RFC3339 time on every tester), unless tester.rendezvous names a credential through which tester 0 publishes it")
		}
		if len(c.Scenarios) > 1 && t.ScenarioGap >= 0 {
			if least := MinScenarioGap(c.Target.Timeout.D()); t.ScenarioGap.D() < least {
				bad("tester.scenario_gap", "%s is too short with several testers and scenarios: tester 0 waits %s after a scenario for the others' requests in flight, then cleans up and seeds the next; set at least %s (more for large seeds) or lower target.timeout",
					t.ScenarioGap, CleanupWait(c.Target.Timeout.D()), least)
			}
		}
	}
}

// CleanupWait is how long tester 0 waits after the planned end of a
// scenario before cleaning up: the others' last requests may still be in
// flight for up to the request timeout (capped: a stuck request must not
// hold the run).
func CleanupWait(timeout time.Duration) time.Duration {
	return 2*time.Second + min(timeout, 10*time.Second)
}

// MinScenarioGap is the least gap that leaves tester 0 time to wait, clean
// up and seed before the next scenario's first step.
func MinScenarioGap(timeout time.Duration) time.Duration {
	return CleanupWait(timeout) + time.Second
}

// StepCount is how many measured steps the ramp has (0 when the keys that
// make it are out of range).
func (c *Config) StepCount() int {
	s := c.Steps
	if len(s.Rates) > 0 {
		return len(s.Rates)
	}
	if s.MinConcurrency < 1 || s.Step < 1 || s.MaxConcurrency < s.MinConcurrency {
		return 0
	}
	return (s.MaxConcurrency-s.MinConcurrency+s.Step-1)/s.Step + 1
}

// validateRamp bounds what no single key bounds: the number of steps, the
// length of a timed ramp, and how far ahead tester.start_at lies (the
// rule table cannot: it depends on the time the run starts).
func validateRamp(c *Config, ruleErr map[string]bool, bad func(key, format string, a ...any)) {
	for _, k := range []string{"steps.min_concurrency", "steps.max_concurrency", "steps.step", "steps.rates", "steps.duration", "steps.warmup"} {
		if ruleErr[k] {
			return
		}
	}
	n := c.StepCount()
	if n > MaxSteps {
		bad("steps.step", "makes %d steps from %d to %d; a ramp has at most %d: raise steps.step or narrow the range", n, c.Steps.MinConcurrency, c.Steps.MaxConcurrency, MaxSteps)
		return
	}
	if c.Steps.Duration > 0 {
		if total := time.Duration(n) * (c.Steps.Warmup.D() + c.Steps.Duration.D()); total > MaxRunTime {
			bad("steps.duration", "%d steps of %s (plus %s warm-up each) take %s; a ramp takes at most %s: shorten steps.duration or steps.warmup, or use fewer steps",
				n, c.Steps.Duration, c.Steps.Warmup, total.Round(time.Minute), shortDuration(MaxRunTime))
		}
	}
	if c.Tester.StartAt != "" && !ruleErr["tester.start_at"] {
		if t, err := time.Parse(time.RFC3339, c.Tester.StartAt); err == nil {
			if time.Until(t) > MaxStartAhead {
				bad("tester.start_at", "%s is more than 7 days (%s) ahead: give a nearer time, or leave it empty to start now",
					c.Tester.StartAt, shortDuration(MaxStartAhead))
			}
		}
	}
}
