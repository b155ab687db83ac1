// Package testpki makes the certificates and keys of credhub-perf's tests,
// in one way: a CA (fresh, or loaded from PEM files such as credhub-sim's),
// leaves and intermediates it issues, and PEM files written 0600. It also
// holds a few fixed RSA keys, committed under testdata, for tests and
// benchmarks that must use the same key every time.
//
// Fresh keys are the default: two PKIs of one test must never share a CA
// key, or a certificate of one would verify under the other's CA.
package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"embed"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// KeyType selects the key algorithm of generated certificates.
type KeyType string

// Key types.
const (
	RSA   KeyType = "rsa"
	ECDSA KeyType = "ecdsa"
)

// NewKey returns a fresh key: RSA-2048 or ECDSA P-256.
func NewKey(t testing.TB, kt KeyType) crypto.Signer {
	t.Helper()
	var k crypto.Signer
	var err error
	if kt == RSA {
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	} else {
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// CA issues certificates.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// DER is the CA certificate's encoding.
func (ca *CA) DER() []byte { return ca.Cert.Raw }

// NewCA makes a self-signed CA valid from an hour ago for a day.
func NewCA(t testing.TB, kt KeyType, name string) *CA {
	t.Helper()
	key := NewKey(t, kt)
	tmpl := &x509.Certificate{
		SerialNumber:          nextSerial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, Key: key}
}

// LoadCA reads a CA certificate and its key from PEM files (e.g. the ones
// `credhub-sim certs` writes).
func LoadCA(t testing.TB, certFile, keyFile string) *CA {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatalf("loading CA %s / %s: %v", certFile, keyFile, err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		t.Fatalf("CA key %s: %T is not a crypto.Signer", keyFile, pair.PrivateKey)
	}
	return &CA{Cert: cert, Key: key}
}

// Spec describes a certificate to issue. The zero value is a client
// certificate valid from an hour ago for a day, with a fresh ECDSA key.
type Spec struct {
	CommonName string
	OU         []string
	Server     bool // serverAuth for 127.0.0.1, localhost and credhub.test; else clientAuth
	IsCA       bool // an intermediate CA
	KeyType    KeyType
	Key        crypto.Signer // the leaf's key; nil = a fresh key of KeyType
	NotBefore  time.Time
	NotAfter   time.Time
}

// Issued is a certificate and its key.
type Issued struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// DER is the certificate's encoding.
func (c *Issued) DER() []byte { return c.Cert.Raw }

// AsCA lets an issued intermediate issue certificates in turn.
func (c *Issued) AsCA() *CA { return &CA{Cert: c.Cert, Key: c.Key} }

// Issue signs a certificate for s.
func (ca *CA) Issue(t testing.TB, s Spec) *Issued {
	t.Helper()
	key := s.Key
	if key == nil {
		key = NewKey(t, s.KeyType)
	}
	if s.NotBefore.IsZero() {
		s.NotBefore = time.Now().Add(-time.Hour)
	}
	if s.NotAfter.IsZero() {
		s.NotAfter = time.Now().Add(24 * time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(),
		Subject:      pkix.Name{CommonName: s.CommonName, OrganizationalUnit: s.OU},
		NotBefore:    s.NotBefore,
		NotAfter:     s.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	switch {
	case s.IsCA:
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign
	case s.Server:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost", "credhub.test"}
	default:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &Issued{Cert: cert, Key: key}
}

var serial atomic.Int64

// nextSerial keeps serials distinct within a test binary and across runs
// against one long-lived CA (credhub-sim's).
func nextSerial() *big.Int {
	return big.NewInt(time.Now().UnixNano() + serial.Add(1))
}

// WriteCerts writes the certificates, in order (a leaf then its
// intermediates), to path as PEM.
func WriteCerts(t testing.TB, path string, ders ...[]byte) string {
	t.Helper()
	var out []byte
	for _, d := range ders {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: d})...)
	}
	write(t, path, out)
	return path
}

// WriteKey writes key to path as PKCS #8 PEM, mode 0600.
func WriteKey(t testing.TB, path string, key crypto.Signer) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	return path
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Write writes c and its key as dir/name.crt and dir/name.key; the
// certificate file carries chain (intermediates) after the leaf.
func (c *Issued) Write(t testing.TB, dir, name string, chain ...*Issued) (certFile, keyFile string) {
	t.Helper()
	ders := [][]byte{c.DER()}
	for _, i := range chain {
		ders = append(ders, i.DER())
	}
	return WriteCerts(t, filepath.Join(dir, name+".crt"), ders...), WriteKey(t, filepath.Join(dir, name+".key"), c.Key)
}

// PKI is a CA with a server and a client certificate written to files.
type PKI struct {
	Dir                               string
	CAFile, ServerCert, ServerKey     string
	ClientCert, ClientKey, ClientName string
	CAPool                            *x509.CertPool
	ServerPair                        tls.Certificate
	CA                                *CA
}

// NewPKI generates a CA, a server certificate for 127.0.0.1/localhost and a
// client certificate with common name "perf-client", in t.TempDir().
func NewPKI(t testing.TB, kt KeyType) *PKI {
	t.Helper()
	dir := t.TempDir()
	ca := NewCA(t, kt, "testpki CA")
	p := &PKI{Dir: dir, ClientName: "perf-client", CA: ca}
	p.CAPool = x509.NewCertPool()
	p.CAPool.AddCert(ca.Cert)
	p.CAFile = WriteCerts(t, filepath.Join(dir, "ca.crt"), ca.DER())
	p.ServerCert, p.ServerKey = ca.Issue(t, Spec{CommonName: "server", Server: true, KeyType: kt}).Write(t, dir, "server")
	p.ClientCert, p.ClientKey = ca.Issue(t, Spec{CommonName: p.ClientName, KeyType: kt}).Write(t, dir, p.ClientName)
	pair, err := tls.LoadX509KeyPair(p.ServerCert, p.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	p.ServerPair = pair
	return p
}

//go:embed testdata/*.pem
var fixed embed.FS

// FixedRSAKey returns the committed key testdata/<name>.pem (rsa2048-0 or
// rsa2048-1) and logs its path and the SHA-256 of
// its public key, so that a failure names the key to reproduce it with.
func FixedRSAKey(t testing.TB, name string) *rsa.PrivateKey {
	t.Helper()
	path := "testdata/" + name + ".pem"
	b, err := fixed.ReadFile(path)
	if err != nil {
		t.Fatalf("fixed key %s: %v", name, err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("fixed key %s: no PEM block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatalf("fixed key %s: %v", path, err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("fixed key %s is %T, not RSA", path, k)
	}
	t.Logf("key src/credhub-perf/internal/testpki/%s, public key sha256 %s", path, Fingerprint(&rk.PublicKey))
	return rk
}

// Fingerprint is the hex SHA-256 of the key's PKIX encoding.
func Fingerprint(pub crypto.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return fmt.Sprintf("(unencodable %T)", pub)
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}
