package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Markers around the generated parts of the BOSH job (go test ./config
// -update rewrites what lies between them; a test fails when it differs).
const (
	SpecBegin   = "# BEGIN GENERATED PROPERTIES (go test ./config -update; from src/credhub-perf/config/keys.go)\n"
	SpecEnd     = "# END GENERATED PROPERTIES\n"
	RulesBegin  = "  # BEGIN GENERATED RULES (go test ./config -update; from src/credhub-perf/config/keys.go)\n"
	RulesEnd    = "  # END GENERATED RULES\n"
	CopiesBegin = "  # BEGIN GENERATED COPIES (go test ./config -update; from src/credhub-perf/config/keys.go)\n"
	CopiesEnd   = "  # END GENERATED COPIES\n"
)

// specEntry is one property of the job spec, in spec order.
type specEntry struct {
	prop    *Property
	section string // a blank line separates sections
}

// specEntries lists the job's properties: each key's property in key
// order, each BOSH-only property after the one it names.
func specEntries() []specEntry {
	var out []specEntry
	var place func(after, section string)
	place = func(after, section string) {
		for i := range BOSHOnly {
			if BOSHOnly[i].After == after {
				out = append(out, specEntry{&BOSHOnly[i], section})
				place(BOSHOnly[i].Name, section)
			}
		}
	}
	for i := range Keys {
		k := &Keys[i]
		if k.BOSH == nil {
			continue
		}
		section, _, _ := strings.Cut(k.Name, ".")
		out = append(out, specEntry{k.BOSH, section})
		place(k.Name, section)
	}
	return out
}

// SpecProperties renders the `properties:` entries of
// jobs/credhub-perf/spec.
func SpecProperties() string {
	var b strings.Builder
	prev := ""
	for i, e := range specEntries() {
		if i > 0 && e.section != prev {
			b.WriteString("\n")
		}
		prev = e.section
		p := e.prop
		fmt.Fprintf(&b, "  %s:\n    description: >-\n", p.Name)
		for _, line := range wrap(p.Description, 72) {
			fmt.Fprintf(&b, "      %s\n", line)
		}
		if p.SpecType != "" {
			fmt.Fprintf(&b, "    type: %s\n", p.SpecType)
		}
		if p.Default != nil {
			fmt.Fprintf(&b, "    default: %s\n", flowYAML(p.Default))
		}
	}
	return b.String()
}

// wrap breaks text into lines of at most width characters (a longer word
// gets a line of its own).
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// flowYAML writes a default on one line: a scalar as YAML quotes it
// (so "0" stays a string), a list in flow style.
func flowYAML(v any) string {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		panic(err)
	}
	if n.Kind == yaml.SequenceNode {
		n.Style = yaml.FlowStyle
	}
	out, err := yaml.Marshal(&n)
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(out))
}

// ruleEntry is one line of the template's rule table.
type ruleEntry struct {
	Key string `json:"key,omitempty"`
	// Prop names the value in errors: the property, else the key.
	Prop string `json:"prop"`
	// Via: config (the value is the key's in the config the template
	// built), flag (the property's, passed by bin/run), derived (the key's
	// if the template wrote it; the property has PropRules of its own),
	// property (a BOSH-only property).
	Via string `json:"via"`
	// Copy: the template's generic loop copies the property to the key.
	Copy      bool   `json:"copy,omitempty"`
	Type      string `json:"type,omitempty"`
	Rules     []Rule `json:"rules,omitempty"`
	PropType  string `json:"prop_type,omitempty"`
	PropRules []Rule `json:"prop_rules,omitempty"`
}

// MarshalJSON writes a rule with only the fields it uses, in the names
// the template's interpreter reads, as erbJSON does.
func (r Rule) MarshalJSON() ([]byte, error) {
	m := map[string]any{"check": r.Check, "msg": r.Msg}
	if r.Min != nil {
		m["min"] = *r.Min
	}
	if r.Max != nil {
		m["max"] = *r.Max
	}
	if r.MinExcl {
		m["min_excl"] = true
	}
	if r.MaxExcl {
		m["max_excl"] = true
	}
	if r.Values != nil {
		m["values"] = r.Values
	}
	if r.Fold {
		m["fold"] = true
	}
	if r.Pattern != "" {
		m["pattern"] = r.Pattern
	}
	if r.Key != "" {
		m["key"] = r.Key
	}
	if r.Items {
		m["items"] = true
	}
	if len(r.When) > 0 {
		var w []map[string]string
		for _, c := range r.When {
			w = append(w, map[string]string{"key": c.Key, "op": c.Op, "value": c.Value})
		}
		m["when"] = w
	}
	if r.Msg2 != "" {
		m["msg2"] = r.Msg2
	}
	if r.Msg3 != "" {
		m["msg3"] = r.Msg3
	}
	return []byte(erbJSON(m)), nil
}

// ruleTable is what the template's interpreter needs: the entries, the
// type and default of every key a condition or a message may name, and
// the property that feeds each key (errors name the property).
func ruleTable() (entries []ruleEntry, types map[string]string, defaults map[string]any, names map[string]string) {
	types, defaults, names = map[string]string{}, map[string]any{}, map[string]string{}
	def := Default()
	for i := range Keys {
		k := &Keys[i]
		types[k.Name] = k.Type
		v := deref(k.field(&def))
		switch x := v.(type) {
		case Duration:
			v = x.String()
		case []string:
			v = append([]string{}, x...) // [], not null
		case []float64:
			v = append([]float64{}, x...)
		}
		defaults[k.Name] = v
		if k.BOSH == nil {
			continue
		}
		p := k.BOSH
		names[k.Name] = p.Name
		e := ruleEntry{Key: k.Name, Prop: p.Name, Via: "config", Type: k.Type, Rules: k.Rules}
		switch p.Via {
		case ViaFlag:
			e.Via = "flag"
			e.Rules = append(append([]Rule{}, k.Rules...), p.Rules...)
		case ViaDerived:
			e.Via = "derived"
			e.PropType, e.PropRules = p.Type, p.Rules
		default:
			e.Rules = append(append([]Rule{}, k.Rules...), p.Rules...)
			e.Copy = p.Via == ViaConfig
		}
		entries = append(entries, e)
	}
	for _, p := range BOSHOnly {
		if len(p.Rules) > 0 {
			entries = append(entries, ruleEntry{Prop: p.Name, Via: "property", PropType: p.Type, PropRules: p.Rules})
		}
	}
	return entries, types, defaults, names
}

// ERBRuleTable renders the rule table that the job's
// validation_properties.yml.erb embeds: JSON in a Ruby heredoc, one entry
// and one rule a line, so a reviewer reads it and a diff shows the rule
// that changed.
func ERBRuleTable() string {
	entries, types, defaults, names := ruleTable()
	var b strings.Builder
	b.WriteString("  table = JSON.parse(<<~'RULES')\n")
	b.WriteString("    {\n")
	b.WriteString("      \"entries\": [\n")
	for i, e := range entries {
		rules, propRules := e.Rules, e.PropRules
		e.Rules, e.PropRules = nil, nil
		line := strings.TrimSuffix(erbJSON(e), "}")
		for _, list := range []struct {
			name  string
			rules []Rule
		}{{"rules", rules}, {"prop_rules", propRules}} {
			if len(list.rules) == 0 {
				continue
			}
			fmt.Fprintf(&b, "        %s,\"%s\":[\n", line, list.name)
			for j, r := range list.rules {
				fmt.Fprintf(&b, "          %s%s\n", erbJSON(r), sep(j, len(list.rules)))
			}
			line = "]"
		}
		fmt.Fprintf(&b, "        %s}%s\n", line, sep(i, len(entries)))
	}
	b.WriteString("      ],\n")
	parts := []struct {
		name string
		m    map[string]any
	}{{"types", anyMap(types)}, {"defaults", defaults}, {"names", anyMap(names)}, {"retired", RetiredProperties()}}
	for i, part := range parts {
		fmt.Fprintf(&b, "      %q: {\n", part.name)
		keys := make([]string, 0, len(part.m))
		for k := range part.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for j, k := range keys {
			fmt.Fprintf(&b, "        %s: %s%s\n", erbJSON(k), erbJSON(part.m[k]), sep(j, len(keys)))
		}
		fmt.Fprintf(&b, "      }%s\n", sep(i, len(parts)))
	}
	b.WriteString("    }\n  RULES\n")
	return b.String()
}

// ERBCopies renders the properties config.yml.erb copies to their keys as
// they are (ViaConfig), in key order: `copied` lists the properties,
// `renamed` the keys whose name differs from their property's.
func ERBCopies() string {
	entries, _, _, _ := ruleTable()
	var props, renamed []string
	for _, e := range entries {
		if !e.Copy {
			continue
		}
		props = append(props, e.Prop)
		if e.Key != e.Prop {
			renamed = append(renamed, fmt.Sprintf("'%s' => '%s'", e.Prop, e.Key))
		}
	}
	var b strings.Builder
	b.WriteString("  copied = %w[\n")
	for _, line := range wrap(strings.Join(props, " "), 72) {
		fmt.Fprintf(&b, "    %s\n", line)
	}
	b.WriteString("  ]\n  renamed = {\n")
	for i, r := range renamed {
		fmt.Fprintf(&b, "    %s%s\n", r, sep(i, len(renamed)))
	}
	b.WriteString("  }\n")
	return b.String()
}

// erbJSON is v as JSON that reads as written (no \u003e for >), with the
// one sequence that would end the ERB tag early, %>, escaped.
func erbJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "%>", `%\u003e`)
}

func sep(i, n int) string {
	if i == n-1 {
		return ""
	}
	return ","
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// CheckProperty checks a property's value (given as YAML) as the template
// does: its type, then its rules (for a property that feeds a key, the
// key's and its own; the key's conditions see credhub-perf's defaults).
// It returns the problems without the name; tests compare it with the
// template.
func CheckProperty(name string, value []byte) ([]string, error) {
	for _, r := range Retired {
		if r.Prop == name {
			return []string{r.Msg}, nil // any value, as the template refuses it
		}
	}
	var p *Property
	var rules []Rule
	typ := ""
	for i := range BOSHOnly {
		if BOSHOnly[i].Name == name {
			p = &BOSHOnly[i]
			typ, rules = p.Type, p.Rules
		}
	}
	for i := range Keys {
		if b := Keys[i].BOSH; b != nil && b.Name == name {
			p = b
			typ, rules = b.Type, b.Rules
			if b.Via != ViaDerived {
				typ, rules = Keys[i].Type, append(append([]Rule{}, Keys[i].Rules...), b.Rules...)
			}
		}
	}
	if p == nil || typ == "" || strings.HasPrefix(typ, "list") {
		return nil, fmt.Errorf("%s is not a property with a single-valued type", name)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(value, &doc); err != nil || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: %q is not one YAML value", name, value)
	}
	n := derefNode(doc.Content[0])
	if n.Kind != yaml.ScalarNode {
		return []string{fmt.Sprintf("expected a single %s, got %s", typ, kindName(n))}, nil
	}
	if err := scalarOK(typ, n); err != nil {
		return []string{err.Error()}, nil
	}
	var v any = n.Value
	switch typ {
	case "int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return nil, err
		}
		v = i
	case "number":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		v = f
	case "bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, err
		}
		v = b
	case "duration":
		d, err := parseDuration(n.Value)
		if err != nil {
			return nil, err
		}
		v = Duration(d)
	}
	def := Default()
	return checkRules(rules, v, def.lookup), nil
}
