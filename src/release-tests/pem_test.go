package releasetests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeCA is a self-signed CA certificate (PEM) named cn: the job's
// templates parse every CA at render time, so tests that only follow where
// a CA goes still need one that parses.
func fakeCA(cn string) string {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return strings.TrimSpace(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
}

// TestTemplatesCAParsedAtRender: a placeholder CA, as vars.example.yml's,
// fails the deploy with the property's name instead of rendering and
// failing only when `bosh run-errand` dials CredHub.
func TestTemplatesCAParsedAtRender(t *testing.T) {
	const placeholder = "\"-----BEGIN CERTIFICATE-----\\nREPLACE-WITH-CREDHUB-SERVER-CA\\n-----END CERTIFICATE-----\""
	const target = "url: https://x:8844, "
	const client = "client_cert: {certificate: C, private_key: K}"
	for _, c := range []struct {
		name, props, want string
	}{
		{"credhub.ca_cert placeholder", "credhub: {" + target + client + ", ca_cert: " + placeholder + "}", "credhub.ca_cert: certificate 1 does not parse"},
		{"credhub.ca_cert without PEM", "credhub: {" + target + client + ", ca_cert: REPLACE-ME}", "credhub.ca_cert: holds no PEM certificate"},
		{"client certificate's ca without PEM", "credhub: {" + target + "client_cert: {certificate: C, private_key: K, ca: REPLACE-ME}}", "credhub.client_cert.ca: holds no PEM certificate"},
		{"uaa.ca_cert placeholder", "credhub: {" + target + "uaa: {url: \"https://uaa:8443\", client_id: c, client_secret: s, ca_cert: " + placeholder + "}}", "credhub.uaa.ca_cert: certificate 1 does not parse"},
		{"database ca_cert without PEM", "credhub: {" + target + client + "}\ncleanup: {mode: database, database: {type: postgres, host: h, user: u, password: p, ca_cert: DB-CA}}", "cleanup.database.ca_cert: holds no PEM certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := renderJob(t, "credhub-perf", c.props, instanceSpec{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("render error %v; want one containing %q", err, c.want)
			}
		})
	}
	// A real CA renders.
	if _, err := renderJob(t, "credhub-perf", minimalProps(""), instanceSpec{}); err != nil {
		t.Fatalf("a parsable CA does not render: %v", err)
	}
}

// TestTemplatesActorPrinted: bin/run prints the actor CredHub's ACLs know
// the tester by, from the client certificate's OU app:<uuid>, so the
// operator can grant it.
func TestTemplatesActorPrinted(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(ou ...string) string {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "credhub-perf", OrganizationalUnit: ou},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	}
	props := func(cert string) string {
		return "credhub: {url: \"https://x:8844\", client_cert: {certificate: " + strconv.Quote(cert) + ", private_key: K}}"
	}
	dir, err := renderJob(t, "credhub-perf", props(leaf("other", "app:"+exampleTesterGUID)), instanceSpec{})
	if err != nil {
		t.Fatal(err)
	}
	assertEqual(t, "actor", renderedActor(t, dir), "mtls-app:"+exampleTesterGUID)
	dir, err = renderJob(t, "credhub-perf", props(leaf()), instanceSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if run := readRendered(t, dir, "bin/run"); !strings.Contains(run, "carries no OU app:<uuid>") {
		t.Errorf("bin/run does not say that the certificate names no actor")
	}
}
