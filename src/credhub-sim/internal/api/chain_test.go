package api

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// cf-deployment signs instance identities with an intermediate CA
// (diego_instance_identity_ca) while CredHub trusts the root: a client
// certificate from the intermediate authenticates when the client sends
// the intermediate with it, and is refused when it sends the leaf alone
// (the 401 seen against cf-deployment).
func TestClientCertificateFromIntermediateCA(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	root, rootKey := loadTestCA(t, h.certDir)
	now := time.Now()
	interKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	interTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "instance identity intermediate"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	interDER, err := x509.CreateCertificate(rand.Reader, interTmpl, root, interKey.Public(), rootKey)
	if err != nil {
		t.Fatal(err)
	}
	inter, _ := x509.ParseCertificate(interDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano() + 1),
		Subject:      pkix.Name{CommonName: "credhub-perf", OrganizationalUnit: []string{"app:2f0e4f53-5e8b-4a47-9d3c-7d1f2f1b9a10"}},
		NotBefore:    now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, inter, leafKey.Public(), interKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(leafKey)
	dir := t.TempDir()
	enc := func(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("chain.crt", append(enc(leafDER), enc(interDER)...))
	write("chain.key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	write("leaf.crt", enc(leafDER))
	write("leaf.key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))

	t.Run("leaf and intermediate", func(t *testing.T) {
		h.t = t
		c := tlsClient(t, dir, "chain", filepath.Join(h.certDir, "ca.crt"))
		r := h.do(c, "PUT", "/api/v1/data", map[string]any{"name": "/chain/x", "type": "value", "value": "v"})
		if r.status != 200 {
			t.Fatalf("set with an intermediate-CA client certificate: %d %s", r.status, r.body)
		}
	})
	t.Run("leaf alone", func(t *testing.T) {
		// A Go client does not even offer a certificate that does not
		// chain to a CA the server advertises; CredHub then answers 401.
		c := tlsClient(t, dir, "leaf", filepath.Join(h.certDir, "ca.crt"))
		resp, err := c.Get(h.url + "/api/v1/data?name=/chain/x")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 401 {
				t.Fatalf("a leaf without its intermediate got status %d; want 401 or a failed handshake", resp.StatusCode)
			}
		}
	})
}

func loadTestCA(t *testing.T, dir string) (*x509.Certificate, crypto.Signer) {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return cert, pair.PrivateKey.(crypto.Signer)
}
