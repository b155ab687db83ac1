package load

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
	"time"
)

// The net/http path, the default (the lean client is opt-in with
// ClientOptions.FastHTTP; HTTP/2 and proxies always come here). Phase timings
// come from httptrace as in rakyll/hey.

// newHTTPClient builds a client on its own Transport; maxConns > 0 caps the
// connections it opens (a closed-loop worker's one connection).
func (e *Engine) newHTTPClient(maxConns int) *http.Client {
	tr := &http.Transport{
		MaxConnsPerHost:     maxConns,
		TLSClientConfig:     e.server.tlsConf,
		DisableKeepAlives:   !e.opts.KeepAlive,
		DisableCompression:  e.opts.DisableCompression,
		MaxIdleConnsPerHost: 10000,
		ForceAttemptHTTP2:   e.opts.HTTP2,
		DialContext:         dialDNS((&net.Dialer{KeepAlive: -1, Timeout: e.opts.Timeout}).DialContext),
		// Since Go 1.23 a dial outlives the request that started it (for
		// a later request to use): without these it could hang for ever
		// on a server that accepts and never completes a handshake,
		// holding one of MaxConnsPerHost's connections until the step's
		// end. The gate's own dials (stdgate.go) take the same.
		TLSHandshakeTimeout: e.opts.Timeout,
	}
	if !e.opts.HTTP2 {
		// A non-nil empty map turns HTTP/2 off even when the server offers it.
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	if e.opts.ProxyURL != nil {
		tr.Proxy = http.ProxyURL(e.opts.ProxyURL)
	}
	c := &http.Client{Transport: tr, Timeout: e.opts.Timeout}
	if e.opts.DisableRedirects {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return c
}

func (w *worker) doStd(ctx context.Context, r *Result) bool {
	e := w.e
	seq := e.seq.Add(1)

	dctx := ctx
	if !w.ioDue.IsZero() && e.opts.Timeout > 0 {
		// Open loop: the request ends by its schedule + the timeout,
		// however long it waited for a connection or a worker. This
		// deadline is the client's Timeout's context, set sooner: net/http
		// then adds none of its own.
		var cancel context.CancelFunc
		dctx, cancel = context.WithDeadline(ctx, w.ioDue)
		defer cancel()
	}
	tr, rctx := newStdTrace(dctx, w.gt)
	req, err := w.newStdRequest(rctx, seq)
	if err != nil {
		r.Start = e.now()
		r.Err = err.Error()
		return !w.pastEnd(r.Start)
	}

	if !w.sendAt.IsZero() && !e.holdUntil(ctx, w.sendAt) {
		// Built before its schedule (Engine.pace's handEarly), and the
		// step ended before it came: not sent (openLoop records nothing).
		w.unsent = true
		return false
	}
	start, at := e.begin()
	if w.pastEnd(at) {
		return false
	}
	r.Start = at
	tr.base = start // before Do: no hook runs earlier
	w.sendStd(ctx, r, req, tr)
	end := time.Now()
	r.Latency = end.Sub(start)
	if e.opts.Clock != nil {
		r.Latency = e.since(start, at)
	}
	tr.phases(r, end)
	return true
}

// newStdTrace is a request's phase stamps and the context that carries
// them to its trace hooks (gt: its passage through the open-loop gate,
// nil when none).
//
// Trace callbacks may run on the transport's goroutines (HTTP/2 reads
// and writes on separate ones, and late callbacks after a timeout), so
// they only store atomic timestamps that are read once Do returns.
// The request carries its trace from the start: a request made and
// then given the trace's context by WithContext is a second copy of
// the Request per request. DNS has no hook here: a request's lookup
// happens only when it dials, and the dial finds its trace in the
// context (dialDNS), which spares every request that reuses a
// connection the lookup hooks httptrace would otherwise install.
func newStdTrace(ctx context.Context, gt *gateTicket) (*stdTrace, context.Context) {
	tr := &stdTrace{Context: ctx}
	trace := &httptrace.ClientTrace{
		GetConn: func(string) { tr.mark(&tr.getConn) },
		GotConn: func(info httptrace.GotConnInfo) {
			tr.reused.Store(info.Reused)
			tr.mark(&tr.gotConn)
			if gt != nil && gt.gotConn(info.Conn) {
				tr.predialled.Store(true)
			}
		},
		WroteRequest:         func(httptrace.WroteRequestInfo) { tr.mark(&tr.wrote) },
		GotFirstResponseByte: func() { tr.mark(&tr.firstByte) },
	}
	if gt != nil {
		trace.PutIdleConn = gt.putIdle
	}
	return tr, httptrace.WithClientTrace(tr, trace)
}

// newStdRequest builds the request of sequence number seq from the
// worker's request type, on ctx; an error is the Result's message.
func (w *worker) newStdRequest(ctx context.Context, seq uint64) (*http.Request, error) {
	e, t := w.e, w.t // the connection's options, the request type's template
	w.tmp = t.target.render(w.tmp[:0], seq, w.rng)
	urlStr := e.server.baseURL + string(w.tmp)
	var body io.Reader
	w.body = t.body.render(w.body[:0], seq, w.rng)
	if len(w.body) > 0 {
		body = bytes.NewReader(w.body)
	}
	req, err := http.NewRequestWithContext(ctx, t.method, urlStr, body)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	if len(w.body) == 0 && t.needsLen {
		req.ContentLength = 0
		req.Body = http.NoBody
	}
	for i := range t.headers {
		h := &t.headers[i]
		if h.fixed != nil && req.Header[h.name] == nil {
			// The value rendered once (New), shared read-only: its
			// slice is full, so an Add to it copies.
			req.Header[h.name] = h.fixed
			continue
		}
		w.tmp = h.val.render(w.tmp[:0], seq, w.rng)
		req.Header.Add(h.name, string(w.tmp))
	}
	if e.opts.Host != "" {
		req.Host = e.opts.Host
	}
	if e.opts.Authorize != nil {
		if err := e.opts.Authorize(req); err != nil {
			return nil, fmt.Errorf("authorize: %w", err)
		}
	}
	return req, nil
}

// sendStd sends req and reads its response into r: status, body bytes,
// or the error of the phase it failed in.
func (w *worker) sendStd(ctx context.Context, r *Result, req *http.Request, tr *stdTrace) {
	gt := w.gt
	resp, err := w.hc.Do(req)
	if err != nil && gt != nil {
		resp, err = gt.again(ctx, w.hc, req, tr, err) // a dead stashed connection (stdgate.go)
	}
	if err == nil {
		r.Status = resp.StatusCode
		n, rerr := io.Copy(io.Discard, resp.Body)
		r.BytesIn = n
		resp.Body.Close()
		if rerr != nil {
			r.Err = errText(ctx, "read body", rerr)
		}
		return
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	phase := "dial"
	switch {
	case tr.wrote.Load() != 0:
		phase = "read"
	case tr.gotConn.Load() != 0:
		phase = "write"
	case w.e.server.scheme == "https" && isTLSError(err):
		phase = "tls handshake"
	}
	r.Err = errText(ctx, phase, err)
}

// phases sets r's phase timings from the stamps; end is when the
// response was read.
func (t *stdTrace) phases(r *Result, end time.Time) {
	endNS := int64(end.Sub(t.base)) + 1
	if !t.reused.Load() && !t.predialled.Load() {
		// net/http may hand a request an idle connection that another
		// request freed while this one's dial (and its DNS lookup, traced
		// here) was still running: that lookup is not this request's.
		// A connection the gate dialled before the step's clock comes
		// through a dial too (not Reused), of no time on the step's clock:
		// its first request did not dial.
		r.DNS = t.span(&t.dnsStart, &t.dnsDone, 0)
		r.DNSDial = t.span(&t.getConn, &t.gotConn, 0)
	}
	r.ReqWrite = t.span(&t.gotConn, &t.wrote, 0)
	r.RespDelay = t.span(&t.wrote, &t.firstByte, 0)
	r.RespRead = t.span(&t.firstByte, nil, endNS)
}

// stdTrace is a request's phase stamps. It is also the context the
// request's trace context wraps (the parent's, with stdTraceKey naming
// it), so that the request's dial finds it (dialDNS) without a context
// value of its own per request.
type stdTrace struct {
	context.Context
	base                                                  time.Time
	dnsStart, dnsDone, getConn, gotConn, wrote, firstByte atomic.Int64 // ns since base + 1; 0 = not seen
	reused                                                atomic.Bool
	predialled                                            atomic.Bool // the gate's, dialled before the step (gotConn)
}

func (t *stdTrace) mark(a *atomic.Int64) { a.Store(int64(time.Since(t.base)) + 1) }

type stdTraceKey struct{}

func (t *stdTrace) Value(key any) any {
	if key == (stdTraceKey{}) {
		return t
	}
	return t.Context.Value(key)
}

// dialDNS wraps a Transport's dial so that the DNS lookup of a dial
// started for a request is traced into that request's stamps, as
// httptrace's DNS hooks on the request would (net/http dials on a
// context that keeps the request's values): only dials pay for the
// hooks. The dial's connection may go to another request; the lookup
// counts for the request that dialled, when it used the connection it
// dialled (stdTrace.phases).
func dialDNS(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if t, ok := ctx.Value(stdTraceKey{}).(*stdTrace); ok {
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
				DNSStart: func(httptrace.DNSStartInfo) { t.mark(&t.dnsStart) },
				DNSDone:  func(httptrace.DNSDoneInfo) { t.mark(&t.dnsDone) },
			})
		}
		return dial(ctx, network, addr)
	}
}

// span is b - a when both were seen (b may be given as a value instead).
func (t *stdTrace) span(a, b *atomic.Int64, bv int64) time.Duration {
	av := a.Load()
	if b != nil {
		bv = b.Load()
	}
	if av == 0 || bv == 0 || bv < av {
		return 0
	}
	return time.Duration(bv - av)
}

func isTLSError(err error) bool {
	var re *tls.RecordHeaderError
	s := err.Error()
	return errors.As(err, &re) || bytes.Contains([]byte(s), []byte("tls:")) || bytes.Contains([]byte(s), []byte("x509:"))
}
