// Package certgen writes the TLS material a local CredHub-like setup needs:
// a CA, a server certificate for loopback, and client certificates whose
// subject OU carries a CredHub mTLS identity (app:<v4 uuid>).
package certgen

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // subject key identifiers are SHA-1 by RFC 5280
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
)

// Options controls what Write produces.
type Options struct {
	Dir      string
	KeyType  string        // "ecdsa" (P-256, default) or "rsa" (2048)
	Validity time.Duration // default one year

	// ClientOnly reuses DIR/ca.crt and DIR/ca.key and writes only the
	// client pair, for extra (or deliberately wrong) client identities.
	ClientOnly bool
	ClientName string // file base name, default "client"
	ClientCN   string // default "credhub-perf"
	ClientOU   string // default "app:<random v4 uuid>"; "" with NoOU set writes no OU
	NoOU       bool
	// NoClientAuth leaves out the clientAuth extended key usage (CredHub
	// then answers 401), for negative tests.
	NoClientAuth bool
	ServerHosts  []string // default 127.0.0.1, ::1, localhost
	// Force replaces existing files; without it Write refuses to touch a
	// directory that already holds any file it would write (replacing a CA
	// key silently breaks every client it signed).
	Force bool
}

// Result says what was written.
type Result struct {
	Files    []string
	ClientOU string
}

// Write creates the files (keys 0600, certificates 0644).
func Write(o Options) (Result, error) {
	var res Result
	if o.Dir == "" {
		return res, errors.New("an output directory is required (--out DIR)")
	}
	if o.Validity < 0 {
		return res, fmt.Errorf("certificate validity %v is negative; pass a positive --validity such as 8760h", o.Validity)
	}
	if o.Validity == 0 {
		o.Validity = 365 * 24 * time.Hour
	}
	if o.ClientName == "" {
		o.ClientName = "client"
	}
	if o.ClientCN == "" {
		o.ClientCN = "credhub-perf"
	}
	if o.ClientOU == "" && !o.NoOU {
		o.ClientOU = "app:" + uuid.NewString()
	}
	if len(o.ServerHosts) == 0 {
		o.ServerHosts = []string{"127.0.0.1", "::1", "localhost"}
	}
	if !o.Force {
		bases := []string{o.ClientName}
		if !o.ClientOnly {
			bases = append([]string{"ca", "server"}, bases...)
		}
		for _, b := range bases {
			for _, ext := range []string{".key", ".crt"} {
				p := filepath.Join(o.Dir, b+ext)
				if _, err := os.Lstat(p); err == nil {
					return res, fmt.Errorf("%s already exists; credhub-sim certs does not overwrite keys and certificates (clients signed by an old CA would stop working): pass --force to replace them, or choose another --out", p)
				} else if !errors.Is(err, os.ErrNotExist) {
					return res, fmt.Errorf("checking %s: %w", p, err)
				}
			}
		}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return res, fmt.Errorf("creating %s: %w", o.Dir, err)
	}
	var caCert *x509.Certificate
	var caKey crypto.Signer
	if o.ClientOnly {
		var err error
		caCert, caKey, err = loadCA(o.Dir)
		if err != nil {
			return res, err
		}
	} else {
		key, err := newKey(o.KeyType)
		if err != nil {
			return res, err
		}
		tmpl := &x509.Certificate{
			Subject:               pkix.Name{CommonName: "credhub-sim CA", Organization: []string{"credhub-perf"}},
			IsCA:                  true,
			BasicConstraintsValid: true,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		}
		der, err := sign(tmpl, nil, key, key, o.Validity)
		if err != nil {
			return res, err
		}
		caCert, _ = x509.ParseCertificate(der)
		caKey = key
		if err := writePair(o.Dir, "ca", der, key, &res); err != nil {
			return res, err
		}

		skey, err := newKey(o.KeyType)
		if err != nil {
			return res, err
		}
		stmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "credhub-sim", Organization: []string{"credhub-perf"}},
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		for _, h := range o.ServerHosts {
			if ip := net.ParseIP(h); ip != nil {
				stmpl.IPAddresses = append(stmpl.IPAddresses, ip)
			} else {
				stmpl.DNSNames = append(stmpl.DNSNames, h)
			}
		}
		sder, err := sign(stmpl, caCert, skey, caKey, o.Validity)
		if err != nil {
			return res, err
		}
		if err := writePair(o.Dir, "server", sder, skey, &res); err != nil {
			return res, err
		}
	}

	ckey, err := newKey(o.KeyType)
	if err != nil {
		return res, err
	}
	ctmpl := &x509.Certificate{
		Subject:  pkix.Name{CommonName: o.ClientCN, Organization: []string{"credhub-perf"}},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
	if o.ClientOU != "" {
		ctmpl.Subject.OrganizationalUnit = []string{o.ClientOU}
	}
	if !o.NoClientAuth {
		ctmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		ctmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	cder, err := sign(ctmpl, caCert, ckey, caKey, o.Validity)
	if err != nil {
		return res, err
	}
	if err := writePair(o.Dir, o.ClientName, cder, ckey, &res); err != nil {
		return res, err
	}
	res.ClientOU = o.ClientOU
	return res, nil
}

func newKey(kind string) (crypto.Signer, error) {
	switch kind {
	case "", "ecdsa":
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generating ECDSA key: %w", err)
		}
		return k, nil
	case "rsa":
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, fmt.Errorf("generating RSA key: %w", err)
		}
		return k, nil
	}
	return nil, fmt.Errorf("key type %q is not ecdsa or rsa", kind)
}

func sign(tmpl, parent *x509.Certificate, key, parentKey crypto.Signer, validity time.Duration) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generating serial: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, fmt.Errorf("encoding public key: %w", err)
	}
	ski := sha1.Sum(pubDER) //nolint:gosec // RFC 5280 method 1
	tmpl.SerialNumber = serial
	tmpl.SubjectKeyId = ski[:]
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(validity)
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return nil, fmt.Errorf("signing certificate %q: %w", tmpl.Subject.CommonName, err)
	}
	return der, nil
}

func writePair(dir, base string, certDER []byte, key crypto.Signer, res *Result) error {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding %s key: %w", base, err)
	}
	certPath := filepath.Join(dir, base+".crt")
	keyPath := filepath.Join(dir, base+".key")
	if err := writeFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	if err := writeFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}), 0o644); err != nil {
		return err
	}
	res.Files = append(res.Files, certPath, keyPath)
	return nil
}

// writeFile replaces path atomically and forces mode even when the file
// existed with looser permissions.
func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func loadCA(dir string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, nil, fmt.Errorf("--client-only needs an existing CA: %w (run credhub-sim certs --out %s first)", err, dir)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "ca.key"))
	if err != nil {
		return nil, nil, fmt.Errorf("--client-only needs an existing CA key: %w", err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("%s/ca.crt or ca.key is not PEM", dir)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing %s/ca.crt: %w", dir, err)
	}
	var key any
	if key, err = x509.ParsePKCS8PrivateKey(kb.Bytes); err != nil {
		if key, err = x509.ParsePKCS1PrivateKey(kb.Bytes); err != nil {
			if key, err = x509.ParseECPrivateKey(kb.Bytes); err != nil {
				return nil, nil, fmt.Errorf("parsing %s/ca.key: %w", dir, err)
			}
		}
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("%s/ca.key is not a signing key", dir)
	}
	return cert, signer, nil
}
