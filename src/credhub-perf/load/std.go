package load

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"time"
)

// The net/http path: HTTP/2, proxies, and ForceNetHTTP. Phase timings come
// from httptrace as in rakyll/hey.

func (e *Engine) newHTTPClient() *http.Client {
	tr := &http.Transport{
		TLSClientConfig:     e.tlsConf,
		DisableKeepAlives:   !e.opts.KeepAlive,
		DisableCompression:  e.opts.DisableCompression,
		MaxIdleConnsPerHost: 10000,
		ForceAttemptHTTP2:   e.opts.HTTP2,
		DialContext:         (&net.Dialer{KeepAlive: -1}).DialContext,
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

func (w *worker) doStd(ctx context.Context, r *Result) {
	e := w.e
	seq := e.seq.Add(1)
	w.tmp = e.target.render(w.tmp[:0], seq, w.rng)
	urlStr := e.baseURL + string(w.tmp)
	var body io.Reader
	w.body = e.body.render(w.body[:0], seq, w.rng)
	if len(w.body) > 0 {
		body = bytes.NewReader(w.body)
	}
	req, err := http.NewRequestWithContext(ctx, e.method, urlStr, body)
	if err != nil {
		r.Start = time.Now()
		r.Err = "request: " + err.Error()
		return
	}
	if len(w.body) == 0 && e.needsLen {
		req.ContentLength = 0
		req.Body = http.NoBody
	}
	for i := range e.headers {
		h := &e.headers[i]
		w.tmp = h.val.render(w.tmp[:0], seq, w.rng)
		req.Header.Add(h.name, string(w.tmp))
	}
	if e.opts.Host != "" {
		req.Host = e.opts.Host
	}
	if e.opts.Authorize != nil {
		if err := e.opts.Authorize(req); err != nil {
			r.Start = time.Now()
			r.Err = "authorize: " + err.Error()
			return
		}
	}

	var dnsStart, connStart, reqStart, delayStart, resStart time.Time
	phase := "dial"
	trace := &httptrace.ClientTrace{
		DNSStart: func(httptrace.DNSStartInfo) { dnsStart = time.Now() },
		DNSDone:  func(httptrace.DNSDoneInfo) { r.DNS = time.Since(dnsStart) },
		GetConn:  func(string) { connStart = time.Now() },
		GotConn: func(info httptrace.GotConnInfo) {
			if !info.Reused {
				r.DNSDial = time.Since(connStart)
			}
			reqStart = time.Now()
			phase = "write"
		},
		WroteRequest: func(httptrace.WroteRequestInfo) {
			delayStart = time.Now()
			r.ReqWrite = delayStart.Sub(reqStart)
			phase = "read"
		},
		GotFirstResponseByte: func() {
			resStart = time.Now()
			r.RespDelay = resStart.Sub(delayStart)
		},
	}
	req = req.WithContext(httptrace.WithClientTrace(ctx, trace))
	start := time.Now()
	r.Start = start
	resp, err := e.hc.Do(req)
	if err == nil {
		r.Status = resp.StatusCode
		n, rerr := io.Copy(io.Discard, resp.Body)
		r.BytesIn = n
		resp.Body.Close()
		if rerr != nil {
			r.Err = errText(ctx, "read body", rerr)
		}
	} else {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if phase == "dial" && e.scheme == "https" && isTLSError(err) {
			phase = "tls handshake"
		}
		r.Err = errText(ctx, phase, err)
	}
	end := time.Now()
	if !resStart.IsZero() {
		r.RespRead = end.Sub(resStart)
	}
	r.Latency = end.Sub(start)
}

func isTLSError(err error) bool {
	var re *tls.RecordHeaderError
	s := err.Error()
	return errors.As(err, &re) || bytes.Contains([]byte(s), []byte("tls:")) || bytes.Contains([]byte(s), []byte("x509:"))
}
