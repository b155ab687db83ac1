package releasetests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "gopkg.in/yaml.v3"
)

// A misspelt job property cannot fail the render: the director binds only
// the properties the job spec declares (bosh-director's
// DeploymentPlan::Job#bind_properties copies each declared one into a new
// hash, which replaces the instance group's), and hands the template that
// hash alone (JobTemplateRenderer#render: spec['properties']). bosh-cli's
// renderer drops them the same way, which this test shows: the template
// renders, and the misspelt value is nowhere. scripts/check-properties
// refuses it instead, on the manifest before `bosh deploy`, naming the
// property meant.
func TestMisspeltPropertyIsDroppedByTheRendererAndNamedByCheckProperties(t *testing.T) {
	dir, err := renderJob(t, "credhub-perf", minimalProps("steps:\n  max_concurency: 7\n"), instanceSpec{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	cfg := renderedConfig(t, dir)
	if v := get(t, cfg, "steps.max_concurrency"); v != 50 {
		t.Fatalf("steps.max_concurrency = %v, want the spec default 50 (the misspelt 7 never reaches the template)", v)
	}
	if strings.Contains(readRendered(t, dir, "config/config.yml"), "concurency") {
		t.Fatal("the misspelt property reached config.yml")
	}

	m := boshInt(t, filepath.Join(repoRoot(t), "manifests", "credhub-perf.yml"), nil,
		"-o", writeOps(t, `
- type: replace
  path: /instance_groups/name=credhub-perf/jobs/name=credhub-perf/properties/steps/max_concurency?
  value: 7
- type: replace
  path: /instance_groups/name=credhub-perf/jobs/name=credhub-perf/properties/credhub/lable?
  value: x
- type: replace
  path: /instance_groups/name=credhub-perf/jobs/name=credhub-perf/properties/no_such_thing?
  value: 1
`))
	code, stderr := checkProperties(t, m)
	want := []string{
		"instance group credhub-perf, job credhub-perf: steps.max_concurency is not a property of the credhub-perf job; did you mean steps.max_concurrency?",
		"instance group credhub-perf, job credhub-perf: credhub.lable is not a property of the credhub-perf job; did you mean credhub.label?",
		"instance group credhub-perf, job credhub-perf: no_such_thing is not a property of the credhub-perf job (see the job spec",
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != 2 || len(lines) != len(want) {
		t.Fatalf("exit %d, want 2 and %d lines:\n%s", code, len(want), stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("no line %q in\n%s", w, stderr)
		}
	}
}

// Every manifest and ops file this repository ships sets declared
// properties only.
func TestManifestsSetOnlyDeclaredProperties(t *testing.T) {
	standalone := filepath.Join(repoRoot(t), "manifests", "credhub-perf.yml")
	for _, c := range []struct {
		manifest string
		ops      []string
	}{
		{standalone, nil},
		{standalone, []string{"several-testers.yml", "cleanup-database-postgres.yml", "uaa-auth.yml"}},
		{standalone, []string{"cleanup-database-mysql.yml"}},
		{standalone, []string{"beside-cf-deployment.yml"}},
		{fixture(t, "cf-deployment-shape.yml"), []string{"add-to-credhub-deployment.yml", "cf-deployment.yml"}},
		{fixture(t, "credhub-release-sample-shape.yml"), []string{"add-to-credhub-deployment.yml", "credhub-release-sample.yml"}},
	} {
		m := boshInt(t, c.manifest, c.ops, "-v", "credhub_ca_cert="+testCA, "-v", "uaa_ca_cert="+testCA,
			"-v", "external-ip-address=203.0.113.10", "-v", "internal-ip-address=10.0.0.10")
		if code, stderr := checkProperties(t, m); code != 0 {
			t.Errorf("%s with %v: exit %d\n%s", filepath.Base(c.manifest), c.ops, code, stderr)
		}
	}
}

// Hostile manifests to scripts/check-properties: one line, exit 2, within
// 10 s.
func TestCheckPropertiesHostileManifests(t *testing.T) {
	bomb := "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\ninstance_groups: [{name: g, jobs: [{name: credhub-perf, properties: {steps: *b}}]}]\n"
	for _, c := range []struct{ name, doc, want string }{
		{"alias bomb", bomb, "holds YAML aliases"},
		{"not a manifest", "- a\n- b\n", "not a deployment manifest"},
		{"no tester", "instance_groups: [{name: g, jobs: [{name: other}]}]\n", "no instance group has the credhub-perf job"},
		{"a section as a value", "instance_groups: [{name: g, jobs: [{name: credhub-perf, properties: {steps: 5}}]}]\n", "steps holds the properties"},
		{"too large", "# " + strings.Repeat("x", 17<<20) + "\n", "larger than 16 MiB"},
	} {
		code, stderr := runCheckProperties(t, []byte(c.doc))
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s: exit %d, want 2 and one line with %q:\n%s", c.name, code, c.want, stderr)
		}
	}
}

func checkProperties(t *testing.T, m map[string]interface{}) (int, string) {
	t.Helper()
	doc, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return runCheckProperties(t, doc)
}

func runCheckProperties(t *testing.T, manifest []byte) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "check-properties"), "-")
	cmd.Stdin = bytes.NewReader(manifest)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("check-properties ran longer than 10 s")
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// writeOps writes an ops file for bosh int's -o.
func writeOps(t *testing.T, ops string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ops.yml")
	if err := os.WriteFile(p, []byte(ops), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Values without a sane bound fail `bosh deploy` (the render), naming the
// property and its limit, as credhub-perf would at the errand's start.
func TestRenderRefusesValuesBeyondTheirBounds(t *testing.T) {
	// The bounds are checked in validation_properties.yml.erb: that one
	// template, not the job's ten.
	job := loadJob(t, "credhub-perf")
	for _, c := range []struct{ props, want string }{
		{"steps: {max_concurrency: 1000000}", "steps.max_concurrency: must be at most 100000 workers per tester"},
		{"steps: {duration: 2540400h}", "steps.duration: must be at most 24h"},
		{"steps: {duration: 1000000000}", "steps.duration: must be at most 24h"},
		{"steps: {warmup: 1e9}", "steps.warmup: must be at most 24h"},
		{"steps: {rates: [1e12], duration: 30s}", "steps.rates: rate #1 must be at most 1000000 requests/s"},
		{"steps: {requests: 10000000000, duration: \"0\"}", "steps.requests: must be at most 100000000"},
		{"warmup: {run: 1000000h}", "warmup.run: must be at most 24h (or auto)"},
		{"tester: {start_delay: 1000000000}", "tester.start_delay: must be at most 86400 seconds"},
		{"tester: {count: 1000000}", "tester.count: must be at most 1000 testers"},
		{"credhub.timeout", "credhub.timeout: must be at most 1h"},
	} {
		props := minimalProps(c.props + "\n")
		if c.props == "credhub.timeout" {
			props = strings.Replace(minimalProps(""), "credhub:\n", "credhub:\n  timeout: 1000h\n", 1)
		}
		_, err := renderTemplates(t, job, props, instanceSpec{}, []string{"config/validation_properties.yml.erb"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.props, err, c.want)
		}
	}
}
