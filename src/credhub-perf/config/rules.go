package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rule is one check of one key's value. Rules are data, not code, because
// two interpreters run them: Go here (Validate, and CheckProperty for the
// BOSH-only properties), and the generic Ruby loop in the BOSH job's
// validation_properties.yml.erb, which gets them as a generated table
// (ERBRuleTable), so a bad property fails `bosh deploy` instead of the
// errand. The two agree on the verdict and on the property a message
// names; the template's wording of a value may differ (it writes the
// value as the manifest gave it).
//
// Msg placeholders: {v} the value (in Go: a string quoted as %q, an int in
// decimal, a number as %g, a duration as time.Duration prints it), {raw}
// the value as written (trimmed), {i} a list item's 1-based position,
// {prev} and {prev_i} the item before it, {other} the value of Key,
// {k:NAME} the name of key NAME (in the template: the BOSH property that
// feeds it).
type Rule struct {
	// Check is one of:
	//   range            Min <= v <= Max (MinExcl/MaxExcl make it strict;
	//                    nil bound = unbounded); durations in nanoseconds
	//   nonempty         a string or list that is not empty
	//   enum             v is one of Values (Fold: case-insensitively)
	//   pattern          Pattern matches v
	//   not_pattern      Pattern does not match v
	//   ge_key           v >= the value of Key
	//   increasing       a list item is above the one before it
	//   unique           a list item does not repeat an earlier one
	//   rfc3339          v is an RFC 3339 time (time.RFC3339)
	//   auto_or_duration v is "auto" (any case) or a duration >= 0 (and
	//                    <= Max, in nanoseconds, when set); Msg when it
	//                    is neither, Msg2 when it is negative, Msg3 when
	//                    it is above Max
	Check   string
	Min     *float64
	Max     *float64
	MinExcl bool
	MaxExcl bool
	Values  []string
	Fold    bool
	// Pattern uses the syntax Go's regexp and Ruby share: \A and \z
	// anchors, classes, (?i:...) groups; no look-around, no \s or \d
	// differences that matter (write classes out).
	Pattern string
	Key     string
	// Items applies the rule to each item of a list (the first rule an
	// item fails is reported, once per item).
	Items bool
	When  []Cond
	Msg   string
	Msg2  string
	Msg3  string
}

// Cond makes a rule apply only when another key's value (the default when
// the key is not set) satisfies Op: empty, nonempty, eq (Value), eqfold
// (Value, any case), contains (a list holds Value), gt (a number above
// Value) or false (a boolean).
type Cond struct {
	Key   string
	Op    string
	Value string
}

func num(f float64) *float64 { return &f }

// Shorthands for the key table.
func atLeast(n float64, msg string) Rule { return Rule{Check: "range", Min: num(n), Msg: msg} }
func above(n float64, msg string) Rule {
	return Rule{Check: "range", Min: num(n), MinExcl: true, Msg: msg}
}
func between(lo, hi float64, msg string) Rule {
	return Rule{Check: "range", Min: num(lo), Max: num(hi), Msg: msg}
}
func when(r Rule, c ...Cond) Rule { r.When = append(r.When, c...); return r }

var (
	patternMu    sync.Mutex
	patternCache = map[string]*regexp.Regexp{}
)

func compiled(p string) *regexp.Regexp {
	patternMu.Lock()
	defer patternMu.Unlock()
	re, ok := patternCache[p]
	if !ok {
		re = regexp.MustCompile(p)
		patternCache[p] = re
	}
	return re
}

// lookup gives a key's value in c as a plain value: string, int64,
// float64, bool, Duration, []string or []float64.
type lookup func(key string) (any, bool)

func (c *Config) lookup(key string) (any, bool) {
	k := keyByName(key)
	if k == nil {
		return nil, false
	}
	return deref(k.field(c)), true
}

// deref turns a field pointer into its value.
func deref(p any) any {
	switch v := p.(type) {
	case *string:
		return *v
	case *int:
		return int64(*v)
	case *float64:
		return *v
	case *bool:
		return *v
	case *Duration:
		return *v
	case *[]string:
		return *v
	case *[]float64:
		return *v
	}
	panic(fmt.Sprintf("config: field of type %T", p))
}

// holds reports whether every condition is true.
func holds(conds []Cond, get lookup) bool {
	for _, c := range conds {
		v, ok := get(c.Key)
		if !ok {
			return false
		}
		if !condHolds(c, v) {
			return false
		}
	}
	return true
}

func condHolds(c Cond, v any) bool {
	switch c.Op {
	case "empty", "nonempty":
		empty := false
		switch x := v.(type) {
		case string:
			empty = x == ""
		case []string:
			empty = len(x) == 0
		case []float64:
			empty = len(x) == 0
		}
		return empty == (c.Op == "empty")
	case "eq":
		return fmt.Sprint(v) == c.Value
	case "eqfold":
		s, _ := v.(string)
		return strings.EqualFold(strings.TrimSpace(s), c.Value)
	case "contains":
		for _, s := range v.([]string) {
			if s == c.Value {
				return true
			}
		}
		return false
	case "gt":
		f, _ := strconv.ParseFloat(c.Value, 64)
		n, ok := number(v)
		return ok && n > f
	case "false":
		b, ok := v.(bool)
		return ok && !b
	}
	panic("config: unknown condition " + c.Op)
}

// number is a value as a float64 for range checks (durations in ns).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case Duration:
		return float64(x), true
	}
	return 0, false
}

// formatValue is {v}: how Validate has always printed each type.
func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case Duration:
		return time.Duration(x).String()
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

var msgField = regexp.MustCompile(`\{(k:[a-z0-9_.]+|[a-z_]+)\}`)

// message fills a rule's message in one pass (a value that holds a
// placeholder's text stays as it is).
func message(msg string, vals map[string]string) string {
	return msgField.ReplaceAllStringFunc(msg, func(m string) string {
		p := m[1 : len(m)-1]
		if name, ok := strings.CutPrefix(p, "k:"); ok {
			return name
		}
		if v, ok := vals[p]; ok {
			return v
		}
		return m
	})
}

// checkRules runs rules on one value (of a key or a property) and returns
// the problems, each without the name in front.
func checkRules(rules []Rule, v any, get lookup) []string {
	var out []string
	// A list's item rules run per item; the others on the whole value.
	var itemRules []Rule
	for _, r := range rules {
		if !holds(r.When, get) {
			continue
		}
		if r.Items {
			itemRules = append(itemRules, r)
			continue
		}
		if msg, bad := checkOne(r, v, get, nil); bad {
			return []string{msg} // the first broken rule of a key says enough
		}
	}
	if len(itemRules) == 0 {
		return out
	}
	var items []any
	switch x := v.(type) {
	case []string:
		for _, s := range x {
			items = append(items, s)
		}
	case []float64:
		for _, f := range x {
			items = append(items, f)
		}
	}
	for i := range items {
		if msg, bad := checkItem(itemRules, items, i, get); bad {
			out = append(out, msg)
		}
	}
	return out
}

// checkItem runs the item rules on items[i]: the first it breaks.
func checkItem(rules []Rule, items []any, i int, get lookup) (string, bool) {
	item := items[i]
	for _, r := range rules {
		vals := map[string]string{"v": formatValue(item), "i": strconv.Itoa(i + 1)}
		switch r.Check {
		case "increasing":
			if i == 0 {
				continue
			}
			a, _ := number(items[i-1])
			b, _ := number(item)
			vals["prev"], vals["prev_i"] = formatValue(items[i-1]), strconv.Itoa(i)
			if !(b > a) {
				return message(r.Msg, vals), true
			}
		case "unique":
			for _, p := range items[:i] {
				if p == item {
					return message(r.Msg, vals), true
				}
			}
		default:
			if msg, bad := checkOne(r, item, get, vals); bad {
				return msg, true
			}
		}
	}
	return "", false
}

// checkOne runs one rule on one (non-list, or whole-list) value.
func checkOne(r Rule, v any, get lookup, extra map[string]string) (string, bool) {
	vals := map[string]string{"v": formatValue(v)}
	for k, x := range extra {
		vals[k] = x
	}
	bad := false
	switch r.Check {
	case "range":
		n, _ := number(v)
		ok := true
		if r.Min != nil {
			ok = ok && (n > *r.Min || (!r.MinExcl && n == *r.Min))
		}
		if r.Max != nil {
			ok = ok && (n < *r.Max || (!r.MaxExcl && n == *r.Max))
		}
		bad = !ok
	case "nonempty":
		bad = !condHolds(Cond{Op: "nonempty"}, v)
	case "enum":
		s, _ := v.(string)
		bad = true
		for _, e := range r.Values {
			if s == e || (r.Fold && strings.EqualFold(s, e)) {
				bad = false
			}
		}
	case "pattern", "not_pattern":
		s, _ := v.(string)
		bad = compiled(r.Pattern).MatchString(s) == (r.Check == "not_pattern")
	case "ge_key":
		other, _ := get(r.Key)
		a, _ := number(v)
		b, _ := number(other)
		vals["other"] = formatValue(other)
		bad = !(a >= b)
	case "rfc3339":
		s, _ := v.(string)
		_, err := time.Parse(time.RFC3339, s)
		bad = err != nil
	case "auto_or_duration":
		s, _ := v.(string)
		raw := strings.TrimSpace(s)
		vals["raw"] = raw
		if strings.EqualFold(raw, "auto") {
			return "", false
		}
		d, err := parseDuration(raw)
		switch {
		case err != nil || raw == "":
			return message(r.Msg, vals), true
		case d < 0:
			return message(r.Msg2, vals), true
		case r.Max != nil && float64(d) > *r.Max:
			return message(r.Msg3, vals), true
		}
	default:
		panic("config: unknown rule " + r.Check)
	}
	if !bad {
		return "", false
	}
	return message(r.Msg, vals), true
}
