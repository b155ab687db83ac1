package load

import (
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"

	"github.com/credhub-perf/credhub-perf/rsasign"
)

// buildTLSConfig checks every file up front so that a wrong path or a
// mismatched pair is one clear error before any request is sent.
func buildTLSConfig(o TLSOptions) (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         o.ServerName,
		InsecureSkipVerify: o.Insecure, //nolint:gosec // explicit -insecure only
	}
	switch {
	case o.CertFile != "" && o.KeyFile == "":
		return nil, fmt.Errorf("client certificate %s given without its key: pass the key file too (-key or X509_USER_KEY)", o.CertFile)
	case o.CertFile == "" && o.KeyFile != "":
		return nil, fmt.Errorf("client key %s given without its certificate: pass the certificate file too (-cert or X509_USER_CERT)", o.KeyFile)
	case o.CertFile != "":
		cert, err := loadKeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
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
		cfg.RootCAs = pool
	}
	if !o.Insecure {
		installChainVerifier(cfg)
	}
	return cfg, nil
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
	if k, ok := cert.PrivateKey.(*rsa.PrivateKey); ok {
		// With keep-alive off every request signs a handshake; crypto/rsa
		// would make that signature most of the generator's CPU.
		cert.PrivateKey = rsasign.New(k)
	}
	return cert, nil
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
