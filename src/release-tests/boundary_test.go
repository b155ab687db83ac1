package releasetests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	bitemplate "github.com/cloudfoundry/bosh-cli/v7/templatescompiler"
	bierbrenderer "github.com/cloudfoundry/bosh-cli/v7/templatescompiler/erbrenderer"
	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	biproperty "github.com/cloudfoundry/bosh-utils/property"
	boshsys "github.com/cloudfoundry/bosh-utils/system"
	boshuuid "github.com/cloudfoundry/bosh-utils/uuid"
	"github.com/credhub-perf/credhub-perf/config"
	yamlv2 "gopkg.in/yaml.v2"
	yaml "gopkg.in/yaml.v3"
)

// The job's templates and credhub-perf agree on every key: each BOSH
// property's boundary values (just inside and just outside every bound of
// its rules, enum misses, pattern edges, wrong types) are rendered through
// bosh-cli's ERB renderer and run through config.LoadBytes and Validate;
// both accept, or both refuse naming the same property. The wording may
// differ (the template writes a value as the manifest gave it). The values
// come from the key table itself, so a new key is covered when it is added:
// its own rules' bounds and pattern samples, and at least one of its type's
// wrong-type values (each of those reaches at least one key of the type).
func TestTemplateAndGoAgreeOnEveryKey(t *testing.T) {
	cases := boundaryCases(t)
	if len(cases) < 200 {
		t.Fatalf("only %d boundary cases: the generator lost keys", len(cases))
	}
	// Every property that has rules (its own or its key's) is covered.
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.prop] = true
	}
	for _, k := range config.Keys {
		if k.BOSH != nil && !covered[k.BOSH.Name] {
			t.Errorf("no boundary case for %s (key %s)", k.BOSH.Name, k.Name)
		}
	}
	checkWrongTypesSpread(t, cases)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var problems []string
	accepted, refused := 0, 0
	for _, c := range cases {
		c := c
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			p, ok := compareOne(t, c)
			mu.Lock()
			defer mu.Unlock()
			if p != "" {
				problems = append(problems, p)
			} else if ok {
				accepted++
			} else {
				refused++
			}
		}()
	}
	wg.Wait()
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("%d cases: %d accepted by both, %d refused by both naming the same property", len(cases), accepted, refused)
	if accepted == 0 || refused == 0 {
		t.Fatalf("accepted %d, refused %d: the cases do not reach both sides of the bounds", accepted, refused)
	}
}

// checkWrongTypesSpread: every wrong-type value of a type reaches some
// property of that type, and every property with wrong-type values gets
// at least one of them.
func checkWrongTypesSpread(t *testing.T, cases []boundaryCase) {
	typeOf := map[string]string{}
	for _, k := range config.Keys {
		switch {
		case k.BOSH == nil:
		case k.BOSH.Via == config.ViaDerived:
			typeOf[k.BOSH.Name] = k.BOSH.Type
		default:
			typeOf[k.BOSH.Name] = k.Type
		}
	}
	for _, p := range config.BOSHOnly {
		if len(p.Rules) > 0 {
			typeOf[p.Name] = p.Type
		}
	}
	valueSeen := map[[2]string]bool{}
	propSeen := map[string]bool{}
	for _, c := range cases {
		typ := typeOf[c.prop]
		for _, v := range wrongTypes[typ] {
			if c.value == v {
				valueSeen[[2]string{typ, v}] = true
				propSeen[c.prop] = true
			}
		}
	}
	for prop, typ := range typeOf {
		if len(wrongTypes[typ]) > 0 && !propSeen[prop] {
			t.Errorf("%s (%s) has no wrong-type case", prop, typ)
		}
	}
	for typ, values := range wrongTypes {
		used := false
		for _, ty := range typeOf {
			used = used || ty == typ
		}
		for _, v := range values {
			if used && !valueSeen[[2]string{typ, v}] {
				t.Errorf("wrong-type value %s of %s reaches no property", v, typ)
			}
		}
	}
}

// boundaryCase is one property value in a context (other properties that
// make the value's rules apply, e.g. cleanup.mode: database).
type boundaryCase struct {
	key     string // config key ("" for a BOSH-only property)
	prop    string
	value   string // YAML, as an operator writes it in the manifest
	context map[string]string
}

func (c boundaryCase) String() string {
	var ctx []string
	for k, v := range c.context {
		ctx = append(ctx, k+"="+v)
	}
	sort.Strings(ctx)
	return fmt.Sprintf("%s: %s [%s]", c.prop, c.value, strings.Join(ctx, " "))
}

// contexts make a rule's conditions hold with an otherwise valid job.
var contexts = map[string]map[string]string{
	"scenarios contains custom":        {"scenarios": "[custom]", "custom.path": "/api/v1/data?name=/x"},
	"scenarios contains mix":           {"scenarios": "[mix]", "mix.get": "1"},
	"mix.set eq 0":                     {},
	"mix.interpolate eq 0":             {},
	"steps.rates nonempty":             {"steps.rates": "[10, 20]"},
	"steps.duration eq 0s":             {"steps.duration": `"0"`},
	"tester.count gt 1":                {"tester.count": "2"},
	"cleanup.mode eq database":         {"cleanup.mode": "database", "cleanup.database.type": "postgres", "cleanup.database.host": "db", "cleanup.database.user": "u", "cleanup.database.password": "p"},
	"uaa.url nonempty":                 {"credhub.uaa.url": "https://uaa:8443", "credhub.uaa.client_id": "perf", "credhub.uaa.client_secret": "s"},
	"uaa.allow_plaintext_secret false": {},
	"steps.rates empty":                {},
	"warmup.run eqfold auto":           {},
	"steps.max_concurrency gt 0":       {},
	"tester.start_at nonempty":         {},
	"tester.rendezvous nonempty":       {},
	"tester.run_id nonempty":           {},
}

func condContext(t *testing.T, c config.Cond) map[string]string {
	name := strings.TrimSpace(c.Key + " " + c.Op + " " + c.Value)
	ctx, ok := contexts[name]
	if !ok {
		t.Fatalf("no test context makes %q hold: add one to contexts", name)
	}
	return ctx
}

// wrongTypes are values of another type than the key's.
var wrongTypes = map[string][]string{
	"int":            {"1.5", `"7"`, "abc", "true", "[1]", "{a: 1}"},
	"number":         {`"0.5"`, "abc", "true", "[1]", "{a: 1}"},
	"bool":           {`"yes"`, `"true"`, "1", "[true]", "{a: 1}"},
	"duration":       {"30 seconds", "soon", "true", "[1s]", "{a: 1}", `""`, "1_000s", "1.5.5s", "1e20", "3000000h"},
	"string":         {"[a]", "{a: b}"},
	"list of string": {"a", "[[a]]", "[{a: b}]", "{a: b}"},
	"list of number": {"10", "[a]", "[[1]]", `["1"]`, "{a: 1}"},
}

// patternSamples are values on both sides of a key's pattern.
var patternSamples = map[string][]string{
	"target.url":            {"https://credhub:8844", "https://credhub", "http://credhub:8844", "HTTPS://credhub:8844", "ftp://credhub", "https://", "credhub:8844"},
	"uaa.url":               {"https://uaa:8443", "http://uaa:8080", "HTTP://uaa", "uaa:8443", "https://"},
	"custom.path":           {"/", "/api", "api", `""`},
	"custom.headers":        {`["X-A: 1"]`, `["X-A:"]`, `[": 1"]`, `[" : 1"]`, `["X-A 1"]`, "[]"},
	"label":                 {`""`, strings.Repeat("x", 64), strings.Repeat("x", 65), "a/b", `"a\\b"`, `"tab\there"`, `"del\x7f"`, "2 instances", "ünï"},
	"tester.start_at":       {`""`, `"2026-01-02T15:04:05Z"`, `"2026-01-02T15:04:05.5+01:00"`, `"2026-02-29T00:00:00Z"`, `"2028-02-29T00:00:00Z"`, `"2026-13-01T00:00:00Z"`, `"2026-01-02T24:00:00Z"`, `"2026-01-02 15:04:05Z"`, "tomorrow"},
	"tester.rendezvous":     {"auto", `"off"`, "perf.eu-1", strings.Repeat("r", 100), strings.Repeat("r", 101), "-x", "a/b", `""`},
	"warmup.run":            {"auto", "AUTO", "0", "90s", "1.5", "-5s", "-1", "soon", `""`, "24h", "86400.5", "1000000h"},
	"scenarios":             {"[get]", "[get, set, interpolate, custom]", "[]", "[get, get]", "[delete]", "[GET]"},
	"cleanup.mode":          {"api", "none", "database", "truncate", "API", `""`},
	"cleanup.database.type": {"postgres", "postgresql", "mysql", "mariadb", "oracle", `""`},
	"custom.method":         {"GET", "PATCH", "get", "TRACE"},
	"cleanup.database.host": {"db", `""`},
	"cleanup.database.user": {"u", `""`},
	"cleanup.database.name": {"credhub", `""`},
	"uaa.client_id":         {"perf", `""`},
	"uaa.client_secret":     {"s", `""`},
}

// wrongTypeTarget is a property that takes its share of its type's
// wrong-type values.
type wrongTypeTarget struct {
	key, prop string
	written   map[string]string
}

// boundaryCases derives the cases from the key table. Every key gets its
// own rules' boundary values and its pattern samples; the wrong-type values
// of a type are dealt round the keys of that type (spreadWrongTypes), not
// each one to every key: one Ruby render per case is most of this test's
// time, and a value of the wrong type is refused by the type check every
// key of that type shares.
func boundaryCases(t *testing.T) []boundaryCase {
	var out []boundaryCase
	byType := map[string][]wrongTypeTarget{}
	var types []string
	add := func(key, prop, typ string, rules []config.Rule, values []string) {
		written := writtenWhen(t, key, prop)
		for _, r := range rules {
			ctx := written
			for _, c := range r.When {
				if c.Key == key {
					continue // the value itself decides
				}
				ctx = merge(ctx, condContext(t, c))
			}
			for _, v := range ruleValues(typ, r) {
				out = append(out, boundaryCase{key, prop, v, ctx})
			}
			for _, v := range values {
				out = append(out, boundaryCase{key, prop, v, ctx})
			}
		}
		for _, v := range values {
			out = append(out, boundaryCase{key, prop, v, written})
		}
		if _, ok := byType[typ]; !ok {
			types = append(types, typ)
		}
		byType[typ] = append(byType[typ], wrongTypeTarget{key, prop, written})
	}
	for _, k := range config.Keys {
		if k.BOSH == nil {
			continue
		}
		switch k.BOSH.Via {
		case config.ViaDerived:
			add("", k.BOSH.Name, k.BOSH.Type, k.BOSH.Rules, patternSamples[k.Name])
		default:
			add(k.Name, k.BOSH.Name, k.Type, append(append([]config.Rule{}, k.Rules...), k.BOSH.Rules...), patternSamples[k.Name])
		}
	}
	for _, p := range config.BOSHOnly {
		if len(p.Rules) > 0 {
			add("", p.Name, p.Type, p.Rules, nil)
		}
	}
	for _, typ := range types {
		out = append(out, spreadWrongTypes(byType[typ], wrongTypes[typ])...)
	}
	seen := map[string]bool{}
	var unique []boundaryCase
	for _, c := range out {
		if !seen[c.String()] {
			seen[c.String()] = true
			unique = append(unique, c)
		}
	}
	return unique
}

// spreadWrongTypes deals a type's wrong-type values round the properties
// of that type: every value reaches at least one property and every
// property at least one value (target i%len(targets) takes value
// i%len(values), for i up to the longer of the two).
func spreadWrongTypes(targets []wrongTypeTarget, values []string) []boundaryCase {
	if len(targets) == 0 || len(values) == 0 {
		return nil
	}
	n := len(targets)
	if len(values) > n {
		n = len(values)
	}
	out := make([]boundaryCase, 0, n)
	for i := 0; i < n; i++ {
		w := targets[i%len(targets)]
		out = append(out, boundaryCase{w.key, w.prop, values[i%len(values)], w.written})
	}
	return out
}

// writtenWhen is the context in which the template writes a key at all:
// custom.* with the custom scenario, uaa.* with UAA, the several-tester
// keys with several testers. Elsewhere the value never reaches
// credhub-perf, so neither side checks it. cleanup.database.* is written
// in every mode (credhub-perf warns about it when cleanup.mode is not
// database); its rules apply in database mode only.
func writtenWhen(t *testing.T, key, prop string) map[string]string {
	switch {
	case strings.HasPrefix(key, "custom."):
		return condContext(t, config.Cond{Key: "scenarios", Op: "contains", Value: "custom"})
	case strings.HasPrefix(key, "uaa."):
		return condContext(t, config.Cond{Key: "uaa.url", Op: "nonempty"})
	case key == "tester.scenario_gap", key == "tester.rendezvous_timeout", prop == "tester.start_delay":
		return condContext(t, config.Cond{Key: "tester.count", Op: "gt", Value: "1"})
	}
	return nil
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// ruleValues are the values just inside and just outside a rule's bounds.
func ruleValues(typ string, r config.Rule) []string {
	var out []string
	item := strings.TrimPrefix(typ, "list of ")
	around := func(b float64) []string {
		switch item {
		case "int":
			return []string{ftoa(b - 1), ftoa(b), ftoa(b + 1)}
		case "duration":
			// Bounds are in nanoseconds; 1ms either side.
			return []string{durationText(b - 1e6), durationText(b), durationText(b + 1e6)}
		default:
			return []string{ftoa(b - 0.001), ftoa(b), ftoa(b + 0.001)}
		}
	}
	switch r.Check {
	case "range":
		for _, b := range []*float64{r.Min, r.Max} {
			if b != nil {
				out = append(out, around(*b)...)
			}
		}
	case "enum":
		for _, v := range r.Values {
			out = append(out, v, strings.ToUpper(v), v+"x")
		}
		out = append(out, `""`)
	case "ge_key":
		// The other key is at its BOSH default (steps.min_concurrency 1,
		// steps.max_concurrency 50).
		for _, b := range []float64{1, 50} {
			out = append(out, ftoa(b-1), ftoa(b), ftoa(b+1))
		}
	case "nonempty":
		if strings.HasPrefix(typ, "list") {
			out = append(out, "[]")
		} else {
			out = append(out, `""`, "x")
		}
	case "increasing", "unique":
		out = append(out, "[1, 2]", "[2, 2]", "[2, 1]", "[1]")
	}
	if r.Items && strings.HasPrefix(typ, "list") && r.Check != "increasing" && r.Check != "unique" {
		var lists []string
		for _, v := range out {
			lists = append(lists, "["+v+"]")
			if typ == "list of number" {
				lists = append(lists, "[1000000, "+v+"]") // and after another
			}
		}
		out = lists
	}
	return out
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func durationText(ns float64) string {
	if ns == 0 {
		return `"0"`
	}
	return fmt.Sprintf("%gms", ns/1e6)
}

// baseProps is a valid job: CredHub's URL and a client certificate.
func baseProps() map[string]string {
	return map[string]string{
		"credhub.url":                     "https://credhub.service.cf.internal:8844",
		"credhub.ca_cert":                 strconv.Quote(testCA),
		"credhub.client_cert.certificate": "CERT",
		"credhub.client_cert.private_key": "KEY",
	}
}

// propsYAML nests dotted properties; values are YAML as written.
func propsYAML(t *testing.T, props map[string]string) string {
	root := map[interface{}]interface{}{}
	for name, text := range props {
		var v interface{}
		if err := yamlv2.Unmarshal([]byte("v: "+text), &struct{ V *interface{} }{&v}); err != nil {
			t.Fatalf("%s: %q is not YAML: %v", name, text, err)
		}
		m := root
		parts := strings.Split(name, ".")
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[interface{}]interface{})
			if !ok {
				sub = map[interface{}]interface{}{}
				m[p] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = v
	}
	b, err := yamlv2.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// renderOne renders one template of the job alone (one ruby process).
func renderOne(t *testing.T, props, template string) (string, error) {
	job := loadJob(t, "credhub-perf")
	logger := boshlog.NewLogger(boshlog.LevelNone)
	fs := boshsys.NewOsFileSystem(logger)
	built := buildProps(t, props)
	ctx := bitemplate.NewJobEvaluationContext(*job, &built, biproperty.Map{}, biproperty.Map{}, "credhub", "", boshuuid.NewGenerator(), logger)
	erb := bierbrenderer.NewERBRenderer(fs, boshsys.NewExecCmdRunner(logger), logger)
	out := filepath.Join(t.TempDir(), "config.yml")
	if err := erb.Render(filepath.Join(job.ExtractedPath(), "templates", template), out, ctx); err != nil {
		return "", err
	}
	b, err := os.ReadFile(out)
	return string(b), err
}

var renderErr = regexp.MustCompile(`erb-render\.rb: (.*) \(RuntimeError\)`)

// templateMessage is the template's one-line refusal.
func templateMessage(err error) (string, bool) {
	m := renderErr.FindStringSubmatch(err.Error())
	if m == nil {
		return "", false
	}
	// Ruby doubles backslashes when it prints an error.
	return strings.ReplaceAll(m[1], `\\`, `\`), true
}

// errandOnly are the checks only credhub-perf makes, when the errand
// starts (docs/design.md, "Checked when the errand starts"): the template
// accepts what they refuse.
var errandOnly = []*regexp.Regexp{
	regexp.MustCompile(`^tester\.scenario_gap: \S+ is too short with several testers and scenarios`),
	// The ramp's size and the start time's horizon: several keys
	// together, and the time the run starts.
	regexp.MustCompile(`^steps\.step: makes \d+ steps from \d+ to \d+; a ramp has at most 10000`),
	regexp.MustCompile(`^steps\.duration: \d+ steps of \S+ \(plus \S+ warm-up each\) take \S+; a ramp takes at most 168h`),
	regexp.MustCompile(`^tester\.start_at: \S+ is more than 7 days \(168h\) ahead`),
}

// goConfig is the rendered config as credhub-perf reads it on the tester:
// the key files exist, and bin/run's --tester.rendezvous is given with
// several testers.
func goConfig(t *testing.T, rendered string) map[string]interface{} {
	var cfg map[string]interface{}
	if err := yaml.Unmarshal([]byte(rendered), &cfg); err != nil {
		t.Fatalf("rendered config is not YAML: %v", err)
	}
	dir := t.TempDir()
	for _, path := range [][]string{{"target", "ca_cert_file"}, {"target", "client_cert_file"}, {"target", "client_key_file"}, {"uaa", "ca_cert_file"}, {"cleanup", "database", "ca_cert_file"}} {
		m := cfg
		for _, p := range path[:len(path)-1] {
			m, _ = m[p].(map[string]interface{})
		}
		if m == nil || m[path[len(path)-1]] == "" || m[path[len(path)-1]] == nil {
			continue
		}
		f := filepath.Join(dir, strings.Join(path, "-"))
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		m[path[len(path)-1]] = f
	}
	if tester, ok := cfg["tester"].(map[string]interface{}); ok && tester["count"] != 1 {
		tester["rendezvous"] = "credhub-credhub-perf"
	}
	return cfg
}

// setKey puts a property's value at a config key as it reaches the
// template: parsed by bosh-cli (yaml.v2), passed to Ruby as JSON (numbers
// keep their JSON text: 1e20 arrives as 100000000000000000000), written
// back as YAML.
func setKey(t *testing.T, cfg map[string]interface{}, key, text string) {
	var v2 interface{}
	if err := yamlv2.Unmarshal([]byte("v: "+text), &struct{ V *interface{} }{&v2}); err != nil {
		t.Fatal(err)
	}
	built, err := biproperty.Build(v2)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(built)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v interface{}
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(key, ".")
	m := cfg
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]interface{})
		if !ok {
			sub = map[string]interface{}{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = asYAML(v)
}

// asYAML keeps a JSON number's text in the YAML written.
func asYAML(v interface{}) interface{} {
	switch x := v.(type) {
	case json.Number:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: x.String()}
	case []interface{}:
		for i := range x {
			x[i] = asYAML(x[i])
		}
	case map[string]interface{}:
		for k := range x {
			x[k] = asYAML(x[k])
		}
	}
	return v
}

// goMessages runs a config document through credhub-perf: the loader's
// error, else Validate's, each as "KEY: message" without the file's name
// and line.
func goMessages(doc []byte) []string {
	c := config.Default()
	if err := config.LoadBytes(&c, doc, "config.yml"); err != nil {
		msg := strings.TrimPrefix(err.Error(), "config file config.yml: ")
		return []string{regexp.MustCompile(` \(line \d+\)$`).ReplaceAllString(msg, "")}
	}
	var out []string
	for _, e := range c.Validate(false) {
		out = append(out, e.Error())
	}
	return out
}

// inProperties writes a Go message the way the template names things: the
// BOSH property of each key it mentions.
func inProperties(msg string) string {
	for _, k := range config.Keys {
		if k.BOSH != nil && k.BOSH.Name != k.Name {
			re := regexp.MustCompile(`(^|[^a-z_.])` + regexp.QuoteMeta(k.Name) + `($|[^a-z_])`)
			msg = re.ReplaceAllString(msg, "${1}"+k.BOSH.Name+"${2}")
		}
	}
	return msg
}

// compareOne renders and validates one case: a problem, or whether both
// accepted.
func compareOne(t *testing.T, c boundaryCase) (problem string, accepted bool) {
	props := merge(baseProps(), c.context)
	base, err := baseConfig(t, props)
	if err != nil {
		return fmt.Sprintf("%s: %v", c, err), false
	}
	props[c.prop] = c.value
	_, renderErr := renderOne(t, propsYAML(t, props), "config/validation_properties.yml.erb")

	var goMsgs []string
	if c.key != "" {
		cfg := goConfig(t, base)
		setKey(t, cfg, c.key, c.value)
		for _, m := range goMessages(mustYAML(t, cfg)) {
			goMsgs = append(goMsgs, inProperties(m))
		}
		// Rules of the BOSH property alone (credhub.url: https only).
		if k := keyByName(c.key); len(goMsgs) == 0 && len(k.BOSH.Rules) > 0 {
			msgs, err := config.CheckProperty(c.prop, []byte(c.value))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				goMsgs = append(goMsgs, c.prop+": "+inProperties(m))
			}
		}
	} else {
		// A derived or BOSH-only property: its type and own rules, in Go.
		msgs, err := config.CheckProperty(c.prop, []byte(c.value))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			goMsgs = append(goMsgs, c.prop+": "+m)
		}
	}
	if renderErr == nil && len(goMsgs) == 1 {
		for _, re := range errandOnly {
			if re.MatchString(goMsgs[0]) {
				return "", true
			}
		}
	}

	switch {
	case renderErr == nil && len(goMsgs) == 0:
		return "", true
	case renderErr == nil:
		return fmt.Sprintf("%s: the template accepts, credhub-perf refuses: %v", c, goMsgs), false
	case len(goMsgs) == 0:
		return fmt.Sprintf("%s: credhub-perf accepts, the template refuses: %v", c, renderErr), false
	}
	msg, ok := templateMessage(renderErr)
	if !ok {
		return fmt.Sprintf("%s: the template's error is not one line naming a property: %v", c, renderErr), false
	}
	named, problem, _ := strings.Cut(msg, ": ")
	if strings.TrimSpace(problem) == "" {
		return fmt.Sprintf("%s: the template names %s but not the problem: %s", c, named, msg), false
	}
	for _, g := range goMsgs {
		if goNamed, _, _ := strings.Cut(g, ": "); goNamed == named {
			return "", false
		}
	}
	return fmt.Sprintf("%s: both refuse, naming different properties:\n  template:     %s\n  credhub-perf: %s", c, msg, strings.Join(goMsgs, "\n                ")), false
}

func keyByName(name string) *config.Key {
	for i := range config.Keys {
		if config.Keys[i].Name == name {
			return &config.Keys[i]
		}
	}
	return nil
}

var baseCache sync.Map // props YAML -> rendered config

// baseConfig renders a context alone, which both sides must accept.
func baseConfig(t *testing.T, props map[string]string) (string, error) {
	key := propsYAML(t, props)
	if v, ok := baseCache.Load(key); ok {
		return v.(string), nil
	}
	base, err := renderOne(t, key, "config/config.yml.erb")
	if err != nil {
		return "", fmt.Errorf("the context alone does not render: %v", err)
	}
	if msgs := goMessages(mustYAML(t, goConfig(t, base))); len(msgs) > 0 {
		return "", fmt.Errorf("credhub-perf refuses the context alone: %v", msgs)
	}
	baseCache.Store(key, base)
	return base, nil
}

func mustYAML(t *testing.T, v interface{}) []byte {
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
