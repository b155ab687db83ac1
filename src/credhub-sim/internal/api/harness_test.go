package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-sim/internal/certgen"
	"github.com/credhub-perf/credhub-sim/internal/store"
	"github.com/credhub-perf/credhub-sim/internal/testdb"
)

const testPassword = "test-encryption-password-0123456789"

func TestMain(m *testing.M) {
	code := m.Run()
	testdb.StopAll()
	if certsDir != "" {
		os.RemoveAll(certsDir)
	}
	os.Exit(code)
}

// Test certificates, made once per test binary: the trusted set plus
// clients that CredHub must refuse.
var (
	certsOnce sync.Once
	certsDir  string
	certsErr  error
)

func testCerts(t testing.TB) string {
	t.Helper()
	certsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "credhub-sim-certs-")
		if err != nil {
			certsErr = err
			return
		}
		certsDir = dir
		steps := []certgen.Options{
			{Dir: dir},
			{Dir: dir, ClientOnly: true, ClientName: "noeku", NoClientAuth: true},
			{Dir: dir, ClientOnly: true, ClientName: "badou", ClientOU: "app:not-a-uuid"},
			{Dir: dir, ClientOnly: true, ClientName: "v1ou", ClientOU: "app:6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
			{Dir: dir, ClientOnly: true, ClientName: "upperou", ClientOU: "app:6BA7B810-9DAD-41D1-80B4-00C04FD430C8"},
			{Dir: dir, ClientOnly: true, ClientName: "noou", NoOU: true},
			{Dir: dir, ClientOnly: true, ClientName: "second"},
			{Dir: filepath.Join(dir, "other")}, // an unrelated CA
		}
		for _, o := range steps {
			if _, err := certgen.Write(o); err != nil {
				certsErr = err
				return
			}
		}
	})
	if certsErr != nil {
		t.Fatalf("writing test certificates: %v", certsErr)
	}
	return certsDir
}

type harness struct {
	t       *testing.T
	url     string
	srv     *Server
	store   *store.Store
	certDir string
	client  *http.Client // a valid mTLS identity
	anon    *http.Client // TLS without a client certificate
	logs    *bytes.Buffer
}

// dbURL gives a -db URL for kind with an empty schema.
func dbURL(t *testing.T, kind string) string {
	t.Helper()
	switch kind {
	case "sqlite":
		return "sqlite:" + filepath.Join(t.TempDir(), "credhub.db")
	case "sqlite-memory":
		return "sqlite::memory:"
	}
	return testdb.EmptyURL(t, kind)
}

func newHarness(t *testing.T, dsn string, tweak func(*Config)) *harness {
	t.Helper()
	dir := testCerts(t)
	st, err := store.Open(context.Background(), dsn, testPassword)
	if err != nil {
		t.Fatalf("opening store: %v", err)
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(caPEM)
	var logs bytes.Buffer
	cfg := Config{Store: st, ClientCAs: pool, Logger: log.New(&syncWriter{w: &logs}, "", 0),
		UAAClients: []UAAClient{
			{ID: "perf", Secret: "perf-secret", Scopes: []string{"credhub.read", "credhub.write"}},
			{ID: "reader", Secret: "reader-secret", Scopes: []string{"credhub.read"}},
		}}
	if tweak != nil {
		tweak(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatalf("api.New: %v", err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(cert)
	hs.ErrorLog = log.New(io.Discard, "", 0)
	go hs.ServeTLS(ln, "", "") //nolint:errcheck // ends with Close
	h := &harness{t: t, url: "https://" + ln.Addr().String(), srv: srv, store: st, certDir: dir, logs: &logs}
	srv.SetURL(h.url)
	h.client = h.clientWith("client")
	h.anon = h.clientWith("")
	t.Cleanup(func() {
		hs.Close()
		st.Close()
	})
	return h
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// clientWith returns a client presenting certDir/NAME.crt ("" = none).
func (h *harness) clientWith(name string) *http.Client {
	return tlsClient(h.t, h.certDir, name, filepath.Join(h.certDir, "ca.crt"))
}

func tlsClient(t testing.TB, dir, name, caFile string) *http.Client {
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(caPEM)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if name != "" {
		cert, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 128},
	}
}

type response struct {
	status int
	body   []byte
	header http.Header
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response %d is not a JSON object: %v: %s", r.status, err, r.body)
	}
	return m
}

// do sends a request; body is sent as-is when it is a string, else
// marshalled. A JSON content type is set unless hdr overrides it.
func (h *harness) do(c *http.Client, method, path string, body any, hdr ...string) response {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		case []byte:
			rd = bytes.NewReader(b)
		default:
			data, err := json.Marshal(b)
			if err != nil {
				h.t.Fatal(err)
			}
			rd = bytes.NewReader(data)
		}
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{resp.StatusCode, data, resp.Header}
}

func (h *harness) expect(r response, status int, body string) {
	h.t.Helper()
	if r.status != status {
		h.t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if body == "" {
		return
	}
	var got, want any
	if err := json.Unmarshal(r.body, &got); err != nil {
		h.t.Fatalf("body is not JSON: %s", r.body)
	}
	if err := json.Unmarshal([]byte(body), &want); err != nil {
		h.t.Fatalf("bad expectation %s: %v", body, err)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		h.t.Fatalf("body\n  %s\nwant\n  %s", r.body, body)
	}
}

func errBody(msg string) string {
	b, _ := json.Marshal(map[string]string{"error": msg})
	return string(b)
}

func (h *harness) set(name, typ string, value any) map[string]any {
	h.t.Helper()
	r := h.do(h.client, "PUT", "/api/v1/data", map[string]any{"name": name, "type": typ, "value": value})
	if r.status != 200 {
		h.t.Fatalf("set %s: status %d: %s", name, r.status, r.body)
	}
	return r.json(h.t)
}

func q(s string) string { return strings.ReplaceAll(s, "/", "%2F") }

func fmtErr(format string, a ...any) string { return errBody(fmt.Sprintf(format, a...)) }
