package rsasign

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	_ "crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"math/big"
	mrand "math/rand"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/internal/testpki"
)

func needIFMA(t testing.TB) {
	t.Helper()
	if !hasIFMA() {
		t.Skip("this CPU has no AVX-512 IFMA; New refuses and callers sign with crypto/rsa (TestFallback)")
	}
}

// testKeys are the committed keys of internal/testpki, logged (path and
// fingerprint) so that a failure can be reproduced with the same key.
func testKeys(t testing.TB) []*rsa.PrivateKey {
	t.Helper()
	var keys []*rsa.PrivateKey
	for i := 0; i < 3; i++ {
		keys = append(keys, testpki.FixedRSAKey(t, fmt.Sprintf("rsa2048-%d", i)))
	}
	return keys
}

// withCPU runs the test as if the CPU check answered has.
func withCPU(t *testing.T, has bool) {
	t.Helper()
	saved := cpuHasIFMA
	cpuHasIFMA = func() bool { return has }
	t.Cleanup(func() { cpuHasIFMA = saved })
}

// fastSigner is New on a CPU with IFMA.
func fastSigner(t testing.TB, k *rsa.PrivateKey) *Signer {
	t.Helper()
	s, err := New(k)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func TestAMMAgainstBig(t *testing.T) {
	needIFMA(t)
	rng := mrand.New(mrand.NewSource(1))
	for _, k := range testKeys(t) {
		s, err := newSigner(k)
		if err != nil {
			t.Fatal(err)
		}
		mods := []*big.Int{k.Primes[0], k.Primes[1]}
		rInv := [2]*big.Int{new(big.Int).ModInverse(bigR, mods[0]), new(big.Int).ModInverse(bigR, mods[1])}
		for trial := 0; trial < 200; trial++ {
			var a, b pair
			var want [2]*big.Int
			for h := 0; h < 2; h++ {
				// Operands up to 2m (the exponentiation's bound) and, every
				// few trials, the extremes.
				lim := new(big.Int).Lsh(mods[h], 1)
				x := new(big.Int).Rand(rng, lim)
				y := new(big.Int).Rand(rng, lim)
				switch trial % 10 {
				case 0:
					x.Sub(lim, big.NewInt(1))
					y.Sub(lim, big.NewInt(1))
				case 1:
					x.SetInt64(0)
				}
				a[h], b[h] = toNat52(x), toNat52(y)
				w := new(big.Int).Mul(x, y)
				w.Mul(w, rInv[h])
				want[h] = w.Mod(w, mods[h])
			}
			var r pair
			ammX2(&r, &a, &b, &s.md)
			for h := 0; h < 2; h++ {
				got := nat52ToBig(&r[h])
				for i, l := range r[h] {
					if l>>limbBits != 0 {
						t.Fatalf("limb %d not normalised: %x", i, l)
					}
				}
				if got.Cmp(new(big.Int).Lsh(mods[h], 1)) >= 0 {
					t.Fatalf("result not below 2m")
				}
				if new(big.Int).Mod(got, mods[h]).Cmp(want[h]) != 0 {
					t.Fatalf("trial %d half %d: amm = %x, want %x mod m", trial, h, got, want[h])
				}
			}
		}
	}
}

func nat52ToBig(n *nat52) *big.Int {
	z := new(big.Int)
	for i := limbs - 1; i >= 0; i-- {
		z.Lsh(z, limbBits)
		z.Or(z, new(big.Int).SetUint64(n[i]))
	}
	return z
}

func TestRawSignAgainstBig(t *testing.T) {
	needIFMA(t)
	for _, k := range testKeys(t) {
		s, err := newSigner(k)
		if err != nil {
			t.Fatal(err)
		}
		rng := mrand.New(mrand.NewSource(3))
		for trial := 0; trial < 30; trial++ {
			m := new(big.Int).Rand(rng, k.N)
			switch trial {
			case 0:
				m.SetInt64(0)
			case 1:
				m.SetInt64(1)
			case 2:
				m.Sub(k.N, big.NewInt(1))
			case 3:
				m.Set(k.Primes[0]) // a multiple of p: zero mod p
			}
			em := make([]byte, emLen)
			m.FillBytes(em)
			got, err := s.rawSign(em)
			if err != nil {
				t.Fatal(err)
			}
			want := new(big.Int).Exp(m, k.D, k.N).FillBytes(make([]byte, emLen))
			if !bytes.Equal(got, want) {
				t.Fatalf("trial %d: m^d mod n differs from math/big", trial)
			}
		}
	}
}

func TestSignMatchesCryptoRSA(t *testing.T) {
	needIFMA(t)
	k := testKeys(t)[0]
	signer := fastSigner(t, k)
	msg := []byte("credhub-perf")
	for _, h := range []crypto.Hash{crypto.SHA1, crypto.SHA256, crypto.SHA384, crypto.SHA512} {
		hh := h.New()
		hh.Write(msg)
		digest := hh.Sum(nil)
		// PKCS #1 v1.5 is deterministic: the bytes must equal crypto/rsa's.
		got, err := signer.Sign(rand.Reader, digest, h)
		if err != nil {
			t.Fatal(err)
		}
		want, err := rsa.SignPKCS1v15(nil, k, h, digest)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%v PKCS #1 v1.5 signature differs from crypto/rsa", h)
		}
		if h == crypto.SHA1 {
			continue
		}
		for _, salt := range []int{rsa.PSSSaltLengthEqualsHash, rsa.PSSSaltLengthAuto, 0, 20} {
			opts := &rsa.PSSOptions{SaltLength: salt, Hash: h}
			sig, err := signer.Sign(rand.Reader, digest, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := rsa.VerifyPSS(&k.PublicKey, h, digest, sig, &rsa.PSSOptions{SaltLength: salt, Hash: h}); err != nil {
				t.Fatalf("%v PSS salt %d: crypto/rsa rejects our signature: %v", h, salt, err)
			}
		}
	}
}

func TestPSSSaltComesFromRand(t *testing.T) {
	needIFMA(t)
	k := testKeys(t)[0]
	signer := fastSigner(t, k)
	digest := sha256.Sum256([]byte("x"))
	opts := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
	a, err := signer.Sign(bytes.NewReader(bytes.Repeat([]byte{7}, 64)), digest[:], opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := signer.Sign(bytes.NewReader(bytes.Repeat([]byte{7}, 64)), digest[:], opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := signer.Sign(rand.Reader, digest[:], opts)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Fatal("PSS signatures must depend on the salt read from rand, and only on it")
	}
	if _, err := signer.Sign(bytes.NewReader(nil), digest[:], opts); err == nil {
		t.Fatal("an empty rand must fail the signature")
	}
}

// The fast path is chosen only on a CPU with IFMA and for a key it
// supports; everything else is refused with the reason, so that the caller
// signs with crypto/rsa. The CPU check is simulated, so this runs (both
// ways) on every machine.
func TestFallback(t *testing.T) {
	k := testKeys(t)[0]
	small := testpki.FixedRSAKey(t, "rsa1024-0")
	t.Run("no IFMA", func(t *testing.T) {
		withCPU(t, false)
		if Available() {
			t.Fatal("Available on a CPU without IFMA")
		}
		if s, err := New(k); s != nil || !errors.Is(err, ErrNoIFMA) {
			t.Fatalf("New = %v, %v; want nil, ErrNoIFMA", s, err)
		}
	})
	t.Run("IFMA", func(t *testing.T) {
		withCPU(t, true)
		// Only the choice: newSigner's precomputation is plain Go, so this
		// does not reach the assembly on a CPU that lacks it.
		if s, err := New(k); s == nil || err != nil {
			t.Fatalf("RSA-2048: New = %v, %v; want a Signer", s, err)
		}
		if s, err := New(small); s != nil || !errors.Is(err, errUnsupported) {
			t.Fatalf("RSA-1024: New = %v, %v; want nil, errUnsupported", s, err)
		}
		three := *k
		three.PublicKey.E = 3
		if s, err := New(&three); s != nil || !errors.Is(err, errUnsupported) {
			t.Fatalf("e = 3: New = %v, %v; want nil, errUnsupported", s, err)
		}
	})
	if Available() != hasIFMA() {
		t.Fatal("Available must be the CPU check")
	}
}

// A hash the encoder does not know still signs, through crypto/rsa.
func TestUnknownHashGoesToCryptoRSA(t *testing.T) {
	needIFMA(t)
	k := testKeys(t)[0]
	d := sha512.Sum512_224([]byte("x"))
	sig, err := fastSigner(t, k).Sign(rand.Reader, d[:], crypto.SHA512_224)
	if err != nil {
		t.Fatal(err)
	}
	if err := rsa.VerifyPKCS1v15(&k.PublicKey, crypto.SHA512_224, d[:], sig); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSign is scripts/bench-signer's figure for both signers; the
// rsasign row is skipped on a CPU without IFMA.
func BenchmarkSign(b *testing.B) {
	k := testKeys(b)[0]
	digest := sha256.Sum256([]byte("x"))
	opts := &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}
	b.Run("crypto-rsa", func(b *testing.B) { benchSign(b, k, digest[:], opts) })
	b.Run("rsasign", func(b *testing.B) {
		needIFMA(b)
		benchSign(b, fastSigner(b, k), digest[:], opts)
	})
}

func benchSign(b *testing.B, s crypto.Signer, digest []byte, opts crypto.SignerOpts) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Sign(rand.Reader, digest, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawSign(b *testing.B) {
	needIFMA(b)
	k := testKeys(b)[0]
	s, _ := newSigner(k)
	em := make([]byte, emLen)
	em[10] = 1
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.rawSign(em); err != nil {
			b.Fatal(err)
		}
	}
}

// The fault check must reject a signature that is wrong in one CRT half,
// the case that would reveal a prime.
func TestCheckPublicRejectsWrongSignature(t *testing.T) {
	needIFMA(t)
	k := testKeys(t)[1]
	s, err := newSigner(k)
	if err != nil {
		t.Fatal(err)
	}
	m := new(big.Int).Rand(mrand.New(mrand.NewSource(4)), k.N)
	var x, sig [2 * words]uint64
	fillWords(x[:], m)
	fillWords(sig[:], new(big.Int).Exp(m, k.D, k.N))
	xR := toMont(&x, &s.pr, &s.md)
	if !checkPublic(&sig, &xR, &s.pr, &s.md) {
		t.Fatal("a right signature failed the check")
	}
	// Right mod q, wrong mod p: add q.
	bad := new(big.Int).Exp(m, k.D, k.N)
	bad.Add(bad, k.Primes[1]).Mod(bad, k.N)
	var badW [2 * words]uint64
	fillWords(badW[:], bad)
	if checkPublic(&badW, &xR, &s.pr, &s.md) {
		t.Fatal("a signature wrong mod p passed the check")
	}
	sig[7] ^= 1 << 13
	if checkPublic(&sig, &xR, &s.pr, &s.md) {
		t.Fatal("a signature with a flipped bit passed the check")
	}
}

func BenchmarkAMMX2(b *testing.B) {
	needIFMA(b)
	k := testKeys(b)[0]
	s, _ := newSigner(k)
	x := s.pr[0].rr
	acc := pair{x, s.pr[1].rr}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ammX2(&acc, &acc, &acc, &s.md)
	}
}

func BenchmarkSelectX2(b *testing.B) {
	needIFMA(b)
	var table [tableSize]pair
	var dst pair
	for i := 0; i < b.N; i++ {
		selectX2(&dst, &table, uint64(i)&31, uint64(i+7)&31)
	}
}

// The final carry of ammX2 resolves carries that ripple through limbs
// equal to 2^52-1; random products almost never produce those, so they
// are built here.
func TestNormCarryRipple(t *testing.T) {
	needIFMA(t)
	rng := mrand.New(mrand.NewSource(2))
	const full = limbMask
	cases := [][limbs]uint64{}
	// A carry out of limb 0 that must ripple through limbs 1..18.
	var c [limbs]uint64
	c[0] = 1 << 53
	for i := 1; i < limbs-1; i++ {
		c[i] = full
	}
	cases = append(cases, c)
	// Limbs just above 2^52 next to runs of 2^52-1, and large lanes.
	for trial := 0; trial < 2000; trial++ {
		var x [limbs]uint64
		for i := range x {
			switch rng.Intn(5) {
			case 0:
				x[i] = full
			case 1:
				x[i] = full + 1 + uint64(rng.Intn(1<<12))
			case 2:
				x[i] = rng.Uint64() >> 4
			case 3:
				x[i] = 0
			default:
				x[i] = rng.Uint64() & full
			}
		}
		x[limbs-1] &= 1<<40 - 1 // keep the value within 20 limbs
		cases = append(cases, x)
	}
	for n, x := range cases {
		var p pair
		want := new(big.Int)
		for i := limbs - 1; i >= 0; i-- {
			want.Lsh(want, limbBits)
			want.Add(want, new(big.Int).SetUint64(x[i]))
			p[0][i], p[1][i] = x[i], x[i]
		}
		normX2(&p)
		for h := 0; h < 2; h++ {
			for i, l := range p[h] {
				if l>>limbBits != 0 || (i >= limbs && l != 0) {
					t.Fatalf("case %d: limb %d = %x not normalised", n, i, l)
				}
			}
			if got := nat52ToBig(&p[h]); got.Cmp(want) != 0 {
				t.Fatalf("case %d half %d: value changed: %x, want %x", n, h, got, want)
			}
		}
	}
}

// A fault in one CRT half (here a corrupted exponent) must end in an error
// that names the escape hatch, never in a signature.
func TestFaultIsRefused(t *testing.T) {
	needIFMA(t)
	s, err := newSigner(testKeys(t)[2])
	if err != nil {
		t.Fatal(err)
	}
	s.pr[0].exp[3] ^= 1 << 7
	digest := sha256.Sum256([]byte("x"))
	sig, err := s.Sign(rand.Reader, digest[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256})
	if err == nil || sig != nil || !strings.Contains(err.Error(), "tester.fast_rsa: false") {
		t.Fatalf("sig %x, err %v", sig, err)
	}
}
