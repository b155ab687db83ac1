package releasetests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScalingStudyDryRun checks that scripts/scaling-study --dry-run prints
// exactly the commands of a 1, 2, 4-instance study, and that bosh int
// accepts the manifest each of its deploys would send.
func TestScalingStudyDryRun(t *testing.T) {
	root := repoRoot(t)
	fixture := filepath.Join(root, "src", "release-tests", "testdata", "credhub-deployment.yml")
	vars := filepath.Join(root, "manifests", "vars.example.yml")
	out := filepath.Join(t.TempDir(), "study")
	cmd := exec.Command(filepath.Join(root, "scripts", "scaling-study"), "--dry-run", "--bosh", "bosh",
		"-d", "cf", "--manifest", fixture, "-l", vars, "-v", "testers=3", "--instances", "1,2,4",
		"--settle", "20", "--out", out, "--", "--target-rps", "2000", "--slo-ms", "100")
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
	var want []string
	var deploys [][]string
	for _, k := range []string{"1", "2", "4"} {
		d := filepath.Join(out, k)
		deploy := []string{fixture, "-l", vars, "-v", "testers=3",
			"-o", filepath.Join(ops, "add-to-credhub-deployment.yml"),
			"-o", filepath.Join(ops, "scale-credhub.yml"), "-v", "credhub_instances=" + k}
		deploys = append(deploys, deploy)
		want = append(want,
			"# "+k+" CredHub instance(s)",
			"+ bosh -n -d cf deploy "+strings.Join(deploy, " "),
			"+ bosh -d cf instances --json",
			"+ sleep 20",
			"+ mkdir -p "+d+"/logs",
			"+ bosh -d cf run-errand credhub-perf --download-logs --logs-dir "+d+"/logs",
			"+ "+perf+" collect --out "+d+"/runs "+d+"/logs/*.tgz",
		)
	}
	want = append(want, "# the report over every count",
		"+ "+plot+" "+out+"/1/runs/*/ "+out+"/2/runs/*/ "+out+"/4/runs/*/ --out "+out+"/report --target-rps 2000 --slo-ms 100")
	if g := strings.TrimRight(string(got), "\n"); g != strings.Join(want, "\n") {
		t.Fatalf("dry run printed:\n%s\nwant:\n%s", g, strings.Join(want, "\n"))
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a dry run created %s", out)
	}

	// What each deploy would send: bosh int with the same arguments (plus a vars store and the
	// test CA for the certificates a real director's config server would generate).
	for i, deploy := range deploys {
		n := []int{1, 2, 4}[i]
		args := append([]string{"int"}, deploy...)
		args = append(args, "--vars-store", seededVarsStore(t), "-v", "mtls_ca=test_mtls_ca", "--var-errs",
			"-o", filepath.Join(root, "src", "release-tests", "testdata", "test-mtls-ca.yml"))
		c := exec.Command(boshCLI(t), args...)
		var e bytes.Buffer
		c.Stderr = &e
		m, err := c.Output()
		if err != nil {
			t.Fatalf("bosh %s: %v\n%s", strings.Join(args, " "), err, e.Bytes())
		}
		if !bytes.Contains(m, []byte("name: credhub-perf")) || !bytes.Contains(m, []byte("lifecycle: errand")) {
			t.Fatalf("%d instances: the manifest has no credhub-perf errand:\n%s", n, m)
		}
		if !bytes.Contains(m, []byte("label: "+string(rune('0'+n))+"-instances")) {
			t.Fatalf("%d instances: the tester's label is not %d-instances:\n%s", n, n, m)
		}
	}
}

// TestScalingStudyRejectsBadInput checks the one-line errors given before anything runs.
func TestScalingStudyRejectsBadInput(t *testing.T) {
	root := repoRoot(t)
	fixture := filepath.Join(root, "src", "release-tests", "testdata", "credhub-deployment.yml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--manifest", fixture}, "-d DEPLOYMENT is required"},
		{[]string{"-d", "cf"}, "--manifest FILE is required"},
		{[]string{"-d", "cf", "--manifest", "/nonexistent.yml"}, "no such file"},
		{[]string{"-d", "cf", "--manifest", fixture, "--instances", "1,x"}, "use positive integers"},
		{[]string{"-d", "cf", "--manifest", fixture, "--instances", "2,2"}, "repeats a count"},
		{[]string{"-d", "cf", "--manifest", fixture, "-v", "credhub_instances=3"}, "set per count"},
		{[]string{"-d", "cf", "--manifest", fixture, "-o", "/nonexistent-ops.yml"}, "no such file"},
		{[]string{"-d", "cf", "--manifest", fixture, "--bogus"}, "unknown argument"},
	} {
		cmd := exec.Command(filepath.Join(root, "scripts", "scaling-study"), append([]string{"--dry-run"}, c.args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err == nil || len(stdout) != 0 {
			t.Errorf("%v: want an error and nothing run, got err=%v stdout=%q", c.args, err, stdout)
			continue
		}
		msg := strings.TrimSpace(stderr.String())
		if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, c.want) || !strings.HasPrefix(msg, "scaling-study: error: ") {
			t.Errorf("%v: stderr %q, want one line with %q", c.args, msg, c.want)
		}
	}
}

// TestScalingStudyRealPath runs the study for real against a stand-in bosh
// CLI (testdata/fake-bosh) that produces errand logs with synthetic runs:
// the same code as --dry-run, but every command executed, ending in a
// report with a capacity per instance count.
func TestScalingStudyRealPath(t *testing.T) {
	root := repoRoot(t)
	python := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(filepath.Join(root, ".venv", "bin", "headroom-plot")); err != nil {
		t.Skip("no .venv: run make venv")
	}
	state := t.TempDir()
	out := filepath.Join(t.TempDir(), "study")
	cmd := exec.Command(filepath.Join(root, "scripts", "scaling-study"),
		"--bosh", filepath.Join(root, "src", "release-tests", "testdata", "fake-bosh"),
		"-d", "cf", "--manifest", filepath.Join(root, "src", "release-tests", "testdata", "credhub-deployment.yml"),
		"--instances", "1,2,4", "--settle", "0", "--out", out, "--",
		"--target-rps", "500", "--format", "png", "--replicates", "100", "--quiet")
	cmd.Env = append(os.Environ(), "FAKE_BOSH_STATE="+state, "FAKE_BOSH_PYTHON="+python,
		"FAKE_BOSH_SYNTH="+filepath.Join(root, "plotting", "tests"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("scaling-study: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr.Bytes())
	}
	calls, err := os.ReadFile(filepath.Join(state, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(calls), " run-errand credhub-perf --download-logs "); n != 3 {
		t.Fatalf("want 3 errand runs, bosh saw:\n%s", calls)
	}
	for _, k := range []string{"1", "2", "4"} {
		if _, err := os.Stat(filepath.Join(out, k, "runs", "20261124T100000Z-get-"+k+"-instances", "meta.json")); err != nil {
			t.Fatalf("count %s: run directory not collected: %v", k, err)
		}
	}
	doc, err := os.ReadFile(filepath.Join(out, "report", "capacity.json"))
	if err != nil {
		t.Fatalf("no capacity.json: %v\n%s", err, stderr.Bytes())
	}
	for _, want := range []string{`"instances": 1,`, `"instances": 2,`, `"instances": 4,`, `"kappa_fitted": true`} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Fatalf("capacity.json lacks %s:\n%s", want, doc)
		}
	}
	if !strings.Contains(stderr.String(), "recommendation: get: 2 instance(s)") {
		t.Fatalf("want 2 instances recommended for 500 req/s (575 at 2), stderr:\n%s", stderr.Bytes())
	}
}
