package releasetests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/config"
	yaml "gopkg.in/yaml.v3"
)

// testCA parses: the templates check every CA at render time.
var testCA = fakeCA("TEST-SERVER-CA")

const (
	testCert = "-----BEGIN CERTIFICATE-----\nTEST-CLIENT-CERT\n-----END CERTIFICATE-----"
	testKey  = "-----BEGIN PRIVATE KEY-----\nTEST-CLIENT-KEY\n-----END PRIVATE KEY-----"
	jobDir   = "/var/vcap/jobs/credhub-perf"
)

// minimalProps is the least an operator must set: where CredHub is and a
// client certificate.
func minimalProps(extra string) string {
	return `
credhub:
  url: https://credhub.service.cf.internal:8844
  ca_cert: |
    ` + strings.ReplaceAll(testCA, "\n", "\n    ") + `
  client_cert:
    certificate: |
      ` + strings.ReplaceAll(testCert, "\n", "\n      ") + `
    private_key: |
      ` + strings.ReplaceAll(testKey, "\n", "\n      ") + `
` + extra
}

func readRendered(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("rendered file %s: %v", name, err)
	}
	return string(b)
}

func renderedConfig(t *testing.T, dir string) map[string]interface{} {
	t.Helper()
	var cfg map[string]interface{}
	if err := yaml.Unmarshal([]byte(readRendered(t, dir, "config/config.yml")), &cfg); err != nil {
		t.Fatalf("rendered config.yml is not YAML: %v", err)
	}
	return cfg
}

// linkedConfig is config.yml rendered with props and links, parsed; the
// job's checks must pass with them.
func linkedConfig(t *testing.T, props string, spec instanceSpec, links map[string]interface{}) map[string]interface{} {
	t.Helper()
	if _, err := renderWithLinks(t, "credhub-perf", "config/validation_properties.yml.erb", props, spec, links); err != nil {
		t.Fatalf("the job's checks refuse: %v", err)
	}
	out, err := renderWithLinks(t, "credhub-perf", "config/config.yml.erb", props, spec, links)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]interface{}
	if err := yaml.Unmarshal([]byte(out), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// get walks a dotted key through nested maps.
func get(t *testing.T, cfg map[string]interface{}, key string) interface{} {
	t.Helper()
	var cur interface{} = cfg
	for _, k := range strings.Split(key, ".") {
		m, ok := cur.(map[string]interface{})
		if !ok {
			t.Fatalf("config key %s: %T is not a map at %q", key, cur, k)
		}
		if cur, ok = m[k]; !ok {
			t.Fatalf("config key %s missing (at %q); have %v", key, k, keysOf(m))
		}
	}
	return cur
}

func keysOf(m map[string]interface{}) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// leafKeys lists the dotted keys of every scalar or list in a config.
func leafKeys(prefix string, v interface{}, out *[]string) {
	if m, ok := v.(map[string]interface{}); ok {
		for k, sub := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			leafKeys(p, sub, out)
		}
		return
	}
	*out = append(*out, prefix)
}

// documentedKeys reads the key table of docs/configuration.md, the
// contract of credhub-perf's config file.
func documentedKeys(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "configuration.md"))
	if err != nil {
		t.Fatalf("docs/configuration.md (credhub-perf's config contract): %v", err)
	}
	// Only the generated key table: the same file also lists the BOSH job's
	// properties, whose names are not all keys credhub-perf reads.
	doc := string(b)
	begin, end := strings.Index(doc, "<!-- BEGIN GENERATED KEY TABLE"), strings.Index(doc, "<!-- END GENERATED KEY TABLE -->")
	if begin < 0 || end < begin {
		t.Fatalf("docs/configuration.md lacks its generated key table markers")
	}
	keys := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9_.]+)` \\|").FindAllStringSubmatch(doc[begin:end], -1) {
		keys[m[1]] = true
	}
	if len(keys) < 20 {
		t.Fatalf("docs/configuration.md: found only %d keys in its key table", len(keys))
	}
	return keys
}

func assertEqual(t *testing.T, what string, got, want interface{}) {
	t.Helper()
	if !equalValues(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

func equalValues(a, b interface{}) bool {
	switch av := a.(type) {
	case []interface{}:
		bv, ok := b.([]interface{})
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !equalValues(av[i], bv[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func TestTemplatesDefaults(t *testing.T) {
	dir, err := renderJobCreateEnv(t, "credhub-perf", minimalProps(""))
	if err != nil {
		t.Fatalf("render with minimal properties: %v", err)
	}
	cfg := renderedConfig(t, dir)

	want := map[string]interface{}{
		"target.url":                "https://credhub.service.cf.internal:8844",
		"target.ca_cert_file":       jobDir + "/config/ca.crt",
		"target.client_cert_file":   jobDir + "/config/client.crt",
		"target.client_key_file":    jobDir + "/config/client.key",
		"target.server_name":        "",
		"target.timeout":            "30s",
		"scenarios":                 []interface{}{"get", "set", "interpolate"},
		"steps.min_concurrency":     1,
		"steps.max_concurrency":     50,
		"steps.step":                5,
		"steps.requests":            1000,
		"steps.duration":            "30s",
		"steps.warmup":              "5s",
		"keepalive":                 true,
		"warmup.run":                "auto",
		"warmup.concurrency":        0,
		"warmup.max":                "5m",
		"saturation.max_tester_cpu": 0.8,
		"saturation.max_host_cpu":   0.9,
		"saturation.max_steal":      0.1,
		"seed.credentials":          100,
		"seed.bytes":                1024,
		"cleanup.mode":              "api",
		"slo.percentile":            95,
		"slo.latency":               "100ms",
		"slo.max_error_rate":        0.01,
		"abort.max_error_rate":      0.1,
		"abort.max_latency":         "5s",
		"abort.percentile":          99,
		"abort.consecutive_steps":   2,
		"label":                     "",
		"instances":                 0,
		"output_dir":                "/var/vcap/sys/log/credhub-perf",
		"tester.index":              0,
		"tester.count":              1,
	}
	for k, v := range want {
		assertEqual(t, k, get(t, cfg, k), v)
	}
	for _, absent := range []string{"uaa", "custom"} {
		if _, ok := cfg[absent]; ok {
			t.Errorf("config has %q although nothing configured it", absent)
		}
	}
	// The database block is written in every mode (credhub-perf warns about
	// settings that do nothing); untouched, it holds credhub-perf's defaults.
	for k, v := range map[string]interface{}{"type": "", "host": "", "port": 0, "user": "", "password": "", "name": "credhub", "tls": false, "ca_cert_file": ""} {
		assertEqual(t, "cleanup.database."+k, get(t, cfg, "cleanup.database."+k), v)
	}

	// Every key the template writes must be one credhub-perf knows:
	// it rejects unknown keys.
	documented := documentedKeys(t)
	var leaves []string
	leafKeys("", cfg, &leaves)
	for _, k := range leaves {
		if !documented[k] {
			t.Errorf("rendered config key %q is not in docs/configuration.md", k)
		}
	}

	assertEqual(t, "ca.crt", readRendered(t, dir, "config/ca.crt"), testCA+"\n")
	assertEqual(t, "client.crt", readRendered(t, dir, "config/client.crt"), testCert+"\n")
	assertEqual(t, "client.key", readRendered(t, dir, "config/client.key"), testKey+"\n")
	assertEqual(t, "uaa-ca.crt", readRendered(t, dir, "config/uaa-ca.crt"), "")
	assertEqual(t, "monit", readRendered(t, dir, "monit"), "")

	run := readRendered(t, dir, "bin/run")
	for _, want := range []string{
		"#!/usr/bin/env bash",
		"log_dir=/var/vcap/sys/log/credhub-perf",
		`chmod 0600 "$job_dir/config/client.key" "$config"`,
		"start_at=''\n",
		`args=(run --config "$config" --quiet)`,
		`exit "$status"`,
	} {
		if !strings.Contains(run, want) {
			t.Errorf("bin/run lacks %q", want)
		}
	}
	for _, secret := range []string{"TEST-CLIENT-KEY", "TEST-CLIENT-CERT"} {
		for _, f := range []string{"bin/run", "config/config.yml"} {
			if strings.Contains(readRendered(t, dir, f), secret) {
				t.Errorf("%s contains %s: key material belongs in its own file", f, secret)
			}
		}
	}

	// The per-instance renderer used by the other tests must agree with
	// create-env's JobRenderer.
	dir2, err := renderJob(t, "credhub-perf", minimalProps(""), instanceSpec{Index: 0, Bootstrap: true})
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "config.yml via per-instance renderer", readRendered(t, dir2, "config/config.yml"), readRendered(t, dir, "config/config.yml"))

	// One tester: bin/run reads index 0 of 1 from config.yml and passes
	// neither a start time nor a rendezvous.
	out, args, logDir := runErrandScript(t, dir2)
	assertEqual(t, "credhub-perf's arguments", args, "run --config "+filepath.Join(dir2, "config", "config.yml")+" --quiet")
	if _, err := os.Stat(filepath.Join(logDir, "credhub-perf-0.stdout.log")); err != nil {
		t.Errorf("bin/run did not log as tester 0: %v\n%s", err, out)
	}
}

// runErrandScript runs a rendered bin/run with credhub-perf replaced by a
// stand-in that records its arguments, the job directory and the log
// directory moved into temporary directories: what the script works out
// when the errand runs (the tester identity it reads from config.yml, the
// start time, the rendezvous). It returns the script's output,
// credhub-perf's arguments and the log directory.
func runErrandScript(t *testing.T, dir string) (out, args, logDir string) {
	t.Helper()
	tmp := t.TempDir()
	bin, logDir, argsFile := filepath.Join(tmp, "bin"), filepath.Join(tmp, "log"), filepath.Join(tmp, "args")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stub := "#!/bin/sh\nprintf '%s\\n' \"$*\" > '" + argsFile + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "credhub-perf"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	script := readRendered(t, dir, "bin/run")
	for _, r := range [][2]string{
		{"/var/vcap/packages/credhub-perf/bin", bin},
		{"job_dir=/var/vcap/jobs/credhub-perf", "job_dir=" + dir},
		{"log_dir=/var/vcap/sys/log/credhub-perf", "log_dir=" + logDir},
	} {
		if !strings.Contains(script, r[0]) {
			t.Fatalf("bin/run lacks %q", r[0])
		}
		script = strings.ReplaceAll(script, r[0], r[1])
	}
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bin/run: %v\n%s", err, b)
	}
	a, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatalf("bin/run did not start credhub-perf: %v\n%s", err, b)
	}
	return string(b), strings.TrimSpace(string(a)), logDir
}

func TestTemplatesOverrides(t *testing.T) {
	dir, err := renderJob(t, "credhub-perf", minimalProps(`
  label: 4-instances
  instances: 4
  server_name: credhub.internal
  timeout: 10s
scenarios: [interpolate, custom, mix]
mix: {get: 80, set: 5, interpolate: 15}
custom:
  method: POST
  path: /api/v1/interpolate
  body: '{"x":[]}'
  headers: ["X-Test: 1"]
steps:
  min_concurrency: 2
  max_concurrency: 40
  step: 2
  duration: 10s
  requests: 500
  warmup: 0s
  rates: [100, 200.5]
keepalive: false
warmup: {run: 45s, concurrency: 3, max: 1m}
saturation: {max_tester_cpu: 0.7, max_host_cpu: 1, max_steal: 0.2}
seed: {credentials: 5000, bytes: 4096}
slo: {percentile: 99.9, latency: 250ms, max_error_rate: 0.02}
abort: {max_error_rate: 1, max_latency: "0", percentile: 95, consecutive_steps: 3}
tester: {fast_http: true}
`), instanceSpec{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	cfg := renderedConfig(t, dir)
	for k, v := range map[string]interface{}{
		"label":                     "4-instances",
		"instances":                 4,
		"target.server_name":        "credhub.internal",
		"target.timeout":            "10s",
		"scenarios":                 []interface{}{"interpolate", "custom", "mix"},
		"mix.get":                   80,
		"mix.set":                   5,
		"mix.interpolate":           15,
		"custom.method":             "POST",
		"custom.path":               "/api/v1/interpolate",
		"custom.body":               `{"x":[]}`,
		"custom.headers":            []interface{}{"X-Test: 1"},
		"steps.min_concurrency":     2,
		"steps.max_concurrency":     40,
		"steps.step":                2,
		"steps.duration":            "10s",
		"steps.requests":            500,
		"steps.warmup":              "0s",
		"steps.rates":               []interface{}{100, 200.5},
		"keepalive":                 false,
		"warmup.run":                "45s",
		"warmup.concurrency":        3,
		"warmup.max":                "1m",
		"saturation.max_tester_cpu": 0.7,
		"saturation.max_host_cpu":   1,
		"saturation.max_steal":      0.2,
		"seed.credentials":          5000,
		"seed.bytes":                4096,
		"slo.percentile":            99.9,
		"slo.latency":               "250ms",
		"slo.max_error_rate":        0.02,
		"abort.max_error_rate":      1,
		"abort.max_latency":         "0",
		"abort.consecutive_steps":   3,
		"tester.fast_http":          true,
	} {
		assertEqual(t, k, get(t, cfg, k), v)
	}
}

func TestTemplatesDatabaseCleanupAndUAA(t *testing.T) {
	const secret = "db-Pa55-word"
	uaaCA, dbCA := fakeCA("UAA-CA"), fakeCA("DB-CA")
	dir, err := renderJob(t, "credhub-perf", `
credhub:
  url: https://10.0.0.9:8844
  uaa:
    url: https://uaa.service.cf.internal:8443
    client_id: credhub_perf
    client_secret: uaa-secret
    ca_cert: `+strconv.Quote(uaaCA)+`
cleanup:
  mode: database
  database:
    type: mysql
    host: 10.0.16.5
    port: 3306
    user: credhub
    password: `+secret+`
    tls: true
    ca_cert: `+strconv.Quote(dbCA)+`
`, instanceSpec{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	cfg := renderedConfig(t, dir)
	for k, v := range map[string]interface{}{
		"target.ca_cert_file":           "",
		"target.client_cert_file":       "",
		"target.client_key_file":        "",
		"uaa.url":                       "https://uaa.service.cf.internal:8443",
		"uaa.client_id":                 "credhub_perf",
		"uaa.client_secret":             "uaa-secret",
		"uaa.ca_cert_file":              jobDir + "/config/uaa-ca.crt",
		"uaa.allow_plaintext_secret":    false,
		"cleanup.mode":                  "database",
		"cleanup.database.type":         "mysql",
		"cleanup.database.host":         "10.0.16.5",
		"cleanup.database.port":         3306,
		"cleanup.database.user":         "credhub",
		"cleanup.database.password":     secret,
		"cleanup.database.name":         "credhub",
		"cleanup.database.tls":          true,
		"cleanup.database.ca_cert_file": jobDir + "/config/database-ca.crt",
	} {
		assertEqual(t, k, get(t, cfg, k), v)
	}
	assertEqual(t, "uaa-ca.crt", readRendered(t, dir, "config/uaa-ca.crt"), uaaCA+"\n")
	assertEqual(t, "database-ca.crt", readRendered(t, dir, "config/database-ca.crt"), dbCA+"\n")
	assertEqual(t, "client.key", readRendered(t, dir, "config/client.key"), "")
	if strings.Contains(readRendered(t, dir, "bin/run"), secret) {
		t.Error("bin/run contains the database password")
	}
}

// UAA over http:// renders only with the key that says what it does, and
// the run then sees that key (it warns and records it in meta.json).
func TestTemplatesUAAPlaintextAllowed(t *testing.T) {
	dir, err := renderJob(t, "credhub-perf", `
credhub:
  url: https://10.0.0.9:8844
  uaa:
    url: http://uaa.test.internal:8080
    client_id: credhub_perf
    client_secret: uaa-secret
    allow_plaintext_secret: true
`, instanceSpec{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	cfg := renderedConfig(t, dir)
	assertEqual(t, "uaa.url", get(t, cfg, "uaa.url"), "http://uaa.test.internal:8080")
	assertEqual(t, "uaa.allow_plaintext_secret", get(t, cfg, "uaa.allow_plaintext_secret"), true)
}

func TestTemplatesRequiredAndInvalid(t *testing.T) {
	cases := []struct {
		name, props, wantInError string
	}{
		{"no url", `credhub: {client_cert: {certificate: C, private_key: K}}`, "credhub.url: is required"},
		{"plain http url", `credhub: {url: "http://x:8844", client_cert: {certificate: C, private_key: K}}`, `credhub.url: "http://x:8844" must start with https://`},
		{"no credential", `credhub: {url: "https://x:8844"}`, "credhub.client_cert: is required unless credhub.uaa.client_id is set"},
		{"certificate without key", `credhub: {url: "https://x:8844", client_cert: {certificate: C}}`, "credhub.client_cert.private_key: is required with credhub.client_cert.certificate: give both"},
		{"key without certificate", `credhub: {url: "https://x:8844", client_cert: {private_key: K}}`, "credhub.client_cert.certificate: is required with credhub.client_cert.private_key: give both"},
		{"uaa client without url", `credhub: {url: "https://x:8844", uaa: {client_id: c, client_secret: s}}`, "credhub.uaa.url: is required with credhub.uaa.client_id: set UAA's URL"},
		{"uaa without secret", `credhub: {url: "https://x:8844", uaa: {url: "https://u", client_id: c}}`, "credhub.uaa.client_secret: is required"},
		{"uaa over http", `credhub: {url: "https://x:8844", uaa: {url: "http://u:8080", client_id: c, client_secret: s}}`, `credhub.uaa.url: "http://u:8080" is plain http: the client secret would cross the network unencrypted; use https, or set credhub.uaa.allow_plaintext_secret: true`},
		{"uaa plaintext not a bool", `credhub: {url: "https://x:8844", uaa: {url: "http://u:8080", client_id: c, client_secret: s, allow_plaintext_secret: "yes"}}`, `credhub.uaa.allow_plaintext_secret: "yes" is not true or false`},
		{"unknown scenario", minimalProps("scenarios: [get, delete]"), `scenarios: unknown scenario "delete"; use get, set, interpolate, custom or mix`},
		{"mix without weights", minimalProps("scenarios: [mix]"), "mix.get: the mix scenario needs a weight above 0 in mix.get, mix.set or mix.interpolate (e.g. 80, 5, 15)"},
		{"negative mix weight", minimalProps("scenarios: [mix]\nmix: {get: -1, set: 1}"), "mix.get: must be a weight from 0 to 1000000, got -1"},
		{"custom without path", minimalProps("scenarios: [custom]"), `custom.path: must start with / (e.g. /api/v1/data?name=/x), got ""`},
		{"bad duration", minimalProps("steps: {duration: 30 seconds}"), `steps.duration: "30 seconds" is not a duration`},
		{"max below min", minimalProps("steps: {min_concurrency: 10, max_concurrency: 5}"), "steps.max_concurrency: must be >= steps.min_concurrency (10), got 5"},
		{"zero concurrency", minimalProps("steps: {min_concurrency: 0}"), "steps.min_concurrency: must be >= 1, got 0"},
		{"bad cleanup mode", minimalProps("cleanup: {mode: truncate}"), `cleanup.mode: "truncate" is not none, api or database`},
		{"database without type", minimalProps("cleanup: {mode: database, database: {host: h, user: u, password: p}}"), "cleanup.database.type: is required when cleanup.mode is database (postgres or mysql)"},
		{"database without host", minimalProps("cleanup: {mode: database, database: {type: postgres, user: u, password: p}}"), "cleanup.database.host: is required when cleanup.mode is database"},
		{"database without password", minimalProps("cleanup: {mode: database, database: {type: postgres, host: h, user: u}}"), "cleanup.database.password: is required when cleanup.mode is database: set the password of cleanup.database.user"},
		{"slo percentile", minimalProps("slo: {percentile: 150}"), "slo.percentile: must be > 0 and <= 100, got 150"},
		{"slo percentile 0", minimalProps("slo: {percentile: 0}"), "slo.percentile: must be > 0 and <= 100, got 0"},
		{"abort percentile 0", minimalProps("abort: {percentile: 0}"), "abort.percentile: must be > 0 and <= 100, got 0"},
		{"label with a slash", strings.Replace(minimalProps(""), "credhub:\n", "credhub:\n  label: a/b\n", 1), `credhub.label: "a/b" must be at most 64 characters without '/'`},
		{"label too long", strings.Replace(minimalProps(""), "credhub:\n", "credhub:\n  label: "+strings.Repeat("x", 65)+"\n", 1), `credhub.label: "` + strings.Repeat("x", 65) + `" must be at most 64 characters`},
		{"several testers by requests", minimalProps("tester: {count: 2}\nsteps: {duration: \"0\"}"), "steps.duration: is required (> 0) with several testers"},
		{"bad start_at", minimalProps("tester: {start_at: tomorrow}"), `tester.start_at: "tomorrow" is not an RFC3339 time`},
		{"bad warmup.run", minimalProps("warmup: {run: soon}"), `warmup.run: "soon" is not auto, 0 (off) or a duration`},
		{"fast_rsa retired", minimalProps("tester: {fast_rsa: true}"), `tester.fast_rsa: was removed: Go's crypto/rsa signs every TLS handshake (credhub-perf's own RSA signer is gone); remove it`},
		{"fast_rsa retired, false", minimalProps("tester: {fast_rsa: false}"), `tester.fast_rsa: was removed: Go's crypto/rsa signs every TLS handshake (credhub-perf's own RSA signer is gone); remove it`},
		{"saturation bound above 1", minimalProps("saturation: {max_host_cpu: 1.5}"), "saturation.max_host_cpu: must be a fraction above 0 and at most 1 (1 = never flag), got 1.5"},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := renderJob(t, "credhub-perf", c.props, instanceSpec{})
			if err == nil {
				t.Fatalf("render succeeded; want an error naming %q", c.wantInError)
			}
			if !strings.Contains(err.Error(), c.wantInError) {
				t.Fatalf("render error does not say %q:\n%v", c.wantInError, err)
			}
		})
	}
}

func TestTemplatesSeveralTesters(t *testing.T) {
	seen := map[int]bool{}
	for idx := 0; idx < 3; idx++ {
		dir, err := renderJob(t, "credhub-perf", minimalProps("tester: {count: 3}"), instanceSpec{Index: idx, Bootstrap: idx == 0})
		if err != nil {
			t.Fatalf("render tester %d: %v", idx, err)
		}
		cfg := renderedConfig(t, dir)
		got := get(t, cfg, "tester.index").(int)
		assertEqual(t, "tester.count", get(t, cfg, "tester.count"), 3)
		assertEqual(t, "tester.index", got, idx)
		assertEqual(t, "tester.scenario_gap", get(t, cfg, "tester.scenario_gap"), "1m")
		if seen[got] {
			t.Errorf("tester index %d rendered twice", got)
		}
		seen[got] = true
		assertEqual(t, "tester.start_delay", get(t, cfg, "tester.start_delay"), "30s")
		assertEqual(t, "tester.rendezvous_timeout", get(t, cfg, "tester.rendezvous_timeout"), "10m")
		// No start time: by default the testers agree through CredHub, on a
		// name that is the same for every instance of the errand.
		run := readRendered(t, dir, "bin/run")
		if strings.Contains(run, "interval=") {
			t.Errorf("tester %d bin/run rounds the clock although the rendezvous is on:\n%s", idx, run)
		}
		checkBash(t, run)
		out, args, logDir := runErrandScript(t, dir)
		if !strings.HasSuffix(args, " --tester.rendezvous credhub-credhub-perf") || strings.Contains(args, "--start-at") {
			t.Errorf("tester %d: credhub-perf's arguments %q, want the rendezvous credhub-credhub-perf", idx, args)
		}
		if !strings.Contains(out, ", 3 testers, first step agreed through CredHub") {
			t.Errorf("tester %d: bin/run does not read 3 testers from config.yml:\n%s", idx, out)
		}
		for _, f := range []string{"stdout", "stderr"} {
			if _, err := os.Stat(filepath.Join(logDir, fmt.Sprintf("credhub-perf-%d.%s.log", idx, f))); err != nil {
				t.Errorf("tester %d: bin/run did not log as tester %d: %v", idx, idx, err)
			}
		}
	}

	// An instance index beyond tester.count is a manifest mistake.
	if _, err := renderJob(t, "credhub-perf", minimalProps("tester: {count: 2}"), instanceSpec{Index: 2}); err == nil ||
		!strings.Contains(err.Error(), "tester.count: is 2 but the errand has at least 3 instances: set it to the errand's instance count") {
		t.Errorf("index 2 with tester.count 2: err = %v", err)
	}
	if _, err := renderJob(t, "credhub-perf", minimalProps(""), instanceSpec{Index: 1}); err == nil ||
		!strings.Contains(err.Error(), "tester.count: is 0, which counts 1 tester without the credhub-perf-tester link, but the errand has at least 2 instances") {
		t.Errorf("index 1 without tester.count or link: err = %v", err)
	}

	// An explicit start time reaches bin/run verbatim.
	dir, err := renderJob(t, "credhub-perf", minimalProps("tester: {count: 2, start_at: \"2026-11-22T14:00:00Z\"}"), instanceSpec{Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, args, _ := runErrandScript(t, dir); !strings.HasSuffix(args, " --start-at 2026-11-22T14:00:00Z") || strings.Contains(args, "--tester.rendezvous") {
		t.Errorf("bin/run does not pass tester.start_at alone: credhub-perf's arguments %q", args)
	}
}

// tester.rendezvous decides how several testers without tester.start_at
// agree on the first step's time: through CredHub (auto, or a given name) or by rounding
// the clock (off, the fallback).
func TestTemplatesRendezvous(t *testing.T) {
	cases := []struct {
		name, props string
		spec        instanceSpec
		rendezvous  string // '' = none
		rounds      bool
	}{
		{"auto on a director: deployment and instance group", "tester: {count: 2}", instanceSpec{Index: 1, Deployment: "cf", Name: "credhub-perf"}, "cf-credhub-perf", false},
		{"auto sanitised", "tester: {count: 2}", instanceSpec{Deployment: "perf test/eu", Name: "_testers:1"}, "perf-test-eu-_testers-1", false},
		{"auto cut at 100 characters", "tester: {count: 2}", instanceSpec{Deployment: strings.Repeat("d", 95), Name: "testers"}, strings.Repeat("d", 95) + "-test", false},
		{"a name given", "tester: {count: 2, rendezvous: perf.eu-1}", instanceSpec{Deployment: "cf", Name: "credhub-perf"}, "perf.eu-1", false},
		{"off rounds the clock", "tester: {count: 2, rendezvous: \"off\", start_delay: 45, sync_interval: 20}", instanceSpec{Deployment: "cf", Name: "credhub-perf"}, "", true},
		{"explicit start_at needs neither", "tester: {count: 2, start_at: \"2026-11-22T14:00:00Z\"}", instanceSpec{Deployment: "cf", Name: "credhub-perf"}, "", false},
		{"one tester needs neither", "tester: {count: 1}", instanceSpec{Deployment: "cf", Name: "credhub-perf"}, "", false},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, err := renderJob(t, "credhub-perf", minimalProps(c.props), c.spec)
			if err != nil {
				t.Fatal(err)
			}
			run := readRendered(t, dir, "bin/run")
			checkBash(t, run)
			_, args, _ := runErrandScript(t, dir)
			if got := strings.Contains(args, "--tester.rendezvous"); got != (c.rendezvous != "") || (got && !strings.HasSuffix(args, " --tester.rendezvous "+c.rendezvous)) {
				t.Errorf("credhub-perf's arguments %q, want the rendezvous %q", args, c.rendezvous)
			}
			if got := strings.Contains(args, "--start-at"); got != (c.rounds || strings.Contains(c.props, "start_at")) {
				t.Errorf("credhub-perf's arguments %q: --start-at given: %v", args, got)
			}
			if len(c.rendezvous) > 100 {
				t.Errorf("test case: %q is longer than credhub-perf accepts", c.rendezvous)
			}
			if got := strings.Contains(run, "interval="); got != c.rounds {
				t.Errorf("bin/run rounds the clock: %v, want %v:\n%s", got, c.rounds, run)
			}
			if c.rounds {
				for _, want := range []string{"interval=20\n", "(now + 45 + interval - 1)"} {
					if !strings.Contains(run, want) {
						t.Errorf("bin/run lacks %q:\n%s", want, run)
					}
				}
			}
			if c.rendezvous != "" {
				// The flag and the config file name the same key credhub-perf
				// knows: the config's start_delay and timeout go with it.
				cfg := renderedConfig(t, dir)
				assertEqual(t, "tester.start_delay", get(t, cfg, "tester.start_delay"), "30s")
				if !documentedKeys(t)["tester.rendezvous"] {
					t.Error("docs/configuration.md does not document tester.rendezvous, which bin/run passes")
				}
			}
		})
	}

	for _, bad := range []struct{ props, want string }{
		{"tester: {count: 2, rendezvous: a/b}", `tester.rendezvous: "a/b" must be auto, off, or a name`},
		{"tester: {count: 2, rendezvous: \"\"}", `tester.rendezvous: "" must be auto, off, or a name`},
		{"tester: {count: 2, rendezvous_timeout: \"0\"}", "tester.rendezvous_timeout: must be > 0 with tester.rendezvous, got 0s"},
		{"tester: {count: 2, rendezvous_timeout: soon}", `tester.rendezvous_timeout: "soon" is not a duration`},
		{"tester: {count: 2, start_delay: -1}", "tester.start_delay: must be a whole number of seconds >= 0, got -1"},
	} {
		if _, err := renderJob(t, "credhub-perf", minimalProps(bad.props), instanceSpec{}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err = %v, want one saying %q", bad.props, err, bad.want)
		}
	}
}

// checkBash fails when a rendered script is not valid bash.
func checkBash(t *testing.T, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("rendered bin/run is not valid bash: %v\n%s", err, out)
	}
}

func TestTemplatesLinks(t *testing.T) {
	linkCA, propCA := fakeCA("LINK-CA"), fakeCA("PROP-CA")
	credhubLink := map[string]interface{}{
		"address": "q-s0.credhub.default.credhub.bosh",
		"properties": map[string]interface{}{
			"credhub": map[string]interface{}{
				"port":           8844,
				"ca_certificate": linkCA,
			},
		},
		"instances": []interface{}{map[string]interface{}{"name": "credhub", "index": 0, "address": "10.0.0.1"}},
	}
	testersLink := map[string]interface{}{
		"address": "q-s0.credhub-perf.default.credhub.bosh",
		// Non-contiguous indices (after a scale-down and up): positions count.
		"instances": []interface{}{
			map[string]interface{}{"name": "credhub-perf", "index": 0},
			map[string]interface{}{"name": "credhub-perf", "index": 2},
			map[string]interface{}{"name": "credhub-perf", "index": 5},
		},
	}
	certOnly := "credhub: {client_cert: {certificate: C, private_key: K}}"
	links := map[string]interface{}{"credhub": credhubLink, "credhub-perf-tester": testersLink}

	cfg := linkedConfig(t, certOnly, instanceSpec{Index: 5}, links)
	assertEqual(t, "target.url from link", get(t, cfg, "target.url"), "https://q-s0.credhub.default.credhub.bosh:8844")
	assertEqual(t, "target.ca_cert_file", get(t, cfg, "target.ca_cert_file"), jobDir+"/config/ca.crt")
	assertEqual(t, "tester.index from link position", get(t, cfg, "tester.index"), 2)
	assertEqual(t, "tester.count from link", get(t, cfg, "tester.count"), 3)

	ca, err := renderWithLinks(t, "credhub-perf", "config/ca.crt.erb", certOnly, instanceSpec{}, links)
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "ca.crt from link", ca, linkCA+"\n")

	run, err := renderWithLinks(t, "credhub-perf", "bin/run.erb", certOnly, instanceSpec{Index: 2}, links)
	if err != nil {
		t.Fatal(err)
	}
	// The tester count and index are config.yml's (checked above), which
	// bin/run reads when it runs: it does not work them out again.
	if strings.Contains(run, "if_link") || strings.Contains(run, "spec.index.to_i") {
		t.Errorf("bin/run computes the tester identity again:\n%s", run)
	}

	// credhub.internal_url (cf-deployment's link) wins over the address;
	// explicit properties win over the link.
	credhubLink["properties"].(map[string]interface{})["credhub"].(map[string]interface{})["internal_url"] = "https://credhub.service.cf.internal"
	cfg = linkedConfig(t, certOnly, instanceSpec{}, links)
	assertEqual(t, "target.url from internal_url", get(t, cfg, "target.url"), "https://credhub.service.cf.internal:8844")

	explicit := "credhub: {url: \"https://lb.example:9000\", ca_cert: " + strconv.Quote(propCA) + ", client_cert: {certificate: C, private_key: K}}\ntester: {count: 4}"
	cfg = linkedConfig(t, explicit, instanceSpec{Index: 0}, links)
	assertEqual(t, "explicit target.url", get(t, cfg, "target.url"), "https://lb.example:9000")
	assertEqual(t, "explicit tester.count", get(t, cfg, "tester.count"), 4)
	if ca, _ := renderWithLinks(t, "credhub-perf", "config/ca.crt.erb", explicit, instanceSpec{}, links); ca != propCA+"\n" {
		t.Errorf("explicit ca_cert: ca.crt = %q", ca)
	}

	// Without links and without properties the shim agrees with bosh-cli:
	// the same required-property error.
	if _, err := renderWithLinks(t, "credhub-perf", "config/validation_properties.yml.erb", certOnly, instanceSpec{}, map[string]interface{}{}); err == nil ||
		!strings.Contains(err.Error(), "credhub.url: is required") {
		t.Errorf("no link, no url: err = %v", err)
	}
}

// Database settings given while cleanup.mode is not database reach
// config.yml, so that credhub-perf warns that they do nothing (the run
// would delete through the API, or leave everything); settings left at the
// spec's defaults raise no warning.
func TestTemplatesDatabaseSettingsOutsideDatabaseMode(t *testing.T) {
	for _, c := range []struct {
		props string
		want  []string
	}{
		{"cleanup: {mode: api, database: {host: db, password: p}}", []string{"cleanup.database.host", "cleanup.database.password"}},
		{"cleanup: {mode: none, database: {type: postgres}}", []string{"cleanup.database.type"}},
		{"cleanup: {mode: api}", nil},
	} {
		dir, err := renderJob(t, "credhub-perf", minimalProps(c.props), instanceSpec{})
		if err != nil {
			t.Fatalf("%s: %v", c.props, err)
		}
		cfg := config.Default()
		if err := config.LoadBytes(&cfg, []byte(readRendered(t, dir, "config/config.yml")), "config.yml"); err != nil {
			t.Fatalf("%s: credhub-perf cannot read the rendered config: %v", c.props, err)
		}
		assertEqual(t, c.props+": keys credhub-perf warns about", strings.Join(cfg.UnusedDatabaseKeys(), ","), strings.Join(c.want, ","))
	}
}
