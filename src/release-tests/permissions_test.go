package releasetests

import (
	"bytes"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	yaml "gopkg.in/yaml.v3"
)

// The tester's actor as vars.example.yml names it: mtls-app:<tester_app_guid>.
const exampleTesterGUID = "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

// Names a run creates, reads and deletes: its own credentials, the
// pre-flight credential and the rendezvous credential.
var testerNames = []string{
	"/credhub-perf/20261128T120000Z-1a2b3c/get/0",
	"/credhub-perf/preflight/tester-0-0a1b2c3d",
	"/credhub-perf/rendezvous/cf-credhub-perf",
}

type permission struct {
	Path       string   `yaml:"path"`
	Actors     []string `yaml:"actors"`
	Operations []string `yaml:"operations"`
}

// credhubAuthorization is the credhub job's authorization block in an
// interpolated manifest: whether ACLs are enforced (the job spec's default
// is true) and the permissions it seeds.
func credhubAuthorization(t *testing.T, m map[string]interface{}) (bool, []permission) {
	t.Helper()
	auth, _ := credhubJobProps(t, m)["authorization"].(map[string]interface{})
	acls := true
	if a, ok := auth["acls"].(map[string]interface{}); ok {
		if e, ok := a["enabled"].(bool); ok {
			acls = e
		}
	}
	b, err := yaml.Marshal(auth["permissions"])
	if err != nil {
		t.Fatal(err)
	}
	var perms []permission
	if err := yaml.Unmarshal(b, &perms); err != nil {
		t.Fatalf("credhub.authorization.permissions is not a list of {path, actors, operations}: %v", err)
	}
	return acls, perms
}

// covers is CredHub's path rule: the name itself, or P/* for a P/ that
// begins the name.
func covers(path, name string) bool {
	if path == name {
		return true
	}
	prefix, wild := strings.CutSuffix(path, "/*")
	return wild && strings.HasPrefix(name, prefix+"/")
}

// granted reports whether some permission lets actor do op on name
// (permissions are additive).
func granted(perms []permission, actor, name, op string) bool {
	for _, p := range perms {
		if !covers(p.Path, name) {
			continue
		}
		for _, a := range p.Actors {
			for _, o := range p.Operations {
				if a == actor && o == op {
					return true
				}
			}
		}
	}
	return false
}

// checkGranted checks that CredHub, ACLs on, lets actor write, read and
// delete every name a run uses, as pre-flight and the run need.
func checkGranted(t *testing.T, m map[string]interface{}, actor string) {
	t.Helper()
	acls, perms := credhubAuthorization(t, m)
	if !acls {
		t.Errorf("the shape has ACLs off; the check needs them on")
	}
	for _, name := range testerNames {
		for _, op := range []string{"read", "write", "delete"} {
			if !granted(perms, actor, name, op) {
				t.Errorf("CredHub does not grant %s %s on %s; permissions: %+v", actor, op, name, perms)
			}
		}
	}
}

// checkAdminKept checks that the foundation's own grants survive the ops
// files.
func checkAdminKept(t *testing.T, m map[string]interface{}) {
	t.Helper()
	_, perms := credhubAuthorization(t, m)
	if !granted(perms, "uaa-client:credhub_admin_client", "/anything", "write_acl") {
		t.Errorf("credhub_admin_client lost its grant on /*: %+v", perms)
	}
}

// boshIntTwice interpolates like boshInt, then runs `bosh int` again with
// the same vars store, as the director interpolates what a variable's value
// names (a vars-file value ((x)) passes the first pass unchanged). It
// returns the manifest and the vars store.
func boshIntTwice(t *testing.T, manifest string, ops []string, extra ...string) (map[string]interface{}, map[string]interface{}) {
	t.Helper()
	root := repoRoot(t)
	store := seededVarsStore(t)
	args := []string{"int", manifest, "-l", filepath.Join(root, "manifests", "vars.example.yml"),
		"-v", "mtls_ca=test_mtls_ca", "--vars-store", store}
	for _, o := range ops {
		args = append(args, "-o", filepath.Join(root, "manifests", "operations", o))
	}
	args = append(args, "-o", filepath.Join(root, "src", "release-tests", "testdata", "test-mtls-ca.yml"))
	args = append(args, extra...)
	pass1 := filepath.Join(t.TempDir(), "pass1.yml")
	var out []byte
	for i, a := range [][]string{args, {"int", pass1, "--vars-store", store, "--var-errs"}} {
		cmd := exec.Command(boshCLI(t), a...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var err error
		if out, err = cmd.Output(); err != nil {
			t.Fatalf("bosh %s: %v\n%s", strings.Join(a, " "), err, stderr.Bytes())
		}
		if i == 0 {
			if err := os.WriteFile(pass1, out, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	var m, vars map[string]interface{}
	if err := yaml.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &vars); err != nil {
		t.Fatal(err)
	}
	return m, vars
}

// boshIntFails runs bosh int expecting a failure and returns its output.
func boshIntFails(t *testing.T, manifest string, ops []string, extra ...string) string {
	t.Helper()
	root := repoRoot(t)
	args := []string{"int", manifest, "-l", filepath.Join(root, "manifests", "vars.example.yml"),
		"-v", "mtls_ca=test_mtls_ca", "--vars-store", seededVarsStore(t)}
	for _, o := range ops {
		args = append(args, "-o", filepath.Join(root, "manifests", "operations", o))
	}
	args = append(args, extra...)
	out, err := exec.Command(boshCLI(t), args...).CombinedOutput()
	if err == nil {
		t.Fatalf("bosh %s succeeded; want a failure", strings.Join(args, " "))
	}
	return string(out)
}

// certificateActor is the CredHub actor of the client certificate the
// director would generate: mtls-app:<uuid> from the credhub_perf_client
// variable's organization_unit app:<uuid>. The CLI's local generator has
// no organization_unit (testdata/test-mtls-ca.yml drops it), so the tests'
// certificates carry no OU: read the option instead.
func certificateActor(t *testing.T, manifest string, ops []string, extra ...string) string {
	t.Helper()
	root := repoRoot(t)
	args := []string{"int", manifest, "-l", filepath.Join(root, "manifests", "vars.example.yml"), "-v", "mtls_ca=test_mtls_ca",
		"--path", "/variables/name=credhub_perf_client/options/organization_unit"}
	for _, o := range ops {
		args = append(args, "-o", filepath.Join(root, "manifests", "operations", o))
	}
	out, err := exec.Command(boshCLI(t), append(args, extra...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("bosh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	id, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "app:")
	if !ok {
		t.Fatalf("the client certificate's OU is %q; CredHub needs app:<uuid>", out)
	}
	return "mtls-app:" + id
}

// renderedActor is the actor bin/run prints at start.
func renderedActor(t *testing.T, dir string) string {
	t.Helper()
	run := readRendered(t, dir, "bin/run")
	const marker = "CredHub actor "
	i := strings.Index(run, marker)
	if i < 0 {
		t.Fatalf("bin/run prints no CredHub actor:\n%s", run)
	}
	return strings.TrimSuffix(strings.Fields(run[i+len(marker):])[0], ":")
}

func TestManifestsUAAAuthInCfDeployment(t *testing.T) {
	// uaa-auth.yml goes last: before cf-deployment.yml it removes the
	// variable cf-deployment.yml sets.
	if out := boshIntFails(t, fixture(t, "cf-deployment-shape.yml"), []string{"add-to-credhub-deployment.yml", "uaa-auth.yml", "cf-deployment.yml"}); !strings.Contains(out, "credhub_perf_client") {
		t.Errorf("uaa-auth.yml before cf-deployment.yml: bosh int failed without naming credhub_perf_client:\n%s", out)
	}
	// The order docs/bosh.md gives, with vars.example.yml's client and the
	// CA named as inside cf-deployment.
	m, vars := boshIntTwice(t, fixture(t, "cf-deployment-shape.yml"),
		[]string{"add-to-credhub-deployment.yml", "cf-deployment.yml", "several-testers.yml", "uaa-auth.yml"},
		"-v", "uaa_ca_cert=((uaa_ssl.ca))", "-v", "uaa_client_secret=((credhub_admin_client_secret))")
	props, propsYAML := testerProps(t, m)
	uaa := props["credhub"].(map[string]interface{})["uaa"].(map[string]interface{})
	assertEqual(t, "uaa.client_id", uaa["client_id"], "credhub_admin_client")
	dir, err := renderJob(t, "credhub-perf", propsYAML, instanceSpec{})
	if err != nil {
		t.Fatalf("rendering the tester: %v", err)
	}
	// UAA's certificate (uaa_ssl, signed by uaa_ca) verifies with the CA
	// the tester got; CredHub's CA would not do.
	uaaSSL := vars["uaa_ssl"].(map[string]interface{})
	uaaCert := certs(t, uaaSSL["certificate"].(string))[0]
	if _, err := uaaCert.Verify(x509.VerifyOptions{Roots: pool(t, readRendered(t, dir, "config/uaa-ca.crt")), DNSName: "uaa.service.cf.internal"}); err != nil {
		t.Errorf("UAA's certificate does not verify with the tester's credhub.uaa.ca_cert: %v", err)
	}
	if _, err := uaaCert.Verify(x509.VerifyOptions{Roots: pool(t, readRendered(t, dir, "config/ca.crt")), DNSName: "uaa.service.cf.internal"}); err == nil {
		t.Errorf("UAA's certificate verifies with CredHub's CA: the shape does not tell the two apart")
	}
	actor := renderedActor(t, dir)
	assertEqual(t, "actor", actor, "uaa-client:credhub_admin_client")
	checkGranted(t, m, actor)
	checkAdminKept(t, m)
	_, perms := credhubAuthorization(t, m)
	for _, p := range perms {
		if p.Path == "/credhub-perf/*" {
			t.Errorf("uaa-auth.yml left the mTLS grant %+v", p)
		}
	}
}
