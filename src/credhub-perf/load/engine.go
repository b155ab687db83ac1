package load

import (
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/credhub-perf/credhub-perf/leanhttp"
	"github.com/credhub-perf/credhub-perf/load/idleconn"
)

type header struct {
	name string
	val  *text
	// fixed: a value without per-request parts, rendered once as
	// net/http's header value (len = cap = 1; nil when templated).
	fixed []string
}

// Engine sends requests described by a Template with ClientOptions. One
// Engine may Run many steps, one after another.
type Engine struct {
	opts ClientOptions
	requestType
	server server
	mix    mixDraw
	seq    atomic.Uint64 // {{seq}}: shared by a mix's request types
	std    stdClient
	lean   leanClient
	hooks  testHooks
}

// requestType is the compiled Template of one request type: what differs
// between the request types of a mix (each has an Engine of its own,
// whose requestType the workers read through worker.t).
type requestType struct {
	name     string // Template.Name, copied into each Result
	method   string
	target   *text // request target: path and query
	body     *text
	headers  []header
	hasUA    bool
	bodyless bool // HEAD: responses carry no body
	needsLen bool // send Content-Length even when the body is empty
	// replayable: net/http would send the request again after its
	// connection turned out closed (idleconn.Replayable; header names as
	// the template spells them).
	replayable bool
}

// server is where requests go and how the client proves itself there.
type server struct {
	scheme   string
	host     string // host[:port] as in the URL
	hostname string
	port     string
	hostHdr  string
	baseURL  string // scheme://host
	tlsConf  *tls.Config
	// authURL is the URL of the request ClientOptions.Authorize sees on
	// the lean path, which builds no http.Request of its own.
	authURL *url.URL
}

// mixDraw is the request-type draw of a mix (NewMix): kinds, one engine
// each for its compiled template (nil for one type); cum, their
// cumulative weights; seed and runs seed the workers' draws.
type mixDraw struct {
	kinds []*Engine
	cum   []uint64
	seed  uint64
	runs  uint64
}

// stdClient is the state of the net/http path (std.go, stdgate.go).
type stdClient struct {
	hc *http.Client // nil on the lean path
	// gate: the open-loop dial policy of hc, when hc is the gated client
	// of open-loop steps of gateConc workers (keep-alive HTTP/1.1; nil
	// otherwise). kept: the last step kept its connections
	// (Step.KeepConns).
	gate     *stdGate
	gateConc int
	kept     bool
}

// leanClient is the state of the lean path (lean.go, leanpool.go).
type leanClient struct {
	on     bool
	client *leanhttp.Client
	static []byte // pre-rendered request (no per-request values)
	// redirectClient follows redirects for the lean client.
	redirectOnce   sync.Once
	redirectClient *http.Client
	// kept is the open-loop connection pool a step with KeepConns left for
	// the next Run (nil: none).
	kept *connPool
}

// testHooks are set by tests only.
type testHooks struct {
	// cpuRead: the process CPU the open-loop pacer reads (cpuGauge); nil:
	// the system's on the system clock, none on a simulated one.
	cpuRead func() (time.Duration, bool)
	// handLead: on a test's clock, how early the pacer hands net/http's
	// open-loop requests over (handEarly); the system clock's lead is
	// the waker's margin.
	handLead time.Duration
}

// New validates opts and t (certificates, CA bundle, URL, templates) and
// builds an Engine. Every error is one line naming the problem.
func New(opts ClientOptions, t Template) (*Engine, error) {
	if opts.Clock == System {
		opts.Clock = nil // the system clock's fast paths (see now, begin)
	}
	e := &Engine{opts: opts}
	e.name = t.Name
	if err := e.setMethod(t.Method); err != nil {
		return nil, err
	}
	if err := e.server.parseURL(t.URL); err != nil {
		return nil, err
	}
	files := pickCache{}
	if err := e.compileTarget(t.URL, files); err != nil {
		return nil, err
	}
	var err error
	if e.body, err = compileText(t.Body, "body", files); err != nil {
		return nil, err
	}
	if err := e.compileHeaders(t.Header, files); err != nil {
		return nil, err
	}
	e.replayable = idleconn.Replayable(e.method, e.hasHeader)
	e.server.hostHdr = e.server.host
	if e.opts.Host != "" {
		e.server.hostHdr = e.opts.Host
	}
	if err := e.setupTLS(); err != nil {
		return nil, err
	}
	if err := e.chooseClient(); err != nil {
		return nil, err
	}
	if opts.Authorize != nil {
		e.server.authURL, _ = url.Parse(e.server.baseURL + "/")
	}
	return e, nil
}

// setMethod checks and sets the request method (GET when empty).
func (e *Engine) setMethod(method string) error {
	e.method = strings.ToUpper(strings.TrimSpace(method))
	if e.method == "" {
		e.method = http.MethodGet
	}
	if !validToken(e.method) {
		return fmt.Errorf("invalid HTTP method %q", method)
	}
	e.bodyless = e.method == http.MethodHead
	e.needsLen = e.method == http.MethodPost || e.method == http.MethodPut || e.method == http.MethodPatch
	return nil
}

// compileTarget compiles the request target (what rawURL has after
// scheme://host, fragment dropped), which must hold no whitespace: the
// lean client writes it into the request line as it is.
func (e *Engine) compileTarget(rawURL string, files pickCache) error {
	rawTarget := rawURL[len(e.server.baseURL):]
	if rawTarget == "" || rawTarget[0] != '/' {
		rawTarget = "/" + rawTarget
	}
	if i := strings.IndexByte(rawTarget, '#'); i >= 0 {
		rawTarget = rawTarget[:i]
	}
	var err error
	if e.target, err = compileText(rawTarget, "URL", files); err != nil {
		return err
	}
	for _, s := range e.target.segs {
		if s.kind == segPick {
			for n, l := range s.lines {
				if strings.ContainsAny(string(l), " \t\x00\x7f") {
					return fmt.Errorf("template in URL: line %d of a {{pick}} file contains whitespace, which a URL cannot hold: %q", n+1, l)
				}
			}
		}
		if s.kind == segLit && strings.ContainsAny(string(s.lit), " \t\r\n") {
			return fmt.Errorf("URL %q contains whitespace: percent-encode it (%%20)", rawURL)
		}
	}
	return nil
}

// compileHeaders compiles the template's headers. A Host header becomes
// the Host override (unless ClientOptions.Host is set); framing headers
// are dropped.
func (e *Engine) compileHeaders(hdr http.Header, files pickCache) error {
	for name, vals := range hdr {
		if !validToken(name) {
			return fmt.Errorf("invalid header name %q", name)
		}
		canon := textproto.CanonicalMIMEHeaderKey(name)
		switch canon {
		case "Host":
			if e.opts.Host == "" && len(vals) > 0 {
				e.opts.Host = vals[0]
			}
			continue
		case "Content-Length", "Transfer-Encoding", "Connection":
			// The engine frames requests itself; a user value would
			// contradict the body or the keep-alive setting.
			continue
		case "User-Agent":
			e.hasUA = true
		}
		for _, v := range vals {
			if strings.ContainsAny(v, "\r\n") {
				return fmt.Errorf("header %s: value contains a line break", name)
			}
			vt, err := compileText(v, "header "+canon, files)
			if err != nil {
				return err
			}
			h := header{name: canon, val: vt}
			if vt.static() {
				h.fixed = []string{string(vt.render(nil, 0, nil))}
			}
			e.headers = append(e.headers, h)
		}
	}
	return nil
}

// hasHeader: the template sets header name (any case).
func (e *Engine) hasHeader(name string) bool {
	for i := range e.headers {
		if strings.EqualFold(e.headers[i].name, name) {
			return true
		}
	}
	return false
}

// setupTLS builds the client's TLS configuration for an https URL, and
// for a plain one still checks the files named (a typo should not pass
// silently).
func (e *Engine) setupTLS() error {
	o := e.opts.TLS
	if e.server.scheme == "https" {
		conf, err := buildTLSConfig(o)
		if err != nil {
			return err
		}
		if conf.ServerName == "" {
			conf.ServerName = e.server.hostname
		}
		e.server.tlsConf = conf
	} else if o.CertFile != "" || o.KeyFile != "" || o.CAFile != "" {
		if _, err := buildTLSConfig(o); err != nil {
			return err
		}
	}
	return nil
}

// chooseClient checks the options that pick a client and builds it: the
// lean client when asked for and able (HTTP/1.1, no proxy), else
// net/http's.
func (e *Engine) chooseClient() error {
	opts := e.opts
	if opts.HTTP2 && e.server.scheme != "https" {
		return fmt.Errorf("HTTP/2 needs an https URL (cleartext h2c is not supported)")
	}
	if opts.ProxyURL != nil && opts.ProxyURL.Host == "" {
		return fmt.Errorf("proxy URL %q has no host: use host:port or http://host:port", opts.ProxyURL.String())
	}
	e.lean.on = opts.FastHTTP && !opts.HTTP2 && opts.ProxyURL == nil
	if !e.lean.on {
		e.std.hc = e.newHTTPClient(0)
		return nil
	}
	e.lean.client = e.newLeanClient()
	if e.target.static() && e.body.static() && opts.Authorize == nil {
		allStatic := true
		for _, h := range e.headers {
			allStatic = allStatic && h.val.static()
		}
		if allStatic {
			e.lean.static, _ = e.renderRaw(nil, nil, 0, nil, nil)
		}
	}
	return nil
}

// CloseIdle closes the idle connections a step with KeepConns left open
// (a caller that will not Run again, e.g. after a failed warm-up).
func (e *Engine) CloseIdle() {
	if e.lean.kept != nil {
		e.lean.kept.closeAll()
		e.lean.kept = nil
	}
	e.closeIdleStd()
	e.std.kept = false
}

// closeIdleStd closes net/http's idle connections, and those its gate
// dialled before a step that no request took.
func (e *Engine) closeIdleStd() {
	if e.std.hc != nil {
		e.std.hc.CloseIdleConnections()
	}
	if e.std.gate != nil {
		e.std.gate.dropStash()
	}
}

// Names of the two HTTP clients, as meta.json's http_client records them.
const (
	StdHTTPName  = "net/http"
	FastHTTPName = "lean"
)

// HTTPClient names the client that sends this engine's requests
// (StdHTTPName or FastHTTPName) and, when ClientOptions.FastHTTP was asked
// for and not used, why.
func (e *Engine) HTTPClient() (name, note string) {
	switch {
	case e.lean.on:
		return FastHTTPName, ""
	case !e.opts.FastHTTP:
		return StdHTTPName, ""
	case e.opts.HTTP2:
		return StdHTTPName, "HTTP/2 is sent by net/http"
	default:
		return StdHTTPName, "a proxy is used through net/http"
	}
}

// redactUserinfo hides a user name and password before the host
// (https://user:pw@host), so no message repeats them.
func redactUserinfo(raw string) string {
	pre, rest := "", raw
	if k := strings.Index(raw, "://"); k >= 0 {
		pre, rest = raw[:k+3], raw[k+3:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		return pre + "REDACTED@" + rest[at+1:]
	}
	return raw
}

func (s *server) parseURL(raw string) error {
	shown := redactUserinfo(raw) // the URL as messages may print it
	if raw == "" {
		return errors.New("no URL given: pass an http:// or https:// URL")
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return fmt.Errorf("URL %q has no scheme: use http://HOST/... or https://HOST/...", shown)
	}
	scheme = strings.ToLower(scheme)
	if scheme != "http" && scheme != "https" {
		return fmt.Errorf("URL %q: unsupported scheme %q, use http or https", shown, scheme)
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host := rest[:end]
	if strings.Contains(host, "{{") {
		return fmt.Errorf("URL %q: templates may only appear in the path and query, not the host", shown)
	}
	if strings.Contains(host, "@") {
		return fmt.Errorf("URL %q: credentials in the URL are not supported; use -a or a header", shown)
	}
	u, err := url.Parse(scheme + "://" + host + "/")
	if err != nil {
		return fmt.Errorf("bad URL %q: %w", shown, err)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("URL %q has no host", shown)
	}
	s.scheme, s.host, s.hostname = scheme, u.Host, u.Hostname()
	s.port = u.Port()
	if s.port == "" {
		s.port = "80"
		if scheme == "https" {
			s.port = "443"
		}
	}
	s.baseURL = raw[:len(raw)-len(rest)] + host
	return nil
}

func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

// worker is one sender: its connection, buffers and random source.
type worker struct {
	e   *Engine
	t   *Engine // the request type of the request in progress: e, or one of e.mix.kinds
	mix uint64  // splitmix64 state of the request-type draw (mixes only)
	rng *rand.Rand
	res Result // the request in progress (not on the stack: it escapes)
	// end: in a closed-loop step with a duration, no request stamped at
	// or after it is sent (zero: no end).
	end time.Time
	// Rendering buffers: the lean path's whole request (buf), the body,
	// the net/http path's URL and header values (tmp).
	buf, body, tmp []byte

	// The net/http path (std.go).
	hc *http.Client // the client (closed loop: the worker's own)
	gt *gateTicket  // open loop: the request's passage through the gate
	// sendAt: the schedule of a request handed over before it
	// (Engine.pace's handEarly): doStd holds it until then (zero: none).
	// unsent: the step ended during that hold, the request not sent.
	sendAt time.Time
	unsent bool

	// The lean path (lean.go, leanpool.go).
	// lean sends the request, on the worker's own connection or one lent
	// by the pool (nil on net/http's path).
	lean *leanhttp.Sender
	areq *http.Request // handed to ClientOptions.Authorize, reused
	// onLoan: an open-loop request holds the pool's connection or dial
	// token; dialDone gives back the dial token it holds (nil: none),
	// once its dial has ended.
	onLoan   bool
	dialDone func()

	// backToBack: a closed loop without -q, each request sent as soon as
	// the last one ended (lean path: lookAfter).
	backToBack bool

	// Open loop, either path.
	wait *time.Timer // the wait for a connection given back (pool or gate)
	// due: the bound of the request's wait for a connection
	// (connwait.go); ioDue: its I/O deadline from its schedule on the
	// system clock (zero: on a test clock, and in closed loop).
	due   dueWait
	ioDue time.Time
}

// endDial gives back a dial token, if the request holds one.
func (w *worker) endDial() {
	if w.dialDone != nil {
		w.dialDone()
		w.dialDone = nil
	}
}

// pick draws the next request's type in a mix (w.t); callers test
// e.mix.kinds first, so one type costs a nil test. splitmix64 per worker:
// deterministic for a seed, no lock, no allocation.
func (w *worker) pick() {
	w.mix += 0x9e3779b97f4a7c15
	z := w.mix
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	cum := w.e.mix.cum
	// Lemire's multiply-shift onto [0, total): bias below total/2^32.
	x := (z >> 32) * cum[len(cum)-1] >> 32
	i := 0
	for x >= cum[i] {
		i++
	}
	w.t = w.e.mix.kinds[i]
}

// NewMix builds an Engine whose requests are drawn per request from ts,
// template i with probability weights[i] / sum(weights); types of weight 0
// are never sent. Every template must name the same scheme and host (one
// target). seed makes the draws reproducible.
func NewMix(opts ClientOptions, ts []Template, weights []int, seed uint64) (*Engine, error) {
	if len(ts) == 0 || len(ts) != len(weights) {
		return nil, fmt.Errorf("mix: %d templates and %d weights: give one weight per template", len(ts), len(weights))
	}
	var e *Engine
	var total uint64
	for i, t := range ts {
		if weights[i] < 0 || weights[i] > 1<<20 {
			return nil, fmt.Errorf("mix: weight %d of %q is out of range: give 0 to %d", weights[i], t.Name, 1<<20)
		}
		if weights[i] == 0 {
			continue
		}
		k, err := New(opts, t)
		if err != nil {
			return nil, fmt.Errorf("mix: request type %q: %w", t.Name, err)
		}
		if e == nil {
			// The connection side of the mix (TLS, client, sequence),
			// built from the first type's template.
			if e, err = New(opts, t); err != nil {
				return nil, err
			}
		} else if k.server.baseURL != e.server.baseURL {
			return nil, fmt.Errorf("mix: request type %q targets %s, the others %s: one mix has one target", t.Name, k.server.baseURL, e.server.baseURL)
		}
		total += uint64(weights[i])
		e.mix.kinds = append(e.mix.kinds, k)
		e.mix.cum = append(e.mix.cum, total)
	}
	if e == nil {
		return nil, fmt.Errorf("mix: every weight is 0: give at least one request type a weight above 0")
	}
	e.mix.seed = seed
	return e, nil
}

func newRNG() *rand.Rand {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return rand.New(rand.NewPCG(binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])))
}

// abort makes in-flight I/O on the worker's lean connection fail now (on
// net/http's path the requests' context does).
func (w *worker) abort() {
	if w.lean != nil {
		w.lean.Abort()
	}
}

// closeConn closes the worker's lean connection, if open.
func (w *worker) closeConn() {
	if w.lean != nil {
		w.lean.CloseConn()
	}
}

// do sends one request into r; false when it was not sent because its
// stamp fell at or after the step's end (pastEnd).
func (w *worker) do(ctx context.Context, r *Result) bool {
	if w.e.lean.on {
		return w.doLean(ctx, r)
	}
	return w.doStd(ctx, r)
}

// pastEnd checks the step's end against the request's own start stamp,
// taken just before it is sent: checked against an earlier clock reading,
// a worker preempted between the check and the stamp sent (and recorded)
// a request after the end.
func (w *worker) pastEnd(at time.Time) bool { return !w.end.IsZero() && !at.Before(w.end) }

// Run sends one step's requests and records every request issued (failures
// included) to sink. It returns when the step is done, when ctx is cancelled
// (with ctx's error; in-flight requests are aborted and recorded), or on an
// invalid step.
func (e *Engine) Run(ctx context.Context, s Step, sink Sink) error {
	if err := s.validate(); err != nil {
		return err
	}
	if sink == nil {
		sink = Discard
	}
	e.mix.runs++ // each step's draws differ, reproducibly
	pool := e.leanPool(ctx, s)
	if pool != nil {
		defer e.keepOrClosePool(ctx, s, pool)
	}
	var pol *dialPolicy // the step's dial policy, told of the tester's stalls
	if pool != nil {
		pol = &pool.dialPolicy
	}
	handEarly := false
	if gate := e.stdGateFor(ctx, s); gate != nil {
		pol, handEarly = &gate.dialPolicy, true
	}
	var clk stepTimes
	if s.Rate == 0 {
		if !s.StartAt.IsZero() && !e.sleepUntil(ctx, new(*time.Timer), s.StartAt) {
			// (Open loop waits in its pacer, whose first request is due
			// at start: a Go timer could wake a millisecond late.)
			return ctx.Err()
		}
		clk = e.stepTimes(s)
	}
	workers := e.newWorkers(s)
	rec, collected := newRecorder(s, sink)
	var wg sync.WaitGroup
	var jobs chan job
	if s.Rate > 0 {
		jobs = startOpenLoop(ctx, workers, pool, rec, &wg)
		clk = e.stepTimes(s)
	}
	// Before the first result: open-loop workers wait for the pacer's
	// first job, handed over after this.
	rec.runStart = clk.runStart
	finished := abortOnCancel(ctx, workers)
	if s.Rate > 0 {
		e.pace(ctx, s, clk.start, clk.end, jobs, pol, handEarly)
		close(jobs)
	} else {
		startClosedLoop(ctx, s, clk, workers, rec, &wg)
	}
	wg.Wait()
	e.closeWorkerClients(workers)
	close(finished)
	rec.close()
	<-collected
	e.endStd(ctx, s)
	return ctx.Err()
}

// leanPool readies the connection pool of an open-loop step over the lean
// client with keep-alive (nil for any other step): workers share
// keep-alive connections (most recently used first) so a light step keeps
// few of them open, and the connections its first requests need are
// dialled before the step's clock starts (warm). A pool kept by the
// previous step (Step.KeepConns) comes with its warm connections and its
// dial and latency figures; one the step cannot use is closed.
func (e *Engine) leanPool(ctx context.Context, s Step) *connPool {
	pool := e.lean.kept
	e.lean.kept = nil
	if !(s.Rate > 0 && e.lean.on && e.opts.KeepAlive) {
		if pool != nil {
			pool.closeAll()
		}
		return nil
	}
	if pool == nil {
		pool = newConnPool(maxDials(), e.opts.Clock, s.Rate, s.Concurrency)
	}
	pool.rate = s.Rate
	pool.forWorkers(s.Concurrency)
	pool.warm(ctx, e, s.Concurrency)
	return pool
}

// keepOrClosePool keeps the step's pool for the next Run when the step
// asked to (and was not cancelled), else closes its connections.
func (e *Engine) keepOrClosePool(ctx context.Context, s Step, pool *connPool) {
	if s.KeepConns && ctx.Err() == nil {
		e.lean.kept = pool
	} else {
		pool.closeAll()
	}
}

// stdGateFor readies net/http's gate for an open-loop keep-alive HTTP/1.1
// step, and returns it (nil for any other step). The gated client is one
// per concurrency, so that MaxConnsPerHost (not safe to change while the
// Transport may close a connection) is the step's -c.
func (e *Engine) stdGateFor(ctx context.Context, s Step) *stdGate {
	kept := e.std.kept
	e.std.kept = false
	if !(s.Rate > 0 && e.std.hc != nil && e.opts.KeepAlive && !e.opts.HTTP2 && e.opts.ProxyURL == nil) {
		return nil
	}
	if e.std.gate == nil || e.std.gateConc != s.Concurrency {
		e.closeIdleStd()
		e.std.hc, e.std.gate = e.newGatedClient(s.Concurrency)
		e.std.gateConc = s.Concurrency
		kept = false
	}
	e.std.gate.step(s.Rate, kept)
	e.std.gate.warm(ctx, e, s.Concurrency)
	return e.std.gate
}

// stepTimes are a step's marks on the engine's clock: its start, the
// origin of its Results' Offset, and its end (zero: none).
type stepTimes struct {
	start, runStart, end time.Time
}

// stepTimes reads the step's marks, its start now unless the step names one.
func (e *Engine) stepTimes(s Step) stepTimes {
	var t stepTimes
	t.start = s.StartAt
	if t.start.IsZero() {
		t.start = e.now()
	}
	t.runStart = s.RunStart
	if t.runStart.IsZero() {
		t.runStart = t.start
	}
	if s.Duration > 0 {
		t.end = t.start.Add(s.Duration)
	}
	return t
}

// newWorkers makes the step's workers: Concurrency, or fewer in a closed
// loop of fewer requests.
func (e *Engine) newWorkers(s Step) []*worker {
	n := s.Concurrency
	if s.Rate == 0 && s.Requests > 0 && s.Requests < n {
		n = s.Requests
	}
	workers := make([]*worker, n)
	for i := range workers {
		w := &worker{e: e, t: e, rng: newRNG(), hc: e.std.hc, due: dueWait{clk: e.opts.Clock}}
		if e.lean.on {
			w.lean = e.lean.client.NewSender(w.endDial)
		}
		workers[i] = w
		if e.mix.kinds != nil {
			workers[i].mix = e.mix.seed ^ (e.mix.runs<<32 + uint64(i)*0x9e3779b97f4a7c15)
		}
		if s.Rate == 0 && e.std.hc != nil && !e.opts.HTTP2 {
			// Closed loop: each worker keeps one connection, as the lean
			// client does and hey promises. A shared Transport would dial a
			// spare connection whenever a worker's next request asks
			// before its last response's connection is back in the idle
			// pool (net/http returns it from another goroutine), so the
			// handshake count would depend on scheduling.
			workers[i].hc = e.newHTTPClient(1)
		}
	}
	return workers
}

// startOpenLoop starts the open-loop workers, each waiting for the pacer
// to hand it a request through the returned channel, and returns once
// every one waits: the step's clock starts then, since starting
// Concurrency goroutines took 0.7-1 ms (-c 256), by which the first
// request would have left late.
func startOpenLoop(ctx context.Context, workers []*worker, pool *connPool, rec *recorder, wg *sync.WaitGroup) chan job {
	jobs := make(chan job)
	var ready sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		ready.Add(1)
		go func(w *worker) {
			defer wg.Done()
			defer w.closeConn()
			w.openLoop(ctx, jobs, pool, rec, ready.Done)
		}(w)
	}
	ready.Wait()
	return jobs
}

// startClosedLoop starts the closed-loop workers, the step's requests
// shared among them.
func startClosedLoop(ctx context.Context, s Step, clk stepTimes, workers []*worker, rec *recorder, wg *sync.WaitGroup) {
	n := len(workers)
	for i, w := range workers {
		wg.Add(1)
		go func(i int, w *worker) {
			defer wg.Done()
			defer w.closeConn()
			count := 0
			if s.Requests > 0 {
				count = s.Requests / n
				if i < s.Requests%n {
					count++
				}
			}
			w.closedLoop(ctx, s, clk.start, clk.end, count, rec)
		}(i, w)
	}
}

// abortOnCancel aborts the workers' in-flight I/O once ctx is done, until
// the returned channel is closed.
func abortOnCancel(ctx context.Context, workers []*worker) chan<- struct{} {
	finished := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			for _, w := range workers {
				w.abort()
			}
		case <-finished:
		}
	}()
	return finished
}

// closeWorkerClients closes the idle connections of the closed-loop
// workers' own net/http clients.
func (e *Engine) closeWorkerClients(workers []*worker) {
	for _, w := range workers {
		if w.hc != nil && w.hc != e.std.hc {
			w.hc.CloseIdleConnections()
		}
	}
}

// endStd ends the step's net/http connections, or keeps the open-loop
// ones for the next Run (Step.KeepConns); and closes the lean client's
// redirect connections.
func (e *Engine) endStd(ctx context.Context, s Step) {
	if e.std.hc != nil && !(s.KeepConns && s.Rate > 0 && ctx.Err() == nil) {
		e.closeIdleStd()
	} else if e.std.hc != nil {
		e.std.kept = true
	}
	if e.lean.redirectClient != nil {
		e.lean.redirectClient.CloseIdleConnections()
	}
}

func (s Step) validate() error {
	switch {
	case s.Concurrency < 1:
		return fmt.Errorf("step: concurrency must be at least 1, got %d", s.Concurrency)
	case s.Rate < 0:
		return fmt.Errorf("step: rate must not be negative, got %g", s.Rate)
	case s.QPS < 0:
		return fmt.Errorf("step: per-worker QPS must not be negative, got %g", s.QPS)
	case s.Requests < 0:
		return fmt.Errorf("step: requests must not be negative, got %d", s.Requests)
	case s.Duration < 0:
		return fmt.Errorf("step: duration must not be negative, got %s", s.Duration)
	case s.Requests == 0 && s.Duration == 0:
		return errors.New("step: give a number of requests or a duration")
	}
	return nil
}

func (w *worker) closedLoop(ctx context.Context, s Step, start, end time.Time, count int, rec *recorder) {
	var timer *time.Timer
	var interval time.Duration
	if s.QPS > 0 {
		interval = time.Duration(float64(time.Second) / s.QPS)
	}
	next := start
	w.end = end
	w.backToBack = interval == 0
	for k := 0; count == 0 || k < count; k++ {
		if interval > 0 {
			if !end.IsZero() && !next.Before(end) {
				return
			}
			if !w.e.sleepUntil(ctx, &timer, next) {
				return
			}
			next = next.Add(interval)
		}
		if ctx.Err() != nil {
			return
		}
		if w.e.mix.kinds != nil {
			w.pick()
		}
		w.res = Result{Request: w.t.name}
		if !w.do(ctx, &w.res) {
			return
		}
		rec.add(&w.res)
	}
}

// pace hands the step's requests to the workers, each at its scheduled
// time. A request waits for a free worker when all Concurrency are busy;
// it then leaves late and its sched-lag is counted in its latency, up to
// the client's timeout (job).
//
// handEarly (net/http's open loop): where the pacer would wake early and
// spin to the schedule (requests far apart), it hands the request over
// as it wakes instead, and the worker builds it and then spins to the
// schedule itself (Engine.holdUntil, from doStd). Building a net/http
// request (its deadline context, trace, URL and headers) takes 40-60 µs
// of the tester's CPU at 80 requests/s, where every request finds cold
// caches: built after the schedule, that time would be in every latency;
// built early, it fits in the margin the pacer wakes early by. Nothing is
// sent before its schedule and latency still counts from it.
func (e *Engine) pace(ctx context.Context, s Step, start, end time.Time, jobs chan<- job, pol *dialPolicy, handEarly bool) {
	interval := float64(time.Second) / s.Rate
	wk := newWaker(ctx, e.opts.Clock, time.Duration(interval))
	if cw, ok := wk.(clockWaker); ok {
		cw.lead = e.hooks.handLead
		wk = cw
	}
	defer wk.close()
	var short testerShort
	if pol != nil {
		short.cpu = e.newCPUGauge()
		pol.noteTester(false) // a kept policy starts the step unjudged
	}
	for i := int64(0); s.Requests == 0 || i < int64(s.Requests); i++ {
		sched := start.Add(time.Duration(float64(i) * interval))
		if !end.IsZero() && !sched.Before(end) {
			return
		}
		woke := false
		if handEarly {
			woke = wk.near(ctx, sched)
		} else {
			woke = wk.until(ctx, sched)
		}
		if !woke {
			return
		}
		now := e.now()
		late := now.Sub(sched) > stallLate
		if pol != nil && late {
			pol.noteStall(now)
		}
		j := job{sched: sched}
		if to := e.opts.Timeout; to > 0 && now.Sub(sched) >= to {
			j.expired = now.Sub(sched)
		}
		select {
		case jobs <- j:
		case <-ctx.Done():
			return
		}
		if pol != nil {
			// After the hand-over: the worker does not wait for the
			// reading.
			pol.noteTester(short.judge(now, late))
		}
	}
}

// job is a request the pacer hands a worker: its schedule, and, when the
// pacer came to it a client timeout or more after it (every worker was
// busy meanwhile), that lateness: the worker records it failed without
// sending it. Its latency, counted from its schedule, is past the timeout
// whatever the server does. Sent, a server holding every request would
// hold the run too, one timeout per -c requests due: hey -rate 100 -c 4
// -z 2s -t 3 against such a server would run 150 s. The pacer judges, not the
// worker: its clock reading is the step's own, where a worker's, taken
// after the handover, can lag behind a simulated clock's.
type job struct {
	sched   time.Time
	expired time.Duration
}

// openLoop sends the requests the pacer hands over. With a pool the worker
// borrows a connection per request instead of owning one.
func (w *worker) openLoop(ctx context.Context, jobs <-chan job, pool *connPool, rec *recorder, ready func()) {
	ready()
	for j := range jobs {
		if w.openRequest(ctx, j, pool) {
			rec.add(&w.res)
		}
	}
}

// openRequest sends the request of j into w.res; false when it is not
// to be recorded (the step ended before its schedule came).
func (w *worker) openRequest(ctx context.Context, j job, pool *connPool) bool {
	sched := j.sched
	picked := w.e.now()
	if w.e.mix.kinds != nil {
		w.pick()
	}
	w.res = Result{Request: w.t.name}
	r := &w.res
	if j.expired > 0 {
		r.Start, r.Latency, r.SchedLag, r.Err = sched, j.expired, j.expired, notSent
		return true
	}
	if to := w.e.opts.Timeout; to > 0 {
		w.due.at = sched.Add(to)
		if w.e.opts.Clock == nil {
			w.ioDue = w.due.at
		}
	}
	pol, dialled, late, early := w.awaitConn(ctx, pool, sched, picked)
	if late {
		// Waited for a connection until its schedule + the timeout:
		// failed, not sent, as a request the pacer came to that late.
		r.Start, r.Latency, r.Err = sched, w.e.now().Sub(sched), notConnected
		if lag := picked.Sub(sched); lag > 0 {
			r.SchedLag = lag
		}
		return true
	}
	w.do(ctx, r)
	w.sendAt = time.Time{}
	unsent := w.unsent
	w.unsent = false
	w.endDial()
	if w.gt != nil {
		dialled = r.DNSDial > 0 // net/http: the request's own dial
		w.gt.end(&w.wait)
		w.gt = nil
	}
	if unsent {
		// The step ended before the request's schedule came: not
		// sent and not recorded, as one the pacer had not handed
		// over yet.
		return false
	}
	if pol != nil && r.Err == "" {
		if dialled {
			pol.noteDial(r.DNSDial)
		} else {
			pol.noteLatency(r.Start, r.Latency)
		}
	}
	if pool != nil {
		w.giveBack(pool)
	}
	// Lateness is taken when the worker took the request up: a wait for
	// a connection in borrow is the server's doing (every connection
	// busy or stalled), and counted as the tester's it would make
	// summary.json blame the tester for a server's pause. Latency
	// counts from the schedule all the same (no coordinated omission).
	ready := picked
	if early {
		ready = r.Start // when doStd sent it, or failed to build it
	}
	if lag := ready.Sub(sched); lag > 0 {
		r.SchedLag = lag
	}
	if late := r.Start.Sub(sched); late > 0 {
		r.Latency += late
	}
	r.Start = sched
	return true
}

// awaitConn waits, in open loop with keep-alive, for the request due at
// sched (taken up at picked) to have a connection: one from the lean
// pool, or a dial token; or net/http's gate letting it through. pol is the
// dial policy to tell of the request's outcome (nil: none); dialled: the
// request dials (lean pool: it holds a token); late: it waited until its
// deadline and is not to be sent; early: net/http's gate let it through
// before its schedule, at which it is to be sent (w.sendAt).
func (w *worker) awaitConn(ctx context.Context, pool *connPool, sched, picked time.Time) (pol *dialPolicy, dialled, late, early bool) {
	if pool != nil {
		late = !w.borrow(ctx, pool)
		return &pool.dialPolicy, w.dialDone != nil, late, false
	}
	g := w.e.std.gate
	if g == nil || w.hc != w.e.std.hc {
		return nil, false, false, false
	}
	w.gt = g.enter(ctx, &w.wait, &w.due)
	late = w.gt == nil
	if !late && sched.After(picked) {
		// Handed over before its schedule (pace): built now,
		// sent at its schedule. Let through by the gate before
		// it, the request is late only by the tester's doing
		// (a build that overran, the hold's wake-up), which is
		// its sched-lag; let through after it, it waited for a
		// connection, which is not (openRequest).
		w.sendAt = sched
		early = w.e.now().Before(sched)
	}
	return &g.dialPolicy, false, late, early
}

// notSent is the error of an open-loop request that waited the client's
// timeout for a free worker (all Concurrency busy) and was not sent.
const notSent = "not sent: waited the timeout for a free worker"

// now and sleepUntil read the engine's clock (the system clock when nil).
func (e *Engine) now() time.Time {
	if e.opts.Clock == nil {
		return time.Now()
	}
	return e.opts.Clock.Now()
}

func (e *Engine) sleepUntil(ctx context.Context, timer **time.Timer, t time.Time) bool {
	if e.opts.Clock == nil {
		return sleepUntil(ctx, timer, t)
	}
	return e.opts.Clock.SleepUntil(ctx, t)
}

// holdUntil returns at t (true) or once ctx is done (false): a spin on
// the system clock, as the pacer's (a timer would wake up to a
// millisecond late), a sleep on a test's clock.
func (e *Engine) holdUntil(ctx context.Context, t time.Time) bool {
	if e.opts.Clock == nil {
		return spinUntil(ctx, t)
	}
	return e.opts.Clock.SleepUntil(ctx, t)
}

// begin stamps a request's start: on the system clock (for its phase
// timings) and on the engine's clock (its Start). With the system clock
// one reading serves both.
func (e *Engine) begin() (real, at time.Time) {
	real = time.Now()
	if e.opts.Clock == nil {
		return real, real
	}
	return real, e.opts.Clock.Now()
}

// since is a request's latency on the engine's clock.
func (e *Engine) since(real, at time.Time) time.Duration {
	if e.opts.Clock == nil {
		return time.Since(real)
	}
	return e.opts.Clock.Now().Sub(at)
}
