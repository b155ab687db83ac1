package config

import (
	"regexp"
	"strings"
	"testing"
)

// The key table is data that two interpreters read: every rule must name
// a known check, compile, and refer only to keys that exist; every key
// with a BOSH property has a description; property names are unique.
func TestKeyTableIsSound(t *testing.T) {
	checks := map[string]bool{"range": true, "nonempty": true, "enum": true, "pattern": true, "not_pattern": true,
		"ge_key": true, "increasing": true, "unique": true, "rfc3339": true, "auto_or_duration": true}
	ops := map[string]bool{"empty": true, "nonempty": true, "eq": true, "eqfold": true, "contains": true, "gt": true, "false": true}
	types := map[string]bool{"string": true, "int": true, "number": true, "bool": true, "duration": true, "list of string": true, "list of number": true}
	ref := regexp.MustCompile(`\{k:([a-z0-9_.]+)\}`)
	props := map[string]bool{}
	checkRules := func(owner string, rules []Rule) {
		for _, r := range rules {
			if !checks[r.Check] {
				t.Errorf("%s: unknown check %q", owner, r.Check)
			}
			if r.Pattern != "" {
				if _, err := regexp.Compile(r.Pattern); err != nil {
					t.Errorf("%s: pattern %q: %v", owner, r.Pattern, err)
				}
				if strings.Contains(r.Pattern, `\s`) || strings.Contains(r.Pattern, `\d`) || strings.ContainsAny(r.Pattern, "^$") && !strings.Contains(r.Pattern, "[^") {
					t.Errorf("%s: pattern %q uses syntax Go and Ruby read differently (use \\A \\z and written-out classes)", owner, r.Pattern)
				}
			}
			if r.Msg == "" || (r.Check == "auto_or_duration" && r.Msg2 == "") {
				t.Errorf("%s: %s rule without a message", owner, r.Check)
			}
			if r.Check == "ge_key" && keyByName(r.Key) == nil {
				t.Errorf("%s: ge_key names unknown key %q", owner, r.Key)
			}
			for _, c := range r.When {
				if keyByName(c.Key) == nil || !ops[c.Op] {
					t.Errorf("%s: condition %+v", owner, c)
				}
			}
			for _, m := range ref.FindAllStringSubmatch(r.Msg+r.Msg2, -1) {
				if keyByName(m[1]) == nil {
					t.Errorf("%s: message names unknown key %q", owner, m[1])
				}
			}
		}
	}
	for _, k := range Keys {
		if !types[k.Type] {
			t.Errorf("%s: type %q", k.Name, k.Type)
		}
		checkRules(k.Name, k.Rules)
		if p := k.BOSH; p != nil {
			if props[p.Name] || strings.TrimSpace(p.Description) == "" {
				t.Errorf("%s: property %q repeated or undescribed", k.Name, p.Name)
			}
			props[p.Name] = true
			if p.Via == ViaDerived && !types[p.Type] {
				t.Errorf("%s: derived property without a type", p.Name)
			}
			checkRules(p.Name, p.Rules)
		}
	}
	for _, p := range BOSHOnly {
		if props[p.Name] || strings.TrimSpace(p.Description) == "" {
			t.Errorf("BOSH-only property %q repeated or undescribed", p.Name)
		}
		props[p.Name] = true
		if len(p.Rules) > 0 && !types[p.Type] {
			t.Errorf("%s: rules without a type", p.Name)
		}
		checkRules(p.Name, p.Rules)
	}
	// Every BOSH-only property is placed in the spec.
	if n := len(specEntries()); n != len(props) {
		t.Errorf("the spec lists %d properties, the tables %d (a BOSH-only property's After names nothing?)", n, len(props))
	}
}

// Values the rules format the way Validate always printed them.
func TestRuleMessages(t *testing.T) {
	c := Default()
	c.Seed.Bytes = 70000
	c.SLO.Percentile = 1e6
	c.Steps.Rates = []float64{0.5, 0.25}
	c.Steps.Duration = Duration(1500 * 1e6)
	c.Label = "tab\there"
	c.Abort.MaxLatency = Duration(-1500)
	c.Scenarios = []string{"mix"}
	c.Mix.Set = -1
	got := map[string]string{}
	for _, e := range c.Validate(false) {
		k, msg, _ := strings.Cut(e.Error(), ": ")
		got[k] = msg
	}
	for k, want := range map[string]string{
		"seed.bytes":        "must be between 64 and 60000 (CredHub's limit is 64 KiB), got 70000",
		"slo.percentile":    "must be > 0 and <= 100, got 1e+06",
		"steps.rates":       "rates must increase: rate #2 (0.25) is not above rate #1 (0.5)",
		"label":             `"tab\there" must be at most 64 characters without '/', '\' or control characters`,
		"abort.max_latency": "must be >= 0, got -1.5µs",
		"mix.set":           "must be a weight from 0 to 1000000, got -1",
	} {
		if got[k] != want {
			t.Errorf("%s: %q, want %q", k, got[k], want)
		}
	}
}
