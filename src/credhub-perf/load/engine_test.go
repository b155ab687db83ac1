package load_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

type collect struct {
	mu  sync.Mutex
	res []load.Result
}

func (c *collect) Record(r *load.Result) {
	c.mu.Lock()
	c.res = append(c.res, *r)
	c.mu.Unlock()
}

func mtlsOpts(p *loadtest.PKI, keepAlive bool) load.ClientOptions {
	return load.ClientOptions{
		TLS:       load.TLSOptions{CertFile: p.ClientCert, KeyFile: p.ClientKey, CAFile: p.CAFile},
		KeepAlive: keepAlive,
		Timeout:   10 * time.Second,
	}
}

// paths runs a subtest for the lean client and for net/http.
func paths(t *testing.T, f func(t *testing.T, force bool)) {
	t.Run("lean", func(t *testing.T) { f(t, false) })
	t.Run("net-http", func(t *testing.T) { f(t, true) })
}

func run(t *testing.T, opts load.ClientOptions, tmpl load.Template, s load.Step) []load.Result {
	t.Helper()
	e, err := load.New(opts, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	var c collect
	if err := e.Run(context.Background(), s, &c); err != nil {
		t.Fatal(err)
	}
	return c.res
}

func TestClientCertificatePresentedAndVerified(t *testing.T) {
	for _, kt := range []loadtest.KeyType{loadtest.RSA, loadtest.ECDSA} {
		t.Run(string(kt), func(t *testing.T) {
			p := loadtest.NewPKI(t, kt)
			var seen sync.Map
			srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if len(r.TLS.VerifiedChains) == 0 {
					http.Error(w, "unverified", 403)
					return
				}
				seen.Store(r.TLS.PeerCertificates[0].Subject.CommonName, true)
				io.WriteString(w, "ok")
			}), true, false)
			paths(t, func(t *testing.T, force bool) {
				opts := mtlsOpts(p, true)
				opts.FastHTTP = !force
				res := run(t, opts, load.Template{URL: srv.URL + "/x"}, load.Step{Concurrency: 3, Requests: 30})
				if len(res) != 30 {
					t.Fatalf("got %d results, want 30", len(res))
				}
				for _, r := range res {
					if r.Status != 200 || r.Err != "" || r.BytesIn != 2 {
						t.Fatalf("request failed: %+v", r)
					}
				}
				if _, ok := seen.Load(p.ClientName); !ok {
					t.Fatal("server did not see the client certificate")
				}
				// Without a client certificate the server must refuse, and the
				// failures must be recorded.
				opts.TLS.CertFile, opts.TLS.KeyFile = "", ""
				res = run(t, opts, load.Template{URL: srv.URL + "/x"}, load.Step{Concurrency: 2, Requests: 4})
				if len(res) != 4 {
					t.Fatalf("got %d results without a certificate, want 4", len(res))
				}
				for _, r := range res {
					if !r.Failed() || r.Err == "" {
						t.Fatalf("request without client certificate succeeded: %+v", r)
					}
				}
			})
		})
	}
}

func TestServerVerification(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false)
	opts := mtlsOpts(p, true)
	opts.TLS.CAFile = "" // system roots do not know our CA
	res := run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 1, Requests: 2})
	if len(res) != 2 || !strings.Contains(res[0].Err, "certificate") {
		t.Fatalf("unknown CA accepted: %+v", res)
	}
	opts.TLS.Insecure = true
	res = run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 1, Requests: 2})
	if res[0].Err != "" || res[0].Status != 200 {
		t.Fatalf("insecure request failed: %+v", res[0])
	}
	// Server name override: the certificate holds credhub.test but not
	// "example.invalid".
	opts = mtlsOpts(p, true)
	opts.TLS.ServerName = "example.invalid"
	res = run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 1, Requests: 1})
	if !strings.Contains(res[0].Err, "certificate") {
		t.Fatalf("wrong server name accepted: %+v", res[0])
	}
	opts.TLS.ServerName = "credhub.test"
	res = run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 1, Requests: 1})
	if res[0].Err != "" {
		t.Fatalf("server name override failed: %+v", res[0])
	}
}

func TestKeepAliveOffOneHandshakePerRequest(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	paths(t, func(t *testing.T, force bool) {
		srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "hello")
		}), true, false)
		opts := mtlsOpts(p, false)
		opts.FastHTTP = !force
		res := run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 4, Requests: 40})
		for _, r := range res {
			if r.Err != "" || r.DNSDial <= 0 {
				t.Fatalf("request failed or reused a connection: %+v", r)
			}
		}
		if h := srv.Handshakes(); h != 40 {
			t.Fatalf("keep-alive off: %d handshakes for 40 requests", h)
		}
		opts.KeepAlive = true
		before := srv.Handshakes()
		run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 4, Requests: 40})
		// One connection per worker on both paths (net/http: a Transport
		// per closed-loop worker, at most one connection each).
		if h := srv.Handshakes() - before; h != 4 {
			t.Fatalf("keep-alive on: %d handshakes for 4 workers", h)
		}
	})
}

// stallUntilClientGone holds a response until the client gave up on it
// (closed the connection), so a client timeout that fires late on a busy
// machine still finds no answer: a fixed sleep would race it. It then
// aborts the handler, so the server writes nothing: a handler that
// returned would send a 200 as soon as the client's timeout sent its
// close_notify, and net/http's transport uses a response that races its
// own close of the connection (persistConn.roundTrip), which a busy
// machine lets arrive. Bounded, so the test server can close.
func stallUntilClientGone(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(30 * time.Second):
	}
	panic(http.ErrAbortHandler)
}

func TestFailuresRecorded(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			stallUntilClientGone(r)
		case "/fail":
			http.Error(w, "boom", 500)
		}
	}), true, false)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "https://" + l.Addr().String() + "/"
	l.Close()

	paths(t, func(t *testing.T, force bool) {
		cases := []struct {
			url, want string
			status    int
		}{
			{refused, "connection refused", 0},
			{srv.URL + "/slow", "timeout", 0},
			{srv.URL + "/fail", "", 500},
		}
		for _, c := range cases {
			opts := mtlsOpts(p, true)
			opts.FastHTTP = !force
			// Only the slow case should time out, even on a loaded machine.
			if strings.HasSuffix(c.url, "/slow") {
				opts.Timeout = 200 * time.Millisecond
			}
			res := run(t, opts, load.Template{URL: c.url}, load.Step{Concurrency: 2, Requests: 6})
			if len(res) != 6 {
				t.Fatalf("%s: %d results, want 6", c.url, len(res))
			}
			for _, r := range res {
				if !r.Failed() || r.Status != c.status || !strings.Contains(r.Err, c.want) {
					t.Fatalf("%s: got status %d err %q, want %d %q", c.url, r.Status, r.Err, c.status, c.want)
				}
				if r.Start.IsZero() || r.Latency <= 0 {
					t.Fatalf("%s: failure without timing: %+v", c.url, r)
				}
			}
		}
	})
}

func TestPhasesWithinLatency(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.RSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		w.Write(make([]byte, 100000))
	}), true, false)
	paths(t, func(t *testing.T, force bool) {
		for _, ka := range []bool{true, false} {
			opts := mtlsOpts(p, ka)
			opts.FastHTTP = !force
			u := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
			res := run(t, opts, load.Template{URL: u}, load.Step{Concurrency: 2, Requests: 20})
			// The server's 2 ms lie between the stamp before the request's
			// write and the stamp after its first byte, so they are within
			// write + response delay, however late a preempted generator
			// takes either stamp. (The response delay alone may not hold
			// them: its start is stamped after the write returns.)
			for _, r := range res {
				sum := r.DNSDial + r.ReqWrite + r.RespDelay + r.RespRead
				if r.Err != "" || sum > r.Latency || r.BytesIn != 100000 {
					t.Fatalf("keepalive=%v: phases %v > latency %v or failure: %+v", ka, sum, r.Latency, r)
				}
				if r.ReqWrite+r.RespDelay < 2*time.Millisecond {
					t.Fatalf("keepalive=%v: write %v + response delay %v, less than the server's 2 ms", ka, r.ReqWrite, r.RespDelay)
				}
				if r.DNS > r.DNSDial {
					t.Fatalf("DNS %v longer than DNS+dial %v", r.DNS, r.DNSDial)
				}
			}
			if !ka && res[0].DNS == 0 {
				t.Fatalf("no DNS time for a name lookup: %+v", res[0])
			}
		}
	})
}

func TestResponseFraming(t *testing.T) {
	// Chunked bodies, bodies delimited by connection close, HEAD, 204 and
	// servers closing keep-alive connections (like Tomcat after 100
	// requests) must all be read correctly by the lean client.
	var n atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		switch r.URL.Path {
		case "/chunked":
			w.Write([]byte("abc"))
			w.(http.Flusher).Flush()
			w.Write([]byte("defgh"))
		case "/close":
			if k%3 == 0 {
				w.Header().Set("Connection", "close")
			}
			w.Write([]byte("12345678"))
		case "/redir":
			http.Redirect(w, r, "/final?x=1", http.StatusFound)
		case "/final":
			w.Write([]byte("final"))
		case "/nocontent":
			w.WriteHeader(204)
		case "/raw":
			conn, bw, _ := w.(http.Hijacker).Hijack()
			bw.WriteString("HTTP/1.1 200 OK\r\n\r\nuntil-eof")
			bw.Flush()
			conn.Close()
		default:
			w.Write([]byte("0123456789"))
		}
	})
	tlsSrv := loadtest.NewMTLSServer(t, loadtest.NewPKI(t, loadtest.ECDSA), handler, false, false)
	plain := httptest.NewServer(handler)
	defer plain.Close()
	for _, srv := range []*httptest.Server{tlsSrv.Server, plain} {
		for _, ka := range []bool{true, false} {
			framing(t, srv, ka)
		}
	}
}

func framing(t *testing.T, srv *httptest.Server, keepAlive bool) {
	opts := load.ClientOptions{KeepAlive: keepAlive, Timeout: 5 * time.Second, TLS: load.TLSOptions{Insecure: true}}
	for _, c := range []struct {
		method, path string
		bytes        int64
		status       int
	}{
		{"GET", "/chunked", 8, 200}, {"GET", "/close", 8, 200}, {"GET", "/nocontent", 0, 204},
		{"GET", "/raw", 9, 200}, {"HEAD", "/", 0, 200}, {"POST", "/", 10, 200},
		{"GET", "/redir", int64(len("<a href=\"/final?x=1\">Found</a>.\n\n")) + 5, 200},
	} {
		// The lean client's own framing, and net/http's alike.
		for _, fast := range []bool{true, false} {
			opts.FastHTTP = fast
			res := run(t, opts, load.Template{Method: c.method, URL: srv.URL + c.path, Body: ""}, load.Step{Concurrency: 2, Requests: 12})
			want := c.bytes
			if c.path == "/redir" && !fast {
				// net/http's client drains a redirect's own body itself:
				// only the final response's counts, as in rakyll/hey.
				want = int64(len("final"))
			}
			for _, r := range res {
				if r.Err != "" || r.Status != c.status || r.BytesIn != want {
					t.Fatalf("%s %s%s keep-alive %v fast-http %v: %+v", c.method, srv.URL, c.path, keepAlive, fast, r)
				}
			}
		}
	}
	opts.DisableRedirects = true
	for _, force := range []bool{false, true} {
		opts.FastHTTP = !force
		res := run(t, opts, load.Template{URL: srv.URL + "/redir"}, load.Step{Concurrency: 1, Requests: 2})
		if res[0].Status != 302 || res[0].Err != "" || res[0].Failed() {
			t.Fatalf("redirects disabled (net/http %v): %+v", force, res[0])
		}
	}
}

func TestHTTP2(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	var proto atomic.Value
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
	}), true, true)
	opts := mtlsOpts(p, true)
	opts.HTTP2 = true
	res := run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 4, Requests: 20})
	if len(res) != 20 || res[0].Err != "" || proto.Load() != "HTTP/2.0" {
		t.Fatalf("HTTP/2: proto %v, %+v", proto.Load(), res[0])
	}
	opts.HTTP2 = false
	run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 1, Requests: 1})
	if proto.Load() != "HTTP/1.1" {
		t.Fatalf("HTTP/1.1 requested, server saw %v", proto.Load())
	}
}

func TestTemplates(t *testing.T) {
	names := filepath.Join(t.TempDir(), "names.txt")
	os.WriteFile(names, []byte("/perf/a\n\n/perf/b\r\n/perf/c\n"), 0o600)
	type seen struct{ uri, body, hdr string }
	var mu sync.Mutex
	var got []seen
	srv := loadtest.NewMTLSServer(t, loadtest.NewPKI(t, loadtest.ECDSA), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.URL.RequestURI(), string(b), r.Header.Get("X-Id")})
		mu.Unlock()
	}), false, false)
	paths(t, func(t *testing.T, force bool) {
		mu.Lock()
		got = nil
		mu.Unlock()
		opts := load.ClientOptions{KeepAlive: true, TLS: load.TLSOptions{Insecure: true}, FastHTTP: !force}
		tmpl := load.Template{
			Method: "PUT",
			URL:    srv.URL + "/api/v1/data?name={{pick " + names + "}}&n={{seq}}",
			Header: http.Header{"X-Id": {"{{uuid}}"}},
			Body:   `{"name":"/perf/{{seq}}","value":"{{rand 10}}"}`,
		}
		res := run(t, opts, tmpl, load.Step{Concurrency: 3, Requests: 60})
		// The handler's writes reach us through the network, which the race
		// detector cannot see: read them under the lock.
		mu.Lock()
		defer mu.Unlock()
		if len(res) != 60 || len(got) != 60 {
			t.Fatalf("%d results, %d seen", len(res), len(got))
		}
		seqs := map[string]bool{}
		uuids := map[string]bool{}
		picks := map[string]bool{}
		uuidRE := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
		bodyRE := regexp.MustCompile(`^\{"name":"/perf/(\d+)","value":"(\d)"\}$`)
		uriRE := regexp.MustCompile(`^/api/v1/data\?name=(/perf/[abc])&n=(\d+)$`)
		for _, g := range got {
			m := uriRE.FindStringSubmatch(g.uri)
			b := bodyRE.FindStringSubmatch(g.body)
			if m == nil || b == nil || !uuidRE.MatchString(g.hdr) {
				t.Fatalf("bad rendering: %+v", g)
			}
			if m[2] != b[1] {
				t.Fatalf("{{seq}} differs within one request: %+v", g)
			}
			seqs[m[2]], uuids[g.hdr], picks[m[1]] = true, true, true
		}
		if len(seqs) != 60 || len(uuids) != 60 || len(picks) != 3 {
			t.Fatalf("values not unique/varied: %d seqs, %d uuids, %d picks", len(seqs), len(uuids), len(picks))
		}
	})
}

func TestNewErrors(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.RSA)
	q := loadtest.NewPKI(t, loadtest.ECDSA)
	empty := filepath.Join(t.TempDir(), "empty.pem")
	os.WriteFile(empty, []byte("not a certificate\n"), 0o600)
	u := "https://127.0.0.1:1/"
	cases := []struct {
		name string
		opts load.ClientOptions
		tmpl load.Template
		want string
	}{
		{"mismatch", load.ClientOptions{TLS: load.TLSOptions{CertFile: p.ClientCert, KeyFile: q.ClientKey}}, load.Template{URL: u}, "do not match"},
		{"missing cert", load.ClientOptions{TLS: load.TLSOptions{CertFile: "/nonexistent.crt", KeyFile: p.ClientKey}}, load.Template{URL: u}, "reading client certificate"},
		{"key without cert", load.ClientOptions{TLS: load.TLSOptions{KeyFile: p.ClientKey}}, load.Template{URL: u}, "without its certificate"},
		{"cert is not PEM", load.ClientOptions{TLS: load.TLSOptions{CertFile: empty, KeyFile: p.ClientKey}}, load.Template{URL: u}, "contains no PEM certificate"},
		{"key is a cert", load.ClientOptions{TLS: load.TLSOptions{CertFile: p.ClientCert, KeyFile: p.ClientCert}}, load.Template{URL: u}, "no PEM private key"},
		{"empty CA", load.ClientOptions{TLS: load.TLSOptions{CAFile: empty}}, load.Template{URL: u}, "contains no PEM certificates"},
		{"no scheme", load.ClientOptions{}, load.Template{URL: "localhost:8080/x"}, "no scheme"},
		{"ftp", load.ClientOptions{}, load.Template{URL: "ftp://host/x"}, "unsupported scheme"},
		{"no host", load.ClientOptions{}, load.Template{URL: "https:///x"}, "no host"},
		{"template in host", load.ClientOptions{}, load.Template{URL: "https://{{seq}}.example/x"}, "not the host"},
		{"unknown func", load.ClientOptions{}, load.Template{URL: u + "{{nope}}"}, "unknown {{nope}}"},
		{"unclosed", load.ClientOptions{}, load.Template{URL: u, Body: "{{seq"}, "without a closing"},
		{"rand zero", load.ClientOptions{}, load.Template{URL: u, Body: "{{rand 0}}"}, "positive integer"},
		{"pick missing", load.ClientOptions{}, load.Template{URL: u, Body: "{{pick /nonexistent}}"}, "pick /nonexistent"},
		{"pick empty", load.ClientOptions{}, load.Template{URL: u, Body: "{{pick " + empty + "x}}"}, "no such file"},
		{"bad method", load.ClientOptions{}, load.Template{URL: u, Method: "GE T"}, "invalid HTTP method"},
		{"h2c", load.ClientOptions{HTTP2: true}, load.Template{URL: "http://127.0.0.1:1/"}, "HTTP/2 needs an https URL"},
	}
	for _, c := range cases {
		_, err := load.New(c.opts, c.tmpl)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line containing %q", c.name, err, c.want)
		}
	}
	e, _ := load.New(load.ClientOptions{}, load.Template{URL: u})
	for _, s := range []load.Step{{Concurrency: 0, Requests: 1}, {Concurrency: 1}, {Concurrency: 1, Requests: -1}, {Concurrency: 1, Rate: -1, Requests: 1}} {
		if err := e.Run(context.Background(), s, nil); err == nil {
			t.Errorf("step %+v accepted", s)
		}
	}
}

// TestCancelRecordsInFlight: a step cancelled with 5 requests in flight
// records all 5, failed, each in flight until the cancellation: on the
// engine's clock, which the test holds still and moves 300 ms just before
// it cancels, each ends exactly 300 ms after its start.
func TestCancelRecordsInFlight(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 64)
	srv := loadtest.NewMTLSServer(t, loadtest.NewPKI(t, loadtest.ECDSA), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), false, false)
	defer close(release)
	paths(t, func(t *testing.T, force bool) {
		start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clk := loadtest.NewFakeClock(start)
		e, err := load.New(load.ClientOptions{KeepAlive: true, TLS: load.TLSOptions{Insecure: true}, FastHTTP: !force, Clock: clk}, load.Template{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var c collect
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx, load.Step{Concurrency: 5, Duration: time.Minute}, &c) }()
		for i := 0; i < 5; i++ {
			recv(t, arrived, "request at the server")
		}
		clk.Set(start.Add(300 * time.Millisecond))
		cancel()
		if err := recv(t, done, "end of the cancelled step"); err == nil {
			t.Fatal("Run returned no error after its context was cancelled")
		}
		if len(c.res) != 5 {
			t.Fatalf("%d results for 5 in-flight requests", len(c.res))
		}
		for _, r := range c.res {
			if !strings.Contains(r.Err, "canceled") || !r.Start.Equal(start) || r.Latency != 300*time.Millisecond {
				t.Fatalf("in-flight request: %+v; want cancelled, started at 0 and ended at 300 ms", r)
			}
		}
	})
}

func TestClosedLoopSplitAndStepFields(t *testing.T) {
	srv := loadtest.NewMTLSServer(t, loadtest.NewPKI(t, loadtest.ECDSA), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), false, false)
	runStart := time.Now().Add(-time.Second)
	res := run(t, load.ClientOptions{KeepAlive: true, TLS: load.TLSOptions{Insecure: true}}, load.Template{Name: "get", URL: srv.URL},
		load.Step{Concurrency: 7, Requests: 100, RunStart: runStart})
	if len(res) != 100 {
		t.Fatalf("%d results, want exactly 100", len(res))
	}
	for _, r := range res {
		if r.Concurrency != 7 || r.Rate != 0 || r.SchedLag != 0 || r.Offset < time.Second || r.Offset != r.Start.Sub(runStart) || r.Request != "get" {
			t.Fatalf("step fields: %+v", r)
		}
	}
}

// TestClosedLoopQPSOnClock: duration-bounded with per-worker QPS (hey -q),
// 2 workers at 20/s for 1 s send exactly 40 requests, each worker's k-th
// at start + k*50 ms on the engine's clock, none at the end or after,
// however late the machine wakes them.
func TestClosedLoopQPSOnClock(t *testing.T) {
	srv := loadtest.NewMTLSServer(t, loadtest.NewPKI(t, loadtest.ECDSA), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), false, false)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewFakeClock(start)
	results, done := clockRun(t, clk, load.ClientOptions{KeepAlive: true, TLS: load.TLSOptions{Insecure: true}}, load.Template{URL: srv.URL},
		load.Step{Concurrency: 2, QPS: 20, Duration: time.Second})
	for k := 1; k < 20; k++ {
		// A worker sleeps only once its request is back: the clock moves
		// on when both sleep, so each request is stamped at a known time.
		due := start.Add(time.Duration(k) * 50 * time.Millisecond)
		for range 2 {
			if got := recv(t, clk.Sleeping, "worker sleep"); !got.Equal(due) {
				t.Fatalf("a worker slept until %v, want %v", got.Sub(start), due.Sub(start))
			}
		}
		// Late, as a busy machine wakes them: the next slot stays put.
		clk.Set(due.Add(7 * time.Millisecond))
	}
	if err := recv(t, done, "end of step"); err != nil {
		t.Fatal(err)
	}
	perSlot := map[time.Duration]int{}
	for len(results) > 0 {
		r := <-results
		if r.Err != "" || r.Request != "" {
			t.Fatalf("request failed, or a template without a name gave request %q: %+v", r.Request, r)
		}
		perSlot[r.Start.Sub(start)]++
	}
	for k := 0; k < 20; k++ {
		at := time.Duration(k)*50*time.Millisecond + min(time.Duration(k), 1)*7*time.Millisecond
		if perSlot[at] != 2 {
			t.Fatalf("requests per start time %v, want 2 at each of 0, 57ms, 107ms ... 957ms", perSlot)
		}
		delete(perSlot, at)
	}
	if len(perSlot) != 0 {
		t.Fatalf("requests outside the 20 slots: %v", perSlot)
	}
}

func ExampleMulti() {
	var n int
	s := load.Multi(load.SinkFunc(func(*load.Result) { n++ }), nil, load.SinkFunc(func(*load.Result) { n++ }))
	s.Record(&load.Result{})
	fmt.Println(n)
	// Output: 2
}

func TestAuthorizeHook(t *testing.T) {
	var mu sync.Mutex
	tokens := map[string]int{}
	srv := loadtest.NewMTLSServer(t, loadtest.NewPKI(t, loadtest.ECDSA), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tokens[r.Header.Get("Authorization")]++
		mu.Unlock()
	}), false, false)
	paths(t, func(t *testing.T, force bool) {
		mu.Lock()
		clear(tokens)
		mu.Unlock()
		var calls atomic.Int64
		opts := load.ClientOptions{KeepAlive: true, TLS: load.TLSOptions{Insecure: true}, FastHTTP: !force,
			Authorize: func(r *http.Request) error {
				n := calls.Add(1)
				if n > 20 {
					return fmt.Errorf("token expired")
				}
				r.Header.Set("Authorization", fmt.Sprintf("bearer t%d", (n-1)/10))
				return nil
			}}
		res := run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 1, Requests: 25})
		// The socket orders the handler's writes before our read, but the
		// race detector cannot see that: take the lock.
		mu.Lock()
		t0, t1, n := tokens["bearer t0"], tokens["bearer t1"], len(tokens)
		mu.Unlock()
		if len(res) != 25 || t0 != 10 || t1 != 10 || n != 2 {
			t.Fatalf("%d results, server saw t0 %d, t1 %d, %d tokens", len(res), t0, t1, n)
		}
		for _, r := range res[20:] {
			if r.Err != "authorize: token expired" || !r.Failed() {
				t.Fatalf("failed hook: %+v", r)
			}
		}
	})
}

// TestServerClosesIdleConnections: a server that closes idle keep-alive
// connections (CredHub's Tomcat does) must cost neither errors nor stalls:
// the lean client notices the closed connection (a look at its socket
// before reuse, idleconn.Alive; on the portable path, one retry of the GET on a
// new connection, as net/http does) and dials a new one.
//
// The servers close every connection as soon as it turns idle, the limit of
// a short idle timeout: with a real 100 ms timeout a loaded machine's slow
// first request left the connection idle less than that before the next
// one, which then reused it, 1 run in 30.
func TestServerClosesIdleConnections(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	closeIdle := func(s *http.Server) {
		s.ConnState = func(c net.Conn, st http.ConnState) {
			if st == http.StateIdle {
				_ = c.Close()
			}
		}
	}
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false, closeIdle)
	plain := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	closeIdle(plain.Config)
	plain.Start()
	defer plain.Close()
	for _, u := range []string{srv.URL, plain.URL} {
		start := time.Now()
		// 2 workers at 4 requests/s: every connection is closed long
		// before its next use.
		res := run(t, mtlsOpts(p, true), load.Template{URL: u}, load.Step{Concurrency: 2, QPS: 4, Requests: 8})
		for _, r := range res {
			// DNSDial > 0: the request found its connection closed and
			// opened a new one.
			if r.Err != "" || r.Latency > time.Second || r.DNSDial == 0 {
				t.Fatalf("%s: %+v", u, r)
			}
		}
		if el := time.Since(start); el > 4*time.Second {
			t.Fatalf("%s: took %v", u, el)
		}
	}
}

// TestPortableSocketPath runs the lean client's tests on the path macOS and
// Windows take (no sockConn, no raw system calls): the same framing,
// phases, failures and handshakes as the Linux fast path.
func TestPortableSocketPath(t *testing.T) {
	defer load.UseRawSock(false)()
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"KeepAliveOffOneHandshakePerRequest", TestKeepAliveOffOneHandshakePerRequest},
		{"FailuresRecorded", TestFailuresRecorded},
		{"PhasesWithinLatency", TestPhasesWithinLatency},
		{"ResponseFraming", TestResponseFraming},
		{"ServerClosesIdleConnections", TestServerClosesIdleConnections},
	} {
		t.Run(tc.name, tc.f)
	}
}

// TestClosedLoopNothingSentAfterEnd: on a clock that each answered request
// moves 1 ms, and each Authorize call too (a token fetched while the step
// runs), four workers race for the end of a 50 ms step; none sends a
// request stamped at or after the end: the end is checked on the request's
// own stamp, taken after Authorize, not on an earlier reading of the clock.
func TestClosedLoopNothingSentAfterEnd(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clk := loadtest.NewSimClock(start, 1)
	srv := loadtest.NewMTLSServer(t, p, clk.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), nil), true, false)
	for _, force := range []bool{false, true} {
		opts := mtlsOpts(p, true)
		opts.FastHTTP = !force
		opts.Clock = clk
		opts.Authorize = func(*http.Request) error { clk.Advance(time.Millisecond); return nil }
		stepStart := clk.Now()
		end := stepStart.Add(50 * time.Millisecond)
		res := run(t, opts, load.Template{URL: srv.URL}, load.Step{Concurrency: 4, Duration: 50 * time.Millisecond})
		// Each request sent moves the clock 2 ms, and each worker's last
		// Authorize 1 ms more without a request: two racing workers can
		// authorize from 48 ms to 50 ms and both find themselves at the end.
		// So the clock reaches 50 ms after 23 requests at the least (4
		// workers, 4 ms wasted); 25 only when the workers do not race.
		if len(res) < 23 {
			t.Fatalf("net/http %v: %d requests in a 50 ms step of 2 ms requests", force, len(res))
		}
		for _, r := range res {
			if r.Err != "" || r.Start.Before(stepStart) || !r.Start.Before(end) {
				t.Fatalf("net/http %v: request at %v of a step [0, 50ms): %+v", force, r.Start.Sub(stepStart), r)
			}
		}
	}
}

// The engine names the client it sends with: net/http unless FastHTTP asks
// for the lean client and nothing (HTTP/2, a proxy) needs net/http.
func TestHTTPClientNamed(t *testing.T) {
	proxy, _ := url.Parse("http://127.0.0.1:3128")
	for _, c := range []struct {
		opts       load.ClientOptions
		want, note string
	}{
		{load.ClientOptions{}, load.StdHTTPName, ""},
		{load.ClientOptions{FastHTTP: true}, load.FastHTTPName, ""},
		{load.ClientOptions{HTTP2: true}, load.StdHTTPName, ""},
		{load.ClientOptions{FastHTTP: true, HTTP2: true}, load.StdHTTPName, "HTTP/2"},
		{load.ClientOptions{FastHTTP: true, ProxyURL: proxy}, load.StdHTTPName, "proxy"},
	} {
		e, err := load.New(c.opts, load.Template{URL: "https://127.0.0.1:1/"})
		if err != nil {
			t.Fatal(err)
		}
		name, note := e.HTTPClient()
		if name != c.want || (c.note == "") != (note == "") || !strings.Contains(note, c.note) {
			t.Fatalf("fast %v h2 %v proxy %v: %q (note %q), want %q (note %q)", c.opts.FastHTTP, c.opts.HTTP2, c.opts.ProxyURL != nil, name, note, c.want, c.note)
		}
	}
}

// TestDNSOnDials: a request that dialled a host name reports its lookup
// (DNS, within DNS+dialup), and one that reused a connection reports
// none. net/http's requests carry no lookup hooks: the dial finds the
// request's stamps in its context (dialDNS), in open loop with
// keep-alive off (every request dials) and through the open-loop gate
// (keep-alive on), against a server that closes each connection after
// its response: every request but the first (on the connection dialled
// before the step) dials.
func TestDNSOnDials(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
	}), true, false)
	u := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	paths(t, func(t *testing.T, force bool) {
		for _, ka := range []bool{false, true} {
			opts := mtlsOpts(p, ka)
			opts.FastHTTP = !force
			res := run(t, opts, load.Template{URL: u}, load.Step{Concurrency: 2, Rate: 100, Requests: 10})
			dialled := 0
			for _, r := range res {
				if r.Err != "" {
					t.Fatalf("keepalive=%v: %+v", ka, r)
				}
				if r.DNSDial > 0 {
					dialled++
					if r.DNS <= 0 || r.DNS > r.DNSDial {
						t.Fatalf("keepalive=%v: a request that dialled localhost reports DNS %v of DNS+dialup %v", ka, r.DNS, r.DNSDial)
					}
				} else if r.DNS != 0 {
					t.Fatalf("keepalive=%v: a request that did not dial reports DNS %v", ka, r.DNS)
				}
			}
			if want := len(res); !ka && dialled != want {
				t.Fatalf("keep-alive off: %d of %d requests dialled", dialled, want)
			}
			if ka && dialled < len(res)-2 {
				t.Fatalf("keep-alive on, each connection closed by the server: %d of %d requests dialled", dialled, len(res))
			}
		}
	})
}

// TestFixedHeaderValues: a header value without per-request parts is
// rendered once and shared by net/http's requests (read-only); every
// request still carries exactly its template's values, in order, beside
// templated ones for the same name and a value Authorize adds to it (an
// Add to a shared value must copy it, never append in place: -race).
func TestFixedHeaderValues(t *testing.T) {
	var mu sync.Mutex
	var got [][]string
	srv := loadtest.NewMTLSServer(t, loadtest.NewPKI(t, loadtest.ECDSA), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, append([]string(nil), r.Header.Values("X-Tag")...), []string{r.Header.Get("Accept")})
		mu.Unlock()
	}), false, false)
	paths(t, func(t *testing.T, force bool) {
		mu.Lock()
		got = nil
		mu.Unlock()
		var n atomic.Int64
		opts := load.ClientOptions{KeepAlive: true, TLS: load.TLSOptions{Insecure: true}, FastHTTP: !force,
			Authorize: func(r *http.Request) error {
				r.Header.Add("X-Tag", fmt.Sprintf("auth%d", n.Add(1)))
				return nil
			}}
		tmpl := load.Template{URL: srv.URL, Header: http.Header{
			"x-tag":  {"fixed", "seq{{seq}}"},
			"Accept": {"application/json"},
		}}
		res := run(t, opts, tmpl, load.Step{Concurrency: 4, Requests: 40})
		mu.Lock()
		defer mu.Unlock()
		if len(res) != 40 || len(got) != 80 {
			t.Fatalf("%d results, %d seen", len(res), len(got)/2)
		}
		auths := map[string]bool{}
		for i := 0; i < len(got); i += 2 {
			tags, accept := got[i], got[i+1]
			if len(tags) != 3 || tags[0] != "fixed" || !strings.HasPrefix(tags[1], "seq") || !strings.HasPrefix(tags[2], "auth") || accept[0] != "application/json" {
				t.Fatalf("request %d: X-Tag %q, Accept %q", i/2, tags, accept)
			}
			auths[tags[2]] = true
		}
		if len(auths) != 40 {
			t.Fatalf("%d distinct Authorize values over 40 requests: a shared value was appended to", len(auths))
		}
	})
}

// TestTimeoutPerRequest: the client's timeout bounds each request through
// the end of its body, and only that request: a worker whose request
// timed out sends its next one afresh. Each phase's failure reads
// "<phase>: timeout" with either client, however the time limit is
// carried (http.Client.Timeout, an open-loop request's deadline).
func TestTimeoutPerRequest(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		switch n % 3 {
		case 1: // no headers before the timeout
			stallUntilClientGone(r)
		case 2: // headers, then no body before the timeout
			w.Header().Set("Content-Length", "10")
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			stallUntilClientGone(r)
		}
	}), true, false)
	paths(t, func(t *testing.T, force bool) {
		for _, c := range []struct {
			name string
			step load.Step
		}{
			{"closed loop", load.Step{Concurrency: 1, Requests: 9}},
			// At most 2 in flight (200 ms each at most, 200 ms apart):
			// every request is sent, each worker's after others timed
			// out. The third worker and connection are slack: a request
			// arrives just as the one before it times out, and a busy
			// machine releases that one's connection late.
			{"open loop", load.Step{Concurrency: 3, Rate: 5, Requests: 9}},
		} {
			opts := mtlsOpts(p, true)
			opts.FastHTTP = !force
			opts.Timeout = 200 * time.Millisecond
			res := run(t, opts, load.Template{URL: srv.URL + "/{{seq}}"}, c.step)
			if len(res) != 9 {
				t.Fatalf("%s: %d results", c.name, len(res))
			}
			want := map[string]int{"read: timeout": 3, "read body: timeout": 3, "": 3}
			for _, r := range res {
				want[r.Err]--
				if r.Err != "" && r.Latency < 200*time.Millisecond {
					t.Fatalf("%s: a request timed out after %v, before its 200 ms: %+v", c.name, r.Latency, r)
				}
			}
			for k, v := range want {
				if v != 0 {
					t.Fatalf("%s: %q off by %d: %+v", c.name, k, -v, res)
				}
			}
		}
	})
}
