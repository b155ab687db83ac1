package tlsclient

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"testing"

	"github.com/credhub-perf/credhub-perf/internal/testpki"
)

// BenchmarkSign times the private-key operation of a TLS 1.3 client's
// handshake: an RSA-2048 PSS (SHA-256) signature with the committed key
// rsa2048-0, by whichever crypto/rsa this binary was built with (the
// default, GOEXPERIMENT=boringcrypto, or GODEBUG=fips140=on).
// scripts/bench-signer runs it in each mode.
func BenchmarkSign(b *testing.B) {
	k := testpki.FixedRSAKey(b, "rsa2048-0")
	digest := sha256.Sum256([]byte("x"))
	opts := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
	var sig []byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if sig, err = k.Sign(rand.Reader, digest[:], opts); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := rsa.VerifyPSS(&k.PublicKey, crypto.SHA256, digest[:], sig, opts); err != nil {
		b.Fatalf("the last signature does not verify: %v", err)
	}
}
