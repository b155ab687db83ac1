package releasetests

import (
	"crypto/x509"
	"encoding/pem"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
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
func checkTesterReachesCredHub(t *testing.T, m map[string]interface{}, wantURL string, wantChain int) {
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
}

func TestManifestsCfDeploymentShape(t *testing.T) {
	fixture := filepath.Join(repoRoot(t), "src", "release-tests", "testdata", "cf-deployment-shape.yml")
	m := boshInt(t, fixture, []string{"add-to-credhub-deployment.yml", "cf-deployment.yml"})
	checkTesterReachesCredHub(t, m, "https://credhub.service.cf.internal:8844", 2)
}

func TestManifestsCredHubReleaseSampleShape(t *testing.T) {
	fixture := filepath.Join(repoRoot(t), "src", "release-tests", "testdata", "credhub-release-sample-shape.yml")
	m := boshInt(t, fixture, []string{"add-to-credhub-deployment.yml", "credhub-release-sample.yml"},
		"-v", "external-ip-address=203.0.113.10", "-v", "internal-ip-address=10.0.0.10", "-v", "uaa-url=https://10.0.0.11:8443")
	checkTesterReachesCredHub(t, m, "https://10.0.0.10:8844", 1)
	if uaa := credhubJobProps(t, m)["authentication"].(map[string]interface{})["uaa"]; uaa == nil || !strings.Contains(uaa.(map[string]interface{})["url"].(string), "8443") {
		t.Errorf("the sample's UAA authentication was lost: %v", uaa)
	}
}
