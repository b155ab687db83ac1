package releasetests

// This file sorts last so the rehearsal runs after the quicker checks: it
// compiles the release's packages (about a minute) and runs the errand.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "gopkg.in/yaml.v3"
)

const csvHeader = "start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset,concurrency,rate,sched-lag,error"

// simTarget is a running credhub-sim over mTLS.
type simTarget struct {
	url    string
	certs  string
	client *http.Client
}

func startCredHubSim(t *testing.T, work string) *simTarget {
	t.Helper()
	root := repoRoot(t)
	bin := filepath.Join(work, "bin", "credhub-sim")
	build := exec.Command("go", "build", "-o", bin, "./cmd/credhub-sim")
	build.Dir = filepath.Join(root, "src", "credhub-sim")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building credhub-sim: %v\n%s", err, out)
	}
	certs := filepath.Join(work, "certs")
	if out, err := exec.Command(bin, "certs", "--out", certs).CombinedOutput(); err != nil {
		t.Fatalf("credhub-sim certs: %v\n%s", err, out)
	}
	addrFile := filepath.Join(work, "sim-addr")
	var logBuf bytes.Buffer
	serve := exec.Command(bin, "serve", "-listen", "127.0.0.1:0", "-cert-dir", certs,
		"-db", "sqlite:"+filepath.Join(work, "sim.db"), "-addr-file", addrFile,
		"-encryption-password", "rehearsal-encryption-password")
	serve.Stdout, serve.Stderr = &logBuf, &logBuf
	if err := serve.Start(); err != nil {
		t.Fatalf("starting credhub-sim: %v", err)
	}
	t.Cleanup(func() {
		_ = serve.Process.Kill()
		_ = serve.Wait()
		if t.Failed() {
			t.Logf("credhub-sim output:\n%s", logBuf.String())
		}
	})
	var u string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && strings.HasPrefix(string(b), "https://") {
			u = strings.TrimSpace(string(b))
			break
		}
	}
	if u == "" {
		t.Fatalf("credhub-sim did not write its address within 30 s:\n%s", logBuf.String())
	}

	pair, err := tls.LoadX509KeyPair(filepath.Join(certs, "client.crt"), filepath.Join(certs, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(filepath.Join(certs, "ca.crt"))
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("credhub-sim CA: %v", err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}},
	}}
	return &simTarget{url: u, certs: certs, client: client}
}

func (s *simTarget) do(t *testing.T, method, path string, body interface{}) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// namesUnder lists the credentials whose names start with prefix.
func (s *simTarget) namesUnder(t *testing.T, prefix string) []string {
	t.Helper()
	code, body := s.do(t, "GET", "/api/v1/data?path="+url.QueryEscape(prefix), nil)
	if code != 200 {
		t.Fatalf("find by path %s: %d %s", prefix, code, body)
	}
	var found struct {
		Credentials []struct {
			Name string `json:"name"`
		} `json:"credentials"`
	}
	if err := json.Unmarshal(body, &found); err != nil {
		t.Fatalf("find by path: %v: %s", err, body)
	}
	var names []string
	for _, c := range found.Credentials {
		names = append(names, c.Name)
	}
	return names
}

func indent(s, pad string) string {
	return pad + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
}

// releasePackageVersions reads the package fingerprints from release.MF.
func releasePackageVersions(t *testing.T, mf []byte) map[string]string {
	t.Helper()
	var m struct {
		Packages []struct {
			Name    string `yaml:"name"`
			Version string `yaml:"version"`
		} `yaml:"packages"`
	}
	if err := yaml.Unmarshal(mf, &m); err != nil {
		t.Fatalf("release.MF: %v", err)
	}
	out := map[string]string{}
	for _, p := range m.Packages {
		out[p.Name] = p.Version
	}
	return out
}

func TestZErrandRehearsal(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare (util-linux) is needed for the errand rehearsal: %v", err)
	}
	_, varVcapBefore := os.Stat("/var/vcap")
	rel := devRelease(t)
	work := t.TempDir()

	// The release as the director gets it: job and package archives.
	entries := tgzFile(t, rel.tarball, func(n string) bool {
		return n == "release.MF" || strings.HasPrefix(n, "packages/") || strings.HasPrefix(n, "jobs/")
	})
	versions := releasePackageVersions(t, entries["release.MF"])
	for _, name := range []string{"golang-1-linux", "credhub-perf"} {
		p := filepath.Join(work, "release", "packages", name+".tgz")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, entries["packages/"+name+".tgz"], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jobDir := filepath.Join(work, "release", "job")
	if err := os.MkdirAll(jobDir, 0o755); err != nil {
		t.Fatal(err)
	}
	tarCmd := exec.Command("tar", "-xzf", "-", "-C", jobDir)
	tarCmd.Stdin = bytes.NewReader(entries["jobs/credhub-perf.tgz"])
	if out, err := tarCmd.CombinedOutput(); err != nil {
		t.Fatalf("extracting the job archive: %v\n%s", err, out)
	}

	sim := startCredHubSim(t, work)
	// A credential outside the run's prefix: it must survive cleanup, and it
	// proves the path query below sees what exists.
	const canary = "/credhub-perf-rehearsal-canary/keep"
	if code, body := sim.do(t, "PUT", "/api/v1/data", map[string]interface{}{"name": canary, "type": "value", "value": "x"}); code != 200 {
		t.Fatalf("seeding the canary: %d %s", code, body)
	}
	if got := sim.namesUnder(t, "/credhub-perf-rehearsal-canary"); len(got) != 1 {
		t.Fatalf("canary not found by path query: %v", got)
	}

	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(sim.certs, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	props := map[string]interface{}{
		"credhub": map[string]interface{}{
			"url":         sim.url,
			"ca_cert":     read("ca.crt"),
			"client_cert": map[string]interface{}{"certificate": read("client.crt"), "private_key": read("client.key")},
			"label":       "rehearsal",
			"instances":   1,
			"timeout":     "10s",
		},
		"scenarios": []interface{}{"get", "set", "interpolate"},
		"steps": map[string]interface{}{
			"min_concurrency": 1, "max_concurrency": 3, "step": 2,
			"duration": "1s", "warmup": "0s",
		},
		"seed":    map[string]interface{}{"credentials": 20, "bytes": 256},
		"cleanup": map[string]interface{}{"mode": "api"},
	}
	propsYAML, err := yaml.Marshal(props)
	if err != nil {
		t.Fatal(err)
	}
	job := loadJobFrom(t, "credhub-perf", jobDir, "job.MF")
	rendered, err := renderLoadedJob(t, job, string(propsYAML), instanceSpec{Index: 0, Bootstrap: true})
	if err != nil {
		t.Fatalf("rendering the job from the release: %v", err)
	}
	if out, err := exec.Command("cp", "-a", rendered, filepath.Join(work, "rendered")).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}

	ns, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatalf("reading this process's mount namespace: %v", err)
	}
	args := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		args = append([]string{"--user", "--map-root-user"}, args...)
	}
	args = append(args, "bash", filepath.Join(repoRoot(t), "src", "release-tests", "testdata", "rehearse.sh"))
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", args...)
	cmd.Env = append(os.Environ(), "WORK="+work, "PARENT_MNT_NS="+ns,
		"GOLANG_VERSION="+versions["golang-1-linux"], "CREDHUB_PERF_VERSION="+versions["credhub-perf"])
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rehearsal: %v\n%s", err, out)
	}
	if _, err := os.Stat("/var/vcap"); errors.Is(varVcapBefore, os.ErrNotExist) && err == nil {
		t.Fatal("the rehearsal created the machine's real /var/vcap")
	}

	if gv, _ := os.ReadFile(filepath.Join(work, "go-version")); !strings.Contains(string(gv), "go version go1.") {
		t.Errorf("golang-1-linux package: go version printed %q", gv)
	}
	stdout, _ := os.ReadFile(filepath.Join(work, "errand.stdout"))
	stderr, _ := os.ReadFile(filepath.Join(work, "errand.stderr"))
	rc, _ := os.ReadFile(filepath.Join(work, "errand.rc"))
	if strings.TrimSpace(string(rc)) != "0" {
		t.Fatalf("bin/run exited %s\nstdout:\n%s\nstderr:\n%s", rc, indent(string(stdout), "  "), indent(string(stderr), "  "))
	}
	modes, _ := os.ReadFile(filepath.Join(work, "modes"))
	for _, line := range strings.Split(strings.TrimSpace(string(modes)), "\n") {
		if !strings.HasPrefix(line, "600 ") {
			t.Errorf("after bin/run: %s (want mode 600)", line)
		}
	}

	logDir := filepath.Join(work, "vcap", "sys", "log", "credhub-perf")
	dirs, err := os.ReadDir(logDir)
	if err != nil {
		t.Fatalf("log dir: %v", err)
	}
	runDirs := map[string]string{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		for _, sc := range []string{"get", "set", "interpolate"} {
			if strings.HasSuffix(d.Name(), "-"+sc+"-rehearsal") {
				runDirs[sc] = filepath.Join(logDir, d.Name())
			}
		}
	}
	if len(runDirs) != 3 {
		t.Fatalf("run directories in %s: %v; want one per scenario (get, set, interpolate)", logDir, dirs)
	}
	for sc, dir := range runDirs {
		for _, f := range []string{"meta.json", "summary.json", "summary.txt", "results.csv"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s run: %v", sc, err)
			}
		}
		var meta map[string]interface{}
		if b, err := os.ReadFile(filepath.Join(dir, "meta.json")); err == nil {
			if err := json.Unmarshal(b, &meta); err != nil {
				t.Errorf("%s meta.json: %v", sc, err)
			}
		}
		for k, v := range map[string]interface{}{"scenario": sc, "label": "rehearsal", "instances": 1.0, "tls": "mtls", "cleanup": "api", "target_url": sim.url} {
			if meta[k] != v {
				t.Errorf("%s meta.json %s = %#v, want %#v", sc, k, meta[k], v)
			}
		}
		if tv, _ := meta["tool_version"].(string); !strings.HasPrefix(tv, "bosh-") {
			t.Errorf("%s meta.json tool_version = %q; want the package version (bosh-...)", sc, tv)
		}

		f, err := os.Open(filepath.Join(dir, "results.csv"))
		if err != nil {
			continue
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Errorf("%s results.csv: %v", sc, err)
			continue
		}
		if len(rows) < 2 || strings.Join(rows[0], ",") != csvHeader {
			t.Errorf("%s results.csv: %d rows, header %v", sc, len(rows), rows[0])
			continue
		}
		var sum struct {
			Steps []struct {
				Concurrency int `json:"concurrency"`
				Requests    int `json:"requests"`
				Errors      int `json:"errors"`
			} `json:"steps"`
		}
		b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Errorf("%s summary.json: %v", sc, err)
			continue
		}
		total := 0
		for _, s := range sum.Steps {
			total += s.Requests
			if s.Errors != 0 {
				t.Errorf("%s step at concurrency %d: %d errors", sc, s.Concurrency, s.Errors)
			}
		}
		if len(sum.Steps) != 2 || total != len(rows)-1 {
			t.Errorf("%s: summary has %d steps and %d requests; CSV has %d rows", sc, len(sum.Steps), total, len(rows)-1)
		}
		// The summary table is in the errand's stdout (run-errand shows it).
		txt, _ := os.ReadFile(filepath.Join(dir, "summary.txt"))
		if len(txt) == 0 || !strings.Contains(string(stdout), strings.TrimSpace(string(txt))) {
			t.Errorf("%s: errand stdout does not contain summary.txt:\n%s", sc, indent(string(stdout), "  "))
		}
	}
	for _, f := range []string{"credhub-perf.stdout.log", "credhub-perf.stderr.log"} {
		if _, err := os.Stat(filepath.Join(logDir, f)); err != nil {
			t.Errorf("errand log: %v", err)
		}
	}
	key := read("client.key")
	for _, f := range []string{"errand.stdout", "errand.stderr"} {
		b, _ := os.ReadFile(filepath.Join(work, f))
		if strings.Contains(string(b), strings.TrimSpace(key)) {
			t.Errorf("%s contains the client private key", f)
		}
	}

	// Cleanup: nothing left under the runs' prefix, the canary untouched.
	if left := sim.namesUnder(t, "/credhub-perf"); len(left) != 0 {
		t.Errorf("credentials left after api cleanup: %v", left)
	}
	if code, body := sim.do(t, "GET", "/api/v1/data?name="+url.QueryEscape(canary)+"&current=true", nil); code != 200 {
		t.Errorf("canary after the errand: %d %s", code, body)
	}
	t.Logf("errand stdout:\n%s", indent(string(stdout), "  "))
	_ = fmt.Sprint
}
