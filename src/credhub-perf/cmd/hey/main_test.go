package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results"
)

// heyRun runs hey on a tester with CPU to spare (quietCPU).
func heyRun(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	return heyRunOn(t, quietCPU(), env, args...)
}

func heyRunOn(t *testing.T, cpu func(time.Time) cpuload.Sample, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errb, cpu)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.RSA)
	q := loadtest.NewPKI(t, loadtest.ECDSA)
	var hits atomic.Int64
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }), true, false)
	notPEM := filepath.Join(t.TempDir(), "x.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	tls := []string{"-cert", p.ClientCert, "-key", p.ClientKey, "-cacert", p.CAFile}
	cases := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{}, "no URL"},
		{nil, []string{"-n", "10", "-c", "20", srv.URL}, "-n cannot be less than -c"},
		{nil, []string{"-c", "-1", srv.URL}, "-c cannot be smaller than 1"},
		{nil, []string{"-n", "-5", srv.URL}, "-n cannot be smaller than 1"},
		{nil, []string{"-z", "-1s", srv.URL}, "-z cannot be negative"},
		{nil, []string{"-q", "-2", srv.URL}, "-q must be"},
		{nil, []string{"-rate", "-2", srv.URL}, "-rate must be"},
		{nil, []string{"-rate", "10", "-q", "2", srv.URL}, "cannot be combined"},
		{nil, []string{"-t", "-1", srv.URL}, "-t cannot be negative"},
		{nil, []string{"-o", "json", srv.URL}, "invalid output type"},
		{nil, []string{"-H", "nocolon", srv.URL}, "could not parse header"},
		{nil, []string{"-bogus", srv.URL}, "flag provided but not defined: -bogus ('hey -h' lists the options)"},
		{nil, []string{"localhost:1234/x"}, "no scheme"},
		{nil, []string{"https://"}, "no host"},
		{nil, []string{"-cert", p.ClientCert, "-key", q.ClientKey, srv.URL}, "do not match"},
		{nil, []string{"-cert", p.ClientCert, srv.URL}, "without its key"},
		{nil, []string{"-cert", p.ClientCert, "-key", p.ClientKey, "-cacert", notPEM, srv.URL}, "contains no PEM certificates"},
		{map[string]string{"X509_USER_CERT": "/nonexistent/cert.pem", "X509_USER_KEY": p.ClientKey}, []string{srv.URL}, "reading client certificate"},
		{nil, append(append([]string{}, tls...), "-D", "/nonexistent/body", srv.URL), "-D:"},
		{nil, append(append([]string{}, tls...), srv.URL, "extra"), "unexpected arguments"},
		// Upper bounds: each refused before a worker starts (a million
		// workers took 2.8 GB before any request).
		{nil, []string{"-c", "1000000", "-n", "1000000", srv.URL}, "-c must be at most 100000 workers"},
		{nil, []string{"-n", "1000000000", srv.URL}, "-n must be at most 100000000"},
		{nil, []string{"-z", "2540400h", srv.URL}, "-z must be at most 24h"},
		{nil, []string{"-rate", "1e12", "-z", "1s", srv.URL}, "-rate must be at most 1000000"},
		{nil, []string{"-q", "1e12", srv.URL}, "-q must be at most 1000000"},
		{nil, []string{"-t", "999999999", srv.URL}, "-t must be at most 3600"},
		{nil, []string{"-cpus", "1000000", srv.URL}, "-cpus must be at most 4096"},
		{nil, append(append([]string{}, tls...), "-D", "/dev/zero", srv.URL), "-D: /dev/zero is larger than 16 MiB"},
	}
	for _, c := range cases {
		code, out, errs := heyRun(t, c.env, c.args...)
		lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(errs, c.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and one line containing %q", c.args, code, errs, c.want)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("usage errors sent %d requests", hits.Load())
	}
}

func TestMTLSSummaryAndCSV(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	var hits atomic.Int64
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1)%4 == 0 {
			http.Error(w, "nope", 500)
			return
		}
		w.Write([]byte("hello"))
	}), true, false)
	env := map[string]string{"X509_USER_CERT": p.ClientCert, "X509_USER_KEY": p.ClientKey}

	// Summary, with the client certificate from the environment.
	code, out, errs := heyRun(t, env, "-n", "40", "-c", "4", "-cacert", p.CAFile, srv.URL)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Summary:", "Requests/sec:", "Response time histogram:", "Latency distribution:",
		"  50% in ", "Details (average, fastest, slowest):", "DNS+dialup:", "resp read:", "Status code distribution:",
		"[200]\t30 responses", "[500]\t10 responses", "Total data:"} {
		if !strings.Contains(out, want) {
			t.Fatalf("summary lacks %q:\n%s", want, out)
		}
	}

	// CSV on stdout: header and one row per request, no summary.
	hits.Store(0)
	code, out, _ = heyRun(t, env, "-n", "40", "-c", "4", "-cacert", p.CAFile, "-o", "csv", srv.URL)
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(recs) != 41 || strings.Join(recs[0], ",") != results.CSVHeader {
		t.Fatalf("exit %d, %v, %d records:\n%s", code, err, len(recs), out)
	}
	n500 := 0
	for _, r := range recs[1:] {
		if r[7] == "500" {
			n500++
		}
	}
	if n500 != 10 {
		t.Fatalf("%d rows with status 500, want 10", n500)
	}

	// -output FILE: CSV to the file including failed requests (a refused
	// port), summary with the error distribution on stdout.
	file := filepath.Join(t.TempDir(), "out.csv")
	code, out, _ = heyRun(t, env, "-n", "6", "-c", "2", "-cacert", p.CAFile, "-output", file, "https://127.0.0.1:1/")
	data, _ := os.ReadFile(file)
	recs, err = csv.NewReader(bytes.NewReader(data)).ReadAll()
	if code != 0 || err != nil || len(recs) != 7 || !strings.Contains(recs[1][12], "connection refused") || recs[1][7] != "0" {
		t.Fatalf("exit %d, %v, CSV %q", code, err, data)
	}
	if !strings.Contains(out, "Error distribution:\n  [6]\tdial: connection refused") {
		t.Fatalf("summary lacks the error distribution:\n%s", out)
	}

	// Open loop: -rate with -n.
	code, out, _ = heyRun(t, env, "-n", "20", "-c", "4", "-rate", "200", "-cacert", p.CAFile, "-o", "csv", srv.URL)
	recs, _ = csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || len(recs) != 21 || recs[1][10] != "200" {
		t.Fatalf("open loop: exit %d, %q", code, out)
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := heyRun(t, nil, "-help")
	if code != 0 || !strings.Contains(out, "-disable-keepalive") || !strings.Contains(out, "-cacert") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// -insecure works, and says once that it does not verify the server.
func TestInsecureWarns(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false)
	code, out, errs := heyRun(t, nil, "-n", "4", "-c", "2", "-insecure", "-cert", p.ClientCert, "-key", p.ClientKey, srv.URL)
	if code != 0 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "hey: warning: -insecure") || !strings.Contains(out, "[200]\t4 responses") {
		t.Fatalf("exit %d\nstderr %q\n%s", code, errs, out)
	}
	code, _, errs = heyRun(t, nil, "-n", "4", "-c", "2", "-cacert", p.CAFile, "-cert", p.ClientCert, "-key", p.ClientKey, srv.URL)
	if code != 0 || errs != "" {
		t.Fatalf("without -insecure: exit %d, stderr %q", code, errs)
	}
}
