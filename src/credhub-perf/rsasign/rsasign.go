// Package rsasign signs with RSA-2048 keys using AVX-512 IFMA, for the
// client certificate of every TLS handshake a load generator makes.
//
// With keep-alive off each request is a full mutual-TLS handshake, and the
// client's CertificateVerify signature dominates the generator's CPU: Go's
// crypto/rsa takes about 0.7 ms per RSA-2048 signature on an AVX-512 CPU,
// OpenSSL about 0.2 ms, so a Go load generator would spend several times
// the CPU of a C or Rust one and measure itself instead of the server.
// This package computes the same signatures (RSASSA-PSS and PKCS #1 v1.5,
// as crypto/rsa) with a two-way interleaved Montgomery exponentiation in
// radix 2^52 (amm_amd64.s), in constant time, and checks every signature
// against the public exponent before returning it, so a fault can never
// put a wrong signature (or a key-revealing one) on the wire.
//
// It is opt-in (hey -fast-rsa, credhub-perf tester.fast_rsa): crypto/rsa
// is the default. Keys it cannot handle (other sizes, multi-prime) and CPUs
// without IFMA make New return an error, and the caller signs with
// crypto/rsa (package tlsclient does, and says so in meta.json).
package rsasign

import (
	"crypto"
	"crypto/rsa"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/big"
	"math/bits"
)

// Signer is an RSA-2048 private key whose Sign uses the IFMA code.
type Signer struct {
	key    *rsa.PrivateKey
	pr     [2]prime // p, q
	md     moduli
	qWords [words]uint64
	qInvR  nat52 // qInv*R mod p
}

// Names of the two signers, as meta.json's rsa_signer records them.
const (
	// StdName is the standard library, the default.
	StdName = "crypto/rsa"
	// FastName is this package, used only when asked for (hey -fast-rsa,
	// tester.fast_rsa) on a CPU and key it supports.
	FastName = "rsasign-ifma"
)

// cpuHasIFMA is the CPU feature check; tests replace it to take the path
// of a machine without (or with) IFMA whatever the machine running them.
var cpuHasIFMA = hasIFMA

// ErrNoIFMA is New's answer on a CPU without the instructions it needs.
var ErrNoIFMA = errors.New("rsasign: this CPU has no AVX-512 IFMA (or the OS does not save its registers)")

// Available reports whether this machine can use the fast path.
func Available() bool { return cpuHasIFMA() }

// New returns a Signer for key, or an error saying why the fast path does
// not apply (ErrNoIFMA, or a key that is not two-prime RSA-2048 with
// exponent 65537); the caller then signs with key itself.
func New(key *rsa.PrivateKey) (*Signer, error) {
	if !cpuHasIFMA() {
		return nil, ErrNoIFMA
	}
	return newSigner(key)
}

var errUnsupported = errors.New("rsasign: the key is not a two-prime RSA-2048 key with exponent 65537")

func newSigner(key *rsa.PrivateKey) (*Signer, error) {
	// checkPublic raises to 65537, the exponent every common tool uses.
	if key.N.BitLen() != 2*expBits || len(key.Primes) != 2 || key.E != 65537 {
		return nil, errUnsupported
	}
	p, q := key.Primes[0], key.Primes[1]
	if p.BitLen() != expBits || q.BitLen() != expBits {
		return nil, errUnsupported
	}
	key.Precompute()
	if key.Precomputed.Dp == nil || key.Precomputed.Dq == nil || key.Precomputed.Qinv == nil {
		return nil, errUnsupported
	}
	s := &Signer{key: key}
	s.pr[0] = newPrime(p, key.Precomputed.Dp)
	s.pr[1] = newPrime(q, key.Precomputed.Dq)
	s.md.m[0], s.md.m[1] = s.pr[0].m, s.pr[1].m
	s.md.k0[0], s.md.k0[1] = s.pr[0].k0<<12, s.pr[1].k0<<12
	s.qWords = s.pr[1].words
	qir := new(big.Int).Mul(key.Precomputed.Qinv, bigR)
	s.qInvR = toNat52(qir.Mod(qir, p))
	return s, nil
}

// Public returns the key's public half.
func (s *Signer) Public() crypto.PublicKey { return &s.key.PublicKey }

// Sign signs digest as crypto/rsa does: RSASSA-PSS when opts is
// *rsa.PSSOptions, PKCS #1 v1.5 otherwise. Hashes it has no encoding for
// go to crypto/rsa.
func (s *Signer) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	h := opts.HashFunc()
	var em []byte
	var err error
	if pss, ok := opts.(*rsa.PSSOptions); ok {
		em, err = encodePSS(rand, digest, h, pss.SaltLength)
	} else {
		em, err = encodePKCS1v15(digest, h)
	}
	if errors.Is(err, errNoEncoding) {
		return s.key.Sign(rand, digest, opts)
	}
	if err != nil {
		return nil, err
	}
	return s.rawSign(em)
}

// rawSign returns em^d mod n as 256 big-endian bytes, by CRT, after
// checking it against the public exponent.
func (s *Signer) rawSign(em []byte) ([]byte, error) {
	var x [2 * words]uint64
	for i := range x {
		o := len(em) - 8*(i+1)
		x[i] = binary.BigEndian.Uint64(em[o:])
	}
	xR := toMont(&x, &s.pr, &s.md)
	var r [2][words]uint64
	expCRT(&r, &xR, &s.pr, &s.md)
	sp, sq := &r[0], &r[1]
	pw := &s.pr[0].words

	// h = (sp - sq) * qInv mod p. Both primes have 1024 bits, so sq < q <
	// 2p and one conditional subtraction reduces it mod p.
	sqp := *sq
	condSub(&sqp, pw)
	var d [words]uint64
	var borrow uint64
	for i := range d {
		d[i], borrow = bits.Sub64(sp[i], sqp[i], borrow)
	}
	addBack := -borrow
	var carry uint64
	for i := range d {
		d[i], carry = bits.Add64(d[i], pw[i]&addBack, carry)
	}
	// The second half of the pair is unused here (zero times zero).
	var hp pair
	wordsToNat52(&hp[0], d[:])
	b := pair{s.qInvR}
	ammX2(&hp, &hp, &b, &s.md) // h*qInvR/R = h*qInv mod p, at most p
	var hw [words]uint64
	nat52ToWords(&hw, &hp[0])
	condSub(&hw, pw)

	// sig = sq + q*h, below n.
	var out [2 * words]uint64
	for i := 0; i < words; i++ {
		var c uint64
		for j := 0; j < words; j++ {
			hi, lo := bits.Mul64(s.qWords[j], hw[i])
			var c1, c2 uint64
			lo, c1 = bits.Add64(lo, out[i+j], 0)
			lo, c2 = bits.Add64(lo, c, 0)
			out[i+j] = lo
			c = hi + c1 + c2
		}
		out[i+words] = c
	}
	carry = 0
	for i := 0; i < 2*words; i++ {
		var add uint64
		if i < words {
			add = sq[i]
		}
		out[i], carry = bits.Add64(out[i], add, carry)
	}
	clear(r[:])
	clear(hw[:])
	clear(d[:])
	// A wrong result would fail the handshake at best and, from a fault in
	// one CRT half, reveal a prime at worst (Boneh, DeMillo and Lipton).
	// sig^e = em mod p and mod q means sig is right mod n; with the IFMA
	// code this costs about 2% of the signature.
	if !checkPublic(&out, &xR, &s.pr, &s.md) {
		return nil, errors.New("rsasign: signature failed its own check and was not sent; turn the fast signer off (hey without -fast-rsa, tester.fast_rsa: false) to sign with crypto/rsa")
	}
	sig := make([]byte, 2*words*8)
	for i, w := range out {
		binary.BigEndian.PutUint64(sig[len(sig)-8*(i+1):], w)
	}
	return sig, nil
}

var errNoEncoding = errors.New("rsasign: no encoding for this hash")

// digestInfo prefixes of PKCS #1 v1.5 signatures (RFC 8017, section 9.2).
var digestInfo = map[crypto.Hash][]byte{
	crypto.SHA1:   {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14},
	crypto.SHA256: {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20},
	crypto.SHA384: {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30},
	crypto.SHA512: {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40},
}

const emLen = 2 * words * 8 // 256 bytes

func encodePKCS1v15(digest []byte, h crypto.Hash) ([]byte, error) {
	prefix, ok := digestInfo[h]
	if !ok || len(digest) != h.Size() {
		return nil, errNoEncoding
	}
	// EM = 0x00 || 0x01 || PS (0xff...) || 0x00 || DigestInfo || digest
	em := make([]byte, emLen)
	em[1] = 1
	t := len(prefix) + len(digest)
	for i := 2; i < emLen-t-1; i++ {
		em[i] = 0xff
	}
	copy(em[emLen-t:], prefix)
	copy(em[emLen-len(digest):], digest)
	return em, nil
}

// encodePSS is EMSA-PSS-ENCODE (RFC 8017, section 9.1.1) for a 2048-bit
// modulus (emBits 2047), with MGF1 over the same hash.
func encodePSS(rand io.Reader, digest []byte, h crypto.Hash, saltLen int) ([]byte, error) {
	if !h.Available() || (h != crypto.SHA256 && h != crypto.SHA384 && h != crypto.SHA512) || len(digest) != h.Size() {
		return nil, errNoEncoding
	}
	hLen := h.Size()
	switch saltLen {
	case rsa.PSSSaltLengthEqualsHash:
		saltLen = hLen
	case rsa.PSSSaltLengthAuto:
		saltLen = emLen - hLen - 2
	}
	if saltLen < 0 || saltLen > emLen-hLen-2 {
		return nil, errNoEncoding
	}
	salt := make([]byte, saltLen)
	if _, err := io.ReadFull(rand, salt); err != nil {
		return nil, fmt.Errorf("rsasign: reading PSS salt: %w", err)
	}
	hh := h.New()
	var zeros [8]byte
	hh.Write(zeros[:])
	hh.Write(digest)
	hh.Write(salt)
	mHash := hh.Sum(nil)

	em := make([]byte, emLen)
	db := em[:emLen-hLen-1]
	db[len(db)-saltLen-1] = 0x01
	copy(db[len(db)-saltLen:], salt)
	mgf1XOR(db, h.New(), mHash)
	db[0] &= 0x7f // emBits = 2047: the top bit of EM is zero
	copy(em[emLen-hLen-1:], mHash)
	em[emLen-1] = 0xbc
	return em, nil
}

// mgf1XOR xors out with MGF1(seed) (RFC 8017, appendix B.2.1).
func mgf1XOR(out []byte, hh hash.Hash, seed []byte) {
	var counter [4]byte
	var block []byte
	done := 0
	for done < len(out) {
		hh.Reset()
		hh.Write(seed)
		hh.Write(counter[:])
		block = hh.Sum(block[:0])
		for i := 0; i < len(block) && done < len(out); i++ {
			out[done] ^= block[i]
			done++
		}
		for k := 3; k >= 0; k-- {
			counter[k]++
			if counter[k] != 0 {
				break
			}
		}
	}
}
