package load

import (
	"net/http"
	"net/url"
	"time"
)

// ClientOptions configures how requests are sent.
type ClientOptions struct {
	TLS                TLSOptions
	KeepAlive          bool
	HTTP2              bool
	Timeout            time.Duration // per request, 0 = none
	DisableCompression bool
	DisableRedirects   bool
	ProxyURL           *url.URL
	Host               string // Host header override
	// Authorize is called before every request (e.g. to set a bearer token
	// that may be refreshed). Only the headers it sets are used. An error
	// fails that request (recorded, not fatal).
	Authorize func(*http.Request) error
	// FastHTTP sends HTTP/1.1 with the engine's hand-made lean client on
	// raw connections instead of net/http (hey -fast-http, tester.fast_http).
	// It is opt-in: net/http is the default, as the standard library's
	// paths are (docs/design.md). HTTP/2 and proxies always use net/http;
	// Engine.HTTPClient says which one runs.
	FastHTTP bool
	// Clock is the time source of schedules, Start and Latency; nil is the
	// system clock, with open-loop sends paced by a precise kernel timer.
	// Tests set one they control.
	Clock Clock
}

// Template describes the request. URL (path and query only), Body and header
// values may contain {{seq}}, {{cycle N}}, {{uuid}}, {{rand N}},
// {{zipf N S}} and {{pick FILE}}.
type Template struct {
	// Name is the request type written to every Result.Request (the CSV's
	// request column); empty for none.
	Name   string
	Method string
	URL    string
	Header http.Header
	Body   string
}

// Step is one run of the engine.
type Step struct {
	Concurrency int     // workers (open loop: most requests in flight)
	Rate        float64 // total requests/s, open loop; 0 = closed loop
	QPS         float64 // closed loop: per-worker limit (hey -q); 0 = none
	Requests    int     // total requests; 0 = until Duration
	Duration    time.Duration
	StartAt     time.Time // when to start; zero = now
	RunStart    time.Time // origin of Result.Offset; zero = step start
	// KeepConns (open loop, keep-alive): the step's idle connections stay
	// open for the engine's next Run, which uses them instead of dialling
	// anew (a warm-up and its measured step). That Run, or
	// Engine.CloseIdle, closes them.
	KeepConns bool
}

// Result is one request. Start+Latency is when its response ended. In open
// loop Start is the scheduled time (Latency counts from it) and SchedLag
// how late a worker took the request up: the tester's own lateness. A wait
// for a free connection after that is in Latency, not in SchedLag (as in
// net/http's pool, and vegeta's): it is the server holding every
// connection, not the tester falling behind.
type Result struct {
	Start     time.Time
	Offset    time.Duration
	Latency   time.Duration
	DNSDial   time.Duration // DNS + dial + TLS handshake (new connections)
	DNS       time.Duration
	ReqWrite  time.Duration
	RespDelay time.Duration // request written -> first response byte
	RespRead  time.Duration // first byte -> body read
	SchedLag  time.Duration
	Status    int // 0 when no response came back
	Err       string
	// Request names the request type ("get", "set", "interpolate",
	// "custom"): the CSV's request column. Empty when the caller named none.
	Request     string
	Concurrency int
	Rate        float64
	BytesIn     int64 // response body bytes
}

// Failed reports whether r counts as an error (status 0 or >= 400, or an
// error message), per docs/design.md.
func (r *Result) Failed() bool {
	return r.Status == 0 || r.Status >= 400 || r.Err != ""
}

// Sink receives results one at a time, never concurrently, in completion
// order: from the step's workers or its collector goroutine (recorder). It
// must not keep the pointer.
type Sink interface {
	Record(*Result)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(*Result)

// Record calls f(r).
func (f SinkFunc) Record(r *Result) { f(r) }

type multi []Sink

func (m multi) Record(r *Result) {
	for _, s := range m {
		s.Record(r)
	}
}

// Multi returns a Sink that records to every non-nil sink in order.
func Multi(sinks ...Sink) Sink {
	var m multi
	for _, s := range sinks {
		if s != nil {
			m = append(m, s)
		}
	}
	if len(m) == 1 {
		return m[0]
	}
	return m
}

// Discard is a Sink that drops results (warm-up requests).
var Discard Sink = SinkFunc(func(*Result) {})
