package releasetests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// testChain is a root CA, an intermediate it signed and a client leaf the
// intermediate signed, as PEM: cf-deployment's
// diego_instance_identity_ca_root / diego_instance_identity_ca shape.
type testChain struct{ root, inter, leaf, key string }

func newTestChain(t *testing.T) testChain {
	t.Helper()
	now := time.Now()
	mk := func(tmpl, parent *x509.Certificate, pub, signer interface{}) string {
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	}
	parse := func(p string) *x509.Certificate {
		b, _ := pem.Decode([]byte(p))
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ca := func(serial int64, cn string) *x509.Certificate {
		return &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign}
	}
	rootKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	interKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rootTmpl := ca(1, "instance identity root")
	root := mk(rootTmpl, rootTmpl, rootKey.Public(), rootKey)
	inter := mk(ca(2, "instance identity intermediate"), parse(root), interKey.Public(), rootKey)
	leaf := mk(&x509.Certificate{SerialNumber: big.NewInt(3),
		Subject:   pkix.Name{CommonName: "credhub-perf", OrganizationalUnit: []string{"app:2f0e4f53-5e8b-4a47-9d3c-7d1f2f1b9a10"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		parse(inter), leafKey.Public(), interKey)
	kd, _ := x509.MarshalPKCS8PrivateKey(leafKey)
	key := strings.TrimSpace(string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd})))
	return testChain{root: root, inter: inter, leaf: leaf, key: key}
}

func yamlBlock(s, pad string) string { return "|\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad) }

// client.crt carries the leaf and, when the certificate variable's `ca` is
// an intermediate, that intermediate: CredHub trusts only the root.
func TestTemplatesClientCertificateChain(t *testing.T) {
	c := newTestChain(t)
	// client.crt and the template that refuses a CA that does not parse:
	// no other template reads credhub.client_cert.ca.
	job := loadJob(t, "credhub-perf")
	render := func(t *testing.T, props string) (string, error) {
		return renderTemplates(t, job, props, instanceSpec{}, []string{"config/client.crt.erb", "config/validation_certificates.yml.erb"})
	}
	props := func(cert, ca string) string {
		p := `
credhub:
  url: https://credhub.service.cf.internal:8844
  client_cert:
    certificate: ` + yamlBlock(cert, "      ") + `
    private_key: ` + yamlBlock(c.key, "      ") + "\n"
		if ca != "" {
			p += "    ca: " + yamlBlock(ca, "      ") + "\n"
		}
		return p
	}
	for _, tc := range []struct {
		name, cert, ca, want string
	}{
		{"intermediate ca appended", c.leaf, c.inter, c.leaf + "\n" + c.inter + "\n"},
		{"root ca not sent", c.leaf, c.root, c.leaf + "\n"},
		{"bundle: intermediate only", c.leaf, c.inter + "\n" + c.root, c.leaf + "\n" + c.inter + "\n"},
		{"chain already in the certificate", c.leaf + "\n" + c.inter, c.inter, c.leaf + "\n" + c.inter + "\n"},
		{"no ca", c.leaf, "", c.leaf + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := render(t, props(tc.cert, tc.ca))
			if err != nil {
				t.Fatal(err)
			}
			if got := readRendered(t, dir, "config/client.crt"); got != tc.want {
				t.Errorf("client.crt:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	t.Run("ca that does not parse", func(t *testing.T) {
		bad := "-----BEGIN CERTIFICATE-----\nTm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----"
		_, err := render(t, props(c.leaf, bad))
		if err == nil || !strings.Contains(err.Error(), "credhub.client_cert.ca: certificate 1 does not parse") {
			t.Fatalf("render error %v; want one naming credhub.client_cert.ca", err)
		}
	})
}
