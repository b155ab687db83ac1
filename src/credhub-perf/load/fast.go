package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The lean HTTP/1.1 client: one connection per worker, requests written as
// one pre-rendered buffer, responses parsed from a bufio.Reader without
// allocating, phase timings taken directly. net/http with httptrace costs
// several times more CPU per request, which a load generator spends instead
// of the server under test.

const userAgent = "Go-http-client/1.1"

type fconn struct {
	nc net.Conn
	sc *sockConn // the TCP connection under nc, when it could be wrapped
	br *bufio.Reader
}

// alive: the idle connection c can carry a request (alive.go). Without a
// sockConn (not Linux, or rawSock off) there is no look: yes.
func (c *fconn) alive() bool {
	if c.sc == nil {
		return alive(c.nc, nil, c.br)
	}
	return alive(c.nc, &c.sc.probe, c.br)
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

func (w *worker) doFast(ctx context.Context, r *Result) bool {
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
	for attempt := 0; ; attempt++ {
		retry := w.roundTrip(ctx, r, req, start, attempt == 0)
		if !retry {
			break
		}
	}
	r.Latency = e.since(start, at)
	return true
}

// roundTrip sends req once. It returns true when a reused connection turned
// out to be closed by the server before answering, which is worth one retry
// on a fresh connection, as net/http does: for a request it may replay
// (alive.go), or one of which nothing was written. A worker's own idle
// connection is looked at first (a pool's was, when lent: acquire), and
// one the server closed meanwhile is replaced before anything is sent.
func (w *worker) roundTrip(ctx context.Context, r *Result, req []byte, start time.Time, mayRetry bool) bool {
	e := w.e
	c := w.fc
	reused := c != nil && c.nc != nil
	if reused && mayRetry && !w.onLoan && !c.alive() {
		w.closeConn()
		reused = false
	}
	if !reused {
		var err error
		c, err = w.dial(ctx, r, start)
		w.endDial()
		if err != nil {
			r.Err = errText(ctx, "dial", err)
			return false
		}
	}
	if dl := w.deadline(start); !dl.IsZero() {
		_ = c.nc.SetDeadline(dl)
	}
	if ctx.Err() != nil {
		r.Err = errText(ctx, "write", ctx.Err())
		w.closeConn()
		return false
	}
	t0 := start
	if !reused {
		t0 = time.Now()
	}
	wn, err := c.nc.Write(req)
	t1 := time.Now()
	r.ReqWrite = t1.Sub(t0)
	if err != nil {
		w.closeConn()
		if reused && mayRetry && staleConn(err) && ctx.Err() == nil && (wn == 0 || w.t.replayableTemplate()) {
			return true
		}
		r.Err = errText(ctx, "write", err)
		return false
	}
	var loc *[]byte
	if !e.opts.DisableRedirects {
		w.loc = w.loc[:0]
		loc = &w.loc
	}
	status, n, closeAfter, tfb, err := readResponse(c.br, w.t.bodyless, loc)
	if c.sc != nil && c.sc.hold && c.sc.wroteAt.After(t1) {
		// The bytes went out inside the first read.
		t1 = c.sc.wroteAt
		r.ReqWrite = t1.Sub(t0)
	}
	if !tfb.IsZero() {
		r.RespDelay = tfb.Sub(t1)
		r.RespRead = time.Since(tfb)
	} else {
		r.RespDelay = time.Since(t1)
	}
	r.BytesIn = n
	if err != nil {
		w.closeConn()
		if reused && mayRetry && tfb.IsZero() && staleConn(err) && ctx.Err() == nil && w.t.replayableTemplate() {
			r.RespDelay, r.BytesIn = 0, 0
			return true
		}
		r.Status = status
		if status == 0 {
			r.Err = errText(ctx, "read", err)
		} else {
			r.Err = errText(ctx, "read body", err)
		}
		return false
	}
	r.Status = status
	if closeAfter || !e.opts.KeepAlive {
		w.closeConn()
	}
	if loc != nil && len(w.loc) > 0 && isRedirect(status) {
		w.followRedirect(ctx, r, req, status)
	}
	return false
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// followRedirect follows a redirect the way net/http (and so rakyll/hey)
// does, through net/http: redirects are rare in load tests, so this path
// need not be lean. The result takes the final status; its latency, taken
// by the caller, covers every hop.
func (w *worker) followRedirect(ctx context.Context, r *Result, raw []byte, status int) {
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
	target, err := base.Parse(string(w.loc))
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

func staleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isConnReset(err)
}

func (w *worker) dial(ctx context.Context, r *Result, start time.Time) (*fconn, error) {
	e := w.e
	d := net.Dialer{KeepAlive: -1, Deadline: w.deadline(start)}
	var nc net.Conn
	var err error
	if ip := net.ParseIP(e.server.hostname); ip != nil {
		nc, err = d.DialContext(ctx, "tcp", net.JoinHostPort(e.server.hostname, e.server.port))
	} else {
		// Resolve separately so the DNS phase can be reported on its own.
		t0 := time.Now()
		var addrs []net.IPAddr
		lctx := ctx
		if !d.Deadline.IsZero() {
			var cancel context.CancelFunc
			lctx, cancel = context.WithDeadline(ctx, d.Deadline)
			defer cancel()
		}
		addrs, err = net.DefaultResolver.LookupIPAddr(lctx, e.server.hostname)
		r.DNS = time.Since(t0)
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			nc, err = d.DialContext(ctx, "tcp", net.JoinHostPort(a.IP.String(), e.server.port))
			if err == nil {
				break
			}
		}
		if nc == nil && err == nil {
			err = fmt.Errorf("no addresses for %s", e.server.hostname)
		}
	}
	if err != nil {
		r.DNSDial = time.Since(start)
		return nil, err
	}
	var spare *sockConn
	if w.fc != nil && w.fc.nc == nil {
		spare = w.fc.sc // its connection is closed: only the worker uses it
	}
	sc := wrapSock(nc, spare)
	if sc != nil {
		nc = sc
		if e.opts.Timeout > 0 {
			// Without a deadline a lost wake-up would hang a worker
			// forever; with one, holding writes is safe. Held from the
			// start, each handshake flight goes out from inside the read
			// that waits for the answer, and the client's last flight
			// (Finished) leaves in one segment with the request.
			sc.hold = true
		}
	}
	if e.server.tlsConf != nil {
		tc := tls.Client(nc, e.server.tlsConf)
		if !d.Deadline.IsZero() {
			_ = nc.SetDeadline(d.Deadline)
		}
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			r.DNSDial = time.Since(start)
			return nil, &handshakeError{err}
		}
		nc = tc
	}
	r.DNSDial = time.Since(start)
	w.mu.Lock()
	if w.dead {
		w.mu.Unlock()
		_ = nc.Close()
		return nil, ctx.Err()
	}
	if w.fc == nil {
		w.fc = &fconn{}
	}
	w.fc.nc = nc
	w.fc.sc = sc
	if w.fc.br == nil {
		w.fc.br = bufio.NewReaderSize(nc, 16<<10)
	} else {
		w.fc.br.Reset(nc)
	}
	c := w.fc
	w.mu.Unlock()
	return c, nil
}

type handshakeError struct{ err error }

func (h *handshakeError) Error() string { return h.err.Error() }
func (h *handshakeError) Unwrap() error { return h.err }

var (
	errMalformed = errors.New("malformed HTTP response")
	errTooLong   = errors.New("response header line too long")
)

// readResponse reads one response and discards its body. It returns the
// status, the body bytes, whether the server asked to close, and when the
// first byte arrived.
func readResponse(br *bufio.Reader, bodyless bool, loc *[]byte) (status int, n int64, closeAfter bool, tfb time.Time, err error) {
	if _, err = br.Peek(1); err != nil {
		return 0, 0, true, tfb, err
	}
	tfb = time.Now()
	for {
		var line []byte
		if line, err = br.ReadSlice('\n'); err != nil {
			return 0, 0, true, tfb, fixErr(err)
		}
		// "HTTP/1.1 200 OK"
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return 0, 0, true, tfb, errMalformed
		}
		status = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
		if status < 100 || status > 999 {
			return 0, 0, true, tfb, errMalformed
		}
		http10 := line[7] == '0'
		closeAfter = http10
		contentLength := int64(-1)
		chunked := false
		for {
			if line, err = br.ReadSlice('\n'); err != nil {
				return status, 0, true, tfb, fixErr(err)
			}
			if len(line) <= 2 && (len(line) == 1 || line[0] == '\r') {
				break
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return status, 0, true, tfb, errMalformed
			}
			name := line[:colon]
			val := bytes.TrimSpace(line[colon+1:])
			switch len(name) {
			case 8:
				if loc != nil && status >= 300 && status < 400 && bytes.EqualFold(name, []byte("Location")) {
					*loc = append((*loc)[:0], val...)
				}
			case 14:
				if bytes.EqualFold(name, []byte("Content-Length")) {
					v, ok := parseUint(val, 10)
					if !ok {
						return status, 0, true, tfb, errMalformed
					}
					contentLength = int64(v)
				}
			case 17:
				if bytes.EqualFold(name, []byte("Transfer-Encoding")) && containsFold(val, "chunked") {
					chunked = true
				}
			case 10:
				if bytes.EqualFold(name, []byte("Connection")) {
					if containsFold(val, "close") {
						closeAfter = true
					} else if http10 && containsFold(val, "keep-alive") {
						closeAfter = false
					}
				}
			}
		}
		if status >= 100 && status < 200 && status != 101 {
			continue // interim response; the real one follows
		}
		switch {
		case bodyless || status == 204 || status == 304 || status == 101:
			return status, 0, closeAfter || status == 101, tfb, nil
		case chunked:
			n, err = discardChunked(br)
			return status, n, closeAfter, tfb, err
		case contentLength >= 0:
			var d int
			d, err = br.Discard(int(contentLength))
			return status, int64(d), closeAfter, tfb, fixErr(err)
		default:
			// No length: the body runs to the end of the connection.
			n, err = io.Copy(io.Discard, br)
			return status, n, true, tfb, err
		}
	}
}

func fixErr(err error) error {
	if err == bufio.ErrBufferFull {
		return errTooLong
	}
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func discardChunked(br *bufio.Reader) (int64, error) {
	var total int64
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return total, fixErr(err)
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		line = bytes.TrimSpace(line)
		size, ok := parseUint(line, 16)
		if !ok {
			return total, errMalformed
		}
		if size == 0 {
			for { // trailers end with an empty line
				line, err = br.ReadSlice('\n')
				if err != nil {
					return total, fixErr(err)
				}
				if len(line) <= 2 && (len(line) == 1 || line[0] == '\r') {
					return total, nil
				}
			}
		}
		d, err := br.Discard(int(size))
		total += int64(d)
		if err != nil {
			return total, fixErr(err)
		}
		if line, err = br.ReadSlice('\n'); err != nil || len(bytes.TrimSpace(line)) != 0 {
			if err == nil {
				err = errMalformed
			}
			return total, fixErr(err)
		}
	}
}

func containsFold(b []byte, s string) bool {
	n := len(s)
	for i := 0; i+n <= len(b); i++ {
		if bytes.EqualFold(b[i:i+n], []byte(s)) {
			return true
		}
	}
	return false
}

// parseUint parses a decimal or hexadecimal length without allocating.
func parseUint(b []byte, base uint64) (uint64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		v = v*base + d
	}
	return v, true
}
