package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func startServer(t *testing.T, dir string, mtls bool, adjust ...func(*options)) (url string, stop func() stats) {
	t.Helper()
	o := options{
		listen:   "127.0.0.1:0",
		certFile: filepath.Join(dir, "server.crt"),
		keyFile:  filepath.Join(dir, "server.key"),
		addrFile: filepath.Join(dir, "addr"),
	}
	if mtls {
		o.clientCA = filepath.Join(dir, "ca.crt")
	}
	for _, f := range adjust {
		f(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urlc := make(chan string, 1)
	done := make(chan stats, 1)
	go func() {
		st, err := serve(ctx, o, func(u, _ string) { urlc <- u })
		if err != nil {
			t.Errorf("serve: %v", err)
			close(urlc)
		}
		done <- st
	}()
	select {
	case url = <-urlc:
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	if url == "" {
		t.FailNow()
	}
	return url, func() stats { cancel(); return <-done }
}

func client(t *testing.T, dir string, withCert, keepAlive bool) *http.Client {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cfg := &tls.Config{RootCAs: pool}
	if withCert {
		c, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: !keepAlive},
	}
}

func get(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url + "/anything?x=1")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != 200 {
		return "", &statusErr{resp.StatusCode}
	}
	return string(b), nil
}

type statusErr struct{ code int }

func (e *statusErr) Error() string { return http.StatusText(e.code) }

func TestGenCertsAndMTLS(t *testing.T) {
	dir := t.TempDir()
	if code := run([]string{"-gen-certs", dir}); code != 0 {
		t.Fatalf("-gen-certs exit %d", code)
	}
	for _, k := range []string{"ca.key", "server.key", "client.key"} {
		fi, err := os.Stat(filepath.Join(dir, k))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", k, fi.Mode().Perm())
		}
	}

	url, stop := startServer(t, dir, true)
	if _, err := get(client(t, dir, false, true), url); err == nil {
		t.Error("mTLS server accepted a client without a certificate")
	}
	c := client(t, dir, true, false)
	for i := 0; i < 3; i++ {
		b, err := get(c, url)
		if err != nil {
			t.Fatalf("request with client certificate: %v", err)
		}
		if b != "ok\n" {
			t.Fatalf("body %q", b)
		}
	}
	st := stop()
	if st.Requests != 3 {
		t.Errorf("requests=%d, want 3", st.Requests)
	}
	// Three keep-alive-off requests with a certificate: three full handshakes;
	// the refused one may or may not reach VerifyConnection, so allow 3 or 4.
	if st.Handshakes < 3 || st.Handshakes > 4 || st.Resumed != 0 {
		t.Errorf("handshakes=%d resumed=%d, want 3-4 full handshakes", st.Handshakes, st.Resumed)
	}
}

func TestServerAuthOnlyKeepAlive(t *testing.T) {
	dir := t.TempDir()
	if err := writeCerts(dir); err != nil {
		t.Fatal(err)
	}
	url, stop := startServer(t, dir, false)
	c := client(t, dir, false, true)
	for i := 0; i < 5; i++ {
		if _, err := get(c, url); err != nil {
			t.Fatalf("request: %v", err)
		}
	}
	st := stop()
	if st.Requests != 5 || st.Handshakes != 1 || st.Conns != 1 {
		t.Errorf("got %+v, want 5 requests on 1 connection with 1 handshake", st)
	}
	if st.HandledMeanUS <= 0 {
		t.Errorf("handled_mean_us %v: the server's own time per request is missing", st.HandledMeanUS)
	}
}

// TestMTLSKeepAliveReuse: over mutual TLS, as the bench runs it, a
// keep-alive client that reads each body to EOF (as vegeta does) sends
// every request on one connection. It rules the server out when a generator
// opens many connections (docs/benchmarks.md, on vegeta's): every answer
// carries a Content-Length and no "Connection: close", and the server does
// not close the connection between requests.
func TestMTLSKeepAliveReuse(t *testing.T) {
	dir := t.TempDir()
	if err := writeCerts(dir); err != nil {
		t.Fatal(err)
	}
	url, stop := startServer(t, dir, true)
	c := client(t, dir, true, true)
	const n = 5
	for i := 0; i < n; i++ {
		var reused bool
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", url+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "ok\n" {
			t.Fatalf("request %d: body %q, %v", i, b, err)
		}
		if resp.ContentLength != int64(len(b)) || resp.Close || resp.Header.Get("Connection") != "" {
			t.Errorf("request %d: Content-Length %d, Close %v, Connection %q: want %d, false, none",
				i, resp.ContentLength, resp.Close, resp.Header.Get("Connection"), len(b))
		}
		if i > 0 && !reused {
			t.Errorf("request %d went on a new connection", i)
		}
	}
	st := stop()
	if st.Requests != n || st.Conns != 1 || st.Handshakes != 1 {
		t.Errorf("got %+v, want %d requests on 1 connection with 1 handshake", st, n)
	}
}

// TestStation: with -service-time the server is an M/M/c station; requests
// beyond its servers wait in line and all are answered.
func TestStation(t *testing.T) {
	dir := t.TempDir()
	if err := writeCerts(dir); err != nil {
		t.Fatal(err)
	}
	url, stop := startServer(t, dir, false, func(o *options) { o.servers, o.serviceTime = 2, 5*time.Millisecond })
	c := client(t, dir, false, true)
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() { _, err := get(c, url); errs <- err }()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("request: %v", err)
		}
	}
	// Every request slept inside the station, held a server no longer than
	// it was at the station (a wait for one is at the station, not in
	// service) and was there no longer than its handler ran.
	st := stop()
	if st.Requests != 8 || st.ServedMeanUS <= 0 || st.StationMeanUS < st.ServedMeanUS || st.StationMeanUS > st.HandledMeanUS {
		t.Errorf("got %+v, want 8 requests with 0 < served mean <= station mean <= handled mean", st)
	}
}

func TestUsageErrors(t *testing.T) {
	if code := run([]string{"-cert", "x"}); code != 2 {
		t.Errorf("missing -key: exit %d, want 2", code)
	}
	for _, bad := range [][]string{{"-servers", "0", "-service-time", "5ms"}, {"-service-time", "-1ms"}, {"-service-time", "soon"}} {
		if code := run(append(bad, "-cert", "x", "-key", "y")); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	if code := run([]string{"stray"}); code != 2 {
		t.Errorf("stray argument: exit %d, want 2", code)
	}
	if code := run([]string{"-cert", "/nonexistent.crt", "-key", "/nonexistent.key"}); code != 1 {
		t.Errorf("missing files: exit %d, want 1", code)
	}
}
