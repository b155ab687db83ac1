package load

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"sync"
	"time"
)

// With keep-alive off every request is a full handshake, and crypto/tls
// builds and checks the server's chain with crypto/x509 each time: an RSA
// signature check per chain link plus path building, about a tenth of the
// CPU of a server-auth handshake. A load generator sees the same chain
// thousands of times a second, so chainVerifier checks it once and
// remembers that it passed.
//
// It is installed as tls.Config.VerifyConnection with InsecureSkipVerify
// set, so crypto/tls leaves chain verification to it. InsecureSkipVerify
// does not skip proof of possession: crypto/tls still checks the server's
// CertificateVerify (TLS 1.3) or ServerKeyExchange (TLS 1.2) signature
// against the presented leaf's public key, so a server replaying a cached
// chain without its private key still fails the handshake.
//
// A cached result applies only to the exact presented chain (every DER
// byte) for the same server name, and only while every certificate of the
// verified chains is still within its validity period. The roots are fixed
// per verifier; if the config's RootCAs pointer changes the cache is
// dropped. FIPS-only chain restrictions (fipsAllowedChains) are not
// applied; the engine does not run in FIPS 140-3 mode.
type chainVerifier struct {
	cfg *tls.Config // ServerName and RootCAs are read from here
	now func() time.Time

	mu    sync.Mutex
	roots *x509.CertPool
	ok    map[[sha256.Size]byte]validity

	onMiss func() // test hook: called on every full verification
}

type validity struct{ notBefore, notAfter time.Time }

// maxVerified bounds the cache: a run talks to one server (a few after
// redirects), so more distinct chains mean something unusual and the cache
// is simply started afresh.
const maxVerified = 64

// installChainVerifier makes cfg verify the server's chain through a
// caching chainVerifier. Call it after RootCAs is set.
func installChainVerifier(cfg *tls.Config) *chainVerifier {
	v := &chainVerifier{cfg: cfg, roots: cfg.RootCAs, ok: map[[sha256.Size]byte]validity{}}
	cfg.InsecureSkipVerify = true //nolint:gosec // chainVerifier verifies in VerifyConnection
	cfg.VerifyConnection = v.verifyConnection
	return v
}

func (v *chainVerifier) time() time.Time {
	if v.now != nil {
		return v.now()
	}
	if v.cfg.Time != nil {
		return v.cfg.Time()
	}
	return time.Now()
}

func (v *chainVerifier) verifyConnection(cs tls.ConnectionState) error {
	certs := cs.PeerCertificates
	if len(certs) == 0 {
		return errors.New("tls: server presented no certificate")
	}
	// The name crypto/tls itself would verify: the config's ServerName
	// (which the engine sets to the URL host or -servername), not the SNI
	// value, which is empty for IP addresses.
	name := v.cfg.ServerName
	if name == "" {
		name = cs.ServerName
	}
	if name == "" {
		return errors.New("tls: no server name to verify the certificate against: set ServerName")
	}
	key := chainKey(name, certs)
	now := v.time()

	v.mu.Lock()
	if roots := v.cfg.RootCAs; roots != v.roots {
		v.roots = roots
		clear(v.ok)
	}
	roots := v.roots
	val, hit := v.ok[key]
	v.mu.Unlock()
	if hit && !now.Before(val.notBefore) && !now.After(val.notAfter) {
		return nil
	}

	if v.onMiss != nil {
		v.onMiss()
	}
	// The same check as crypto/tls's verifyServerCertificate.
	opts := x509.VerifyOptions{
		Roots:         roots,
		CurrentTime:   now,
		DNSName:       name,
		Intermediates: x509.NewCertPool(),
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	chains, err := certs[0].Verify(opts)
	if err != nil {
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
	}
	// Valid until the first certificate in any verified chain expires;
	// after that the chain is verified afresh, which drops chains through
	// the expired certificate.
	val = validity{notBefore: certs[0].NotBefore, notAfter: certs[0].NotAfter}
	for _, chain := range chains {
		for _, c := range chain {
			if c.NotBefore.After(val.notBefore) {
				val.notBefore = c.NotBefore
			}
			if c.NotAfter.Before(val.notAfter) {
				val.notAfter = c.NotAfter
			}
		}
	}
	v.mu.Lock()
	if v.roots == roots {
		if len(v.ok) >= maxVerified {
			clear(v.ok)
		}
		v.ok[key] = val
	}
	v.mu.Unlock()
	return nil
}

// chainKey identifies a server name and the exact chain presented, with
// lengths so that no two different sequences hash the same input.
func chainKey(name string, certs []*x509.Certificate) [sha256.Size]byte {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(name)))
	h.Write(n[:])
	h.Write([]byte(name))
	for _, c := range certs {
		binary.BigEndian.PutUint64(n[:], uint64(len(c.Raw)))
		h.Write(n[:])
		h.Write(c.Raw)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}
