package load

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/credhub-perf/credhub-perf/load/idleconn"
)

// stdGate gives open-loop steps over net/http (the default client,
// keep-alive, HTTP/1.1) the lean pool's dial policy. net/http's Transport
// reuses its most recently used idle connection, but when none is idle it
// dials at once, for every request: after the tester lost the CPU for a
// few milliseconds, dozens of requests are due together, each dials, each
// handshake takes 1-2 ms of the tester's CPU on the core that also sends,
// and the requests due meanwhile dial in turn (measured: 280-420
// connections with -c 256 against the null server, where 20 were in
// flight). The gate lets a request through to the Transport when an idle
// connection is there for it, or when needDial names a reason to dial;
// otherwise it waits for a connection to come back, as the lean pool's
// requests do. The step's client caps connections at Concurrency
// (Transport.MaxConnsPerHost): -c stays the cap.
//
// The Transport's pool is read through its own hooks: GotConn (a request
// holds a connection; its first request counts it in), PutIdleConn (it is
// idle again: what a waiting request waits for) and the connection's
// Close (through the dial's wrapper, gatedConn).
type stdGate struct {
	dialPolicy
	// conns: open connections that carried a request, and the stashed
	// ones (below). A connection the Transport dials counts from its
	// first request on: a connection the request that dialled it did not
	// need (one came back first) goes to the Transport's idle pool when
	// its dial ends, without a hook. Counted idle from the dial's start
	// (through DialContext), a request let through for it would find none
	// and dial, and that dial's connection would go the same way
	// (measured: half of 256 dials at 10,000 req/s). Uncounted, such a
	// connection is found by the next request let through to dial, which
	// the Transport hands it.
	conns int
	busy  int // of them, held by a request (GotConn until idle again or closed)
	// pending: requests let through (for an idle connection, or to dial),
	// not yet at GotConn. The Transport gives a connection that comes back
	// to a request waiting on its dial first, so one let through to dial
	// counts against the idle ones too.
	pending int
	// waiting: requests registered to be told of a connection back in the
	// Transport's idle pool, one each, through freed (buffered for every
	// worker): decided under mu, so no word is lost between a request's
	// decision to wait and its wait.
	waiting int
	freed   chan struct{}
	// dials: tokens, one per request let through to dial, held until it
	// has a connection (the lean pool's bound on handshakes in flight).
	dials chan struct{}
	// connect dials a connection as the Transport would (TCP, then TLS
	// for https), counted out by its gatedConn's Close.
	connect func(ctx context.Context, network, addr string) (net.Conn, error)
	// stash: connections dialled before the step's clock (warm), for
	// addr; the Transport's dials take them first (under mu). Each is
	// counted in conns from its dial on, unlike the Transport's own: it
	// has done its handshake, and the next dial of the Transport (a
	// request let through for it) takes it.
	stash     []net.Conn
	stashAddr string
}

func newStdGate(clk Clock, workers int) *stdGate {
	return &stdGate{dialPolicy: dialPolicy{clk: clk}, freed: make(chan struct{}, workers), dials: make(chan struct{}, maxDials())}
}

// newGatedClient is net/http's client for the open-loop steps of one
// concurrency: at most conc connections, each counted by the gate.
//
// net/http cannot be handed connections, but it dials through its
// hooks: DialTLSContext for https (the TLS handshake done here, as the
// Transport's addTLS would: the same tls.Config, ServerName set the same
// way), DialContext for http. Both take a connection the gate dialled
// before the step's clock (warm) first.
func (e *Engine) newGatedClient(conc int) (*http.Client, *stdGate) {
	g := newStdGate(e.opts.Clock, conc)
	hc := e.newHTTPClient(conc)
	tr := hc.Transport.(*http.Transport)
	dial := tr.DialContext
	tcp := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &gatedConn{Conn: c, g: g}, nil
	}
	g.connect = tcp
	if e.server.scheme == "https" {
		conf, timeout := tr.TLSClientConfig, tr.TLSHandshakeTimeout
		g.connect = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return transportTLS(ctx, tcp, conf, timeout, network, addr)
		}
		tr.DialTLSContext = g.dial
		tr.DialContext = tcp // not used for https (net/http's rule)
	} else {
		tr.DialContext = g.dial
	}
	return hc, g
}

// transportTLS is net/http's TLS dial (Transport.addTLS): the Transport's
// tls.Config, its ServerName, when empty, the dialled host; the
// Transport's handshake timeout. Returned as a *tls.Conn, handshake done:
// net/http then records its TLS state as for its own dials.
func transportTLS(ctx context.Context, tcp func(context.Context, string, string) (net.Conn, error), conf *tls.Config, timeout time.Duration, network, addr string) (net.Conn, error) {
	raw, err := tcp(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if conf == nil {
		conf = &tls.Config{}
	}
	if conf.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			_ = raw.Close()
			return nil, err
		}
		conf = conf.Clone()
		conf.ServerName = host
	}
	tc := tls.Client(raw, conf)
	hctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = raw.Close()
		return nil, err
	}
	return tc, nil
}

// dial is the Transport's dial: a stashed connection for addr, else a
// new one. A stashed connection the server closed while it waited (an
// idle timeout between KeepConns steps, a server that closes right after
// the handshake) is dropped first (idleconn.Alive): net/http takes what a dial
// returns as new and would not retry a request that fails on it.
func (g *stdGate) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	for {
		c := g.unstash(addr)
		if c == nil {
			break
		}
		if stashAlive(c) {
			return c, nil
		}
		_ = c.Close() // counted out by its gatedConn
	}
	return g.connect(ctx, network, addr)
}

// stashAlive looks at a stashed connection just taken from the stash
// (only the caller holds it: no lock).
func stashAlive(c net.Conn) bool {
	gc := gatedOf(c)
	if gc == nil {
		return true
	}
	if gc.probe == nil {
		gc.probe = idleconn.NewProbe(gc.Conn) // made on first look: most of the Transport's dials are never stashed
	}
	return !aliveCheck || idleconn.Alive(c, gc.probe, nil)
}

// unstash takes a stashed connection for addr (nil: none). Stashed
// connections for another address (the engine dials one host, so never
// expected) are closed: none would take them.
func (g *stdGate) unstash(addr string) net.Conn {
	g.mu.Lock()
	n := len(g.stash)
	if n > 0 && addr == g.stashAddr {
		c := g.stash[n-1]
		g.stash = g.stash[:n-1]
		g.mu.Unlock()
		return c
	}
	g.mu.Unlock()
	if n > 0 {
		g.dropStash()
	}
	return nil
}

// dropStash closes the stashed connections (with the step's client, when
// the step does not keep its connections).
func (g *stdGate) dropStash() {
	g.mu.Lock()
	s := g.stash
	g.stash = nil
	g.mu.Unlock()
	for _, c := range s {
		_ = c.Close() // counted out by its gatedConn
	}
}

// warm dials, before the step's clock starts, the connections the step's
// first requests need into the stash, as the lean pool's warm does (the
// same count, predial; see connPool.warm for why): first one, timed
// (warmT, on the engine's clock), then the rest one after another
// (predialWith). A step with a
// connection idle (kept from the previous step: KeepConns) needs none. A
// failed dial is left to the requests, which record the error. Each dial
// is bounded by the client's timeout, as a request's would be.
func (g *stdGate) warm(ctx context.Context, e *Engine, concurrency int) {
	g.mu.Lock()
	n := g.idle()
	g.mu.Unlock()
	if n > 0 || ctx.Err() != nil {
		return
	}
	// The address net/http dials for the engine's URL (canonicalAddr;
	// a host net/http would rewrite (IDNA) just misses the stash).
	addr := net.JoinHostPort(e.server.hostname, e.server.port)
	g.predialWith(e, concurrency, func() bool { return g.warmOne(ctx, e.opts.Timeout, addr) })
}

// warmOne dials one connection into the stash; false when the dial failed.
func (g *stdGate) warmOne(ctx context.Context, timeout time.Duration, addr string) bool {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	c, err := g.connect(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	gc := gatedOf(c)
	g.mu.Lock()
	defer g.mu.Unlock()
	if gc == nil || gc.closed {
		return false
	}
	// Counted now: idle for the gate's decisions, so a request due finds
	// it (let through without a dial token) instead of waiting or dialling.
	gc.seen, gc.stashed = true, true
	g.conns++
	g.stash = append(g.stash, c)
	g.stashAddr = addr
	return true
}

// gatedOf is the gate's wrapper under a connection the Transport holds
// (nil: not one of the gate's).
func gatedOf(c net.Conn) *gatedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	gc, _ := c.(*gatedConn)
	return gc
}

// step readies the gate for a step at rate. The figures of a kept step
// (a warm-up whose connections the step goes on with) stay, as the lean
// pool's do; others start afresh, as a new pool would.
func (g *stdGate) step(rate float64, kept bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rate = rate
	if !kept {
		g.dialT, g.lat, g.floor, g.stallEnd, g.warmT = recent{}, recent{}, 0, time.Time{}, 0
	}
}

// gatedConn counts a connection out of the gate when it closes.
type gatedConn struct {
	net.Conn
	g      *stdGate
	holder *gateTicket // the request holding it; nil: idle (under g.mu)
	closed bool        // under g.mu
	seen   bool        // carried a request, or stashed: counted in g.conns (under g.mu)
	// stashed: dialled before the step's clock and not yet held by a
	// request (under g.mu): the first request on it did not dial.
	stashed bool
	// probe: the look at the socket of a stashed connection (stashAlive;
	// made then, read by net/http's goroutines only after).
	probe *idleconn.Probe
}

// Read reads the connection, or, while alive drains records the server
// sent after the handshake, only what the socket already holds.
func (c *gatedConn) Read(b []byte) (int, error) {
	if p := c.probe; p != nil && p.Draining() {
		return p.ReadNow(b)
	}
	return c.Conn.Read(b)
}

func (c *gatedConn) Close() error {
	g := c.g
	g.mu.Lock()
	if !c.closed {
		c.closed = true
		if c.seen {
			g.conns--
		}
		c.letGo()
	}
	g.mu.Unlock()
	return c.Conn.Close()
}

// letGo ends the holder's hold of c. Called with g.mu held.
func (c *gatedConn) letGo() {
	if t := c.holder; t != nil {
		c.holder = nil
		c.g.busy--
		close(t.back)
	}
}

// gateTicket is one request's passage through the gate. Its hooks run on
// the Transport's goroutines, PutIdleConn possibly after the request
// ended, so each request has its own.
type gateTicket struct {
	g       *stdGate
	pending bool // let through, not yet at GotConn (under g.mu)
	token   bool // holds a dial token (under g.mu)
	// stallDial: its dial is the one for needDial's "stall" (under g.mu)
	stallDial bool
	// stashedConn: the connection of its last GotConn was stashed (under
	// g.mu): again may send the request once more.
	stashedConn bool
	conn        atomic.Pointer[gatedConn]
	// back is closed once the connection the request held is idle again
	// or closed (made with conn).
	back chan struct{}
}

// enter lets the request through to the Transport, or makes it wait for a
// connection to come back while needDial names no reason to dial. A
// request let through to dial holds one of the dial tokens until it has a
// connection, as the lean pool's do. nil: the request waited until due,
// the bound of its wait (connwait.go), and is not let through.
func (g *stdGate) enter(ctx context.Context, timer **time.Timer, due *dueWait) *gateTicket {
	t := &gateTicket{g: g}
	waited, stalled := false, false
	for looked := false; ; looked = true {
		// Only a request that waited can be past its deadline here: the
		// pacer hands none over that late (job).
		if looked && ctx.Err() == nil && due.passed() {
			// A word of a connection back that it took passes on.
			g.mu.Lock()
			g.tellWaiter()
			g.mu.Unlock()
			return nil
		}
		g.mu.Lock()
		if g.idle() > 0 {
			g.letThrough(t, false)
			g.mu.Unlock()
			return t
		}
		why, patience, seen := g.decide(waited, stalled)
		g.waiting++
		g.mu.Unlock()
		if ctx.Err() != nil {
			g.unwait()
			return g.through(t, false) // fails at the Transport, recorded
		}
		if why != "" {
			var fired <-chan time.Time // armed only when no token is free
			token, told := false, false
			select {
			case <-g.freed:
				told = true
			case g.dials <- struct{}{}:
				token = true
			default:
				// Every dial token is taken (each dial bounded by the
				// client's timeout): wait, up to this request's deadline.
				fired = due.arm(ctx)
				select {
				case <-g.freed:
					told = true
				case g.dials <- struct{}{}:
					token = true
				case <-fired:
				case <-ctx.Done():
				}
				due.disarm()
			}
			switch {
			case told: // told meanwhile: look again
				continue
			case token:
				if g.unwait() {
					<-g.dials
					continue
				}
				if why == "stall" {
					if !g.claimStallDial(seen) {
						<-g.dials
						stalled = false
						continue
					}
					t.stallDial = true // read under g.mu, after through (which takes it)
				}
				return g.through(t, true)
			case ctx.Err() != nil:
				g.unwait()
				return g.through(t, false) // fails at the Transport, recorded
			}
			if g.unwait() {
				continue // told as the deadline came: the top passes the word on
			}
			return nil // at its deadline (fired)
		}
		_, ok := waitFor(ctx, g.clk, timer, g.freed, patience, due)
		if ok || g.unwait() {
			continue // look again: taken by a newcomer, it waits again
		}
		if due.passed() {
			continue // returns at the top, unless ctx ended
		}
		g.mu.Lock()
		waited, stalled = true, g.handed == seen
		g.mu.Unlock()
	}
}

// through lets t's request through to the Transport (to dial: with a dial
// token).
func (g *stdGate) through(t *gateTicket, token bool) *gateTicket {
	g.mu.Lock()
	g.letThrough(t, token)
	g.mu.Unlock()
	return t
}

// letThrough counts t's request in flight. Called with g.mu held.
func (g *stdGate) letThrough(t *gateTicket, token bool) {
	g.lent++
	g.pending++
	t.pending = true
	t.token = token
}

// unwait ends a request's registration as waiting, unless it was told of a
// connection back meanwhile (true).
func (g *stdGate) unwait() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.freed:
		return true
	default:
		g.waiting--
		return false
	}
}

// arrived ends t's passage: its dial token back, if it holds one, and no
// longer pending. Called with g.mu held.
func (t *gateTicket) arrived() {
	if t.token {
		t.token = false
		<-t.g.dials
	}
	if t.stallDial {
		t.stallDial = false
		t.g.stallDial = false
	}
	if t.pending {
		t.pending = false
		t.g.pending--
	}
}

// gotConn: the request holds c (the Transport's net.Conn for it);
// predialled: c was dialled before the step's clock and this is its first
// request, which therefore did not dial (whatever net/http's Reused says).
func (t *gateTicket) gotConn(c net.Conn) (predialled bool) {
	gc := gatedOf(c)
	g := t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	t.arrived() // it has its connection: its dial, if any, is over
	if gc != nil && gc.stashed {
		gc.stashed, predialled = false, true
	}
	t.stashedConn = predialled
	if gc != nil && !gc.closed && gc.holder != nil && gc.holder != t {
		// The Transport gave the connection to this request before the
		// readLoop that freed it called the last holder's PutIdleConn:
		// that hold is over.
		gc.letGo()
	}
	if gc != nil && !gc.closed && gc.holder == nil && t.back == nil {
		if !gc.seen {
			gc.seen = true
			g.conns++
		}
		gc.holder = t
		t.back = make(chan struct{})
		g.busy++
		t.conn.Store(gc)
	}
	return predialled
}

// putIdle: the Transport took the request's connection back into its idle
// pool (err nil), or will close it (err set: Close counts it out).
func (t *gateTicket) putIdle(err error) {
	gc := t.conn.Load()
	if gc == nil || err != nil {
		return
	}
	g := t.g
	g.mu.Lock()
	if gc.holder == t {
		gc.letGo()
	}
	// Something came back (needDial's "stalled" is false), whether to a
	// request waiting here or to one the Transport holds for its dial.
	g.handed++
	g.tellWaiter()
	g.mu.Unlock()
}

// idle: connections the Transport holds idle, less those the requests let
// through will take (a request let through to dial is given a connection
// that comes back before its own dial ends). Called with g.mu held.
func (g *stdGate) idle() int { return g.conns - g.busy - g.pending }

// tellWaiter wakes one waiting request when a connection is idle for it.
// Called with g.mu held.
func (g *stdGate) tellWaiter() {
	if g.waiting > 0 && g.idle() > 0 {
		g.waiting--
		g.freed <- struct{}{} // room for every worker: does not block
	}
}

// backWait bounds end's wait for the request's connection to be idle
// again: net/http puts it back on another goroutine microseconds after the
// body was read (or closes it); far longer means something else holds it.
const backWait = 50 * time.Millisecond

// end: the request is over. It waits until its connection is idle again
// (or closed), as a request of the lean pool gives its connection back
// before it ends: otherwise the next request due could find none idle and
// dial a spare one for the microseconds net/http takes to put it back.
//
// The connection is nearly always put back by the readLoop goroutine that
// the body's last read has just made runnable: end first yields to it
// once, and waits on a timer (the worker's, reused) only when that was
// not enough (another P runs it, or it had more to do). A wait on a new
// timer per request would be one more allocation, a timer-heap insertion
// and a park per request on the default client's hottest path.
func (t *gateTicket) end(timer **time.Timer) {
	g := t.g
	if t.conn.Load() != nil && !closed(t.back) {
		runtime.Gosched()
		if !closed(t.back) {
			tm := armTimer(timer, backWait) // stopped and drained after every use
			select {
			case <-t.back:
				stopTimer(tm)
			case <-tm.C:
			}
		}
	}
	g.mu.Lock()
	t.arrived()
	g.lent--
	g.mu.Unlock()
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// again sends req once more, on another connection, when its first try
// failed on a stashed connection before any byte of a response: the
// server closed it between the look at it (stashAlive) and the request,
// or no look was possible (idleconn). net/http retries so on a reused
// connection, never on one a dial returned, which a stashed one is to it.
// Only a request net/http would replay (idleconn.Replayable; its body, if any,
// rewound by GetBody), only after an error of a closed connection (a
// timeout is the server's answer, not a dead connection), and once. It
// returns the second try's outcome, or (nil, err) when there is none.
// The latency still counts from the first try's schedule, and its
// DNS+dialup, when the second try dials, from the first try's GetConn:
// the time the dead connection cost is in the row, not hidden.
func (t *gateTicket) again(ctx context.Context, hc *http.Client, req *http.Request, tr *stdTrace, err error) (*http.Response, error) {
	g := t.g
	g.mu.Lock()
	stashed := t.stashedConn
	g.mu.Unlock()
	if !stashed || tr.reused.Load() || tr.firstByte.Load() != 0 || ctx.Err() != nil || !closedConnErr(err) {
		return nil, err
	}
	if !idleconn.Replayable(req.Method, func(k string) bool { _, ok := req.Header[k]; return ok }) {
		return nil, err
	}
	next := req
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return nil, err
		}
		body, berr := req.GetBody()
		if berr != nil {
			return nil, err
		}
		next = req.Clone(req.Context())
		next.Body = body
	}
	t.rearm()
	first := tr.getConn.Load()
	tr.reset()
	resp, err := hc.Do(next)
	if first != 0 {
		tr.getConn.Store(first)
	}
	return resp, err
}

// closedConnErr: err (from http.Client.Do) says the connection was closed
// under the request (EOF, reset, broken pipe, or net/http's word for an
// idle connection the server closed).
func closedConnErr(err error) bool {
	return idleconn.PeerClosed(err) || strings.Contains(err.Error(), "server closed idle connection")
}

// rearm readies t for its request's second try (again): the first
// connection is let go if net/http has not closed it yet, and the request
// counts as let through again until its GotConn.
func (t *gateTicket) rearm() {
	g := t.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if gc := t.conn.Load(); gc != nil && gc.holder == t {
		gc.letGo()
	}
	t.conn.Store(nil)
	t.back = nil
	t.stashedConn = false
	if !t.pending {
		t.pending = true
		g.pending++
	}
}

// reset forgets the marks of a request's first try (again).
func (t *stdTrace) reset() {
	for _, a := range []*atomic.Int64{&t.dnsStart, &t.dnsDone, &t.getConn, &t.gotConn, &t.wrote, &t.firstByte} {
		a.Store(0)
	}
	t.reused.Store(false)
	t.predialled.Store(false)
}
