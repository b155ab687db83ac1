package releasetests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	yaml "gopkg.in/yaml.v3"
)

// boshInt runs `bosh int` on a manifest with ops files and the example
// vars; --vars-store generates the certificate variables (the mTLS CA is a
// test stand-in) and --var-errs fails on any variable left unset.
func boshInt(t *testing.T, manifest string, ops []string, extra ...string) map[string]interface{} {
	t.Helper()
	root := repoRoot(t)
	args := []string{"int", manifest,
		"-l", filepath.Join(root, "manifests", "vars.example.yml"),
		"-v", "mtls_ca=test_mtls_ca",
		"--vars-store", seededVarsStore(t),
		"--var-errs",
	}
	for _, o := range ops {
		args = append(args, "-o", filepath.Join(root, "manifests", "operations", o))
	}
	args = append(args, "-o", filepath.Join(root, "src", "release-tests", "testdata", "test-mtls-ca.yml"))
	args = append(args, extra...)
	cmd := exec.Command(boshCLI(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bosh %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	var m map[string]interface{}
	if err := yaml.Unmarshal(out, &m); err != nil {
		t.Fatalf("bosh int output is not YAML: %v", err)
	}
	return m
}

var (
	caStoreOnce sync.Once
	caStore     []byte
	caStoreErr  error
)

// seededVarsStore returns a new vars store file that already holds the
// test mTLS CA, so the client certificate can be generated from it.
func seededVarsStore(t *testing.T) string {
	t.Helper()
	caStoreOnce.Do(func() {
		path := filepath.Join(os.TempDir(), fmt.Sprintf("credhub-perf-ca-store-%d.yml", os.Getpid()))
		defer os.Remove(path)
		cmd := exec.Command(boshCLI(t), "int", filepath.Join(repoRoot(t), "src", "release-tests", "testdata", "test-mtls-ca-manifest.yml"), "--vars-store", path)
		if out, err := cmd.CombinedOutput(); err != nil {
			caStoreErr = fmt.Errorf("generating the test CA: %w: %s", err, out)
			return
		}
		caStore, caStoreErr = os.ReadFile(path)
	})
	if caStoreErr != nil {
		t.Fatal(caStoreErr)
	}
	path := filepath.Join(t.TempDir(), "vars-store.yml")
	if err := os.WriteFile(path, caStore, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func instanceGroup(t *testing.T, m map[string]interface{}, name string) map[string]interface{} {
	t.Helper()
	igs, _ := m["instance_groups"].([]interface{})
	for _, ig := range igs {
		if g := ig.(map[string]interface{}); g["name"] == name {
			return g
		}
	}
	t.Fatalf("manifest has no instance group %q", name)
	return nil
}

// testerProps returns the credhub-perf job's properties of the tester
// instance group, re-encoded as YAML for the renderer.
func testerProps(t *testing.T, m map[string]interface{}) (map[string]interface{}, string) {
	t.Helper()
	ig := instanceGroup(t, m, "credhub-perf")
	for _, j := range ig["jobs"].([]interface{}) {
		job := j.(map[string]interface{})
		if job["name"] == "credhub-perf" {
			if job["release"] != "credhub-perf" {
				t.Errorf("credhub-perf job comes from release %v", job["release"])
			}
			props, _ := job["properties"].(map[string]interface{})
			b, err := yaml.Marshal(props)
			if err != nil {
				t.Fatal(err)
			}
			return props, string(b)
		}
	}
	t.Fatal("tester instance group has no credhub-perf job")
	return nil, ""
}

func TestManifestsStandalone(t *testing.T) {
	root := repoRoot(t)
	manifest := filepath.Join(root, "manifests", "credhub-perf.yml")
	cases := []struct {
		name  string
		ops   []string
		check func(t *testing.T, m map[string]interface{}, cfg map[string]interface{})
	}{
		{"base", nil, func(t *testing.T, m, cfg map[string]interface{}) {
			assertEqual(t, "instances", instanceGroup(t, m, "credhub-perf")["instances"], 1)
			assertEqual(t, "target.url", get(t, cfg, "target.url"), "https://credhub.service.cf.internal:8844")
			assertEqual(t, "target.client_key_file", get(t, cfg, "target.client_key_file"), jobDir+"/config/client.key")
			assertEqual(t, "label", get(t, cfg, "label"), "2-instances")
			assertEqual(t, "instances", get(t, cfg, "instances"), 2)
			assertEqual(t, "steps.duration", get(t, cfg, "steps.duration"), "30s")
			assertEqual(t, "cleanup.mode", get(t, cfg, "cleanup.mode"), "api")
		}},
		{"several testers", []string{"several-testers.yml"}, func(t *testing.T, m, cfg map[string]interface{}) {
			assertEqual(t, "instances", instanceGroup(t, m, "credhub-perf")["instances"], 3)
			assertEqual(t, "lifecycle", instanceGroup(t, m, "credhub-perf")["lifecycle"], "service")
			assertEqual(t, "tester.count", get(t, cfg, "tester.count"), 3)
		}},
		{"postgres cleanup", []string{"cleanup-database-postgres.yml"}, func(t *testing.T, m, cfg map[string]interface{}) {
			assertEqual(t, "cleanup.mode", get(t, cfg, "cleanup.mode"), "database")
			assertEqual(t, "cleanup.database.type", get(t, cfg, "cleanup.database.type"), "postgres")
			assertEqual(t, "cleanup.database.port", get(t, cfg, "cleanup.database.port"), 5432)
			assertEqual(t, "cleanup.database.host", get(t, cfg, "cleanup.database.host"), "10.0.16.5")
		}},
		{"mysql cleanup", []string{"cleanup-database-mysql.yml"}, func(t *testing.T, m, cfg map[string]interface{}) {
			assertEqual(t, "cleanup.database.type", get(t, cfg, "cleanup.database.type"), "mysql")
			assertEqual(t, "cleanup.database.port", get(t, cfg, "cleanup.database.port"), 3306)
		}},
		{"uaa auth", []string{"uaa-auth.yml"}, func(t *testing.T, m, cfg map[string]interface{}) {
			assertEqual(t, "uaa.client_id", get(t, cfg, "uaa.client_id"), "credhub_admin_client")
			assertEqual(t, "uaa.ca_cert_file", get(t, cfg, "uaa.ca_cert_file"), jobDir+"/config/uaa-ca.crt")
			assertEqual(t, "target.client_cert_file", get(t, cfg, "target.client_cert_file"), "")
			props, _ := testerProps(t, m)
			if cc, ok := props["credhub"].(map[string]interface{})["client_cert"]; ok {
				t.Errorf("uaa-auth left credhub.client_cert = %v", cc)
			}
		}},
		{"everything", []string{"several-testers.yml", "cleanup-database-postgres.yml", "uaa-auth.yml"}, func(t *testing.T, m, cfg map[string]interface{}) {
			assertEqual(t, "tester.count", get(t, cfg, "tester.count"), 3)
			assertEqual(t, "cleanup.database.type", get(t, cfg, "cleanup.database.type"), "postgres")
			assertEqual(t, "uaa.url", get(t, cfg, "uaa.url"), "https://uaa.service.cf.internal:8443")
		}},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// The example's CAs are placeholders, which fail the render
			// (TestManifestsPlaceholderCA); give real ones.
			m := boshInt(t, manifest, c.ops, "-v", "credhub_ca_cert="+testCA, "-v", "uaa_ca_cert="+testCA)
			assertEqual(t, "name", m["name"], "credhub-perf")
			ig := instanceGroup(t, m, "credhub-perf")
			if !strings.Contains(strings.Join(c.ops, " "), "several-testers.yml") {
				assertEqual(t, "lifecycle", ig["lifecycle"], "errand")
			}
			props, propsYAML := testerProps(t, m)
			if _, ok := props["credhub"]; !ok {
				t.Fatalf("tester properties lack credhub: %v", props)
			}
			if cc, ok := props["credhub"].(map[string]interface{})["client_cert"]; ok {
				cert, _ := cc.(map[string]interface{})
				if !strings.HasPrefix(fmt.Sprint(cert["certificate"]), "-----BEGIN CERTIFICATE-----") ||
					!strings.Contains(fmt.Sprint(cert["private_key"]), "PRIVATE KEY-----") {
					t.Fatalf("credhub.client_cert is not a generated certificate: %v", cc)
				}
			}
			// bosh int does not check properties against the job spec;
			// rendering with the real renderer does.
			dir, err := renderJob(t, "credhub-perf", propsYAML, instanceSpec{})
			if err != nil {
				t.Fatalf("the manifest's properties do not render: %v", err)
			}
			c.check(t, m, renderedConfig(t, dir))
		})
	}
}

func TestManifestsAddToCredHubDeployment(t *testing.T) {
	fixture := filepath.Join(repoRoot(t), "src", "release-tests", "testdata", "credhub-deployment.yml")
	for _, n := range []int{1, 2, 4} {
		m := boshInt(t, fixture, []string{"add-to-credhub-deployment.yml", "scale-credhub.yml", "several-testers.yml"},
			"-v", "credhub_instances="+string(rune('0'+n)))
		assertEqual(t, "credhub instances", instanceGroup(t, m, "credhub")["instances"], n)
		ig := instanceGroup(t, m, "credhub-perf")
		assertEqual(t, "tester lifecycle", ig["lifecycle"], "service")
		assertEqual(t, "tester instances", ig["instances"], 3)
		checkGranted(t, m, "mtls-app:"+exampleTesterGUID)
		releases := map[string]bool{}
		for _, r := range m["releases"].([]interface{}) {
			releases[r.(map[string]interface{})["name"].(string)] = true
		}
		if !releases["credhub"] || !releases["credhub-perf"] {
			t.Errorf("releases = %v; want credhub and credhub-perf", releases)
		}
		props, propsYAML := testerProps(t, m)
		if url, ok := props["credhub"].(map[string]interface{})["url"]; ok {
			t.Errorf("tester in the CredHub deployment sets credhub.url %v; it should come from the link", url)
		}
		// URL and CA come from the credhub link; render with it.
		links := map[string]interface{}{"credhub": map[string]interface{}{
			"address":    "q-s0.credhub.default.credhub.bosh",
			"properties": map[string]interface{}{"credhub": map[string]interface{}{"port": 8844, "ca_certificate": testCA}},
		}}
		if _, err := renderWithLinks(t, "credhub-perf", "config/validation_properties.yml.erb", propsYAML, instanceSpec{Index: 2}, links); err != nil {
			t.Fatalf("the ops file's properties fail the job's checks with a credhub link: %v", err)
		}
		out, err := renderWithLinks(t, "credhub-perf", "config/config.yml.erb", propsYAML, instanceSpec{Index: 2}, links)
		if err != nil {
			t.Fatalf("the ops file's properties do not render with a credhub link: %v", err)
		}
		var cfg map[string]interface{}
		if err := yaml.Unmarshal([]byte(out), &cfg); err != nil {
			t.Fatal(err)
		}
		assertEqual(t, "instances", get(t, cfg, "instances"), n)
		assertEqual(t, "label", get(t, cfg, "label"), string(rune('0'+n))+"-instances")
		assertEqual(t, "tester.index", get(t, cfg, "tester.index"), 2)
		assertEqual(t, "target.url", get(t, cfg, "target.url"), "https://q-s0.credhub.default.credhub.bosh:8844")
	}
}

// TestManifestsPlaceholderCA: vars.example.yml's placeholder CA fails the
// render (bosh deploy), naming the property, instead of failing at
// run-errand.
func TestManifestsPlaceholderCA(t *testing.T) {
	m := boshInt(t, filepath.Join(repoRoot(t), "manifests", "credhub-perf.yml"), nil)
	_, propsYAML := testerProps(t, m)
	_, err := renderJob(t, "credhub-perf", propsYAML, instanceSpec{})
	if err == nil || !strings.Contains(err.Error(), "credhub.ca_cert: certificate 1 does not parse") {
		t.Fatalf("rendering with the example's placeholder CA: %v; want credhub.ca_cert refused", err)
	}
}
