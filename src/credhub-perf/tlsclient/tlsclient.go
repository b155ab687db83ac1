// Package tlsclient builds the client side of (mutual) TLS for both the
// load engine (package load) and the CredHub API client (package
// credhub), from one Options, so that the rules (TLS 1.2 at least, the
// client identity, which files are required together, how a bad file is
// reported) are written once.
package tlsclient

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
	"time"
)

// Options configures the client side of (mutual) TLS.
type Options struct {
	CertFile   string // client certificate (PEM, leaf then intermediates); with KeyFile enables mTLS
	KeyFile    string // client private key (PEM: RSA, ECDSA or Ed25519)
	CAFile     string // server CA bundle (PEM); system roots when empty
	ServerName string // overrides the name verified in the server certificate
	Insecure   bool   // skip server verification; only on explicit request
}

// Config is what Build made.
type Config struct {
	TLS *tls.Config
	// Subject is the client certificate's subject ("" without one), for
	// error messages about a refused identity.
	Subject string
}

// MinVersion is the oldest TLS version either client speaks; CredHub
// itself accepts 1.2 and 1.3.
const MinVersion = tls.VersionTLS12

// Build checks every file up front so that a wrong path or a mismatched
// pair is one clear error before any request is sent.
func Build(o Options) (*Config, error) {
	c := &Config{
		TLS: &tls.Config{
			MinVersion:         MinVersion,
			ServerName:         o.ServerName,
			InsecureSkipVerify: o.Insecure, //nolint:gosec // explicit opt-in only
		},
	}
	switch {
	case o.CertFile != "" && o.KeyFile == "":
		return nil, fmt.Errorf("client certificate %s given without its key: pass the key file too (hey: -key or X509_USER_KEY; credhub-perf: target.client_key_file)", o.CertFile)
	case o.CertFile == "" && o.KeyFile != "":
		return nil, fmt.Errorf("client key %s given without its certificate: pass the certificate file too (hey: -cert or X509_USER_CERT; credhub-perf: target.client_cert_file)", o.KeyFile)
	case o.CertFile != "":
		cert, err := loadKeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, err
		}
		c.Subject = cert.Leaf.Subject.String()
		c.TLS.Certificates = []tls.Certificate{cert}
	}
	if o.CAFile != "" {
		pemBytes, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("CA file %s contains no PEM certificates: pass the server's CA certificate bundle", o.CAFile)
		}
		c.TLS.RootCAs = pool
	}
	return c, nil
}

func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("reading client certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("reading client key: %w", err)
	}
	if !hasPEMBlock(certPEM, func(t string) bool { return t == "CERTIFICATE" }) {
		return tls.Certificate{}, fmt.Errorf("client certificate %s contains no PEM certificate", certFile)
	}
	if !hasPEMBlock(keyPEM, func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") }) {
		return tls.Certificate{}, fmt.Errorf("client key %s contains no PEM private key", keyFile)
	}
	if encryptedKey(keyPEM) {
		// Go's parser would only say it cannot parse the key.
		return tls.Certificate{}, fmt.Errorf("client key %s is an encrypted key (passphrase-protected), which cannot be used unattended: decrypt it (openssl pkey -in KEY -out PLAIN-KEY) and pass the decrypted key", keyFile)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if strings.Contains(err.Error(), "does not match") {
			return tls.Certificate{}, fmt.Errorf("client certificate %s and key %s do not match: %w", certFile, keyFile, err)
		}
		return tls.Certificate{}, fmt.Errorf("client certificate %s / key %s: %w", certFile, keyFile, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("parsing client certificate %s: %w", certFile, err)
	}
	cert.Leaf = leaf
	// CredHub's handshake failure would only say "bad certificate".
	now := time.Now()
	const day = "2006-01-02 15:04:05 MST"
	switch {
	case now.After(leaf.NotAfter):
		return tls.Certificate{}, fmt.Errorf("client certificate %s expired at %s (valid from %s): renew it", certFile, leaf.NotAfter.UTC().Format(day), leaf.NotBefore.UTC().Format(day))
	case now.Before(leaf.NotBefore):
		return tls.Certificate{}, fmt.Errorf("client certificate %s is not yet valid: valid from %s (now %s); check this machine's clock or wait", certFile, leaf.NotBefore.UTC().Format(day), now.UTC().Format(day))
	}
	return cert, nil
}

// encryptedKey tells whether the file's private key is passphrase
// protected: PKCS#8 "ENCRYPTED PRIVATE KEY", or a legacy PEM block with
// Proc-Type: 4,ENCRYPTED.
func encryptedKey(data []byte) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED") {
			return true
		}
	}
}

func hasPEMBlock(data []byte, want func(string) bool) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if want(b.Type) {
			return true
		}
	}
}
