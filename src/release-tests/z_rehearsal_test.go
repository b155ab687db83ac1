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
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	yaml "gopkg.in/yaml.v3"
)

const csvHeader = "start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset,concurrency,rate,sched-lag,error,request"

// simTarget is a running credhub-sim over mTLS.
type simTarget struct {
	url    string
	certs  string
	client *http.Client
}

func startCredHubSim(t *testing.T, work string, extraFlags ...string) *simTarget {
	t.Helper()
	root := repoRoot(t)
	bin := filepath.Join(work, "bin", "credhub-sim")
	build := exec.Command("go", "build", "-o", bin, "./cmd/credhub-sim")
	build.Dir = filepath.Join(root, "src", "credhub-sim")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building credhub-sim: %v\n%s", err, out)
	}
	certs := filepath.Join(work, "certs")
	if out, err := exec.Command(bin, append([]string{"certs", "--out", certs}, simCertFlags()...)...).CombinedOutput(); err != nil {
		t.Fatalf("credhub-sim certs: %v\n%s", err, out)
	}
	simExtraClients(t, bin, certs)
	addrFile := filepath.Join(work, "sim-addr")
	var logBuf bytes.Buffer
	serve := exec.Command(bin, append([]string{"serve", "-listen", "127.0.0.1:0", "-cert-dir", certs,
		"-db", "sqlite:" + filepath.Join(work, "sim.db"), "-addr-file", addrFile,
		"-encryption-password", "rehearsal-encryption-password"}, append(simACLFlags(t), extraFlags...)...)...)
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

	pair, err := tls.LoadX509KeyPair(simHarnessCert(certs))
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

// rehearsal is the state shared by the steps of the errand rehearsal.
type rehearsal struct {
	work    string
	sim     *simTarget
	job     string // extracted job archive of the built release
	ns      string // this process's mount namespace
	creds   map[string]string
	root    string // the stemcell-like root the scripts chroot into ("": this machine's)
	rootKey string // its cache key
}

// unshare runs one of the testdata/rehearse-*.sh scripts in a new private
// mount namespace.
func (r *rehearsal) unshare(t *testing.T, script string, env []string, args ...string) {
	t.Helper()
	uargs := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		uargs = append([]string{"--user", "--map-root-user"}, uargs...)
	}
	uargs = append(uargs, "bash", filepath.Join(repoRoot(t), "src", "release-tests", "testdata", script))
	uargs = append(uargs, args...)
	// Compiling CPython and credhub-perf with a cold cache on a busy
	// 2-core machine took 14 minutes.
	limit := 15 * time.Minute
	if script == "rehearse-compile.sh" {
		limit = 45 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", uargs...)
	cmd.Env = append(append(os.Environ(), "WORK="+r.work, "PARENT_MNT_NS="+r.ns), env...)
	if r.root != "" {
		cmd.Env = append(cmd.Env, "STEMCELL_ROOT="+r.root, "STEMCELL_ROOT_KEY="+r.rootKey)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

// errandProps are the tester's properties for the rehearsal: short
// time-based steps against credhub-sim.
func (r *rehearsal) errandProps(label string, scenarios []interface{}, tester map[string]interface{}) map[string]interface{} {
	p := map[string]interface{}{
		"credhub": map[string]interface{}{
			"url":         r.sim.url,
			"ca_cert":     r.creds["ca.crt"],
			"client_cert": map[string]interface{}{"certificate": r.creds["client.crt"], "private_key": r.creds["client.key"]},
			"label":       label,
			"instances":   1,
			"timeout":     "10s",
		},
		"scenarios": scenarios,
		"steps": map[string]interface{}{
			"min_concurrency": 1, "max_concurrency": 3, "step": 2,
			// 3 s: a step is judged steady on its own (a shorter one counts
			// only after an auto warm-up judged steady, which takes minutes),
			// so the report has a capacity to compare.
			"duration": "3s", "warmup": "0s",
		},
		"seed":    map[string]interface{}{"credentials": 20, "bytes": 256},
		"cleanup": map[string]interface{}{"mode": "api"},
		// The rehearsal is not about saturation: credhub-sim and the other
		// suites share this machine's CPUs, which would flag every step
		// tester-bound and leave the report without a capacity to compare.
		"saturation": map[string]interface{}{"max_tester_cpu": 1, "max_host_cpu": 1, "max_steal": 1, "max_tester_wait": 1},
		// A short fixed warm-up: every tester loads for the same slot.
		"warmup": map[string]interface{}{"run": "2s"},
		// The open-loop confirmation (on by default) in few short steps:
		// the rehearsal checks it runs on the VM, not what it measures.
		"confirm": map[string]interface{}{"duration": "3s", "fractions": []interface{}{0.5, 1}, "refine": 0},
	}
	if tester != nil {
		p["tester"] = tester
	}
	return p
}

// renderTester renders the release's job for one instance into
// WORK/NAME/rendered and returns WORK/NAME.
func (r *rehearsal) renderTester(t *testing.T, name string, props map[string]interface{}, index int) string {
	t.Helper()
	return r.renderTesterSpec(t, name, props, instanceSpec{Index: index, Bootstrap: index == 0})
}

// renderTesterSpec is renderTester for an instance described in full.
func (r *rehearsal) renderTesterSpec(t *testing.T, name string, props map[string]interface{}, spec instanceSpec) string {
	t.Helper()
	propsYAML, err := yaml.Marshal(props)
	if err != nil {
		t.Fatal(err)
	}
	job := loadJobFrom(t, "credhub-perf", r.job, "job.MF")
	rendered, err := renderLoadedJob(t, job, string(propsYAML), spec)
	if err != nil {
		t.Fatalf("rendering the job from the release: %v", err)
	}
	dir := filepath.Join(r.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", rendered, filepath.Join(dir, "rendered")).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return dir
}

type errandResult struct {
	dir, stdout, stderr string
}

// checkExit reads a tester's exit status and output; it must have exited 0.
func checkExit(t *testing.T, dir string) errandResult {
	t.Helper()
	stdout, _ := os.ReadFile(filepath.Join(dir, "stdout"))
	stderr, _ := os.ReadFile(filepath.Join(dir, "stderr"))
	rc, _ := os.ReadFile(filepath.Join(dir, "rc"))
	if strings.TrimSpace(string(rc)) != "0" {
		t.Fatalf("%s: bin/run exited %q\nstdout:\n%s\nstderr:\n%s", filepath.Base(dir), rc, indent(string(stdout), "  "), indent(string(stderr), "  "))
	}
	return errandResult{dir: dir, stdout: string(stdout), stderr: string(stderr)}
}

// runDirs maps scenario -> run directory in a tester's log dir.
func runDirs(t *testing.T, logDir, label string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(logDir)
	if err != nil {
		t.Fatalf("log dir: %v", err)
	}
	out := map[string]string{}
	for _, d := range entries {
		for _, sc := range []string{"get", "set", "interpolate"} {
			if d.IsDir() && strings.HasSuffix(d.Name(), "-"+sc+"-"+label) {
				if prev, dup := out[sc]; dup {
					t.Errorf("two %s run directories: %s and %s", sc, prev, d.Name())
				}
				out[sc] = filepath.Join(logDir, d.Name())
			}
		}
	}
	return out
}

type stepSummary struct {
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate"` // > 0: an open-loop confirmation step
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
}

// readCSV checks the header and returns the data rows.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("results: %v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rows) < 2 || strings.Join(rows[0], ",") != csvHeader {
		t.Fatalf("%s: %d rows, header %v", path, len(rows), rows[0])
	}
	return rows[1:]
}

func TestZErrandRehearsal(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare (util-linux) is needed for the errand rehearsal: %v", err)
	}
	_, varVcapBefore := os.Stat("/var/vcap")
	// The stemcell-like root (downloads and unpacking, when the cache
	// lacks it) is built while the dev release is (CPU, or a wait for the
	// other release suite's build).
	rootc := make(chan rootTarball, 1)
	ctx, cancel := context.WithCancel(context.Background())
	spec := stemcellRootSpec(t)
	var building sync.WaitGroup
	building.Add(1)
	go func() {
		defer building.Done()
		rootc <- prepareStemcellRoot(ctx, spec)
	}()
	t.Cleanup(func() { cancel(); building.Wait() })
	rel := devRelease(t)
	r := &rehearsal{work: t.TempDir(), creds: map[string]string{}}
	var err error
	if r.ns, err = os.Readlink("/proc/self/ns/mnt"); err != nil {
		t.Fatalf("reading this process's mount namespace: %v", err)
	}

	// The release as the director gets it: job and package archives.
	entries := tgzFile(t, rel.tarball, func(n string) bool {
		return n == "release.MF" || strings.HasPrefix(n, "packages/") || strings.HasPrefix(n, "jobs/")
	})
	versions := releasePackageVersions(t, entries["release.MF"])
	for _, name := range []string{"golang-1-linux", "credhub-perf", "bosh-cli", "credhub-cli", "python3", "headroom-plot", "scaling-study"} {
		p := filepath.Join(r.work, "release", "packages", name+".tgz")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, entries["packages/"+name+".tgz"], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.job = filepath.Join(r.work, "release", "job")
	if err := os.MkdirAll(r.job, 0o755); err != nil {
		t.Fatal(err)
	}
	untar := exec.Command("tar", "-xzf", "-", "-C", r.job)
	untar.Stdin = bytes.NewReader(entries["jobs/credhub-perf.tgz"])
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("extracting the job archive: %v\n%s", err, out)
	}

	// Everything below (package compiles, errands, CLIs) runs chrooted into
	// a stemcell-like root when one can be built.
	var why string
	if r.root, r.rootKey, why = unpackStemcellRoot(t, <-rootc); why != "" {
		if stemcellRootRequired() {
			t.Fatalf("the stemcell-like root cannot be built: %s (CI=true or TEST_QUIET=require: the rehearsal must run in it)", why)
		}
		noteNotRun(t, "the errand rehearsal in a stemcell-like root ("+why+"); rehearsed on this machine's root instead")
	}
	r.unshare(t, "rehearse-compile.sh", []string{
		"GOLANG_VERSION=" + versions["golang-1-linux"], "CREDHUB_PERF_VERSION=" + versions["credhub-perf"],
		"BOSH_CLI_VERSION=" + versions["bosh-cli"], "CREDHUB_CLI_VERSION=" + versions["credhub-cli"],
		"PYTHON3_VERSION=" + versions["python3"], "HEADROOM_PLOT_VERSION=" + versions["headroom-plot"],
		"SCALING_STUDY_VERSION=" + versions["scaling-study"], "PACKAGE_CACHE=" + compiledPackageCache(t)})
	if r.root != "" {
		checkStemcellPython(t, r.work)
	}
	if help, _ := os.ReadFile(filepath.Join(r.work, "scaling-study-help")); !strings.HasPrefix(string(help), "usage: scaling-study") || strings.Contains(string(help), "exit status") {
		t.Errorf("scaling-study package: scaling-study --help printed %q", help)
	}
	if gv, _ := os.ReadFile(filepath.Join(r.work, "go-version")); !strings.Contains(string(gv), "go version go1.") {
		t.Errorf("golang-1-linux package: go version printed %q", gv)
	}
	if pc, _ := os.ReadFile(filepath.Join(r.work, "python3-check")); !strings.HasPrefix(string(pc), "3.13.5 OpenSSL") {
		t.Errorf(`python3 package: python3 -c "import ssl, zlib, bz2" printed %q`, pc)
	}
	times, _ := os.ReadFile(filepath.Join(r.work, "compile-times"))
	t.Logf("compile seconds per package (cached: from the compiled-package cache):\n%s", indent(string(times), "  "))
	perfBin := filepath.Join(r.work, "vcap", "data", "packages", "credhub-perf", versions["credhub-perf"], "bin")
	for _, b := range []string{"credhub-perf", "hey"} {
		if _, err := os.Stat(filepath.Join(perfBin, b)); err != nil {
			t.Fatalf("compiled package: %v", err)
		}
	}

	// A capacity model (one instance of one core, 2 ms per request: at
	// most 500 requests/s) instead of an unlimited sim: the errand's ramps
	// then hold the SLO at a few hundred requests/s instead of burning
	// both of this machine's cores in the tester and the sim for every
	// step, and the steps are as steady as the model, so the report still
	// has a capacity.
	r.sim = startCredHubSim(t, r.work, "-workers", "1", "-cores", "1", "-service-time", "2ms")
	for _, f := range []string{"ca.crt", "client.crt", "client.key"} {
		b, err := os.ReadFile(filepath.Join(r.sim.certs, f))
		if err != nil {
			t.Fatal(err)
		}
		r.creds[f] = string(b)
	}
	// A credential outside the runs' prefix: it must survive cleanup, and it
	// proves the path query below sees what exists.
	const canary = "/credhub-perf-rehearsal-canary/keep"
	if code, body := r.sim.do(t, "PUT", "/api/v1/data", map[string]interface{}{"name": canary, "type": "value", "value": "x"}); code != 200 {
		t.Fatalf("seeding the canary: %d %s", code, body)
	}
	if got := r.sim.namesUnder(t, "/credhub-perf-rehearsal-canary"); len(got) != 1 {
		t.Fatalf("canary not found by path query: %v", got)
	}
	t.Run("bosh and credhub CLIs", func(t *testing.T) { checkCLIPackages(t, r) })

	checkCleanedUp := func(t *testing.T) {
		t.Helper()
		if left := r.sim.namesUnder(t, "/credhub-perf"); len(left) != 0 {
			t.Errorf("credentials left after api cleanup: %v", left)
		}
		if code, body := r.sim.do(t, "GET", "/api/v1/data?name="+url.QueryEscape(canary)+"&current=true", nil); code != 200 {
			t.Errorf("canary after the errand: %d %s", code, body)
		}
	}

	t.Run("one tester", func(t *testing.T) {
		props := r.errandProps("rehearsal", []interface{}{"get", "set", "interpolate"}, nil)
		// errandProps' steps count as capacity even on a busy machine (no
		// tester-bound verdicts, judged steady) and are long enough for
		// bootstrap intervals, so the report's figures below are numbers
		// to compare.
		dir := r.renderTester(t, "solo", props, 0)
		r.unshare(t, "rehearse-run.sh", nil, dir)
		res := checkExit(t, dir)
		// ACLs on: the actor the errand names is the one granted.
		if !strings.Contains(res.stdout, "CredHub actor mtls-app:"+exampleTesterGUID+":") {
			t.Errorf("the errand does not print the actor to grant:\n%s", indent(res.stdout, "  "))
		}
		for _, f := range []string{"config/client.key", "config/config.yml", "bin/credhub-env"} {
			if fi, err := os.Stat(filepath.Join(dir, "rendered", f)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("after bin/run, %s: mode %v, %v; want 0600", f, fi.Mode().Perm(), err)
			}
		}
		runs := runDirs(t, filepath.Join(dir, "log", "credhub-perf"), "rehearsal")
		if len(runs) != 3 {
			t.Fatalf("run directories: %v; want one per scenario (get, set, interpolate)", runs)
		}
		for sc, run := range runs {
			for _, f := range []string{"meta.json", "summary.json", "summary.txt", "results.csv"} {
				if _, err := os.Stat(filepath.Join(run, f)); err != nil {
					t.Errorf("%s run: %v", sc, err)
				}
			}
			var meta map[string]interface{}
			b, _ := os.ReadFile(filepath.Join(run, "meta.json"))
			if err := json.Unmarshal(b, &meta); err != nil {
				t.Errorf("%s meta.json: %v", sc, err)
			}
			for k, v := range map[string]interface{}{"scenario": sc, "label": "rehearsal", "instances": 1.0, "tls": "mtls", "cleanup": "api", "target_url": r.sim.url} {
				if meta[k] != v {
					t.Errorf("%s meta.json %s = %#v, want %#v", sc, k, meta[k], v)
				}
			}
			if tv, _ := meta["tool_version"].(string); tv != "bosh-"+versions["credhub-perf"] {
				t.Errorf("%s meta.json tool_version = %q; want bosh-<package version>", sc, tv)
			}
			rows := readCSV(t, filepath.Join(run, "results.csv"))
			var sum struct{ Steps []stepSummary }
			b, _ = os.ReadFile(filepath.Join(run, "summary.json"))
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatalf("%s summary.json: %v", sc, err)
			}
			total, closed := 0, 0
			for _, s := range sum.Steps {
				total += s.Requests
				if s.Rate == 0 {
					closed++
				}
				if s.Errors != 0 {
					t.Errorf("%s step at concurrency %d: %d errors", sc, s.Concurrency, s.Errors)
				}
			}
			// The two closed-loop steps, then the open-loop confirmation's
			// steps when the ramp found a capacity.
			if closed != 2 || total != len(rows) {
				t.Errorf("%s: summary has %d closed-loop steps (of %d) and %d requests; the CSV has %d rows; want 2 closed-loop steps", sc, closed, len(sum.Steps), total, len(rows))
			}
			// The summary table is in the errand's stdout (run-errand shows it).
			txt, _ := os.ReadFile(filepath.Join(run, "summary.txt"))
			if len(txt) == 0 || !strings.Contains(res.stdout, strings.TrimSpace(string(txt))) {
				t.Errorf("%s: errand stdout does not contain summary.txt:\n%s", sc, indent(res.stdout, "  "))
			}
		}
		for _, f := range []string{"credhub-perf-0.stdout.log", "credhub-perf-0.stderr.log"} {
			if _, err := os.Stat(filepath.Join(dir, "log", "credhub-perf", f)); err != nil {
				t.Errorf("errand log: %v", err)
			}
		}
		for _, out := range []string{res.stdout, res.stderr} {
			if strings.Contains(out, strings.TrimSpace(r.creds["client.key"])) {
				t.Error("errand output contains the client private key")
			}
		}
		checkCleanedUp(t)
		checkReport(t, filepath.Join(dir, "log", "credhub-perf"), runs, res.stdout)
		t.Logf("errand stdout:\n%s", indent(res.stdout, "  "))
	})

	t.Run("plotting fails", func(t *testing.T) {
		// A plotter that cannot run (here: not executable) costs the report
		// only: one warning line, and the errand exits as the run did.
		dir := r.renderTester(t, "noplot", r.errandProps("noplot", []interface{}{"get"}, nil), 0)
		if err := os.WriteFile(filepath.Join(dir, "break-plotter"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		r.unshare(t, "rehearse-run.sh", nil, dir)
		res := checkExit(t, dir)
		if !strings.Contains(res.stdout, "credhub-perf errand: warning: headroom-plot failed (exit 126)") ||
			!strings.Contains(res.stdout, "exit status 0") {
			t.Errorf("a broken plotter is not one warning with the run's exit status:\n%s", indent(res.stdout, "  "))
		}
		if runs := runDirs(t, filepath.Join(dir, "log", "credhub-perf"), "noplot"); len(runs) != 1 {
			t.Errorf("run directories %v; want the get run", runs)
		}
		checkCleanedUp(t)
	})

	t.Run("cancel", func(t *testing.T) {
		// bosh cancel-task: SIGTERM to bin/run's whole process group in the
		// middle of the get ramp, SIGKILL 10 s later as the agent does. The
		// run must stop, clean up within that grace, record the rows and
		// the summary, and keep logging to the job's log directory.
		props := r.errandProps("cancel", []interface{}{"get", "set"}, nil)
		props["steps"].(map[string]interface{})["max_concurrency"] = 9 // 1, 3, 5, 7, 9
		dir := r.renderTester(t, "cancel", props, 0)
		if err := os.WriteFile(filepath.Join(dir, "cancel-on"), []byte("step 1/5 concurrency 1: "), 0o644); err != nil {
			t.Fatal(err)
		}
		r.unshare(t, "rehearse-run.sh", nil, dir)
		stdout, _ := os.ReadFile(filepath.Join(dir, "stdout"))
		stderr, _ := os.ReadFile(filepath.Join(dir, "stderr"))
		report := fmt.Sprintf("\nstdout:\n%s\nstderr:\n%s", indent(string(stdout), "  "), indent(string(stderr), "  "))
		if _, err := os.Stat(filepath.Join(dir, "cancel-killed")); err == nil {
			t.Fatalf("the errand's process group still existed 10 s after SIGTERM (the agent would have killed it)%s", report)
		}
		if rc, _ := os.ReadFile(filepath.Join(dir, "rc")); strings.TrimSpace(string(rc)) == "0" || len(rc) == 0 {
			t.Errorf("cancelled errand exited %q; want non-zero%s", rc, report)
		}
		logDir := filepath.Join(dir, "log", "credhub-perf")
		runs := runDirs(t, logDir, "cancel")
		if len(runs) != 1 || runs["get"] == "" {
			t.Fatalf("run directories %v; want the get run only (set is not started after a cancel)%s", runs, report)
		}
		var meta struct {
			Status        string `json:"status"`
			CleanupStatus string `json:"cleanup_status"`
		}
		b, _ := os.ReadFile(filepath.Join(runs["get"], "meta.json"))
		if err := json.Unmarshal(b, &meta); err != nil || meta.Status != "interrupted" || meta.CleanupStatus != "ok" {
			t.Errorf("meta.json: status %q, cleanup_status %q (%v); want interrupted, ok%s", meta.Status, meta.CleanupStatus, err, report)
		}
		rows := readCSV(t, filepath.Join(runs["get"], "results.csv"))
		var sum struct {
			StoppedReason string `json:"stopped_reason"`
			Steps         []stepSummary
		}
		b, _ = os.ReadFile(filepath.Join(runs["get"], "summary.json"))
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatalf("summary.json: %v%s", err, report)
		}
		total := 0
		for _, s := range sum.Steps {
			total += s.Requests
		}
		if len(sum.Steps) == 0 || len(sum.Steps) >= 5 || total == 0 || total > len(rows) {
			t.Errorf("summary: %d steps, %d requests; CSV %d rows: want a partial ramp whose summary counts recorded rows", len(sum.Steps), total, len(rows))
		}
		if sum.StoppedReason != "interrupted" {
			t.Errorf("summary stopped_reason %q, want interrupted", sum.StoppedReason)
		}
		// What credhub-perf printed after the signal reached the job's logs.
		errLog, _ := os.ReadFile(filepath.Join(logDir, "credhub-perf-0.stderr.log"))
		outLog, _ := os.ReadFile(filepath.Join(logDir, "credhub-perf-0.stdout.log"))
		if !strings.Contains(string(errLog), "cleanup (api): removed") || !strings.Contains(string(errLog), "not running the remaining scenarios (set)") {
			t.Errorf("the stderr log lacks the cleanup and the stop after the signal:\n%s", indent(string(errLog), "  "))
		}
		if !strings.Contains(string(outLog), "== get: ") || !strings.Contains(string(outLog), "(interrupted)") {
			t.Errorf("the stdout log lacks the summary written after the signal:\n%s", indent(string(outLog), "  "))
		}
		if !strings.Contains(string(stdout), "credhub-perf errand: interrupted") {
			t.Errorf("bin/run does not report the interrupt%s", report)
		}
		checkCleanedUp(t)
	})

	// checkPair checks what two testers of one run left: both exited 0
	// announcing how they started, one run id, and their CSVs merge into
	// one summary, as --download-logs of both VMs extracted together does.
	checkPair := func(t *testing.T, dirs []string, label, announce, name string) []errandResult {
		t.Helper()
		merged := filepath.Join(r.work, "merged-"+name)
		var names []string
		var res []errandResult
		rows := 0
		for i, dir := range dirs {
			res = append(res, checkExit(t, dir))
			if !strings.Contains(res[i].stdout, "2 testers, "+announce) {
				t.Errorf("tester %d stdout does not say %q:\n%s", i, "2 testers, "+announce, indent(res[i].stdout, "  "))
			}
			runs := runDirs(t, filepath.Join(dir, "log", "credhub-perf"), label)
			run, ok := runs["get"]
			if !ok {
				t.Fatalf("tester %d: no get run directory\nstderr:\n%s", i, indent(res[i].stderr, "  "))
			}
			names = append(names, filepath.Base(run))
			csvName := fmt.Sprintf("results-%d.csv", i)
			rows += len(readCSV(t, filepath.Join(run, csvName)))
			if err := os.MkdirAll(filepath.Join(merged, filepath.Base(run)), 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("cp", "-a", filepath.Join(run, csvName), filepath.Join(merged, filepath.Base(run))).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if i == 0 {
				if out, err := exec.Command("cp", "-a", filepath.Join(run, "meta.json"), filepath.Join(merged, filepath.Base(run))).CombinedOutput(); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
			}
		}
		if names[0] != names[1] {
			t.Fatalf("testers wrote different run directories %v; they must share the run id", names)
		}
		out, err := exec.Command(filepath.Join(perfBin, "credhub-perf"), "merge", filepath.Join(merged, names[0])).CombinedOutput()
		if err != nil {
			t.Fatalf("credhub-perf merge: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), fmt.Sprintf("total: %d requests", rows)) {
			t.Errorf("merged summary does not count both testers' %d rows:\n%s", rows, out)
		}
		return res
	}

	t.Run("two testers", func(t *testing.T) {
		// No tester.start_at: the testers agree through CredHub on the
		// credential named after the deployment and the instance group.
		// Tester 1's VM comes up first and tester 0's 3 s later, and a
		// previous run's tester 0 left its value behind: it must be ignored.
		// The instances are the ones `bosh run-errand credhub-perf` would
		// start for the several-testers manifest (the director's rule).
		const delay = 4
		const rendezvous = "/credhub-perf/rendezvous/perf-rehearsal-credhub-perf"
		m := boshInt(t, filepath.Join(repoRoot(t), "manifests", "credhub-perf.yml"), []string{"several-testers.yml"},
			"-v", "testers=2", "-v", "deployment_name=perf-rehearsal")
		instances := errandRuns(t, m, "credhub-perf")
		if len(instances) != 2 {
			t.Fatalf("bosh run-errand would start %v; want 2 testers", instances)
		}
		written := time.Now().Add(-time.Hour).UTC()
		leftover := map[string]interface{}{"name": rendezvous, "type": "json", "value": map[string]interface{}{
			"start_at": written.Add(30 * time.Second).Format(time.RFC3339), "run_id": "20200101T000000Z-stale0", "written_at": written.Format(time.RFC3339Nano)}}
		if code, body := r.sim.do(t, "PUT", "/api/v1/data", leftover); code != 200 {
			t.Fatalf("writing the leftover rendezvous value: %d %s", code, body)
		}
		manifestProps, _ := testerProps(t, m)
		var dirs []string
		for _, in := range instances {
			props := r.errandProps("pair", []interface{}{"get"}, map[string]interface{}{"count": manifestProps["tester"].(map[string]interface{})["count"], "start_delay": delay})
			dirs = append(dirs, r.renderTesterSpec(t, fmt.Sprintf("rv-tester%d", in.Index), props,
				instanceSpec{Index: in.Index, Bootstrap: in.Index == 0, Deployment: fmt.Sprint(m["name"]), Name: in.Group}))
		}
		if err := os.WriteFile(filepath.Join(dirs[0], "launch-delay"), []byte("3"), 0o644); err != nil {
			t.Fatal(err)
		}
		r.unshare(t, "rehearse-run.sh", nil, dirs...)
		res := checkPair(t, dirs, "pair", "first step agreed through CredHub ("+rendezvous+")", "rendezvous")
		if !strings.Contains(res[1].stderr, "previous run's leftover") {
			t.Errorf("tester 1 does not report the leftover value it ignored:\n%s", indent(res[1].stderr, "  "))
		}
		if !strings.Contains(res[0].stderr, "rendezvous: deleted "+rendezvous) {
			t.Errorf("tester 0 does not report deleting the rendezvous credential:\n%s", indent(res[0].stderr, "  "))
		}
		checkCleanedUp(t) // the rendezvous credential included
		for i, dir := range dirs {
			md, err := os.ReadFile(filepath.Join(dir, "log", "credhub-perf", fmt.Sprintf("report-%d", i), "report.md"))
			if want := fmt.Sprintf("Tester %d of 2: this tester's share of the load only", i); err != nil || !strings.Contains(string(md), want) {
				t.Errorf("tester %d's report does not say %q (%v):\n%s", i, want, err, indent(string(md), "  "))
			}
		}
		collectRecipe(t, r.work, perfBin, dirs)
	})

	t.Run("two testers, tester 0 fails before publishing", func(t *testing.T) {
		// Both instances get the same properties, as from one instance
		// group; only tester 0 checks the cleanup database before anything
		// else, and finds nothing listening there: configuration caught
		// late, 3 s after tester 1 started waiting. A previous run's
		// failure report is still in CredHub and must not stop tester 1.
		// Tester 1 must stop on tester 0's report, not wait out
		// tester.rendezvous_timeout, and nothing may be left in CredHub.
		const rendezvous = "/credhub-perf/rendezvous/perf-rehearsal-failing"
		const dbPassword = "rehearsal-db-secret"
		const timeout = 5 * time.Minute
		written := time.Now().Add(-time.Hour).UTC()
		leftover := map[string]interface{}{"name": rendezvous, "type": "json", "value": map[string]interface{}{
			"written_at": written.Format(time.RFC3339Nano),
			"failed":     map[string]interface{}{"tester": 0, "where": "during setup", "reason": "a previous run's failure"}}}
		if code, body := r.sim.do(t, "PUT", "/api/v1/data", leftover); code != 200 {
			t.Fatalf("writing the leftover failure report: %d %s", code, body)
		}
		var dirs []string
		for i := 0; i < 2; i++ {
			props := r.errandProps("failing", []interface{}{"get"}, map[string]interface{}{"count": 2, "start_delay": 4, "rendezvous_timeout": timeout.String()})
			props["cleanup"] = map[string]interface{}{"mode": "database", "database": map[string]interface{}{
				"type": "postgres", "host": "127.0.0.1", "port": 1, "user": "credhub", "password": dbPassword}}
			dirs = append(dirs, r.renderTesterSpec(t, fmt.Sprintf("fail-tester%d", i), props,
				instanceSpec{Index: i, Bootstrap: i == 0, Deployment: "perf-rehearsal", Name: "failing"}))
		}
		if err := os.WriteFile(filepath.Join(dirs[0], "launch-delay"), []byte("3"), 0o644); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		r.unshare(t, "rehearse-run.sh", nil, dirs...)
		took := time.Since(began)
		var out [2]struct{ rc, stdout, stderr string }
		for i, dir := range dirs {
			rc, _ := os.ReadFile(filepath.Join(dir, "rc"))
			stdout, _ := os.ReadFile(filepath.Join(dir, "stdout"))
			stderr, _ := os.ReadFile(filepath.Join(dir, "stderr"))
			out[i].rc, out[i].stdout, out[i].stderr = strings.TrimSpace(string(rc)), string(stdout), string(stderr)
		}
		report := fmt.Sprintf("\ntester 0 stderr:\n%s\ntester 1 stderr:\n%s", indent(out[0].stderr, "  "), indent(out[1].stderr, "  "))
		if out[0].rc != "2" || !strings.Contains(out[0].stderr, "cleanup.database") ||
			!strings.Contains(out[0].stderr, "told the other testers through "+rendezvous+" that tester 0 stopped during setup") {
			t.Fatalf("tester 0 exited %q; want 2, refusing the cleanup database and telling the others%s", out[0].rc, report)
		}
		var errLine string
		for _, l := range strings.Split(out[1].stderr, "\n") {
			if strings.Contains(l, "credhub-perf: error: ") {
				errLine = l
			}
		}
		for _, want := range []string{"tester 0 stopped during setup (at ", "cleanup.database", "credhub-perf-0.stderr.log", rendezvous} {
			if !strings.Contains(errLine, want) {
				t.Errorf("tester 1's error line lacks %q%s", want, report)
			}
		}
		if out[1].rc != "2" || strings.Contains(errLine, "did not publish") {
			t.Errorf("tester 1 exited %q; want 2 on tester 0's report, not on the timeout%s", out[1].rc, report)
		}
		if !strings.Contains(out[1].stderr, "previous run's leftover") {
			t.Errorf("tester 1 does not report ignoring the previous run's failure report%s", report)
		}
		// Tester 1 waited from its start until tester 0's report (3 s and
		// a poll): far from the 5 min timeout it would otherwise reach.
		if took > timeout/2 {
			t.Errorf("the errand took %s; tester 1 should stop within seconds of tester 0, not near tester.rendezvous_timeout (%s)%s", took.Round(time.Second), timeout, report)
		}
		for i := range out {
			if strings.Contains(out[i].stdout+out[i].stderr, dbPassword) {
				t.Errorf("tester %d's output contains the database password", i)
			}
		}
		checkCleanedUp(t) // the failure report (read by tester 1, the last) and both pre-flights included
		t.Logf("errand took %s; tester 1's error line:\n%s", took.Round(100*time.Millisecond), errLine)
	})

	t.Run("two testers, rendezvous off", func(t *testing.T) {
		// The fallback: each bin/run rounds now + start_delay up to the next
		// multiple of sync_interval. Launching mid-interval keeps both
		// testers' computations (a few ms apart) on the same side of a
		// multiple.
		const delay, interval = 2, 10
		var dirs []string
		for i := 0; i < 2; i++ {
			props := r.errandProps("rounded", []interface{}{"get"}, map[string]interface{}{
				"count": 2, "start_delay": delay, "sync_interval": interval, "rendezvous": "off"})
			dirs = append(dirs, r.renderTester(t, fmt.Sprintf("tester%d", i), props, i))
		}
		now := time.Now().UTC()
		phase := time.Duration((now.Unix()+delay)%interval)*time.Second + time.Duration(now.Nanosecond())
		wait := (interval/2*time.Second - phase + interval*time.Second) % (interval * time.Second)
		time.Sleep(wait)
		launch := time.Now().UTC().Unix()
		start := time.Unix((launch+delay+interval-1)/interval*interval, 0).UTC().Format(time.RFC3339)
		r.unshare(t, "rehearse-run.sh", nil, dirs...)
		checkPair(t, dirs, "rounded", "first step at "+start, "rounded")
		checkCleanedUp(t)
	})

	t.Run("tester without a grant stops at pre-flight", func(t *testing.T) {
		// ACLs are really on: a client CredHub trusts but grants nothing
		// stops before any load, naming the actor and the permission.
		props := r.errandProps("stranger", []interface{}{"get"}, nil)
		props["credhub"].(map[string]interface{})["client_cert"] = map[string]interface{}{
			"certificate": readFileString(t, filepath.Join(r.sim.certs, "stranger.crt")),
			"private_key": readFileString(t, filepath.Join(r.sim.certs, "stranger.key"))}
		dir := r.renderTester(t, "stranger", props, 0)
		r.unshare(t, "rehearse-run.sh", nil, dir)
		rc, _ := os.ReadFile(filepath.Join(dir, "rc"))
		stderr, _ := os.ReadFile(filepath.Join(dir, "stderr"))
		if strings.TrimSpace(string(rc)) != "2" || !strings.Contains(string(stderr), "mtls-app:7e7e7e7e-8f8f-4a9a-8b0b-1c1c1c1c1c1c lacks write permission") {
			t.Errorf("a tester without a grant exited %q; want 2 at pre-flight naming its actor\nstderr:\n%s", rc, indent(string(stderr), "  "))
		}
		if runs := runDirs(t, filepath.Join(dir, "log", "credhub-perf"), "stranger"); len(runs) != 0 {
			t.Errorf("a tester without a grant left run directories %v", runs)
		}
	})

	t.Run("failed run exits non-zero", func(t *testing.T) {
		props := r.errandProps("down", []interface{}{"get"}, nil)
		props["credhub"].(map[string]interface{})["url"] = "https://127.0.0.1:1"
		dir := r.renderTester(t, "down", props, 0)
		r.unshare(t, "rehearse-run.sh", nil, dir)
		rc, _ := os.ReadFile(filepath.Join(dir, "rc"))
		stderr, _ := os.ReadFile(filepath.Join(dir, "stderr"))
		stdout, _ := os.ReadFile(filepath.Join(dir, "stdout"))
		// credhub-perf: 2 = target unreachable before any load.
		if strings.TrimSpace(string(rc)) != "2" {
			t.Errorf("bin/run against a closed port exited %q, want 2\nstdout:\n%s\nstderr:\n%s", rc, stdout, stderr)
		}
		if !strings.Contains(string(stdout), "exit status 2") || len(strings.TrimSpace(string(stderr))) == 0 {
			t.Errorf("the failure is not reported:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
	})

	if _, err := os.Stat("/var/vcap"); errors.Is(varVcapBefore, os.ErrNotExist) && err == nil {
		t.Fatal("the rehearsal created the machine's real /var/vcap")
	}
}

// collectRecipe runs the README's results recipe on the testers' log
// directories packed as the agent packs them for --download-logs (one
// tarball per VM, entries ./credhub-perf/...):
//
//	credhub-perf collect --out runs results/*.tgz
//	headroom-plot runs/*/ --out report
//
// and checks that headroom-plot gets one run directory holding every
// tester's rows, tester 0's meta.json and a summary over all testers.
func collectRecipe(t *testing.T, work, perfBin string, testers []string) {
	t.Helper()
	plot, err := exec.LookPath(filepath.Join(repoRoot(t), ".venv", "bin", "headroom-plot"))
	if err != nil {
		if plot, err = exec.LookPath("headroom-plot"); err != nil {
			t.Fatalf("headroom-plot not found (make venv; make test builds it first): %v", err)
		}
	}
	recipe := filepath.Join(work, "recipe")
	if err := os.MkdirAll(filepath.Join(recipe, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, dir := range testers {
		tgz := filepath.Join(recipe, "results", fmt.Sprintf("credhub-perf.%d-6f1b2c3d-20261124-230000.tgz", i))
		if out, err := exec.Command("tar", "-czf", tgz, "-C", filepath.Join(dir, "log"), "./credhub-perf").CombinedOutput(); err != nil {
			t.Fatalf("packing tester %d's logs: %v\n%s", i, err, out)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", "credhub-perf collect --out runs results/*.tgz\nheadroom-plot runs/*/ --out report")
	cmd.Dir = recipe
	cmd.Env = append(os.Environ(), "PATH="+perfBin+":"+filepath.Dir(plot)+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the results recipe failed: %v\n%s", err, out)
	}
	runs, _ := filepath.Glob(filepath.Join(recipe, "runs", "*-get-pair"))
	if len(runs) != 1 {
		t.Fatalf("collected run directories %v; want the one get run", runs)
	}
	for _, f := range []string{"meta.json", "meta-1.json", "results-0.csv", "results-1.csv", "summary.json", "summary-1.json"} {
		if _, err := os.Stat(filepath.Join(runs[0], f)); err != nil {
			t.Errorf("collected run: %v", err)
		}
	}
	for _, f := range []string{"credhub-perf-0.stderr.log", "credhub-perf-1.stderr.log"} {
		if _, err := os.Stat(filepath.Join(recipe, "runs", f)); err != nil {
			t.Errorf("collected logs: %v", err)
		}
	}
	var meta struct{ Tester int }
	var sum struct{ Testers, Requests int }
	b, _ := os.ReadFile(filepath.Join(runs[0], "meta.json"))
	_ = json.Unmarshal(b, &meta)
	b, _ = os.ReadFile(filepath.Join(runs[0], "summary.json"))
	_ = json.Unmarshal(b, &sum)
	rows := len(readCSV(t, filepath.Join(runs[0], "results-0.csv"))) + len(readCSV(t, filepath.Join(runs[0], "results-1.csv")))
	if meta.Tester != 0 || sum.Testers != 2 || sum.Requests != rows {
		t.Errorf("collected meta.json tester %d, summary.json %d testers %d requests; want tester 0's meta and a summary of both testers' %d rows", meta.Tester, sum.Testers, sum.Requests, rows)
	}
	if _, err := os.Stat(filepath.Join(recipe, "report", "report.html")); err != nil {
		t.Errorf("headroom-plot wrote no report: %v", err)
	}
}

// compiledPackageCache is where the rehearsal keeps compiled python3 and
// headroom-plot packages between runs (CPython takes minutes to compile):
// outside the repository, under ${CREDHUB_PERF_CACHE:-~/.cache/credhub-perf}.
func compiledPackageCache(t *testing.T) string {
	t.Helper()
	base := cacheBase(t)
	if base == "" {
		return ""
	}
	return filepath.Join(base, "compiled-packages")
}

// checkReport checks the errand's report on the VM (report-0 in the log
// directory): headroom plots and capacity.json, whose figures equal what
// the workstation's headroom-plot (the repository's .venv) writes from the
// same run directories at another path with the same SLO.
func checkReport(t *testing.T, logDir string, runs map[string]string, stdout string) {
	t.Helper()
	report := filepath.Join(logDir, "report-0")
	if !strings.Contains(stdout, "credhub-perf errand: report of 3 run directories in /var/vcap/sys/log/credhub-perf/report-0") {
		t.Errorf("the errand output does not announce the report:\n%s", indent(stdout, "  "))
	}
	// REHEARSAL_KEEP_REPORT=DIR keeps a copy of the VM's report to look at.
	if keep := os.Getenv("REHEARSAL_KEEP_REPORT"); keep != "" {
		if out, err := exec.Command("cp", "-a", report, keep).CombinedOutput(); err != nil {
			t.Errorf("keeping the report: %v: %s", err, out)
		}
	}
	// The plotter drew on both cores: its render worker did not fail (on
	// a stemcell's CPython, an import of ctypes made it exit at once).
	if b, _ := os.ReadFile(filepath.Join(report, "headroom-plot.log")); strings.Contains(string(b), "render process failed") {
		t.Errorf("headroom-plot's render worker failed on the VM:\n%s", indent(string(b), "  "))
	}
	pngs, _ := filepath.Glob(filepath.Join(report, "headroom-*.png"))
	if len(pngs) == 0 {
		b, _ := os.ReadFile(filepath.Join(report, "headroom-plot.log"))
		t.Fatalf("no headroom plot PNG in %s; headroom-plot.log:\n%s", report, indent(string(b), "  "))
	}
	for _, f := range []string{"report.html", "report.md", "capacity.json", "latency-over-time-get-rehearsal.png"} {
		if fi, err := os.Stat(filepath.Join(report, f)); err != nil || fi.Size() == 0 {
			t.Errorf("report: %s: %v", f, err)
		}
	}
	// Without credhub-perf the VM's plotter would still draw, short of the
	// verdicts only credhub-perf gives: the errand's PATH must let it find one.
	if b, _ := os.ReadFile(filepath.Join(report, "headroom-plot.log")); strings.Contains(string(b), "note: credhub-perf") ||
		strings.Contains(string(b), "CREDHUB_PERF=") {
		t.Errorf("the VM's headroom-plot did not find credhub-perf; headroom-plot.log:\n%s", indent(string(b), "  "))
	}
	plot, err := exec.LookPath(filepath.Join(repoRoot(t), ".venv", "bin", "headroom-plot"))
	if err != nil {
		t.Fatalf("the workstation's headroom-plot (make venv): %v", err)
	}
	// The run directories at a path other than the VM's, as after
	// --download-logs.
	laptop := filepath.Join(t.TempDir(), "downloads")
	if err := os.MkdirAll(laptop, 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, run := range runs {
		names = append(names, filepath.Base(run))
	}
	sort.Strings(names) // the order bin/run passes them in
	var dirs []string
	for _, name := range names {
		d := filepath.Join(laptop, name)
		if out, err := exec.Command("cp", "-a", filepath.Join(logDir, name), d).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		dirs = append(dirs, d)
	}
	out := filepath.Join(laptop, "report")
	args := append(dirs, "--out", out, "--slo-percentile", "95", "--slo-ms", "100", "--quiet")
	if b, err := exec.Command(plot, args...).CombinedOutput(); err != nil {
		t.Fatalf("workstation headroom-plot: %v\n%s", err, b)
	}
	var vm, ws interface{}
	for _, c := range []struct {
		path string
		v    *interface{}
	}{{filepath.Join(report, "capacity.json"), &vm}, {filepath.Join(out, "capacity.json"), &ws}} {
		b, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, c.v); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
	}
	if !reflect.DeepEqual(vm, ws) {
		a, _ := json.MarshalIndent(vm, "", " ")
		b, _ := json.MarshalIndent(ws, "", " ")
		t.Errorf("capacity.json on the VM differs from the workstation's:\nVM:\n%s\nworkstation:\n%s", a, b)
	}
	// The comparison means something only with figures in it: some
	// scenario's capacity and its bootstrap interval (seeded by the run's
	// id). Any scenario: on a machine shared with other suites a run's
	// steps may be judged not steady (rightly: the load beside them
	// changed), which leaves that run without a capacity.
	var cap struct {
		Scenarios map[string]struct {
			Capacity []struct {
				CapacityRPS *float64   `json:"capacity_rps"`
				Interval    []*float64 `json:"interval"`
			} `json:"capacity"`
		} `json:"scenarios"`
	}
	b, _ := os.ReadFile(filepath.Join(report, "capacity.json"))
	if err := json.Unmarshal(b, &cap); err != nil {
		t.Fatal(err)
	}
	figures := 0
	for _, sc := range cap.Scenarios {
		for _, c := range sc.Capacity {
			if c.CapacityRPS != nil && len(c.Interval) == 2 && c.Interval[0] != nil {
				figures++
			}
		}
	}
	if figures == 0 {
		t.Errorf("the VM's capacity.json has no capacity with an interval to compare:\n%s", b)
	}
}
