package config

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Key is one configuration key, and everything about it: its YAML path
// (also its flag name, e.g. --steps.max_concurrency, so a BOSH template
// and a command line speak the same names), type, default, help, the
// rules its value must meet, and the BOSH job property that feeds it.
// Adding a key is adding one entry to Keys; the flags, docs/configuration.md,
// the job spec's properties and the template's rule table follow from it
// (go test ./config -update regenerates the files; a test fails on drift).
type Key struct {
	Name string
	// Type is string, int, number, bool, duration, "list of string" or
	// "list of number".
	Type    string
	Default string // as documented (a test checks it is Default()'s)
	Alias   string // an extra, shorter flag name
	Help    string
	// Rules are checked on the value by Validate and, for keys with a
	// BOSH property, by validation_properties.yml.erb at deploy time.
	Rules []Rule
	// BOSH is the errand's job property for this key; nil when the job
	// does not expose it (the template writes a fixed value or nothing).
	BOSH  *Property
	field func(c *Config) any // a pointer to the key's field
}

// How a BOSH property reaches credhub-perf.
const (
	// ViaConfig: config.yml.erb copies the property's value to the key
	// (a generic loop: such a key needs no template code) and the key's
	// rules check it at deploy time.
	ViaConfig = ""
	// ViaTemplate: config.yml.erb's own code writes the key from the
	// property (links, blocks written only when used); the key's rules
	// check what it wrote.
	ViaTemplate = "template"
	// ViaFlag: bin/run passes the property's value as --KEY (the key's
	// rules check the property at deploy time).
	ViaFlag = "flag"
	// ViaDerived: the template computes the key from the property (and
	// links); the property has a Type and Rules of its own.
	ViaDerived = "derived"
)

// Property is a property of the credhub-perf job spec.
type Property struct {
	Name        string
	Description string
	// Default is the spec default (nil: none, the property is required
	// or comes from a link).
	Default any
	// SpecType is the spec's `type:` (e.g. certificate), if any.
	SpecType string
	Via      string
	// Type of a ViaDerived or BOSH-only property's value.
	Type string
	// Rules only the BOSH property has (besides its key's).
	Rules []Rule
	// After places a BOSH-only property in the spec: after the property
	// of this key, or of this BOSH-only property.
	After string
}

// mixWeight bounds a mix weight: the draw sums the three in an int.
var mixWeight = between(0, 1000000, "must be a weight from 0 to 1000000, got {v}")

// noUserinfo refuses a URL with a user name or password before its host
// (https://user:password@host): printed in errors and recorded in
// meta.json, it would leak. It is the first rule after nonempty and its
// message never shows the value, so no later message prints it either.
func noUserinfo(how string) Rule {
	return Rule{Check: "not_pattern", Pattern: `\A([A-Za-z][A-Za-z0-9+.-]*:)?(//)?[^/?#@]*@`,
		Msg: "holds a user name or password (user:password@ before the host), which would be printed and recorded: remove it; " + how}
}

// Keys lists every configuration key in documentation order.
var Keys = []Key{
	{
		Name: "target.url", Type: "string", Default: "(required)",
		Help: "CredHub base URL, e.g. `https://credhub.service.cf.internal:8844`.",
		Rules: []Rule{
			{Check: "nonempty", Msg: "is required (e.g. https://credhub.service.cf.internal:8844)"},
			noUserinfo("the target authenticates with {k:target.client_cert_file} or {k:uaa.url}"),
			{Check: "pattern", Pattern: `\A(?i:https?)://[^/?#]+`, Msg: "{v} is not an http(s) URL with a host"},
		},
		BOSH: &Property{Name: "credhub.url", Via: ViaTemplate, Default: nil,
			Description: "CredHub API base URL, e.g. https://credhub.service.cf.internal:8844. Default: built from the `credhub` link (credhub.internal_url or the link's address, and credhub.port). Required when there is no link.",
			Rules:       []Rule{{Check: "pattern", Pattern: `\Ahttps://`, Msg: "{v} must start with https://"}}},
		field: func(c *Config) any { return &c.Target.URL },
	},
	{
		Name: "target.ca_cert_file", Type: "string", Default: `""`,
		Help:  "PEM file with the CA(s) that signed CredHub's server certificate; empty = system roots.",
		field: func(c *Config) any { return &c.Target.CACertFile },
	},
	{
		Name: "target.client_cert_file", Type: "string", Default: `""`,
		Help:  "PEM client certificate for mutual TLS (OU `app:<v4 uuid>`, clientAuth EKU). Needed unless `uaa.*` is set.",
		field: func(c *Config) any { return &c.Target.ClientCertFile },
	},
	{
		Name: "target.client_key_file", Type: "string", Default: `""`,
		Help:  "PEM private key of the client certificate (RSA or ECDSA). Never logged.",
		field: func(c *Config) any { return &c.Target.ClientKeyFile },
	},
	{
		Name: "target.server_name", Type: "string", Default: `""`,
		Help: "TLS server name to verify instead of the URL's host.",
		BOSH: &Property{Name: "credhub.server_name", Default: "",
			Description: "TLS server name to verify instead of the URL's host name."},
		field: func(c *Config) any { return &c.Target.ServerName },
	},
	{
		Name: "target.insecure_skip_verify", Type: "bool", Default: "false",
		Help:  "Do not verify CredHub's server certificate (tests only).",
		field: func(c *Config) any { return &c.Target.InsecureSkipVerify },
	},
	{
		Name: "target.timeout", Type: "duration", Default: "30s",
		Help:  "Per-request timeout; a request that takes longer is recorded as a failure.",
		Rules: []Rule{above(0, "must be > 0, got {v}"), durationAtMost(MaxRequestTime, "a request slower than that is a failure anyway; e.g. 30s")},
		BOSH: &Property{Name: "credhub.timeout", Default: "30s",
			Description: "Per-request timeout (Go duration); a slower request is recorded as a failure."},
		field: func(c *Config) any { return &c.Target.Timeout },
	},
	{
		Name: "target.http2", Type: "bool", Default: "false",
		Help:  "Use HTTP/2 (CredHub serves HTTP/1.1 by default).",
		field: func(c *Config) any { return &c.Target.HTTP2 },
	},
	{
		Name: "uaa.url", Type: "string", Default: `""`,
		Help: "UAA base URL. When set, requests carry a bearer token from the client_credentials grant (refreshed before it expires) instead of relying on a client certificate.",
		Rules: []Rule{
			noUserinfo("the client authenticates with {k:uaa.client_id} and {k:uaa.client_secret}"),
			when(Rule{Check: "pattern", Pattern: `\A(?i:https?)://[^/?#]+`, Msg: "{v} is not an http(s) URL with a host"}, Cond{Key: "uaa.url", Op: "nonempty"}),
			// The secret would cross the network in clear text.
			when(Rule{Check: "not_pattern", Pattern: `\A(?i:http)://`, Msg: "{v} is plain http: the client secret would cross the network unencrypted; use https, or set {k:uaa.allow_plaintext_secret}: true to accept that (tests only)"},
				Cond{Key: "uaa.allow_plaintext_secret", Op: "false"}),
		},
		BOSH: &Property{Name: "credhub.uaa.url", Via: ViaTemplate, Default: "",
			Description: "UAA base URL. When set with credhub.uaa.client_id, requests carry a bearer token from the client_credentials grant instead of relying on a client certificate."},
		field: func(c *Config) any { return &c.UAA.URL },
	},
	{
		Name: "uaa.client_id", Type: "string", Default: `""`,
		Help:  "UAA client with authorities `credhub.read,credhub.write`.",
		Rules: []Rule{when(Rule{Check: "nonempty", Msg: "is required when {k:uaa.url} is set"}, Cond{Key: "uaa.url", Op: "nonempty"})},
		BOSH: &Property{Name: "credhub.uaa.client_id", Via: ViaTemplate, Default: "",
			Description: "UAA client with authorities credhub.read and credhub.write."},
		field: func(c *Config) any { return &c.UAA.ClientID },
	},
	{
		Name: "uaa.client_secret", Type: "string", Default: `""`,
		Help:  "Secret of `uaa.client_id`. Never logged.",
		Rules: []Rule{when(Rule{Check: "nonempty", Msg: "is required when {k:uaa.url} is set"}, Cond{Key: "uaa.url", Op: "nonempty"})},
		BOSH: &Property{Name: "credhub.uaa.client_secret", Via: ViaTemplate, Default: "",
			Description: "Secret of credhub.uaa.client_id. Never logged."},
		field: func(c *Config) any { return &c.UAA.ClientSecret },
	},
	{
		Name: "uaa.ca_cert_file", Type: "string", Default: `""`,
		Help:  "PEM CA for UAA's certificate; empty = `target.ca_cert_file`.",
		field: func(c *Config) any { return &c.UAA.CACertFile },
	},
	{
		Name: "uaa.allow_plaintext_secret", Type: "bool", Default: "false",
		Help: "Accept an `http://` `uaa.url`: the client secret then crosses the network unencrypted. Without it such a URL is refused. Tests only; recorded in meta.json's `insecure`.",
		BOSH: &Property{Name: "credhub.uaa.allow_plaintext_secret", Via: ViaTemplate, Default: false,
			Description: "Accept an http:// credhub.uaa.url, over which the client secret travels unencrypted; without it such a URL fails the deploy. Test systems only; the run warns and records it in meta.json (insecure)."},
		field: func(c *Config) any { return &c.UAA.AllowPlaintextSecret },
	},
	{
		Name: "scenarios", Type: "list of string", Default: "[get]", Alias: "scenario",
		Help: "Scenarios to run, each in its own run directory, in order: `get`, `set`, `interpolate`, `custom`, `mix`. Flag form: comma-separated.",
		Rules: []Rule{
			{Check: "nonempty", Msg: "is empty; use one or more of get, set, interpolate, custom, mix"},
			{Check: "enum", Items: true, Values: []string{"get", "set", "interpolate", "custom", "mix"}, Msg: "unknown scenario {v}; use get, set, interpolate, custom or mix"},
			{Check: "unique", Items: true, Msg: "{v} listed twice"},
		},
		BOSH: &Property{Name: "scenarios", Default: []any{"get", "set", "interpolate"},
			Description: "Scenarios to run, in order, each with its own seed, ramp, cleanup and run directory: get, set, interpolate, custom, mix."},
		field: func(c *Config) any { return &c.Scenarios },
	},
	{
		Name: "mix.get", Type: "int", Default: "0",
		Help: "Weight of `get` in the `mix` scenario: each request is a get with probability mix.get / (mix.get + mix.set + mix.interpolate). 0 to 1000000; with `mix` listed, at least one weight above 0.",
		Rules: []Rule{
			mixWeight,
			// One rule on one key says "all weights are 0": it applies
			// only when the other two are 0 (they cannot be below: their
			// own range rule).
			when(above(0, "the mix scenario needs a weight above 0 in {k:mix.get}, {k:mix.set} or {k:mix.interpolate} (e.g. 80, 5, 15)"),
				Cond{Key: "scenarios", Op: "contains", Value: "mix"}, Cond{Key: "mix.set", Op: "eq", Value: "0"}, Cond{Key: "mix.interpolate", Op: "eq", Value: "0"}),
		},
		BOSH: &Property{Name: "mix.get", Default: 0,
			Description: "Weight of get in the mix scenario: each request is a get with probability mix.get / (mix.get + mix.set + mix.interpolate). An integer from 0 to 1000000; with mix in scenarios at least one mix weight must be above 0."},
		field: func(c *Config) any { return &c.Mix.Get },
	},
	{
		Name: "mix.set", Type: "int", Default: "0",
		Help:  "Weight of `set` in the `mix` scenario (see `mix.get`).",
		Rules: []Rule{mixWeight},
		BOSH: &Property{Name: "mix.set", Default: 0,
			Description: "Weight of set in the mix scenario (see mix.get)."},
		field: func(c *Config) any { return &c.Mix.Set },
	},
	{
		Name: "mix.interpolate", Type: "int", Default: "0",
		Help:  "Weight of `interpolate` in the `mix` scenario (see `mix.get`).",
		Rules: []Rule{mixWeight},
		BOSH: &Property{Name: "mix.interpolate", Default: 0,
			Description: "Weight of interpolate in the mix scenario (see mix.get)."},
		field: func(c *Config) any { return &c.Mix.Interpolate },
	},
	{
		Name: "workload", Type: "string", Default: `""`,
		Help:  "A workload.json written by `credhub-perf workload` from CredHub's audit log: the run replays its mix as the `mix` scenario (`scenarios` left at its default becomes `mix`; `mix.*` must stay 0): weights from the shares of the types it can send, seeded names drawn with the log's popularity skew (`popularity.zipf_s`), set bodies of the log's median size. The types it cannot send are listed with their shares in summary.txt and summary.json.",
		field: func(c *Config) any { return &c.Workload },
	},
	{
		Name: "custom.method", Type: "string", Default: "GET",
		Help:  "HTTP method of the `custom` scenario.",
		Rules: []Rule{when(Rule{Check: "enum", Values: []string{"GET", "PUT", "POST", "DELETE", "PATCH", "HEAD"}, Msg: "{v} is not one of GET, PUT, POST, DELETE, PATCH, HEAD"}, Cond{Key: "scenarios", Op: "contains", Value: "custom"})},
		BOSH: &Property{Name: "custom.method", Via: ViaTemplate, Default: "GET",
			Description: "HTTP method of the custom scenario."},
		field: func(c *Config) any { return &c.Custom.Method },
	},
	{
		Name: "custom.path", Type: "string", Default: `""`,
		Help:  "Path and query of the `custom` scenario, appended to `target.url`; may use `{{seq}}`, `{{uuid}}`, `{{rand N}}`, `((prefix))`.",
		Rules: []Rule{when(Rule{Check: "pattern", Pattern: `\A/`, Msg: "must start with / (e.g. /api/v1/data?name=/x), got {v}"}, Cond{Key: "scenarios", Op: "contains", Value: "custom"})},
		BOSH: &Property{Name: "custom.path", Via: ViaTemplate, Default: "",
			Description: "Path and query of the custom scenario, appended to credhub.url; may use {{seq}}, {{uuid}}, {{rand N}} and ((prefix))."},
		field: func(c *Config) any { return &c.Custom.Path },
	},
	{
		Name: "custom.body", Type: "string", Default: `""`,
		Help: "Request body of the `custom` scenario (same placeholders as `custom.path`).",
		BOSH: &Property{Name: "custom.body", Via: ViaTemplate, Default: "",
			Description: "Request body of the custom scenario (same placeholders as custom.path)."},
		field: func(c *Config) any { return &c.Custom.Body },
	},
	{
		Name: "custom.headers", Type: "list of string", Default: "[]",
		Help:  "Extra headers of the `custom` scenario, each `Name: value`. Flag form: repeat the flag.",
		Rules: []Rule{when(Rule{Check: "pattern", Items: true, Pattern: `\A[^:]*[!-9;-~][^:]*:`, Msg: "{v} is not `Name: value`"}, Cond{Key: "scenarios", Op: "contains", Value: "custom"})},
		BOSH: &Property{Name: "custom.headers", Via: ViaTemplate, Default: []any{},
			Description: "Extra headers of the custom scenario, each \"Name: value\"."},
		field: func(c *Config) any { return &c.Custom.Headers },
	},
	{
		Name: "steps.min_concurrency", Type: "int", Default: "1",
		Help:  "Concurrency (workers) of the first closed-loop step.",
		Rules: []Rule{when(atLeast(1, "must be >= 1, got {v}"), Cond{Key: "steps.rates", Op: "empty"}), atMost(MaxConcurrency, "must be at most 100000 workers per tester (for more load add testers, tester.count), got {v}")},
		BOSH: &Property{Name: "steps.min_concurrency", Default: 1,
			Description: "Concurrency (workers per tester) of the first step."},
		field: func(c *Config) any { return &c.Steps.MinConcurrency },
	},
	{
		Name: "steps.max_concurrency", Type: "int", Default: "10",
		Help: "Concurrency of the last closed-loop step; also the worker cap of open-loop (`steps.rates`) steps.",
		Rules: []Rule{
			when(Rule{Check: "ge_key", Key: "steps.min_concurrency", Msg: "must be >= {k:steps.min_concurrency} ({other}), got {v}"}, Cond{Key: "steps.rates", Op: "empty"}),
			when(atLeast(1, "must be >= 1 (the worker cap of open-loop steps), got {v}"), Cond{Key: "steps.rates", Op: "nonempty"}),
			atMost(MaxConcurrency, "must be at most 100000 workers per tester (for more load add testers, tester.count), got {v}"),
		},
		BOSH: &Property{Name: "steps.max_concurrency", Default: 50,
			Description: "Concurrency of the last step; also the in-flight cap of open-loop (steps.rates) steps."},
		field: func(c *Config) any { return &c.Steps.MaxConcurrency },
	},
	{
		Name: "steps.step", Type: "int", Default: "1",
		Help:  "Concurrency increment between steps (the last step is always `max_concurrency`).",
		Rules: []Rule{when(atLeast(1, "must be >= 1, got {v}"), Cond{Key: "steps.rates", Op: "empty"}), atMost(MaxConcurrency, "must be at most 100000 (steps.max_concurrency's own limit), got {v}")},
		BOSH: &Property{Name: "steps.step", Default: 5,
			Description: "Concurrency increment between steps (the last step is always steps.max_concurrency)."},
		field: func(c *Config) any { return &c.Steps.Step },
	},
	{
		Name: "steps.requests", Type: "int", Default: "1000",
		Help: "Measured requests per step (closed loop), when `steps.duration` is 0.",
		Rules: []Rule{
			when(atLeast(1, "must be >= 1 when {k:steps.duration} is 0, got {v}"), Cond{Key: "steps.duration", Op: "eq", Value: "0s"}, Cond{Key: "steps.rates", Op: "empty"}),
			when(Rule{Check: "ge_key", Key: "steps.max_concurrency", Msg: "must be >= {k:steps.max_concurrency} ({other}) so every worker sends, got {v}"},
				Cond{Key: "steps.duration", Op: "eq", Value: "0s"}, Cond{Key: "steps.rates", Op: "empty"}, Cond{Key: "steps.max_concurrency", Op: "gt", Value: "0"}),
			atMost(MaxRequests, "must be at most 100000000 per step (for long steps set steps.duration instead), got {v}"),
		},
		BOSH: &Property{Name: "steps.requests", Default: 1000,
			Description: "Measured requests per step per tester, used when steps.duration is \"0\"."},
		field: func(c *Config) any { return &c.Steps.Requests },
	},
	{
		Name: "steps.duration", Type: "duration", Default: "0",
		Help: "Measured time per step; when > 0 it replaces `steps.requests`. Required with several testers.",
		Rules: []Rule{
			atLeast(0, "must be >= 0, got {v}"),
			when(above(0, "is required (> 0) with {k:steps.rates} (open-loop steps are timed)"), Cond{Key: "steps.rates", Op: "nonempty"}),
			when(above(0, "is required (> 0) with several testers: they start each step at the same wall-clock time"), Cond{Key: "tester.count", Op: "gt", Value: "1"}),
			durationAtMost(MaxStepTime, "a step of a day is the most that makes sense; e.g. 30s or 5m"),
		},
		BOSH: &Property{Name: "steps.duration", Default: "30s",
			Description: "Measured time per step (Go duration). \"0\" switches to a fixed number of requests per step (steps.requests). Several testers need a duration."},
		field: func(c *Config) any { return &c.Steps.Duration },
	},
	{
		Name: "steps.warmup", Type: "duration", Default: "0",
		Help:  "Warm-up at the start of every step: requests are sent at the step's load but not written to the CSV and not counted.",
		Rules: []Rule{atLeast(0, "must be >= 0, got {v}"), durationAtMost(MaxStepTime, "e.g. 5s")},
		BOSH: &Property{Name: "steps.warmup", Default: "5s",
			Description: "Warm-up at the start of every step (sent, not recorded)."},
		field: func(c *Config) any { return &c.Steps.Warmup },
	},
	{
		Name: "steps.rates", Type: "list of number", Default: "[]",
		Help: "Open-loop mode: one step per target rate (requests/s, total for this tester), increasing; replaces the concurrency ramp. Flag form: comma-separated.",
		Rules: []Rule{
			{Check: "range", Items: true, Min: num(0), MinExcl: true, Msg: "rate #{i} must be > 0 requests/s, got {v}"},
			{Check: "range", Items: true, Max: num(MaxRate), Msg: "rate #{i} must be at most 1000000 requests/s per tester (for more load add testers, tester.count), got {v}"},
			// Steps are told apart by their rate in the CSV.
			{Check: "increasing", Items: true, Msg: "rates must increase: rate #{i} ({v}) is not above rate #{prev_i} ({prev})"},
		},
		BOSH: &Property{Name: "steps.rates", Default: []any{},
			Description: "Open-loop mode: one step per target rate (requests/s per tester), each for steps.duration, instead of the concurrency ramp. Empty = closed loop."},
		field: func(c *Config) any { return &c.Steps.Rates },
	},
	{
		Name: "warmup.run", Type: "string", Default: "auto",
		Help:  "Run warm-up before each scenario's first measured step: load sent but not recorded (counted in meta.json `warmup`; what it writes is cleaned up with the run). `auto`: until the trend of throughput and p50 over the last 1 to 4 minutes of 5 s windows is within ±5 %/min (95 % interval of a fitted slope; at least 1 minute), at most `warmup.max`; a duration: that long; `0`: off. With several testers every tester warms up for the whole duration (`auto`: `warmup.max`), so they stay in step.",
		Rules: []Rule{{Check: "auto_or_duration", Max: num(float64(MaxStepTime)), Msg: "{v} is not auto, 0 (off) or a duration like 90s", Msg2: "must not be negative, got {raw}", Msg3: "must be at most 24h (or auto), got {raw}"}},
		BOSH: &Property{Name: "warmup.run", Default: "auto",
			Description: "Run warm-up before each scenario's first measured step: load sent but not recorded, so a CredHub that was just deployed (a JVM still compiling) is measured warm. \"auto\" loads until the fitted trend of throughput and p50 over the last 1 to 4 minutes of 5 s windows is within ±5 % a minute (its 95 % interval; at least 1 minute of load), at most warmup.max; with several testers every tester loads for the whole warmup.max so they stay in step. A duration loads that long; \"0\" is off."},
		field: func(c *Config) any { return &c.Warmup.Run },
	},
	{
		Name: "warmup.concurrency", Type: "int", Default: "0",
		Help:  "Concurrency of the run warm-up; 0 = half the ramp's largest concurrency (at least 1). Open-loop ramps warm up at half their largest rate instead.",
		Rules: []Rule{atLeast(0, "must be >= 0 (0 = half the largest step's concurrency), got {v}"), atMost(MaxConcurrency, "must be at most 100000 workers per tester (for more load add testers, tester.count), got {v}")},
		BOSH: &Property{Name: "warmup.concurrency", Default: 0,
			Description: "Concurrency of the run warm-up; 0 = half of steps.max_concurrency (at least 1)."},
		field: func(c *Config) any { return &c.Warmup.Concurrency },
	},
	{
		Name: "warmup.max", Type: "duration", Default: "5m0s",
		Help:  "Longest `auto` warm-up (CredHub's JIT took about 2.5 minutes to settle on a busy host, and the judge needs a minute of flat windows after that); a target not steady by then gets a warning in the summary naming the trend (still improving at X %/min, getting slower, or too noisy to tell), the ramp starts anyway, and the first steps' `steady` flags tell whether it mattered.",
		Rules: []Rule{when(above(0, "must be > 0 with {k:warmup.run} auto, got {v}"), Cond{Key: "warmup.run", Op: "eqfold", Value: "auto"}), durationAtMost(MaxStepTime, "e.g. 5m")},
		BOSH: &Property{Name: "warmup.max", Default: "5m",
			Description: "Longest auto warm-up (CredHub's JIT took about 2.5 minutes to settle on a busy host, and the judge needs a minute of flat windows after that); a CredHub not steady by then gets a warning in the summary and the errand output naming the trend, and the ramp starts anyway."},
		field: func(c *Config) any { return &c.Warmup.Max },
	},
	{
		Name: "keepalive", Type: "bool", Default: "true",
		Help: "Reuse connections; false = a new TCP+TLS handshake per request, as in the 2017 study.",
		BOSH: &Property{Name: "keepalive", Default: true,
			Description: "Reuse connections. false opens a new TCP and TLS handshake per request, as the 2017 CredHub study did."},
		field: func(c *Config) any { return &c.Keepalive },
	},
	{
		Name: "seed.credentials", Type: "int", Default: "100",
		Help:  "JSON credentials seeded before the ramp: the pool `get` reads at random and `interpolate` references.",
		Rules: []Rule{atLeast(1, "must be >= 1, got {v}"), {Check: "range", Max: num(1000000), Msg: "must be <= 1000000, got {v}"}},
		BOSH: &Property{Name: "seed.credentials", Default: 100,
			Description: "JSON credentials seeded before each ramp (the pool get reads and interpolate references)."},
		field: func(c *Config) any { return &c.Seed.Credentials },
	},
	{
		Name: "seed.bytes", Type: "int", Default: "1024",
		Help:  "Approximate size of each seeded (and `set`) JSON credential value, in bytes.",
		Rules: []Rule{between(64, 60000, "must be between 64 and 60000 (CredHub's limit is 64 KiB), got {v}")},
		BOSH: &Property{Name: "seed.bytes", Default: 1024,
			Description: "Approximate size in bytes of each seeded (and set) credential value (64..60000)."},
		field: func(c *Config) any { return &c.Seed.Bytes },
	},
	{
		Name: "set.names", Type: "int", Default: "500",
		Help:  "Size of the pool of names `set` requests write (also the `set` requests of `mix` and of the warm-up), per tester: request k writes a new version of `…/set/t<tester>-<k mod set.names>`, so a run leaves at most this many names per tester to clean up (the API cleanup's DELETEs), whatever its load. Keep it at least `steps.max_concurrency`, so no two requests write one name at once (the run warns otherwise).",
		Rules: []Rule{between(1, 100000, "must be between 1 and 100000 names per tester, got {v}")},
		BOSH: &Property{Name: "set.names", Default: 500,
			Description: "Size of the pool of names set requests write new versions of, per tester (1..100000); the API cleanup deletes at most this many set credentials per tester, whatever the load. Keep it above the largest number of requests in flight."},
		field: func(c *Config) any { return &c.Set.Names },
	},
	{
		Name: "cleanup.mode", Type: "string", Default: "api",
		Help:  "`api`: delete every credential the run created through the API; `database`: empty CredHub's credential tables directly; `none`: leave data.",
		Rules: []Rule{{Check: "enum", Values: []string{"none", "api", "database"}, Msg: "{v} is not none, api or database"}},
		BOSH: &Property{Name: "cleanup.mode", Default: "api",
			Description: "api deletes every credential the run created through the API; database empties CredHub's credential tables directly (all credentials of that CredHub: use it on a dedicated test CredHub only); none leaves data."},
		field: func(c *Config) any { return &c.Cleanup.Mode },
	},
	{
		Name: "cleanup.database.type", Type: "string", Default: `""`,
		Help: "`postgres` or `mysql` (also for MariaDB). Required when `cleanup.mode` is `database`.",
		Rules: []Rule{
			when(Rule{Check: "nonempty", Msg: "is required when {k:cleanup.mode} is database (postgres or mysql)"}, Cond{Key: "cleanup.mode", Op: "eq", Value: "database"}),
			when(Rule{Check: "enum", Values: []string{"postgres", "postgresql", "mysql", "mariadb"}, Msg: "{v} is not postgres or mysql"}, Cond{Key: "cleanup.mode", Op: "eq", Value: "database"}),
		},
		BOSH: &Property{Name: "cleanup.database.type", Via: ViaTemplate, Default: "",
			Description: "postgres or mysql (also for MariaDB). Required when cleanup.mode is database."},
		field: func(c *Config) any { return &c.Cleanup.Database.Type },
	},
	{
		Name: "cleanup.database.host", Type: "string", Default: `""`,
		Help:  "Database host. Required for `database` cleanup.",
		Rules: []Rule{when(Rule{Check: "nonempty", Msg: "is required when {k:cleanup.mode} is database"}, Cond{Key: "cleanup.mode", Op: "eq", Value: "database"})},
		BOSH: &Property{Name: "cleanup.database.host", Via: ViaTemplate, Default: "",
			Description: "CredHub's database host. Required when cleanup.mode is database."},
		field: func(c *Config) any { return &c.Cleanup.Database.Host },
	},
	{
		Name: "cleanup.database.port", Type: "int", Default: "0",
		Help:  "Database port; 0 = 5432 (postgres) or 3306 (mysql).",
		Rules: []Rule{when(between(0, 65535, "must be 0..65535, got {v}"), Cond{Key: "cleanup.mode", Op: "eq", Value: "database"})},
		BOSH: &Property{Name: "cleanup.database.port", Via: ViaTemplate, Default: 0,
			Description: "Database port; 0 = 5432 (postgres) or 3306 (mysql)."},
		field: func(c *Config) any { return &c.Cleanup.Database.Port },
	},
	{
		Name: "cleanup.database.user", Type: "string", Default: `""`,
		Help:  "Database user with DELETE/TRUNCATE rights on CredHub's tables.",
		Rules: []Rule{when(Rule{Check: "nonempty", Msg: "is required when {k:cleanup.mode} is database"}, Cond{Key: "cleanup.mode", Op: "eq", Value: "database"})},
		BOSH: &Property{Name: "cleanup.database.user", Via: ViaTemplate, Default: "",
			Description: "Database user with DELETE/TRUNCATE rights on CredHub's tables."},
		field: func(c *Config) any { return &c.Cleanup.Database.User },
	},
	{
		Name: "cleanup.database.password", Type: "string", Default: `""`,
		Help: "Database password. Never logged.",
		BOSH: &Property{Name: "cleanup.database.password", Via: ViaTemplate, Default: "",
			Description: "Database password. Never logged."},
		field: func(c *Config) any { return &c.Cleanup.Database.Password },
	},
	{
		Name: "cleanup.database.name", Type: "string", Default: "credhub",
		Help:  "Database (schema) name.",
		Rules: []Rule{when(Rule{Check: "nonempty", Msg: "is required when {k:cleanup.mode} is database"}, Cond{Key: "cleanup.mode", Op: "eq", Value: "database"})},
		BOSH: &Property{Name: "cleanup.database.name", Via: ViaTemplate, Default: "credhub",
			Description: "Database name."},
		field: func(c *Config) any { return &c.Cleanup.Database.Name },
	},
	{
		Name: "cleanup.database.tls", Type: "bool", Default: "false",
		Help: "Connect with TLS (verified against `cleanup.database.ca_cert_file`, or system roots when empty).",
		BOSH: &Property{Name: "cleanup.database.tls", Via: ViaTemplate, Default: false,
			Description: "Connect to the database with TLS."},
		field: func(c *Config) any { return &c.Cleanup.Database.TLS },
	},
	{
		Name: "cleanup.database.ca_cert_file", Type: "string", Default: `""`,
		Help:  "PEM CA for the database server certificate.",
		field: func(c *Config) any { return &c.Cleanup.Database.CACertFile },
	},
	{
		Name: "slo.percentile", Type: "number", Default: "95",
		Help:  "Latency percentile of the SLO (0 < p ≤ 100).",
		Rules: []Rule{{Check: "range", Min: num(0), MinExcl: true, Max: num(100), Msg: "must be > 0 and <= 100, got {v}"}},
		BOSH: &Property{Name: "slo.percentile", Default: 95,
			Description: "Latency percentile of the SLO (> 0 and <= 100)."},
		field: func(c *Config) any { return &c.SLO.Percentile },
	},
	{
		Name: "slo.latency", Type: "duration", Default: "100ms",
		Help:  "Latency bound of the SLO.",
		Rules: []Rule{above(0, "must be > 0, got {v}"), durationAtMost(MaxRequestTime, "e.g. 100ms")},
		BOSH: &Property{Name: "slo.latency", Default: "100ms",
			Description: "Latency bound of the SLO (Go duration)."},
		field: func(c *Config) any { return &c.SLO.Latency },
	},
	{
		Name: "slo.latency_get", Type: "duration", Default: "0",
		Help:  "Latency bound of the SLO for the `get` requests of a `mix` run; 0 = `slo.latency`. A mix step counts as capacity only when every type meets its own bound (at `slo.percentile`) and the step as a whole meets `slo.latency`.",
		Rules: []Rule{atLeast(0, "must be >= 0 (0 = slo.latency), got {v}"), durationAtMost(MaxRequestTime, "e.g. 100ms")},
		BOSH: &Property{Name: "slo.latency_get", Default: "0",
			Description: "Latency bound of the SLO (Go duration) for the get requests of a mix run; 0 means slo.latency. A mix step is within the SLO only when every request type meets its own bound."},
		field: func(c *Config) any { return &c.SLO.LatencyGet },
	},
	{
		Name: "slo.latency_set", Type: "duration", Default: "0",
		Help:  "Latency bound of the SLO for the `set` requests of a `mix` run; 0 = `slo.latency`. A mix step counts as capacity only when every type meets its own bound (at `slo.percentile`) and the step as a whole meets `slo.latency`.",
		Rules: []Rule{atLeast(0, "must be >= 0 (0 = slo.latency), got {v}"), durationAtMost(MaxRequestTime, "e.g. 100ms")},
		BOSH: &Property{Name: "slo.latency_set", Default: "0",
			Description: "Latency bound of the SLO (Go duration) for the set requests of a mix run; 0 means slo.latency. A mix step is within the SLO only when every request type meets its own bound."},
		field: func(c *Config) any { return &c.SLO.LatencySet },
	},
	{
		Name: "slo.latency_interpolate", Type: "duration", Default: "0",
		Help:  "Latency bound of the SLO for the `interpolate` requests of a `mix` run; 0 = `slo.latency`. A mix step counts as capacity only when every type meets its own bound (at `slo.percentile`) and the step as a whole meets `slo.latency`.",
		Rules: []Rule{atLeast(0, "must be >= 0 (0 = slo.latency), got {v}"), durationAtMost(MaxRequestTime, "e.g. 100ms")},
		BOSH: &Property{Name: "slo.latency_interpolate", Default: "0",
			Description: "Latency bound of the SLO (Go duration) for the interpolate requests of a mix run; 0 means slo.latency. A mix step is within the SLO only when every request type meets its own bound."},
		field: func(c *Config) any { return &c.SLO.LatencyInterpolate },
	},
	{
		Name: "slo.max_error_rate", Type: "number", Default: "0.01",
		Help:  "Steps with a higher error rate (0..1) never count as capacity (knee, max throughput at SLO, capacity search).",
		Rules: []Rule{between(0, 1, "must be between 0 and 1, got {v}")},
		BOSH: &Property{Name: "slo.max_error_rate", Default: 0.01,
			Description: "Steps with a higher error rate (0..1) never count as capacity."},
		field: func(c *Config) any { return &c.SLO.MaxErrorRate },
	},
	{
		Name: "abort.max_error_rate", Type: "number", Default: "0.1",
		Help:  "Stop ramping when a step's error rate (0..1) is above this for `abort.consecutive_steps` steps; 1 = never.",
		Rules: []Rule{between(0, 1, "must be between 0 and 1, got {v}")},
		BOSH: &Property{Name: "abort.max_error_rate", Default: 0.1,
			Description: "Stop ramping (a normal end, exit 0) when a step's error rate (0..1) stays above this for abort.consecutive_steps steps; 1 = never."},
		field: func(c *Config) any { return &c.Abort.MaxErrorRate },
	},
	{
		Name: "abort.max_latency", Type: "duration", Default: "5s",
		Help:  "Stop ramping when a step's `abort.percentile` latency is above this for `abort.consecutive_steps` steps; 0 = never.",
		Rules: []Rule{atLeast(0, "must be >= 0, got {v}"), durationAtMost(MaxRequestTime, "e.g. 5s; 0 = never")},
		BOSH: &Property{Name: "abort.max_latency", Default: "5s",
			Description: "Stop ramping when a step's abort.percentile latency stays above this for abort.consecutive_steps steps (Go duration); \"0\" = never."},
		field: func(c *Config) any { return &c.Abort.MaxLatency },
	},
	{
		Name: "abort.percentile", Type: "number", Default: "99",
		Help:  "Percentile compared with `abort.max_latency`.",
		Rules: []Rule{{Check: "range", Min: num(0), MinExcl: true, Max: num(100), Msg: "must be > 0 and <= 100, got {v}"}},
		BOSH: &Property{Name: "abort.percentile", Default: 99,
			Description: "Percentile compared with abort.max_latency (> 0 and <= 100)."},
		field: func(c *Config) any { return &c.Abort.Percentile },
	},
	{
		Name: "abort.consecutive_steps", Type: "int", Default: "2",
		Help:  "How many consecutive steps over a bound stop the ramp.",
		Rules: []Rule{atLeast(1, "must be >= 1, got {v}"), atMost(MaxSteps, "must be at most 10000 (a ramp's most steps), got {v}")},
		BOSH: &Property{Name: "abort.consecutive_steps", Default: 2,
			Description: "How many consecutive steps over a bound stop the ramp."},
		field: func(c *Config) any { return &c.Abort.ConsecutiveSteps },
	},
	{
		Name: "capacity.max_probes", Type: "int", Default: "12",
		Help:  "`capacity` subcommand: most probe steps (doubling, then bisection).",
		Rules: []Rule{between(2, 100, "must be between 2 and 100, got {v}")},
		field: func(c *Config) any { return &c.Capacity.MaxProbes },
	},
	{
		Name: "capacity.resolution", Type: "number", Default: "0",
		Help:  "`capacity`: stop bisecting when the bracket is this narrow (workers, or req/s with `steps.rates`); 0 = `steps.step`, or 2 % of the rate.",
		Rules: []Rule{atLeast(0, "must be >= 0, got {v}"), atMost(MaxRate, "must be at most 1000000 (workers or requests/s), got {v}")},
		field: func(c *Config) any { return &c.Capacity.Resolution },
	},
	{
		Name: "confirm.open_loop", Type: "bool", Default: "true",
		Help: "After a closed-loop ramp (`run`) or search (`capacity`) finds its capacity at the SLO, confirm it under open arrivals: fixed-rate steps at `confirm.fractions` of that capacity, on warm connections, judged by the same rules and written to the same CSV (their `rate` set). The headline then names the capacity to size with. One tester only; open-loop ramps (`steps.rates`) are open already. Recorded in meta.json `confirmation`.",
		BOSH: &Property{Name: "confirm.open_loop", Default: true,
			Description: "After the closed-loop ramp finds its capacity at the SLO, confirm it with fixed-rate (open-loop) steps at confirm.fractions of it: many independent clients arrive whether or not the last request finished, and a target's pauses (a GC) hold up far more of them than of a few closed-loop connections. The summary then says which capacity to size with. One tester only."},
		field: func(c *Config) any { return &c.Confirm.OpenLoop },
	},
	{
		Name: "confirm.fractions", Type: "list of number", Default: "[0.5, 0.7, 0.85, 1]",
		Help: "The open-loop confirmation's rates, as fractions of the closed-loop capacity, increasing. Flag form: comma-separated.",
		Rules: []Rule{
			{Check: "nonempty", Msg: "needs at least one fraction, e.g. 0.5,0.7,0.85,1 (turn the confirmation off with confirm.open_loop false)"},
			{Check: "range", Items: true, Min: num(0), MinExcl: true, Max: num(2), Msg: "fraction #{i} must be > 0 and at most 2 (of the closed-loop capacity), got {v}"},
			{Check: "increasing", Items: true, Msg: "fractions must increase: fraction #{i} ({v}) is not above fraction #{prev_i} ({prev})"},
		},
		BOSH: &Property{Name: "confirm.fractions", Default: []any{0.5, 0.7, 0.85, 1},
			Description: "The open-loop confirmation's rates as fractions of the closed-loop capacity, increasing, each > 0 and at most 2."},
		field: func(c *Config) any { return &c.Confirm.Fractions },
	},
	{
		Name: "confirm.duration", Type: "duration", Default: "30s",
		Help:  "Measured time of each open-loop confirmation step: long enough to see the target's pauses (a JVM's collections come every few seconds to minutes). Each step first warms its connections for `steps.warmup`, at least 1 s, unrecorded.",
		Rules: []Rule{above(0, "must be > 0, got {v}"), durationAtMost(MaxStepTime, "e.g. 30s")},
		BOSH: &Property{Name: "confirm.duration", Default: "30s",
			Description: "Measured time of each open-loop confirmation step (Go duration), long enough to see the target's pauses."},
		field: func(c *Config) any { return &c.Confirm.Duration },
	},
	{
		Name: "confirm.refine", Type: "int", Default: "2",
		Help:  "After the fractions, at most this many more open-loop steps, each midway between the highest rate that held the SLO and the lowest that missed it, while those two are more than 5 % of the closed-loop capacity apart: the open-loop figure to size with is then known to 5 %. When even the lowest fraction missed, they go down instead, towards 10 % of the closed-loop capacity. 0 = none.",
		Rules: []Rule{between(0, 10, "must be between 0 and 10, got {v}")},
		BOSH: &Property{Name: "confirm.refine", Default: 2,
			Description: "At most this many extra open-loop confirmation steps, bisecting between the highest rate that held the SLO and the lowest that missed it until they are within 5 % of the closed-loop capacity, or, when even the lowest fraction missed, going down towards 10 % of it. 0 = none."},
		field: func(c *Config) any { return &c.Confirm.Refine },
	},
	{
		Name: "label", Type: "string", Default: `""`,
		Help:  "Label of the cluster under test, for the plots' legend (e.g. `2 instances`); the run directory name holds it with every character other than letters, digits, `.`, `_`, `-` replaced by `-`.",
		Rules: []Rule{{Check: "pattern", Pattern: `\A[^/\\\x00-\x1f\x7f]{0,64}\z`, Msg: "{v} must be at most 64 characters without '/', '\\' or control characters"}},
		BOSH: &Property{Name: "credhub.label", Default: "",
			Description: "Label of the CredHub cluster under test, e.g. 2-instances; part of the run directory name and of the plots' legend. At most 64 characters, without '/', '\\' or control characters."},
		field: func(c *Config) any { return &c.Label },
	},
	{
		Name: "instances", Type: "int", Default: "0",
		Help:  "Number of CredHub instances under test, recorded in meta.json (0 = unknown, written as null).",
		Rules: []Rule{atLeast(0, "must be >= 0 (0 = unknown), got {v}"), atMost(MaxInstances, "must be at most 10000, got {v}")},
		BOSH: &Property{Name: "credhub.instances", Default: 0,
			Description: "Number of CredHub instances under test, recorded in meta.json so headroom-plot can overlay a scaling study (0 = unknown)."},
		field: func(c *Config) any { return &c.Instances },
	},
	{
		Name: "output_dir", Type: "string", Default: "out", Alias: "out",
		Help:  "Directory that receives the run directories.",
		Rules: []Rule{{Check: "nonempty", Msg: "must not be empty"}},
		field: func(c *Config) any { return &c.OutputDir },
	},
	{
		Name: "tester.index", Type: "int", Default: "0", Alias: "tester-index",
		Help:  "This tester's index (0..count-1). Only tester 0 seeds and cleans up.",
		field: func(c *Config) any { return &c.Tester.Index },
	},
	{
		Name: "tester.count", Type: "int", Default: "1", Alias: "testers",
		Help:  "Number of testers running the same plan in lockstep.",
		Rules: []Rule{atLeast(1, "must be >= 1, got {v}"), atMost(MaxTesters, "must be at most 1000 testers, got {v}")},
		BOSH: &Property{Name: "tester.count", Default: 0, Via: ViaDerived, Type: "int",
			Rules:       []Rule{atLeast(0, "must be >= 0 (0 = the errand's instance count), got {v}"), atMost(MaxTesters, "must be at most 1000 testers, got {v}")},
			Description: "Number of tester instances running together; 0 takes the errand's instance count from its own credhub-perf-tester link, else 1. Set it to the errand's `instances` when that link is not available."},
		field: func(c *Config) any { return &c.Tester.Count },
	},
	{
		Name: "tester.start_at", Type: "string", Default: `""`, Alias: "start-at",
		Help:  "RFC3339 time at which the first step starts on every tester; step k (numbered from 1) starts at start_at + (k − 1) × (warmup + duration). Empty = now, or with `tester.rendezvous` the time tester 0 publishes.",
		Rules: []Rule{when(Rule{Check: "rfc3339", Msg: "{v} is not an RFC3339 time (e.g. 2026-01-02T15:04:05Z)"}, Cond{Key: "tester.start_at", Op: "nonempty"})},
		BOSH: &Property{Name: "tester.start_at", Default: "", Via: ViaFlag,
			Description: "RFC3339 time at which the first step starts on every tester. Empty: one tester starts at once; several testers agree on a time through CredHub (see tester.rendezvous)."},
		field: func(c *Config) any { return &c.Tester.StartAt },
	},
	{
		Name: "tester.rendezvous", Type: "string", Default: `""`,
		Help:  "Several testers without `tester.start_at`: name (letters, digits, `._-`, at most 100) of the JSON credential `/credhub-perf/rendezvous/<name>` in which tester 0 publishes the first step's time (its start + `tester.start_delay`) and the run id before seeding, and which the others wait for; a previous run's leftover is ignored (see Rendezvous below). Tester 0 deletes it at the end; when it stops while the others still depend on it, it writes its failure there instead, and the others stop at once.",
		Rules: []Rule{when(Rule{Check: "pattern", Pattern: `\A[A-Za-z0-9][A-Za-z0-9._-]{0,99}\z`, Msg: "{v} may only hold letters, digits, '.', '_' and '-' (at most 100, starting with a letter or digit)"}, Cond{Key: "tester.rendezvous", Op: "nonempty"})},
		BOSH: &Property{Name: "tester.rendezvous", Default: "auto", Via: ViaDerived, Type: "string",
			Rules:       []Rule{{Check: "pattern", Pattern: `\A(auto|off|[A-Za-z0-9][A-Za-z0-9._-]{0,99})\z`, Msg: "{v} must be auto, off, or a name of letters, digits, '.', '_' and '-' (at most 100, starting with a letter or digit)"}},
			Description: "Several testers without tester.start_at: how they agree on the first step's time and the run id. auto: through the CredHub credential /credhub-perf/rendezvous/<deployment>-<instance group>, which tester 0 writes (its start + tester.start_delay, a fresh run id) before seeding and deletes at the end, and which the others wait for (a previous run's leftover is ignored). When tester 0 fails or is cancelled while the others still depend on it, it writes its failure there instead and the others stop within a second or so, naming its reason; it needs write permission on /credhub-perf/*, which the run needs anyway. A name instead of auto uses /credhub-perf/rendezvous/<name> (letters, digits, '.', '_', '-'). off: each instance rounds now + tester.start_delay up to a multiple of tester.sync_interval, which fails when a multiple falls between two instances' starts."},
		field: func(c *Config) any { return &c.Tester.Rendezvous },
	},
	{
		Name: "tester.start_delay", Type: "duration", Default: "30s",
		Help:  "With `tester.rendezvous`: how long after tester 0 is ready the first step starts; long enough for every tester to start and for tester 0 to seed.",
		Rules: []Rule{atLeast(0, "must be >= 0, got {v}"), durationAtMost(MaxStepTime, "e.g. 30s")},
		BOSH: &Property{Name: "tester.start_delay", Default: 30, Via: ViaDerived, Type: "int",
			Rules:       []Rule{atLeast(0, "must be a whole number of seconds >= 0, got {v}"), atMost(MaxStepTime.Seconds(), "must be at most 86400 seconds (24h), got {v}")},
			Description: "Several testers: time (seconds) between tester 0 being ready and the first step, long enough for every tester VM to start and for tester 0 to seed (with tester.rendezvous off: least time between the errand starting and the first step)."},
		field: func(c *Config) any { return &c.Tester.StartDelay },
	},
	{
		Name: "tester.rendezvous_timeout", Type: "duration", Default: "10m0s",
		Help:  "With `tester.rendezvous`: how long testers other than 0 wait for tester 0's value before giving up (exit status 2, nothing sent); also how long past its scheduled start they wait for tester 0 to publish a later scenario's start (exit status 1). A bound for a tester 0 that never answers (VM gone, killed): a tester 0 that fails or is cancelled reports it in the rendezvous credential, and the others stop on their next poll.",
		Rules: []Rule{when(above(0, "must be > 0 with {k:tester.rendezvous}, got {v}"), Cond{Key: "tester.rendezvous", Op: "nonempty"}), durationAtMost(MaxStepTime, "e.g. 10m")},
		BOSH: &Property{Name: "tester.rendezvous_timeout", Via: ViaTemplate, Default: "10m",
			// The template writes it for several testers only, whose
			// rendezvous bin/run passes as a flag (the key's condition
			// cannot see it): checked whenever written.
			Rules:       []Rule{above(0, "must be > 0 with {k:tester.rendezvous}, got {v}")},
			Description: "Several testers, rendezvous: how long the testers other than 0 wait for tester 0's start time before failing (exit status 2, nothing sent) (Go duration). Also how long past its scheduled start they wait for tester 0 to publish a later scenario's start (exit status 1). Only a tester 0 that never answers (VM gone, process killed) makes them wait that long: a tester 0 that fails or is cancelled writes its reason in the rendezvous credential, and the others stop within a second or so, naming it."},
		field: func(c *Config) any { return &c.Tester.RendezvousTimeout },
	},
	{
		Name: "tester.scenario_gap", Type: "duration", Default: "1m0s",
		Help:  "Several testers: least pause between one scenario's last step and the next scenario's first, for tester 0's cleanup and seeding (it first waits 2 s + target.timeout, at most 10 s, for the others' requests in flight; the gap must exceed that by 1 s). When the cleanup and seeding take longer, the next scenario starts later: tester 0 publishes its start (at least 2 s ahead) as the credential `/credhub-perf/<run id>/<scenario>/control/start`, which the others wait for; meta.json's `scenario_start_at` records it.",
		Rules: []Rule{atLeast(0, "must be >= 0, got {v}"), durationAtMost(MaxStepTime, "e.g. 1m")},
		BOSH: &Property{Name: "tester.scenario_gap", Via: ViaTemplate, Default: "1m",
			Description: "Several testers: least pause between one scenario's last step and the next scenario's first (Go duration), for tester 0's cleanup and seeding. Tester 0 first waits 2s plus the request timeout (at most 10s) for the others' requests in flight, so the gap must exceed that by at least 1s. When cleanup and seeding take longer, the next scenario starts later: tester 0 publishes its start through CredHub and the others wait for it (at most tester.rendezvous_timeout)."},
		field: func(c *Config) any { return &c.Tester.ScenarioGap },
	},
	{
		Name: "tester.run_id", Type: "string", Default: `""`, Alias: "run-id",
		Help:  "Run id shared by all testers (letters, digits, `-_.`); names the seeded credentials and the run directory. Empty = the `tester.start_at` time (yyyymmddThhmmssZ); with `tester.rendezvous`, tester 0's start_at plus a random suffix, published to the others; else the start time plus a random suffix. `rendezvous` is reserved.",
		Rules: []Rule{when(Rule{Check: "pattern", Pattern: runIDSyntax, Msg: "{v} may only hold letters, digits, '.', '_' and '-' (at most 64, not starting with a symbol)"}, Cond{Key: "tester.run_id", Op: "nonempty"})},
		field: func(c *Config) any { return &c.Tester.RunID },
	},
	{
		Name: "tester.fast_http", Type: "bool", Default: "false",
		Help: "Send this tester's HTTP/1.1 requests with credhub-perf's hand-made lean client on raw connections instead of Go's net/http. It costs less tester CPU per request (docs/benchmarks.md); net/http is the default because it is the standard library's, widely used and reviewed. With `target.http2` net/http sends anyway. meta.json's `http_client` records which one ran.",
		BOSH: &Property{Name: "tester.fast_http", Default: false,
			Description: "Send the tester's HTTP/1.1 requests with credhub-perf's hand-made lean client on raw connections instead of Go's net/http. It saves tester CPU per request; more tester instances buy the same headroom. With target.http2 net/http sends anyway; meta.json's http_client records which one ran."},
		field: func(c *Config) any { return &c.Tester.FastHTTP },
	},
	{
		Name: "saturation.max_tester_cpu", Type: "number", Default: "0.8",
		Help:  "A step in which this tester's process used more than this share of the cores it may use (rusage CPU / wall / cores) is `tester_bound`: flagged, and not counted as capacity. 1 = never.",
		Rules: []Rule{{Check: "range", Min: num(0), MinExcl: true, Max: num(1), Msg: "must be a fraction above 0 and at most 1 (1 = never flag), got {v}"}},
		BOSH: &Property{Name: "saturation.max_tester_cpu", Default: 0.8,
			Description: "A step in which the tester process used more than this share of its VM's cores is flagged tester_bound and not counted as capacity (add testers or use a bigger VM). 1 = never."},
		field: func(c *Config) any { return &c.Saturation.MaxTesterCPU },
	},
	{
		Name: "saturation.max_host_cpu", Type: "number", Default: "0.9",
		Help:  "Same for the busy share of the host CPUs this tester may run on (/proc/stat, whoever used them: a target on the same machine, a neighbour). 1 = never.",
		Rules: []Rule{{Check: "range", Min: num(0), MinExcl: true, Max: num(1), Msg: "must be a fraction above 0 and at most 1 (1 = never flag), got {v}"}},
		BOSH: &Property{Name: "saturation.max_host_cpu", Default: 0.9,
			Description: "Same for the busy share of the tester VM's CPUs, whoever used them. 1 = never."},
		field: func(c *Config) any { return &c.Saturation.MaxHostCPU },
	},
	{
		Name: "saturation.max_steal", Type: "number", Default: "0.1",
		Help:  "Same for the share of those CPUs' time the hypervisor gave to other guests (steal). 1 = never.",
		Rules: []Rule{{Check: "range", Min: num(0), MinExcl: true, Max: num(1), Msg: "must be a fraction above 0 and at most 1 (1 = never flag), got {v}"}},
		BOSH: &Property{Name: "saturation.max_steal", Default: 0.1,
			Description: "Same for the share of the tester VM's CPU time stolen by the hypervisor. 1 = never."},
		field: func(c *Config) any { return &c.Saturation.MaxSteal },
	},
	{
		Name: "saturation.max_tester_wait", Type: "number", Default: "0.1",
		Help:  "A step in which this tester's threads waited for a CPU behind other processes more than this share of the step per core (Linux schedstat run-queue wait / wall / cores, times the share of its cores' busy time that was not the tester's own: its threads queueing behind each other do not count) is `tester_bound`. It also decides a host busy past `saturation.max_host_cpu`: bound only when the tester waited that much, or so long that this share of each request's latency may be its own wait (the wait over the step's requests in flight, throughput x mean latency: a tester sending little beside a hog on its core waits little per second, but on every request), or when its wait is unknown; else reported as a busy host, not a bound. 1 = never.",
		Rules: []Rule{{Check: "range", Min: num(0), MinExcl: true, Max: num(1), Msg: "must be a fraction above 0 and at most 1 (1 = never flag), got {v}"}},
		BOSH: &Property{Name: "saturation.max_tester_wait", Default: 0.1,
			Description: "Same for the time the tester's threads waited for a CPU (run-queue wait), per second of the step and core. A VM busy past saturation.max_host_cpu is tester-bound only when the tester also waited past this, per core or over the step's requests in flight (the share of each latency that may be the tester's own wait). 1 = never."},
		field: func(c *Config) any { return &c.Saturation.MaxTesterWait },
	},
	{
		Name: "target_load.processes", Type: "list of string", Default: "[]",
		Help:  "Sample these processes on this machine while the run loads the target (CPU user+system as a share of the cores they may use, and RSS, from /proc), each `RESOURCE=PID` or `RESOURCE=NAME` (every process of that name, e.g. `database=postgres`); `credhub` and `database` are the resources the verdict knows. Samples go to `target-samples.csv` (with the CPUs each may use and how busy, stolen and shared those CPUs were), per-step figures and the bottleneck verdict to summary.json. Flag form: repeat the flag, or one flag with a comma-separated list.",
		Rules: []Rule{{Check: "pattern", Items: true, Pattern: `\A[a-z0-9_-]+=[^/=\x00-\x1f]+\z`, Msg: "{v} is not RESOURCE=PID or RESOURCE=NAME, e.g. credhub=java or database=postgres"}},
		field: func(c *Config) any { return &c.TargetLoad.Processes },
	},
	{
		Name: "target_load.credhub_sim", Type: "bool", Default: "false",
		Help:  "The target is credhub-sim: sample its modelled utilisation of each emulated instance and of its database from its `/utilisation` endpoint (mutual TLS, as every request).",
		field: func(c *Config) any { return &c.TargetLoad.CredHubSim },
	},
	{
		Name: "target_load.interval", Type: "duration", Default: "1s",
		Help:  "How often processes and credhub-sim are sampled; each step is also sampled at its end. BOSH vitals are read every 10 s at most often, as the agent refreshes them.",
		Rules: []Rule{atLeast(float64(100*time.Millisecond), "must be >= 100ms, got {v}"), durationAtMost(MaxStepTime, "e.g. 1s")},
		field: func(c *Config) any { return &c.TargetLoad.Interval },
	},
	{
		Name: "target_load.bosh_deployment", Type: "string", Default: `""`,
		Help: "Sample this BOSH deployment's CredHub and database VMs through the director (`bosh -d DEPLOYMENT vms --vitals --json`, every 10 s: the agent's CPU figures cover its last 10 s). A director that refuses gives a warning, not a failed run. Empty: not sampled.",
		BOSH: &Property{Name: "target_load.bosh_deployment", Default: "",
			Description: "Sample this deployment's CredHub and database VMs through the director while the errand loads CredHub (bosh vms --vitals every 10 s); the summary then names the bottleneck. Needs target_load.bosh_environment and director credentials with read access. Empty: not sampled."},
		field: func(c *Config) any { return &c.TargetLoad.BoshDeployment },
	},
	{
		Name: "target_load.bosh_groups", Type: "list of string", Default: "[credhub=credhub, database=database]",
		Help:  "Instance groups to sample, each `GROUP=RESOURCE` (`credhub` or `database`, or a name of your own). A group whose VMs run CredHub and its database together (colocated) is named twice, `credhub=credhub` and `credhub=database`, and judged as one machine; vitals are VM-wide, so they include every job on the VM.",
		Rules: []Rule{{Check: "pattern", Items: true, Pattern: `\A[A-Za-z0-9_.-]+=[a-z0-9_-]+\z`, Msg: "{v} is not GROUP=RESOURCE, e.g. database=database"}},
		BOSH: &Property{Name: "target_load.bosh_groups", Default: []any{"credhub=credhub", "database=database"},
			Description: "Instance groups to sample, each GROUP=RESOURCE (credhub or database). A group running CredHub and its database colocated is named twice (credhub=credhub, credhub=database) and judged as one VM; vitals are VM-wide, every job on it."},
		field: func(c *Config) any { return &c.TargetLoad.BoshGroups },
	},
	{
		Name: "target_load.bosh_environment", Type: "string", Default: `""`,
		Help: "The director's URL or address (BOSH_ENVIRONMENT); empty: bosh's own environment.",
		BOSH: &Property{Name: "target_load.bosh_environment", Default: "",
			Description: "The director's URL or address, e.g. https://10.0.0.6:25555."},
		field: func(c *Config) any { return &c.TargetLoad.BoshEnvironment },
	},
	{
		Name: "target_load.bosh_client", Type: "string", Default: `""`,
		Help: "Director UAA client (BOSH_CLIENT); read access (scope `bosh.read`, or `bosh.teams.TEAM.read` for the deployment's team) is enough for vitals.",
		BOSH: &Property{Name: "target_load.bosh_client", Default: "",
			Description: "Director UAA client; read access (bosh.read, or bosh.teams.TEAM.read) is enough for vitals."},
		field: func(c *Config) any { return &c.TargetLoad.BoshClient },
	},
	{
		Name: "target_load.bosh_client_secret", Type: "string", Default: `""`,
		Help: "Secret of `target_load.bosh_client`, handed to bosh in its environment. Never logged.",
		BOSH: &Property{Name: "target_load.bosh_client_secret", Default: "",
			Description: "Secret of target_load.bosh_client. Never logged; the rendered configuration is mode 0600."},
		field: func(c *Config) any { return &c.TargetLoad.BoshClientSecret },
	},
	{
		Name: "target_load.bosh_ca_cert", Type: "string", Default: `""`,
		Help: "The director's CA certificate, PEM or a file path (BOSH_CA_CERT).",
		BOSH: &Property{Name: "target_load.bosh_ca_cert", Default: "",
			Description: "The director's CA certificate (PEM)."},
		field: func(c *Config) any { return &c.TargetLoad.BoshCACert },
	},
	{
		Name: "target_load.bosh_timeout", Type: "duration", Default: "60s",
		Help:  "How long one `bosh vms --vitals` call may take (the director runs a task that asks every agent); a call that takes longer is stopped with a warning and its samples are missing.",
		Rules: []Rule{above(0, "must be > 0, got {v}"), durationAtMost(MaxStepTime, "e.g. 60s")},
		BOSH: &Property{Name: "target_load.bosh_timeout", Default: "60s",
			Description: "How long one bosh vms --vitals call may take before it is stopped with a warning."},
		field: func(c *Config) any { return &c.TargetLoad.BoshTimeout },
	},
}

// BOSHOnly are the job's properties that are not configuration keys: PEM
// contents the template writes to files, and bin/run's own settings.
var BOSHOnly = []Property{
	{Name: "credhub.ca_cert", After: "target.url",
		Description: "PEM CA certificate(s) that signed CredHub's server certificate. Default: the `credhub` link's credhub.ca_certificate; empty means the system roots."},
	{Name: "credhub.client_cert", After: "credhub.ca_cert", SpecType: "certificate",
		Description: "Client certificate and private key for mutual TLS (certificate with OU app:<v4 uuid> and the clientAuth extended key usage, signed by a CA in CredHub's credhub.authentication.mutual_tls.trusted_cas or by an intermediate under one). A BOSH variable of type certificate, e.g. ((credhub_perf_client)): when its ca is not a self-signed root (an intermediate such as cf-deployment's diego_instance_identity_ca), the job sends it after the certificate; a chain in the certificate itself is sent as it is. Needed unless credhub.uaa.client_id is set."},
	{Name: "credhub.uaa.ca_cert", After: "uaa.client_secret", Default: "",
		Description: "PEM CA certificate for UAA's server certificate; empty means credhub.ca_cert."},
	{Name: "cleanup.database.ca_cert", After: "cleanup.database.tls", Default: "",
		Description: "PEM CA certificate for the database server; empty means the system roots."},
	{Name: "tester.fast_rsa", After: "tester.fast_http", Description: retiredDescription("tester.fast_rsa")},
	{Name: "tester.sync_interval", After: "tester.scenario_gap", Default: 60, Type: "int",
		Rules:       []Rule{atLeast(1, "must be a whole number of seconds >= 1, got {v}"), atMost(MaxStepTime.Seconds(), "must be at most 86400 seconds (24h), got {v}")},
		Description: "Several testers with tester.rendezvous off: the start time is rounded up to a multiple of this many seconds, so testers that start a few seconds apart usually pick the same time."},
}

// runIDSyntax is a run id: one path segment of CredHub credential names and
// part of a directory name.
const runIDSyntax = `\A[A-Za-z0-9][A-Za-z0-9._-]{0,63}\z`

// RunIDPattern matches a valid run id (tester.run_id, and what a
// rendezvous or a run directory carries).
var RunIDPattern = regexp.MustCompile(runIDSyntax)

func keyByName(name string) *Key {
	for i := range Keys {
		if Keys[i].Name == name {
			return &Keys[i]
		}
	}
	return nil
}

// KeyNames returns every configuration key, sorted.
func KeyNames() []string {
	var out []string
	for _, k := range Keys {
		out = append(out, k.Name)
	}
	sort.Strings(out)
	return out
}

// set parses a flag's text into the key's field.
func (k *Key) set(c *Config, v string) error {
	switch p := k.field(c).(type) {
	case *string:
		*p = v
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		*p = n
	case *float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%q is not a number", v)
		}
		*p = f
	case *bool:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		*p = b
	case *Duration:
		d, err := parseDuration(v)
		if err != nil {
			return err
		}
		*p = Duration(d)
	case *[]string:
		// Items add to the list (Overrides.Apply clears it first).
		if k.Name == "custom.headers" {
			// One header a flag: a header may hold a comma.
			*p = append(*p, v)
			return nil
		}
		*p = append(*p, splitList(v)...)
	case *[]float64:
		for _, s := range splitList(v) {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%q is not a number", s)
			}
			*p = append(*p, f)
		}
	default:
		panic(fmt.Sprintf("config: key %s has a field of type %T", k.Name, p))
	}
	return nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
