package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/credhub-perf/credhub-perf/leanhttp"
)

// The engine's side of the lean HTTP/1.1 client (package leanhttp,
// ClientOptions.FastHTTP): each request rendered from its template into
// the bytes leanhttp writes as they are, sent by the worker's
// leanhttp.Sender, its outcome turned into the Result; and redirects,
// which the lean client leaves to net/http.

const userAgent = "Go-http-client/1.1"

// rawSock lets the lean client wrap its TCP connections for raw system
// calls on Linux (leanhttp's sockConn; leanhttp.Config.PortableIO when
// off), as read when New builds an engine. Tests turn it off to run the
// portable path on Linux too.
var rawSock = true

// newLeanClient is the lean client for e's server and options.
func (e *Engine) newLeanClient() *leanhttp.Client {
	return leanhttp.New(leanhttp.Config{
		Hostname:   e.server.hostname,
		Port:       e.server.port,
		TLS:        e.server.tlsConf,
		Timeout:    e.opts.Timeout,
		KeepAlive:  e.opts.KeepAlive,
		PortableIO: !rawSock,
	})
}

// leanAlive: the idle connection c can carry a request (unless a test
// turned the look off: aliveCheck).
func leanAlive(c *leanhttp.Conn) bool { return !aliveCheck || c.Alive() }

// lookAfter: a closed-loop worker without -q sends its next request a few
// microseconds after its last response began, on the same connection,
// which therefore never idled; a look at its socket then (idleconn.Alive:
// a recvfrom per request, a third of the worker's system calls and about
// 5 % of its CPU against a null server) finds what it would find on any
// busy connection. The look is for connections that idled: closed by an
// idle timeout (seconds in common servers and load balancers), between
// steps, or after the handshake. A server that closes within this window
// without saying so in its response races the request as it would race a
// look taken a moment earlier; the retry covers that for the requests
// net/http would replay, as net/http does (its read loop sees a close
// only once scheduled). A worker whose next request comes later than
// lookAfter (the tester stalled: a collection, the collector behind)
// looks as ever.
const lookAfter = time.Millisecond

// ownAlive: the worker's own idle connection c can carry the request
// starting at start (system clock): looked at unless it carried the
// worker's last request back to back (lookAfter).
func (w *worker) ownAlive(c *leanhttp.Conn, start time.Time) bool {
	if !aliveCheck {
		return true
	}
	if w.backToBack {
		return c.AliveRecent(start, lookAfter)
	}
	return c.Alive()
}

// renderRaw appends the request for sequence number seq to dst. bodyBuf is
// scratch space for the body (its length is needed before it is written).
func (e *Engine) renderRaw(dst, bodyBuf []byte, seq uint64, rng *rand.Rand, extra http.Header) ([]byte, []byte) {
	bodyBuf = e.body.render(bodyBuf[:0], seq, rng)
	dst = append(dst, e.method...)
	dst = append(dst, ' ')
	dst = e.target.render(dst, seq, rng)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, e.server.hostHdr...)
	dst = append(dst, "\r\n"...)
	if !e.hasUA {
		dst = append(dst, "User-Agent: "+userAgent+"\r\n"...)
	}
	for i := range e.headers {
		h := &e.headers[i]
		dst = append(dst, h.name...)
		dst = append(dst, ": "...)
		dst = h.val.render(dst, seq, rng)
		dst = append(dst, "\r\n"...)
	}
	for name, vals := range extra {
		for _, v := range vals {
			dst = append(dst, name...)
			dst = append(dst, ": "...)
			dst = append(dst, v...)
			dst = append(dst, "\r\n"...)
		}
	}
	if len(bodyBuf) > 0 || e.needsLen {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(bodyBuf)), 10)
		dst = append(dst, "\r\n"...)
	}
	if !e.opts.DisableCompression {
		dst = append(dst, "Accept-Encoding: gzip\r\n"...)
	}
	if !e.opts.KeepAlive {
		dst = append(dst, "Connection: close\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	dst = append(dst, bodyBuf...)
	return dst, bodyBuf
}

func (w *worker) request(seq uint64) ([]byte, error) {
	e := w.t // the request type's template; its connection options are w.e's
	if e.lean.static != nil {
		return e.lean.static, nil
	}
	var extra http.Header
	if e.opts.Authorize != nil {
		if w.areq == nil {
			w.areq = &http.Request{Method: e.method, URL: e.server.authURL, Header: http.Header{}, Host: e.server.hostHdr}
		}
		clear(w.areq.Header)
		if err := e.opts.Authorize(w.areq); err != nil {
			return nil, err
		}
		extra = w.areq.Header
	}
	w.buf, w.body = e.renderRaw(w.buf[:0], w.body, seq, w.rng, extra)
	return w.buf, nil
}

// doLean is do on the lean client: the request rendered, sent by the
// worker's Sender (once more on a fresh connection when a reused one
// turned out closed and the request may be replayed), its outcome put
// into r.
func (w *worker) doLean(ctx context.Context, r *Result) bool {
	e := w.e
	req, err := w.request(e.seq.Add(1))
	start, at := e.begin()
	if w.pastEnd(at) {
		return false
	}
	r.Start = at
	if err != nil {
		r.Err = "authorize: " + err.Error()
		return true
	}
	s := w.lean
	if c := s.Conn(); c.Open() && !w.onLoan && !w.ownAlive(c, start) {
		// The worker's own idle connection, closed by the server
		// meanwhile: replaced before anything is sent. (A pool's was
		// looked at when lent: acquire.)
		s.CloseConn()
	}
	q := leanhttp.Request{
		Raw:          req,
		Start:        start,
		Deadline:     w.deadline(start),
		Replayable:   w.t.replayable,
		Bodyless:     w.t.bodyless,
		WantLocation: !e.opts.DisableRedirects,
	}
	var o leanhttp.Outcome
	for try := 0; ; try++ {
		if !s.RoundTrip(ctx, &q, &o, try == 0) {
			break // at most one retry: only a first try may ask for one
		}
	}
	r.DNS, r.DNSDial, r.ReqWrite, r.RespDelay, r.RespRead = o.DNS, o.DNSDial, o.ReqWrite, o.RespDelay, o.RespRead
	r.Status, r.BytesIn = o.Status, o.BytesIn
	if o.Err != nil {
		r.Err = errText(ctx, o.Op, o.Err)
	} else if len(o.Location) > 0 && isRedirect(o.Status) {
		w.followRedirect(ctx, r, req, o.Status, o.Location)
	}
	r.Latency = e.since(start, at)
	return true
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// followRedirect follows a redirect to location the way net/http (and so
// rakyll/hey) does, through net/http: redirects are rare in load tests, so this path
// need not be lean. The result takes the final status; its latency, taken
// by the caller, covers every hop.
func (w *worker) followRedirect(ctx context.Context, r *Result, raw []byte, status int, location []byte) {
	e := w.e
	orig, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		r.Err = "redirect: " + err.Error()
		return
	}
	base, err := url.Parse(e.server.baseURL + orig.RequestURI)
	if err != nil {
		r.Err = "redirect: " + err.Error()
		return
	}
	target, err := base.Parse(string(location))
	if err != nil {
		r.Err = "redirect: bad Location: " + err.Error()
		return
	}
	method := orig.Method
	var body []byte
	if status == 307 || status == 308 {
		body, _ = io.ReadAll(orig.Body)
	} else if method != http.MethodGet && method != http.MethodHead {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, target.String(), bytes.NewReader(body))
	if err != nil {
		r.Err = "redirect: " + err.Error()
		return
	}
	for k, v := range orig.Header {
		if k != "Content-Length" && k != "Connection" && k != "Accept-Encoding" {
			req.Header[k] = v
		}
	}
	e.lean.redirectOnce.Do(func() { e.lean.redirectClient = e.newHTTPClient(0) })
	resp, err := e.lean.redirectClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		r.Err = errText(ctx, "redirect", err)
		return
	}
	r.Status = resp.StatusCode
	n, rerr := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r.BytesIn += n
	if rerr != nil {
		r.Err = errText(ctx, "read body", rerr)
	}
}
