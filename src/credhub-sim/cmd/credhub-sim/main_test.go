package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-sim/internal/testdb"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "credhub-sim-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "credhub-sim")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building credhub-sim: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	testdb.StopAll()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s is not PEM", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var ouRE = regexp.MustCompile(`^app:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	if _, stderr, err := run(t, "certs", "--out", dir); err != nil {
		t.Fatalf("certs: %v: %s", err, stderr)
	}
	for _, f := range []string{"ca.crt", "ca.key", "server.crt", "server.key", "client.crt", "client.key"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".key") && st.Mode().Perm() != 0o600 {
			t.Fatalf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	ca := readCert(t, filepath.Join(dir, "ca.crt"))
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	server := readCert(t, filepath.Join(dir, "server.crt"))
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		if _, err := server.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
			t.Fatalf("server certificate for %s: %v", host, err)
		}
	}
	client := readCert(t, filepath.Join(dir, "client.crt"))
	if _, err := client.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client certificate is not a clientAuth certificate of the CA: %v", err)
	}
	if ous := client.Subject.OrganizationalUnit; len(ous) != 1 || !ouRE.MatchString(ous[0]) {
		t.Fatalf("client OU %v is not app:<v4 uuid>", ous)
	}

	if _, stderr, err := run(t, "certs", "--out", dir, "--client-only", "--client-name", "wrong", "--client-ou", "app:not-a-uuid"); err != nil {
		t.Fatalf("certs --client-only: %v: %s", err, stderr)
	}
	wrong := readCert(t, filepath.Join(dir, "wrong.crt"))
	if wrong.Subject.OrganizationalUnit[0] != "app:not-a-uuid" || wrong.CheckSignatureFrom(ca) != nil {
		t.Fatalf("extra client certificate: OU %v", wrong.Subject.OrganizationalUnit)
	}
	if again := readCert(t, filepath.Join(dir, "ca.crt")); !again.Equal(ca) {
		t.Fatal("--client-only replaced the CA")
	}

	_, stderr, err := run(t, "certs")
	if err == nil || !strings.Contains(stderr, "--out DIR is required") {
		t.Fatalf("certs without --out: %v %q", err, stderr)
	}

	// An existing CA key and certificates are not overwritten
	// without --force, and nothing is written when refused.
	caKey, _ := os.ReadFile(filepath.Join(dir, "ca.key"))
	_, stderr, err = run(t, "certs", "--out", dir)
	if err == nil || !strings.Contains(stderr, "ca.key already exists") || !strings.Contains(stderr, "--force") ||
		strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("certs over an existing CA: %v %q, want one line naming the file and --force", err, stderr)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "ca.key")); !bytes.Equal(again, caKey) {
		t.Fatal("a refused certs run changed ca.key")
	}
	_, stderr, err = run(t, "certs", "--out", dir, "--client-only", "--client-name", "wrong")
	if err == nil || !strings.Contains(stderr, "wrong.key already exists") {
		t.Fatalf("certs --client-only over an existing client: %v %q", err, stderr)
	}
	if _, stderr, err := run(t, "certs", "--out", dir, "--force"); err != nil {
		t.Fatalf("certs --force: %v %q", err, stderr)
	}
	if again := readCert(t, filepath.Join(dir, "ca.crt")); again.Equal(ca) {
		t.Fatal("certs --force kept the old CA")
	}
	for _, v := range []string{"-1h", "0s"} {
		_, stderr, err = run(t, "certs", "--out", filepath.Join(t.TempDir(), "v"), "--validity", v)
		if err == nil || !strings.Contains(stderr, "must be positive") {
			t.Fatalf("certs --validity %s: %v %q", v, err, stderr)
		}
	}
}

type proc struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
	done   chan error
}

// start runs serve and waits for its first stdout line.
func start(t *testing.T, args ...string) (*proc, error) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout) //nolint:errcheck // drain until exit
	}()
	go func() { p.done <- cmd.Wait() }()
	select {
	case line, ok := <-lines:
		if !ok {
			err := <-p.done
			return p, fmt.Errorf("exited before listening (%v): %s", err, p.stderr.String())
		}
		if !strings.HasPrefix(line, "credhub-sim listening on https://") {
			p.stop(t)
			t.Fatalf("first stdout line %q", line)
		}
		p.url = strings.TrimPrefix(line, "credhub-sim listening on ")
	case <-time.After(60 * time.Second):
		cmd.Process.Kill() //nolint:errcheck // best effort
		t.Fatalf("serve did not print its listening line: %s", p.stderr.String())
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill() //nolint:errcheck // already exiting is fine
		}
	})
	return p, nil
}

func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM: %s", err, p.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop within 20 s of SIGTERM")
	}
}

func mtlsClient(t *testing.T, dir string) *http.Client {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}}
}

func call(t *testing.T, c *http.Client, method, url, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func certsDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "certs")
	if _, stderr, err := run(t, "certs", "--out", dir); err != nil {
		t.Fatalf("certs: %v: %s", err, stderr)
	}
	return dir
}

const (
	goodPassword = "first-encryption-password-000"
	secretValue  = "restart-secret-5a5a5a"
)

func TestServeRestartSQLite(t *testing.T) {
	restart(t, "sqlite:"+filepath.Join(t.TempDir(), "sim.db"))
}

func TestServeRestartPostgres(t *testing.T) { restart(t, testdb.EmptyURL(t, "postgres")) }

func TestServeRestartMariaDB(t *testing.T) { restart(t, testdb.EmptyURL(t, "mariadb")) }

// restart: values survive a restart with the same encryption password; a
// different password is refused at start with a clear error.
func restart(t *testing.T, db string) {
	dir := certsDir(t)
	addrFile := filepath.Join(t.TempDir(), "addr")
	p, err := start(t, "-listen", "127.0.0.1:0", "-cert-dir", dir, "-db", db, "-encryption-password", goodPassword, "-addr-file", addrFile)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(addrFile); err != nil || strings.TrimSpace(string(data)) != p.url {
		t.Fatalf("-addr-file holds %q (%v), want %s", data, err, p.url)
	}
	c := mtlsClient(t, dir)
	status, body := call(t, c, "PUT", p.url+"/api/v1/data", `{"name":"/restart/v","type":"value","value":"`+secretValue+`"}`)
	if status != 200 {
		t.Fatalf("set: %d %s", status, body)
	}
	status, body = call(t, c, "PUT", p.url+"/api/v1/data", `{"name":"/restart/v","type":"json","value":{"a":1}}`)
	if status != 400 {
		t.Fatalf("type change: %d %s", status, body)
	}
	p.stop(t)
	if strings.Contains(p.stderr.String(), secretValue) || strings.Contains(p.stderr.String(), goodPassword) {
		t.Fatalf("a secret reached the log:\n%s", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "shutting down") {
		t.Fatalf("no shutdown line in the log:\n%s", p.stderr.String())
	}

	p, err = start(t, "-listen", "127.0.0.1:0", "-cert-dir", dir, "-db", db, "-encryption-password", goodPassword)
	if err != nil {
		t.Fatal(err)
	}
	status, body = call(t, c, "GET", p.url+"/api/v1/data?name=/restart/v&current=true", "")
	var got struct{ Data []map[string]any }
	json.Unmarshal([]byte(body), &got) //nolint:errcheck // checked below
	if status != 200 || len(got.Data) != 1 || got.Data[0]["value"] != secretValue {
		t.Fatalf("after restart: %d %s", status, body)
	}
	p.stop(t)

	_, err = start(t, "-listen", "127.0.0.1:0", "-cert-dir", dir, "-db", db, "-encryption-password", "a-different-password-1234")
	if err == nil {
		t.Fatal("serve started with the wrong encryption password")
	}
	if !strings.Contains(err.Error(), "encryption password does not decrypt") || strings.Contains(err.Error(), "a-different-password") {
		t.Fatalf("wrong password error is not clear (or leaks it): %v", err)
	}
}

func TestServeFlagErrors(t *testing.T) {
	dir := certsDir(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-cert-dir", dir}, "-encryption-password is required"},
		// CredHub's minimum of 16 characters, the password never echoed.
		{[]string{"-cert-dir", dir, "-encryption-password", "short-pw-15char"}, "has 15 characters; CredHub requires at least 16"},
		{[]string{"-encryption-password", goodPassword}, "pass -cert-dir DIR"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-db", "oracle://u:hunter2@h/db"}, "not a supported database URL"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-service-dist", "normal"}, "not fixed or exponential"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-uaa-client", "nosecret"}, "want ID:SECRET"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-workers", "2", "-cores", "0"}, "-cores 0 must be 1 or more"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-cores", "2"}, "-cores 2 needs -workers"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-workers", "1", "-write-service-time", "-1s"}, "-write-service-time -1s must not be negative"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-permission", "/* a read"}, "only has an effect with -acls"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-db-capacity", "-5"}, "-db-capacity -5 must be requests/s"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-db-capacity", "NaN"}, "-db-capacity NaN must be requests/s"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-db-capacity", "300", "-db-cores", "0"}, "-db-cores 0 must be 1 to 1024"},
		{[]string{"-cert-dir", dir, "-encryption-password", goodPassword, "-db", "postgres://u:hunter2@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"}, "connecting to postgres database"},
	} {
		_, stderr, err := run(t, append([]string{"serve", "-listen", "127.0.0.1:0"}, tc.args...)...)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("serve %v: %v, stderr %q; want an error containing %q", tc.args, err, stderr, tc.want)
		}
		if strings.Contains(stderr, "hunter2") || strings.Contains(stderr, "short-pw-15char") {
			t.Errorf("serve %v leaked a database password: %q", tc.args, stderr)
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
			t.Errorf("serve %v: error is %d lines, want one: %q", tc.args, n+1, stderr)
		}
	}
}

func TestServeTokenEndpointFlag(t *testing.T) {
	dir := certsDir(t)
	p, err := start(t, "-listen", "127.0.0.1:0", "-cert-dir", dir, "-encryption-password", goodPassword,
		"-uaa-client", "perf:s3cret", "-workers", "2", "-service-time", "1ms", "-service-dist", "exponential")
	if err != nil {
		t.Fatal(err)
	}
	c := mtlsClient(t, dir)
	req, _ := http.NewRequest("POST", p.url+"/oauth/token", strings.NewReader("grant_type=client_credentials&client_id=perf&client_secret=s3cret"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok map[string]any
	json.NewDecoder(resp.Body).Decode(&tok) //nolint:errcheck // checked below
	resp.Body.Close()
	if resp.StatusCode != 200 || tok["access_token"] == nil {
		t.Fatalf("token: %d %v", resp.StatusCode, tok)
	}
	status, body := call(t, c, "GET", p.url+"/info", "")
	if status != 200 || !strings.Contains(body, `"url":"`+p.url+`"`) {
		t.Fatalf("/info: %d %s", status, body)
	}
	p.stop(t)
}

// TestServeCoresFlags checks that -cores and -write-service-time reach the
// capacity model: one instance with two cores serves two gets side by side
// (100ms) but two sets one after the other (2 × 300ms). Only the sets'
// lower bound is tight; the gets' bound leaves room for a busy machine.
func TestServeCoresFlags(t *testing.T) {
	dir := certsDir(t)
	p, err := start(t, "-listen", "127.0.0.1:0", "-cert-dir", dir, "-encryption-password", goodPassword,
		"-workers", "1", "-cores", "2", "-service-time", "100ms", "-write-service-time", "300ms")
	if err != nil {
		t.Fatal(err)
	}
	c := mtlsClient(t, dir)
	setBody := `{"name":"/cores/x","type":"value","value":"v"}`
	if status, body := call(t, c, "PUT", p.url+"/api/v1/data", setBody); status != 200 {
		t.Fatalf("set: %d %s", status, body)
	}
	pair := func(method, url, body string) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest(method, url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := c.Do(req)
				if err != nil {
					t.Errorf("%s: %v", method, err)
					return
				}
				io.Copy(io.Discard, resp.Body) //nolint:errcheck // drain for keep-alive
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("%s: status %d", method, resp.StatusCode)
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	gets := time.Hour
	for i := 0; i < 3; i++ { // the first pair may pay for a second connection's handshake
		gets = min(gets, pair("GET", p.url+"/api/v1/data?name=/cores/x&current=true", ""))
	}
	sets := pair("PUT", p.url+"/api/v1/data", setBody)
	t.Logf("two concurrent gets took %v, two concurrent sets %v", gets, sets)
	if gets >= 250*time.Millisecond {
		t.Errorf("two concurrent gets took %v: want about 100ms, side by side on two cores", gets)
	}
	if sets < 600*time.Millisecond {
		t.Errorf("two concurrent sets took %v: want at least 600ms, one after the other under the write lock", sets)
	}
	p.stop(t)
}

// TestServeHTTP2Flag: HTTP/1.1 only by default, as CredHub 2.15; -http2
// adds h2 to ALPN.
func TestServeHTTP2Flag(t *testing.T) {
	dir := certsDir(t)
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	for _, tc := range []struct {
		flags []string
		want  string
	}{{nil, "http/1.1"}, {[]string{"-http2"}, "h2"}} {
		p, err := start(t, append([]string{"-listen", "127.0.0.1:0", "-cert-dir", dir, "-encryption-password", goodPassword}, tc.flags...)...)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := tls.Dial("tcp", strings.TrimPrefix(p.url, "https://"), &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		got := conn.ConnectionState().NegotiatedProtocol
		conn.Close()
		p.stop(t)
		if got != tc.want {
			t.Errorf("serve %v negotiated %q, want %q", tc.flags, got, tc.want)
		}
	}
}

// Hostile flags: NaN, infinities and values far out of range end in one
// line and exit status 2 before anything listens, each within 10 s and
// 500 MB (the test enforces both: a context deadline and prlimit --data).
func TestServeHostileFlags(t *testing.T) {
	dir := certsDir(t)
	base := []string{"serve", "-listen", "127.0.0.1:0", "-cert-dir", dir, "-encryption-password", goodPassword}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-error-rate", "NaN"}, "-error-rate NaN must be a fraction from 0 to 1"},
		{[]string{"-error-rate", "+Inf"}, "-error-rate +Inf must be a fraction"},
		{[]string{"-error-rate", "-0.5"}, "-error-rate -0.5 must be a fraction"},
		{[]string{"-error-rate", "1e300"}, "-error-rate 1e+300 must be a fraction"},
		{[]string{"-warmup-factor", "NaN", "-warmup-time", "1s"}, "-warmup-factor NaN must be a number from 0 to 1000"},
		{[]string{"-warmup-factor", "-Inf"}, "-warmup-factor -Inf must be"},
		{[]string{"-error-status", "99999"}, "-error-status 99999 is not an HTTP status"},
		{[]string{"-workers", "1000000000"}, "-workers 1000000000 must be from 0 (unlimited) to 100000"},
		{[]string{"-workers", "-1"}, "-workers -1 must be from 0"},
		{[]string{"-workers", "1", "-cores", "1000000"}, "-cores 1000000 must be at most 1024"},
		{[]string{"-service-time", "2540400h"}, "-service-time 2540400h0m0s must be at most 1h0m0s"},
		{[]string{"-added-latency", "-1s"}, "-added-latency -1s must not be negative"},
		{[]string{"-warmup-time", "1000000h"}, "-warmup-time 1000000h0m0s must be at most 24h0m0s"},
		{[]string{"-pause", "50ms"}, "-pause-every 0s -pause 50ms: give both"},
		{[]string{"-pause-every", "2s"}, "-pause-every 2s -pause 0s: give both"},
		{[]string{"-pause-every", "50ms", "-pause", "1s"}, "the pause shorter than its period"},
		{[]string{"-pause-every", "-2s", "-pause", "50ms"}, "-pause-every -2s must not be negative"},
		{[]string{"-pause-every", "1000000h", "-pause", "50ms"}, "-pause-every 1000000h0m0s must be at most 24h0m0s"},
		{[]string{"-token-ttl", "2000000h"}, "-token-ttl 2000000h0m0s must be at most 720h0m0s"},
		{[]string{"-token-clock-skew", "2000000h"}, "-token-clock-skew 2000000h0m0s must be at most 24h"},
		{[]string{"-workers", "1", "-shared-cores", "-1"}, "-shared-cores -1 must be from 0 (none) to 1024"},
		{[]string{"-workers", "1", "-shared-cores", "100000"}, "-shared-cores 100000 must be from 0"},
		{[]string{"-shared-cores", "1"}, "-shared-cores 1 needs -workers K"},
		{[]string{"-workers", "1", "-neighbour", "0.5"}, "add -shared-cores N"},
		{[]string{"-workers", "1", "-shared-cores", "1", "-neighbour", "NaN"}, "-neighbour NaN must be a share of the machine"},
		{[]string{"-workers", "1", "-shared-cores", "1", "-steal", "1"}, "-steal 1 must be a share of the machine"},
		{[]string{"-workers", "1", "-shared-cores", "1", "-steal", "-Inf"}, "-steal -Inf must be a share"},
		{[]string{"-workers", "1", "-shared-cores", "1", "-neighbour", "0.6", "-steal", "0.4"}, "under 5 % of the machine"},
	} {
		args := append(append([]string{}, base...), tc.args...)
		code, stderr := runBounded(t, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("serve %v: exit %d, stderr %q; want exit 2 and one line containing %q", tc.args, code, stderr, tc.want)
		}
	}
	code, stderr := runBounded(t, "certs", "-out", t.TempDir(), "-validity", "2540400h")
	if code != 2 || !strings.Contains(stderr, "--validity 2540400h0m0s must be positive and at most") {
		t.Errorf("certs -validity 2540400h: exit %d, %q", code, stderr)
	}
}

// runBounded runs the binary under a 10 s deadline and a 500 MB limit on
// its writable memory (prlimit --data, when the machine has it) and
// returns its exit status and stderr. RLIMIT_DATA, not --as: the Go
// runtime reserves far more address space than it ever uses.
func runBounded(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	name, full := binary, args
	if p, err := exec.LookPath("prlimit"); err == nil {
		name, full = p, append([]string{"--data=500000000", "--", binary}, args...)
	}
	cmd := exec.CommandContext(ctx, name, full...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v: still running after 10 s", args)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}
