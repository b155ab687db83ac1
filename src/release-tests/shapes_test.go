package releasetests

import (
	"crypto/x509"
	"encoding/pem"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	yaml "gopkg.in/yaml.v3"
)

func pool(t *testing.T, pems ...string) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	for _, s := range pems {
		if !p.AppendCertsFromPEM([]byte(s)) {
			t.Fatalf("not PEM: %.60q", s)
		}
	}
	return p
}

func certs(t *testing.T, s string) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	b := []byte(s)
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
}

// credhubJobProps is the credhub job's properties in an interpolated
// manifest.
func credhubJobProps(t *testing.T, m map[string]interface{}) map[string]interface{} {
	t.Helper()
	for _, j := range instanceGroup(t, m, "credhub")["jobs"].([]interface{}) {
		if job := j.(map[string]interface{}); job["name"] == "credhub" {
			return job["properties"].(map[string]interface{})["credhub"].(map[string]interface{})
		}
	}
	t.Fatal("no credhub job")
	return nil
}

// checkTesterReachesCredHub renders the tester from an interpolated
// manifest and checks, with the certificates the vars store generated,
// what CredHub and the tester will check of each other: the client chain
// in client.crt verifies against CredHub's trusted_cas as a client
// certificate, and CredHub's server certificate verifies against the
// tester's CA for the host of the tester's URL.
func checkTesterReachesCredHub(t *testing.T, m map[string]interface{}, wantURL string, wantChain int) string {
	t.Helper()
	_, propsYAML := testerProps(t, m)
	dir, err := renderJob(t, "credhub-perf", propsYAML, instanceSpec{})
	if err != nil {
		t.Fatalf("rendering the tester: %v", err)
	}
	cfg := renderedConfig(t, dir)
	assertEqual(t, "target.url", get(t, cfg, "target.url"), wantURL)
	ch := credhubJobProps(t, m)

	chain := certs(t, readRendered(t, dir, "config/client.crt"))
	if len(chain) != wantChain {
		t.Fatalf("client.crt holds %d certificates, want %d (leaf and intermediates)", len(chain), wantChain)
	}
	var trusted []string
	for _, c := range ch["authentication"].(map[string]interface{})["mutual_tls"].(map[string]interface{})["trusted_cas"].([]interface{}) {
		trusted = append(trusted, c.(string))
	}
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	if _, err := chain[0].Verify(x509.VerifyOptions{Roots: pool(t, trusted...), Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the tester's client chain does not verify against CredHub's trusted_cas: %v", err)
	}
	if _, err := chain[0].Verify(x509.VerifyOptions{Roots: pool(t, trusted...), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil && wantChain > 1 {
		t.Errorf("the leaf verifies alone; the test does not exercise an intermediate")
	}

	server := ch["tls"].(map[string]interface{})["certificate"].(string)
	u, _ := url.Parse(wantURL)
	if _, err := certs(t, server)[0].Verify(x509.VerifyOptions{Roots: pool(t, readRendered(t, dir, "config/ca.crt")), DNSName: u.Hostname()}); err != nil {
		t.Errorf("CredHub's server certificate does not verify with the tester's CA and URL host %s: %v", u.Hostname(), err)
	}
	return dir
}

func TestManifestsCfDeploymentShape(t *testing.T) {
	m := boshInt(t, fixture(t, "cf-deployment-shape.yml"), []string{"add-to-credhub-deployment.yml", "cf-deployment.yml"})
	dir := checkTesterReachesCredHub(t, m, "https://credhub.service.cf.internal:8844", 2)
	// cf-deployment enforces ACLs: the actor the client certificate names
	// is granted what a run does, and the foundation's own grants stay.
	_ = dir
	checkGranted(t, m, certificateActor(t, fixture(t, "cf-deployment-shape.yml"), []string{"add-to-credhub-deployment.yml", "cf-deployment.yml"}))
	checkAdminKept(t, m)
	// CredHub's CA as cf-deployment's own clients take it.
	props, _ := testerProps(t, m)
	assertEqual(t, "credhub.ca_cert", props["credhub"].(map[string]interface{})["ca_cert"], credhubJobProps(t, m)["ca_certificate"])
}

func TestManifestsCredHubReleaseSampleShape(t *testing.T) {
	m := boshInt(t, fixture(t, "credhub-release-sample-shape.yml"), []string{"add-to-credhub-deployment.yml", "credhub-release-sample.yml"},
		"-v", "external-ip-address=203.0.113.10", "-v", "internal-ip-address=10.0.0.10")
	dir := checkTesterReachesCredHub(t, m, "https://10.0.0.10:8844", 1)
	_ = dir
	checkGranted(t, m, certificateActor(t, fixture(t, "credhub-release-sample-shape.yml"), []string{"add-to-credhub-deployment.yml", "credhub-release-sample.yml"},
		"-v", "external-ip-address=203.0.113.10", "-v", "internal-ip-address=10.0.0.10"))
	checkAdminKept(t, m)
	ch := credhubJobProps(t, m)
	if uaa := ch["authentication"].(map[string]interface{})["uaa"]; uaa == nil || !strings.Contains(uaa.(map[string]interface{})["url"].(string), "8443") {
		t.Errorf("the sample's UAA authentication was lost: %v", uaa)
	}
	// The sample's own mTLS CA signs the tester: nothing is added to what
	// CredHub trusts.
	if n := len(ch["authentication"].(map[string]interface{})["mutual_tls"].(map[string]interface{})["trusted_cas"].([]interface{})); n != 1 {
		t.Errorf("trusted_cas has %d entries; the sample's one (credhub-mtls-ca) should do", n)
	}
}

// TestManifestsBesideCredHub: a tester in its own deployment (credhub-perf.yml)
// beside cf-deployment dials BOSH DNS's cross-deployment name and verifies the
// name CredHub's certificate carries; cf-deployment gets the permission
// through grant-tester-permission.yml.
func TestManifestsBesideCredHub(t *testing.T) {
	cf := boshInt(t, fixture(t, "cf-deployment-shape.yml"), []string{"grant-tester-permission.yml"})
	checkGranted(t, cf, "mtls-app:"+exampleTesterGUID)
	checkAdminKept(t, cf)

	m := boshInt(t, filepath.Join(repoRoot(t), "manifests", "credhub-perf.yml"), []string{"beside-cf-deployment.yml"})
	_, propsYAML := testerProps(t, m)
	// CredHub's CA from the cf deployment, as the director would fill
	// ((/my-director/cf/credhub_tls.ca)).
	tls := credhubJobProps(t, cf)["tls"].(map[string]interface{})
	var props map[string]interface{}
	if err := yaml.Unmarshal([]byte(propsYAML), &props); err != nil {
		t.Fatal(err)
	}
	props["credhub"].(map[string]interface{})["ca_cert"] = tls["ca"]
	b, _ := yaml.Marshal(props)
	dir, err := renderJob(t, "credhub-perf", string(b), instanceSpec{})
	if err != nil {
		t.Fatalf("rendering the tester: %v", err)
	}
	cfg := renderedConfig(t, dir)
	assertEqual(t, "target.url", get(t, cfg, "target.url"), "https://q-s0.credhub.default.cf.bosh:8844")
	assertEqual(t, "target.server_name", get(t, cfg, "target.server_name"), "credhub.service.cf.internal")
	if _, err := certs(t, tls["certificate"].(string))[0].Verify(x509.VerifyOptions{Roots: pool(t, readRendered(t, dir, "config/ca.crt")), DNSName: "credhub.service.cf.internal"}); err != nil {
		t.Errorf("CredHub's certificate does not verify for the tester's server_name: %v", err)
	}
	if _, err := certs(t, tls["certificate"].(string))[0].Verify(x509.VerifyOptions{Roots: pool(t, readRendered(t, dir, "config/ca.crt")), DNSName: "q-s0.credhub.default.cf.bosh"}); err == nil {
		t.Errorf("CredHub's certificate names the BOSH DNS host: server_name would not be needed")
	}
}
