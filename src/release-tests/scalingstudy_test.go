package releasetests

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	yaml "gopkg.in/yaml.v3"
)

// study is one scaling-study invocation against the stand-in bosh CLI
// (testdata/fake-bosh): its state directory (calls, the deployed count,
// interpolated manifests), its output directory and its environment.
type study struct {
	t      *testing.T
	script string
	state  string
	out    string
	env    []string
}

func newStudy(t *testing.T) *study {
	t.Helper()
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, ".venv", "bin", "headroom-plot")); err != nil {
		t.Skip("no .venv: run make venv")
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "credhub-perf")); err != nil {
		t.Skip("no bin/credhub-perf: run make build")
	}
	s := &study{t: t, script: filepath.Join(root, "scripts", "scaling-study"), state: t.TempDir(),
		out: filepath.Join(t.TempDir(), "study")}
	s.env = []string{"FAKE_BOSH_STATE=" + s.state, "FAKE_BOSH_PYTHON=" + filepath.Join(root, ".venv", "bin", "python"),
		"FAKE_BOSH_SYNTH=" + filepath.Join(root, "plotting", "tests"), "FAKE_BOSH_FAIL=", "FAKE_BOSH_SIGNAL="}
	return s
}

func fakeBosh(t *testing.T) string {
	return filepath.Join(repoRoot(t), "src", "release-tests", "testdata", "fake-bosh")
}

// plotArgs keep headroom-plot quick: PNG only, few bootstrap replicates.
var plotArgs = []string{"--", "--target-rps", "500", "--format", "png", "--replicates", "100", "--quiet"}

// run runs the study with args (and env on top of the stand-in's) and
// returns stdout, stderr and the exit status.
func (s *study) run(env []string, args ...string) (string, string, int) {
	s.t.Helper()
	full := append([]string{"--bosh", fakeBosh(s.t), "-d", "cf", "--settle", "0", "--out", s.out}, args...)
	cmd := exec.Command(s.script, full...)
	cmd.Env = append(append(os.Environ(), s.env...), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			s.t.Fatalf("scaling-study was killed by %v\nstdout:\n%s\nstderr:\n%s", st.Signal(), stdout.String(), stderr.String())
		}
	} else if err != nil {
		s.t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// calls are the stand-in bosh's invocations, one per line; each run
// starts with an empty list.
func (s *study) calls() []string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.state, "calls"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func (s *study) resetCalls() {
	s.t.Helper()
	if err := os.RemoveAll(filepath.Join(s.state, "calls")); err != nil {
		s.t.Fatal(err)
	}
}

// deploys and errands: the instance counts the stand-in was deployed with,
// and the logs directories the errand ran into, in order.
func (s *study) deploys() []string {
	var ks []string
	for _, c := range s.calls() {
		if f := strings.Fields(c); len(f) > 3 && f[3] == "deploy" {
			ks = append(ks, strings.TrimPrefix(f[len(f)-1], "credhub_instances="))
		}
	}
	return ks
}

func (s *study) errands() []string {
	var ds []string
	for _, c := range s.calls() {
		if f := strings.Fields(c); len(f) > 2 && f[2] == "run-errand" {
			ds = append(ds, strings.TrimPrefix(f[len(f)-1], s.out+"/"))
		}
	}
	return ds
}

// capacityRuns reads OUT/report/capacity.json: instances -> runs combined.
func (s *study) capacityRuns() map[int]int {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.out, "report", "capacity.json"))
	if err != nil {
		s.t.Fatalf("no capacity.json: %v", err)
	}
	var doc struct {
		Scenarios map[string]struct {
			Capacity []struct {
				Instances int `json:"instances"`
				Runs      int `json:"runs"`
			} `json:"capacity"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		s.t.Fatalf("capacity.json: %v", err)
	}
	got := map[int]int{}
	for _, c := range doc.Scenarios["get"].Capacity {
		got[c.Instances] = c.Runs
	}
	return got
}

func assertLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n  got  %q\n  want %q", what, got, want)
	}
}

// summary is the "# summary" block at the end of stdout.
func summary(t *testing.T, stdout string) []string {
	t.Helper()
	i := strings.LastIndex(stdout, "# summary")
	if i < 0 {
		t.Fatalf("no summary in stdout:\n%s", stdout)
	}
	return strings.Split(strings.TrimRight(stdout[i:], "\n"), "\n")[1:]
}

// TestScalingStudyDryRun checks that --dry-run prints exactly the commands
// of a 1, 2, 4-instance study with two runs per count and a restore, in
// the documented ops order, and writes nothing.
func TestScalingStudyDryRun(t *testing.T) {
	root := repoRoot(t)
	manifest := fixture(t, "credhub-deployment.yml")
	vars := filepath.Join(root, "manifests", "vars.example.yml")
	out := filepath.Join(t.TempDir(), "study")
	cmd := exec.Command(filepath.Join(root, "scripts", "scaling-study"), "--dry-run", "--bosh", "bosh",
		"-d", "cf", "--manifest", manifest, "-l", vars, "-v", "testers=3", "-v", "uaa_client_secret=hunter2", "--instances", "1,2,4",
		"--repeat", "2", "--restore", "2", "--settle", "20", "--out", out, "--", "--target-rps", "2000", "--slo-ms", "100")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("scaling-study --dry-run: %v\n%s", err, stderr.Bytes())
	}
	plot := filepath.Join(root, ".venv", "bin", "headroom-plot")
	if _, err := os.Stat(plot); err != nil {
		plot = "headroom-plot"
	}
	perf := filepath.Join(root, "bin", "credhub-perf")
	if _, err := os.Stat(perf); err != nil {
		perf = "credhub-perf"
	}
	ops := filepath.Join(root, "manifests", "operations")
	deploy := func(k string) string {
		return "+ bosh -n -d cf deploy " + manifest + " -o " + filepath.Join(ops, "add-to-credhub-deployment.yml") +
			" -l " + vars + " -v testers=3 -v uaa_client_secret=REDACTED -o " + filepath.Join(ops, "scale-credhub.yml") + " -v credhub_instances=" + k
	}
	var want, dirs []string
	for _, k := range []string{"1", "2", "4"} {
		want = append(want, "# "+k+" CredHub instance(s)", deploy(k),
			"+ bosh -d cf instances --column instance --column process_state", "+ sleep 20")
		for _, r := range []string{"r1", "r2"} {
			d := out + "/" + k + "/" + r
			want = append(want, "+ mkdir -p "+d+"/logs",
				"+ "+perf+" vitals record --deployment cf --bosh bosh --out "+d+"/target-vitals.csv &",
				"+ bosh -d cf run-errand credhub-perf --download-logs --logs-dir "+d+"/logs",
				"+ "+perf+" collect --out "+d+"/runs "+d+"/logs/*.tgz",
				"+ "+perf+" vitals attach "+d+"/target-vitals.csv "+d+"/runs/*/")
			dirs = append(dirs, d+"/runs/*/")
		}
	}
	want = append(want, "# restore: 2 CredHub instance(s)", deploy("2"), "# the report over every count",
		"+ "+plot+" "+strings.Join(dirs, " ")+" --out "+out+"/report --target-rps 2000 --slo-ms 100",
		"# summary (a dry run: nothing ran)",
		"1 instance(s): ok: 2 of 2 run(s)", "2 instance(s): ok: 2 of 2 run(s)", "4 instance(s): ok: 2 of 2 run(s)",
		"restore: 2 instance(s) deployed", "report: "+out+"/report")
	assertLines(t, "dry run", strings.Split(strings.TrimRight(string(got), "\n"), "\n"), want)
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a dry run created %s", out)
	}
}

// TestScalingStudyOpsOrder runs a study on real-shaped manifests with our
// ops files that patch what add-to-credhub-deployment.yml adds
// (cf-deployment.yml, credhub-release-sample.yml, several-testers.yml)
// among the operator's, and an operator ops file that sizes CredHub
// itself. The stand-in bosh sends every deploy's exact arguments through
// the real `bosh int`, so every count must interpolate, and the manifest
// it deploys must have the study's count.
func TestScalingStudyOpsOrder(t *testing.T) {
	root := repoRoot(t)
	ops := filepath.Join(root, "manifests", "operations")
	// An operator's ops file that sizes the credhub group (as HA or
	// single-AZ sizing files do): the study's count must still win.
	sizing := filepath.Join(t.TempDir(), "my-sizing.yml")
	if err := os.WriteFile(sizing, []byte("- type: replace\n  path: /instance_groups/name=credhub/instances\n  value: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, manifest string
		args           []string
	}{
		{"cf-deployment", "cf-deployment-shape.yml", []string{"-o", filepath.Join(ops, "cf-deployment.yml"), "-o", filepath.Join(ops, "several-testers.yml"), "-o", sizing}},
		{"credhub-release-sample", "credhub-release-sample-shape.yml", []string{"-o", filepath.Join(ops, "credhub-release-sample.yml"), "-o", filepath.Join(ops, "several-testers.yml"),
			"-v", "external-ip-address=203.0.113.10", "-v", "internal-ip-address=10.0.0.10", "-v", "uaa-url=https://10.0.0.11:8443"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStudy(t)
			manifest := fixture(t, c.manifest)
			// What the director's config server would provide: a vars store with the test mTLS CA.
			intArgs := "--vars-store " + seededVarsStore(t) + " -v mtls_ca=test_mtls_ca --var-errs -o " + fixture(t, "test-mtls-ca.yml")
			args := append([]string{"--manifest", manifest, "-l", filepath.Join(root, "manifests", "vars.example.yml")}, c.args...)
			args = append(append(args, "--instances", "1,2,4"), plotArgs...)
			stdout, stderr, code := s.run([]string{"FAKE_BOSH_INT=" + boshCLI(t), "FAKE_BOSH_INT_ARGS=" + intArgs}, args...)
			if code != 0 {
				t.Fatalf("scaling-study exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, k := range []int{1, 2, 4} {
				b, err := os.ReadFile(filepath.Join(s.state, "manifest-"+string(rune('0'+k))+".yml"))
				if err != nil {
					t.Fatalf("%d instances: no interpolated manifest: %v", k, err)
				}
				var m map[string]interface{}
				if err := yaml.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				if n := instanceGroup(t, m, "credhub")["instances"]; n != k {
					t.Errorf("%d instances: the credhub group has %v instances", k, n)
				}
				props, _ := testerProps(t, m)
				ch := props["credhub"].(map[string]interface{})
				if ch["instances"] != k || ch["label"] != string(rune('0'+k))+"-instances" {
					t.Errorf("%d instances: the tester records instances %v, label %v", k, ch["instances"], ch["label"])
				}
				if n := instanceGroup(t, m, "credhub-perf")["instances"]; n != 3 {
					t.Errorf("%d instances: %v testers, want several-testers.yml's 3", k, n)
				}
			}
			if got := s.capacityRuns(); len(got) != 3 {
				t.Errorf("the report covers %v, want 1, 2 and 4 instances", got)
			}
		})
	}

	// The order it replaces, operator's ops files before ours, is refused by bosh int.
	args := []string{"int", fixture(t, "cf-deployment-shape.yml"), "-l", filepath.Join(root, "manifests", "vars.example.yml"),
		"-o", filepath.Join(ops, "cf-deployment.yml"), "-o", filepath.Join(ops, "add-to-credhub-deployment.yml")}
	if out, err := exec.Command(boshCLI(t), args...).CombinedOutput(); err == nil || !strings.Contains(string(out), "found 0") {
		t.Errorf("cf-deployment.yml before add-to-credhub-deployment.yml: want bosh int to fail with 'found 0', got %v\n%s", err, out)
	}
}

// TestScalingStudyKeepGoing: a count whose deploy fails and one whose
// instances never all run are reported; the others still run and are
// plotted, the restore still happens, and the exit status is 1.
func TestScalingStudyKeepGoing(t *testing.T) {
	s := newStudy(t)
	stdout, stderr, code := s.run([]string{"FAKE_BOSH_FAIL=deploy:2 instances:3"},
		append([]string{"--manifest", fixture(t, "credhub-deployment.yml"), "-v", "credhub_db_password=hunter2", "--instances", "1,2,3,4",
			"--keep-going", "--wait-timeout", "0", "--restore", "1"}, plotArgs...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, w := range []string{"scaling-study: 2 instance(s): bosh deploy failed", "scaling-study: 3 instance(s): credhub not all running after 0s (instances, running: 3 2"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	assertLines(t, "deploys", s.deploys(), []string{"1", "2", "3", "4", "1"})
	// bosh gets the secret; what the study prints does not show it.
	if !strings.Contains(s.calls()[0], " -v credhub_db_password=hunter2 ") || strings.Contains(stdout+stderr, "hunter2") {
		t.Errorf("want the -v secret passed to bosh and never printed; first call %q, output:\n%s\n%s", s.calls()[0], stdout, stderr)
	}
	assertLines(t, "errand runs", s.errands(), []string{"1/r1/logs", "4/r1/logs"})
	if got := s.capacityRuns(); len(got) != 2 || got[1] != 1 || got[4] != 1 {
		t.Errorf("the report covers %v, want 1 and 4 instances, one run each", got)
	}
	assertLines(t, "summary", summary(t, stdout), []string{
		"1 instance(s): ok: 1 of 1 run(s)",
		"2 instance(s): FAILED: bosh deploy failed; 0 of 1 run(s) ok",
		"3 instance(s): FAILED: credhub not all running after 0s (instances, running: 3 2; see bosh -d cf instances); 0 of 1 run(s) ok",
		"4 instance(s): ok: 1 of 1 run(s)",
		"restore: 1 instance(s) deployed",
		"report: " + s.out + "/report",
	})
}

// TestScalingStudySamplesVitals: the study samples the deployment's vitals
// through bosh while each errand runs and attaches them to its runs, so
// every count's summary and the report say where capacity ends (the
// stand-in's figures: CredHub at 1 and 2 instances, the database at 4); a
// director that refuses vitals is a warning, and the study still succeeds.
func TestScalingStudySamplesVitals(t *testing.T) {
	s := newStudy(t)
	args := append([]string{"--manifest", fixture(t, "credhub-deployment.yml"), "--instances", "1,2,4"}, plotArgs...)
	stdout, stderr, code := s.run(nil, args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	vitalsCalls := 0
	for _, c := range s.calls() {
		if c == "-d cf vms --vitals --json" {
			vitalsCalls++
		}
	}
	if vitalsCalls < 6 {
		t.Errorf("%d vitals calls, want at least two per errand run:\n%s", vitalsCalls, strings.Join(s.calls(), "\n"))
	}
	for k, want := range map[string]string{"1": "credhub", "2": "credhub", "4": "database"} {
		sums, _ := filepath.Glob(filepath.Join(s.out, k, "r1", "runs", "*", "summary.json"))
		if len(sums) != 1 {
			t.Fatalf("%s instance(s): summaries %v", k, sums)
		}
		b, _ := os.ReadFile(sums[0])
		var doc struct {
			Bottleneck struct{ Resource, Verdict string } `json:"bottleneck"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || doc.Bottleneck.Resource != want {
			t.Errorf("%s instance(s): bottleneck %+v (%v), want %s", k, doc.Bottleneck, err, want)
		}
	}
	report, err := os.ReadFile(filepath.Join(s.out, "report", "report.md"))
	if err != nil || !strings.Contains(string(report), "Where capacity ends") || !strings.Contains(string(report), "database at ") {
		t.Errorf("the report does not say where capacity ends (%v)", err)
	}

	// A director that refuses vitals: one warning per errand run, no figures, exit 0.
	s2 := newStudy(t)
	stdout, stderr, code = s2.run([]string{"FAKE_BOSH_FAIL=vitals"}, append([]string{"--manifest", fixture(t, "credhub-deployment.yml"), "--instances", "1,2"}, plotArgs...)...)
	if code != 0 {
		t.Fatalf("refused vitals: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stderr, "warning: target load: bosh vms --vitals for deployment cf failed"); n != 2 || !strings.Contains(stderr, "bosh.read") {
		t.Errorf("want one warning per errand run naming the director's answer, got %d:\n%s", n, stderr)
	}
	assertLines(t, "summary", summary(t, stdout)[:2], []string{"1 instance(s): ok: 1 of 1 run(s)", "2 instance(s): ok: 1 of 1 run(s)"})
}

// TestScalingStudyStopsAtFailure: without --keep-going the first failure
// ends the study (no later count, no report) but the restore still runs.
func TestScalingStudyStopsAtFailure(t *testing.T) {
	s := newStudy(t)
	stdout, stderr, code := s.run([]string{"FAKE_BOSH_FAIL=errand:2"},
		append([]string{"--manifest", fixture(t, "credhub-deployment.yml"), "--instances", "1,2,4", "--restore", "1"}, plotArgs...)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	assertLines(t, "deploys", s.deploys(), []string{"1", "2", "1"})
	if _, err := os.Stat(filepath.Join(s.out, "report")); err == nil {
		t.Error("a stopped study wrote a report")
	}
	assertLines(t, "summary", summary(t, stdout), []string{
		"1 instance(s): ok: 1 of 1 run(s)",
		"2 instance(s): FAILED: run 1: bosh run-errand failed (its logs, if any, are in " + s.out + "/2/r1/logs); 0 of 1 run(s) ok",
		"4 instance(s): not run",
		"restore: 1 instance(s) deployed",
		"report: not written: the study stopped at its first failure (rerun the same command to resume, or use --keep-going)",
	})
}

// TestScalingStudyRepeatAndResume: --repeat 3 runs the errand three times
// per count into OUT/K/r1..r3 and the report combines them; a failed run
// keeps its logs out of the report, and the same command again runs only
// that run (its old tarball removed first), skipping the rest.
func TestScalingStudyRepeatAndResume(t *testing.T) {
	s := newStudy(t)
	args := append([]string{"--manifest", fixture(t, "credhub-deployment.yml"), "--instances", "1,2", "--repeat", "3", "--keep-going"}, plotArgs...)
	stdout, stderr, code := s.run([]string{"FAKE_BOSH_FAIL=errand:2:2"}, args...)
	if code != 1 {
		t.Fatalf("first study: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	assertLines(t, "errand runs", s.errands(), []string{"1/r1/logs", "1/r2/logs", "1/r3/logs", "2/r1/logs", "2/r2/logs", "2/r3/logs"})
	if got := s.capacityRuns(); got[1] != 3 || got[2] != 2 {
		t.Errorf("runs per count in the report: %v, want 3 at 1 instance and 2 at 2 (one failed)", got)
	}
	if _, err := os.Stat(filepath.Join(s.out, "2", "r2", "runs")); err == nil {
		t.Error("the failed errand run's logs were collected")
	}

	s.resetCalls()
	stdout, stderr, code = s.run(nil, args...)
	if code != 0 {
		t.Fatalf("resumed study: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	assertLines(t, "resumed deploys", s.deploys(), []string{"2"})
	assertLines(t, "resumed errand runs", s.errands(), []string{"2/r2/logs"})
	for _, w := range []string{"# 1 CredHub instance(s), run 3: already has runs in " + s.out + "/1/r3/runs, skipped",
		"# 2 CredHub instance(s), run 1: already has runs in " + s.out + "/2/r1/runs, skipped",
		"+ rm -rf " + s.out + "/2/r2/logs " + s.out + "/2/r2/runs " + s.out + "/2/r2/target-vitals.csv"} {
		if !strings.Contains(stdout, w+"\n") {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	if tgz, _ := filepath.Glob(filepath.Join(s.out, "2", "r2", "logs", "*.tgz")); len(tgz) != 1 {
		t.Errorf("2/r2/logs holds %v, want only the new run's tarball", tgz)
	}
	if got := s.capacityRuns(); got[1] != 3 || got[2] != 3 {
		t.Errorf("runs per count in the resumed report: %v, want 3 and 3", got)
	}
	assertLines(t, "resumed summary", summary(t, stdout), []string{
		"1 instance(s): ok: 3 of 3 run(s) (3 from an earlier study)",
		"2 instance(s): ok: 3 of 3 run(s) (2 from an earlier study)",
		"restore: none (no --restore)",
		"report: " + s.out + "/report",
	})

	// Everything there: nothing is deployed or run, the report is written again.
	s.resetCalls()
	if stdout, stderr, code = s.run(nil, args...); code != 0 || len(s.calls()) != 0 {
		t.Fatalf("a complete study again: exit %d, bosh calls %q\n%s\n%s", code, s.calls(), stdout, stderr)
	}
}

// TestScalingStudyCompareWith: a second study given the first's --out
// compares itself (B) with it (A) after its report, per instance count both
// measured, into OUT/compare.
func TestScalingStudyCompareWith(t *testing.T) {
	first := newStudy(t)
	args := append([]string{"--manifest", fixture(t, "credhub-deployment.yml"), "--instances", "1,2"}, plotArgs...)
	if stdout, stderr, code := first.run(nil, args...); code != 0 {
		t.Fatalf("first study: exit %d\n%s\n%s", code, stdout, stderr)
	}
	second := newStudy(t)
	stdout, stderr, code := second.run(nil, append([]string{"--compare-with", first.out}, args...)...)
	if code != 0 {
		t.Fatalf("second study: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := " compare --a '" + first.out + "/*/r*/runs/*/' --b '" + second.out + "/*/r*/runs/*/' --label A=study,B=study --out " +
		second.out + "/compare --format png --replicates 100 --quiet\n"
	if !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout)
	}
	b, err := os.ReadFile(filepath.Join(second.out, "compare", "comparison.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Comparisons []struct {
			A struct {
				Instances        int
				LowerBoundReason *string `json:"lower_bound_reason"`
			}
			Capacity struct{ Verdict string }
		}
		USL map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Comparisons) != 2 || doc.Comparisons[0].A.Instances != 1 || doc.Comparisons[1].A.Instances != 2 ||
		doc.Comparisons[0].Capacity.Verdict == "" {
		t.Errorf("comparison.json: %s", b)
	}
	// The fixture's 2-instance capacity is a lower bound (a step above it
	// was not steady): a scalability fit never takes a lower bound as a
	// value, so with one count left neither side has a fit to compare.
	if len(doc.Comparisons) == 2 && (doc.Comparisons[1].A.LowerBoundReason == nil) != (len(doc.USL) == 1) {
		t.Errorf("2 instances' lower bound %v, USL comparisons %d: want a fit compared exactly when both counts are values\n%s",
			doc.Comparisons[1].A.LowerBoundReason, len(doc.USL), b)
	}
	if !strings.Contains(strings.Join(summary(t, stdout), "\n"), "report: "+second.out+"/report; comparison: "+second.out+"/compare") {
		t.Errorf("summary does not name the comparison:\n%s", stdout)
	}
}

// TestScalingStudyInterrupted: SIGTERM during an errand run ends the study
// with 143 after that command; the restore is printed, not run (the
// interrupted CLI's director task may still hold the deployment).
func TestScalingStudyInterrupted(t *testing.T) {
	s := newStudy(t)
	stdout, stderr, code := s.run([]string{"FAKE_BOSH_SIGNAL=errand:2:1"},
		append([]string{"--manifest", fixture(t, "credhub-deployment.yml"), "--instances", "1,2,4", "--restore", "1"}, plotArgs...)...)
	if code != 143 {
		t.Fatalf("exit %d, want 143\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	assertLines(t, "deploys", s.deploys(), []string{"1", "2"})
	for _, w := range []string{"scaling-study: interrupted during run 1 of the errand with 2 instance(s); rerun the same command to resume",
		"to restore 1 CredHub instance(s) once the director is idle:", " -v credhub_instances=1\n"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	assertLines(t, "summary", summary(t, stdout), []string{
		"1 instance(s): ok: 1 of 1 run(s)",
		"2 instance(s): INTERRUPTED during run 1 of the errand with 2 instance(s)",
		"4 instance(s): not run",
		"restore: not run (interrupted)",
	})
}

// TestScalingStudyRejectsBadInput checks the one-line errors, given before
// the stand-in bosh is called at all.
func TestScalingStudyRejectsBadInput(t *testing.T) {
	root := repoRoot(t)
	manifest := fixture(t, "credhub-deployment.yml")
	ops := filepath.Join(root, "manifests", "operations")
	// A copy of the script outside any repository, as on the tester VM.
	alone := filepath.Join(t.TempDir(), "scaling-study")
	b, err := os.ReadFile(filepath.Join(root, "src", "scaling-study", "scaling-study"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	base := []string{"-d", "cf", "--manifest", manifest}
	for _, c := range []struct {
		script string
		args   []string
		want   string
	}{
		{"", []string{"--manifest", manifest}, "-d DEPLOYMENT is required"},
		{"", []string{"-d", "cf"}, "--manifest FILE is required"},
		{"", []string{"-d", "cf", "--manifest", "/nonexistent.yml"}, "no such file"},
		{"", append(base, "--instances", "1,x"), "use positive integers"},
		{"", append(base, "--instances", "2,2"), "repeats a count"},
		{"", append(base, "--repeat", "0"), "--repeat '0': use a whole number of runs per count"},
		{"", append(base, "--repeat", "two"), "--repeat 'two'"},
		{"", append(base, "--restore", "0"), "--restore '0': use the CredHub instance count"},
		{"", append(base, "--restore"), "--restore needs an instance count"},
		{"", append(base, "--wait-timeout", "1m"), "--wait-timeout '1m': use whole seconds"},
		{"", append(base, "-v", "credhub_instances=3"), "set per count"},
		{"", append(base, "-o", "/nonexistent-ops.yml"), "no such file"},
		{"", append(base, "-o", filepath.Join(ops, "add-to-credhub-deployment.yml")), "scaling-study applies it itself"},
		{"", append(base, "-o", filepath.Join(ops, "scale-credhub.yml")), "scaling-study applies it itself"},
		{"", append(base, "--ops-dir", t.TempDir()), "no add-to-credhub-deployment.yml there"},
		{"", append(base, "--bogus"), "unknown argument"},
		{"", append(base, "--compare-with", t.TempDir()), "no study's runs there"},
		{alone, base, "not in the repository; pass --ops-dir DIR (a copy of manifests/operations)"},
	} {
		state := t.TempDir()
		script := c.script
		if script == "" {
			script = filepath.Join(root, "scripts", "scaling-study")
		}
		cmd := exec.Command(script, append([]string{"--bosh", fakeBosh(t), "--settle", "0", "--out", filepath.Join(state, "out")}, c.args...)...)
		cmd.Env = append(os.Environ(), "FAKE_BOSH_STATE="+state)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || len(stdout) != 0 {
			t.Errorf("%v: want exit 2 and nothing run, got err=%v stdout=%q", c.args, err, stdout)
			continue
		}
		if _, err := os.Stat(filepath.Join(state, "calls")); err == nil {
			t.Errorf("%v: bosh was called", c.args)
		}
		msg := strings.TrimSpace(stderr.String())
		if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, "scaling-study: error: ") {
			t.Errorf("%v: stderr %q, want one line with %q", c.args, msg, c.want)
		}
	}
}

// TestScalingStudyPackage takes the scaling-study package from the dev
// release (a clean copy's bosh create-release), installs it as the agent
// would (its packaging script, a bare PATH), checks the job lists it, and
// runs the installed script as on the tester VM: no repository around it,
// bosh, credhub-perf and headroom-plot only from the packages directory
// (stand-ins there), the ops files from --ops-dir.
func TestScalingStudyPackage(t *testing.T) {
	root := repoRoot(t)
	rel := devRelease(t)
	entries := tgzFile(t, rel.tarball, func(n string) bool {
		return n == "packages/scaling-study.tgz" || n == "jobs/credhub-perf.tgz"
	})
	job, err := tgzEntries(bytes.NewReader(entries["jobs/credhub-perf.tgz"]), func(n string) bool { return n == "job.MF" })
	if err != nil {
		t.Fatal(err)
	}
	var mf struct {
		Packages []string `yaml:"packages"`
	}
	if err := yaml.Unmarshal(job["job.MF"], &mf); err != nil {
		t.Fatalf("job.MF: %v", err)
	}
	if !strings.Contains(" "+strings.Join(mf.Packages, " ")+" ", " scaling-study ") {
		t.Errorf("the job's packages %v lack scaling-study", mf.Packages)
	}
	pkg, err := tgzEntries(bytes.NewReader(entries["packages/scaling-study.tgz"]), func(string) bool { return true })
	if err != nil {
		t.Fatalf("packages/scaling-study.tgz: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(root, "src", "scaling-study", "scaling-study"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pkg["scaling-study/scaling-study"], src) {
		t.Fatalf("the package's scaling-study/scaling-study differs from src/scaling-study/scaling-study (entries %d)", len(pkg))
	}

	// Compile: the package's files in a work directory, its packaging with the agent's variables.
	work, packages := t.TempDir(), filepath.Join(t.TempDir(), "packages")
	for name, b := range pkg {
		if name == "" || strings.HasSuffix(name, "/") {
			continue
		}
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	install := filepath.Join(packages, "scaling-study")
	compile := exec.Command("bash", "packaging")
	compile.Dir = work
	compile.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "BOSH_INSTALL_TARGET=" + install,
		"BOSH_COMPILE_TARGET=" + work, "BOSH_PACKAGE_NAME=scaling-study", "BOSH_PACKAGE_VERSION=test"}
	if out, err := compile.CombinedOutput(); err != nil {
		t.Fatalf("scaling-study packaging: %v\n%s", err, out)
	}

	// The other packages the job lists, as stand-ins: bosh, and the real credhub-perf and headroom-plot.
	s := newStudy(t)
	for _, l := range [][2]string{
		{fakeBosh(t), "bosh-cli/bin/bosh"},
		{filepath.Join(root, "bin", "credhub-perf"), "credhub-perf/bin/credhub-perf"},
		{filepath.Join(root, ".venv", "bin", "headroom-plot"), "headroom-plot/bin/headroom-plot"},
	} {
		p := filepath.Join(packages, l[1])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l[0], p); err != nil {
			t.Fatal(err)
		}
	}
	opsCopy := filepath.Join(t.TempDir(), "operations")
	if out, err := exec.Command("cp", "-r", filepath.Join(root, "manifests", "operations"), opsCopy).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	vm := func(args ...string) (string, string, error) {
		cmd := exec.Command(filepath.Join(install, "bin", "scaling-study"), args...)
		cmd.Env = append(append(os.Environ(), s.env...), "SCALING_STUDY_PACKAGES="+packages, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "BOSH=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	for _, tool := range []string{"bosh", "credhub-perf", "headroom-plot"} {
		if p, err := exec.Command("bash", "-c", "PATH=/usr/sbin:/usr/bin:/sbin:/bin command -v "+tool).Output(); err == nil {
			t.Skipf("%s is on the bare PATH (%s): the package fallback cannot be told apart", tool, p)
		}
	}
	args := []string{"-d", "cf", "--manifest", fixture(t, "credhub-deployment.yml"), "--instances", "1,2", "--settle", "0", "--out", s.out}
	if _, stderr, err := vm(args...); err == nil || !strings.Contains(stderr, "pass --ops-dir DIR") {
		t.Fatalf("without --ops-dir on the VM: want the --ops-dir error, got %v\n%s", err, stderr)
	}
	stdout, stderr, err := vm(append(append(args, "--ops-dir", opsCopy), plotArgs...)...)
	if err != nil {
		t.Fatalf("the installed scaling-study: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	for _, w := range []string{
		"+ " + filepath.Join(packages, "bosh-cli", "bin", "bosh") + " -n -d cf deploy " + fixture(t, "credhub-deployment.yml") + " -o " + filepath.Join(opsCopy, "add-to-credhub-deployment.yml") + " ",
		"+ " + filepath.Join(packages, "credhub-perf", "bin", "credhub-perf") + " collect ",
		"+ " + filepath.Join(packages, "headroom-plot", "bin", "headroom-plot") + " ",
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	if got := s.capacityRuns(); len(got) != 2 {
		t.Errorf("the report covers %v, want 1 and 2 instances", got)
	}
}

// TestScalingStudyReadsTheRealCLI checks the wait for running credhub
// instances against bosh-cli v7.4.0's own plain table: the stand-in bosh
// hands `instances` to the real CLI, which asks a fake director (its
// /info, the instances task and its result, as the director serves them).
func TestScalingStudyReadsTheRealCLI(t *testing.T) {
	var mu sync.Mutex
	var rows []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/info" {
			if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "secret" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/info":
			fmt.Fprint(w, `{"name":"fake","uuid":"fake-uuid","version":"280.0.0","user_authentication":{"type":"basic","options":{}}}`)
		case r.URL.Path == "/deployments/cf/instances" && r.URL.Query().Get("format") == "full":
			fmt.Fprint(w, `{"id":7,"state":"queued"}`)
		case r.URL.Path == "/tasks/7":
			fmt.Fprint(w, `{"id":7,"state":"done"}`)
		case r.URL.Path == "/tasks/7/output" && r.URL.Query().Get("type") == "result":
			mu.Lock()
			fmt.Fprint(w, strings.Join(rows, "\n")+"\n")
			mu.Unlock()
		case r.URL.Path == "/tasks/7/output":
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "director-ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	vm := func(id, state string, procs ...string) string {
		var ps []string
		for _, p := range procs {
			ps = append(ps, `{"name":"`+p+`","state":"`+state+`"}`)
		}
		return `{"agent_id":"a-` + id + `","job_name":"credhub","id":"` + id + `","index":0,"job_state":"` + state +
			`","ips":["10.0.1.5"],"az":"z1","state":"started","vm_cid":"vm-` + id + `","vm_type":"minimal","processes":[` + strings.Join(ps, ",") + `]}`
	}
	errand := `{"agent_id":"","job_name":"credhub-perf","id":"6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d","index":0,"job_state":"","ips":[],"az":"z1","state":"started","vm_cid":"","processes":[]}`
	env := []string{"FAKE_BOSH_REAL_CLI=" + boshCLI(t), "BOSH_ENVIRONMENT=" + srv.URL, "BOSH_CA_CERT=" + ca,
		"BOSH_CLIENT=admin", "BOSH_CLIENT_SECRET=secret", "BOSH_CONFIG=" + filepath.Join(t.TempDir(), "bosh-config")}
	args := append([]string{"--manifest", fixture(t, "credhub-deployment.yml"), "--instances", "2", "--wait-timeout", "0"}, plotArgs...)

	s := newStudy(t)
	mu.Lock()
	rows = []string{vm("0b5c7e1a-0000-4000-8000-000000000001", "running", "credhub", "bpm"), errand,
		vm("0b5c7e1a-0000-4000-8000-000000000002", "running", "credhub", "bpm")}
	mu.Unlock()
	if stdout, stderr, code := s.run(env, args...); code != 0 || len(s.errands()) != 1 {
		t.Fatalf("two running credhub instances: exit %d, errand runs %q\nstdout:\n%s\nstderr:\n%s", code, s.errands(), stdout, stderr)
	}

	s = newStudy(t)
	mu.Lock()
	rows = []string{vm("0b5c7e1a-0000-4000-8000-000000000001", "running", "credhub", "bpm"), errand,
		vm("0b5c7e1a-0000-4000-8000-000000000002", "failing", "credhub", "bpm")}
	mu.Unlock()
	stdout, stderr, code := s.run(env, args...)
	if code != 1 || len(s.errands()) != 0 || !strings.Contains(stderr, "credhub not all running after 0s (instances, running: 2 1;") {
		t.Fatalf("one failing credhub instance: exit %d, errand runs %q\nstdout:\n%s\nstderr:\n%s", code, s.errands(), stdout, stderr)
	}
}
