package rsasign

import (
	"math/big"
	"math/bits"
)

const (
	limbBits  = 52
	limbMask  = 1<<limbBits - 1
	limbs     = 20 // 20*52 = 1040 bits: room for a 1024-bit modulus and R > 4m
	lanes     = 24 // three 8-lane vectors
	words     = 16 // 1024 bits in 64-bit words
	window    = 5
	tableSize = 1 << window
	expBits   = 1024
)

// nat52 is a number below 2^1040 as 52-bit limbs, least significant first,
// padded with zero lanes.
type nat52 [lanes]uint64

// pair holds one number for each half of the CRT computation: [0] mod p,
// [1] mod q. The assembly relies on this layout (192 bytes per half).
type pair [2]nat52

// moduli is what ammX2 reads besides its operands: both primes and their
// Montgomery constants. The assembly relies on this layout (k0 at 384).
type moduli struct {
	m  pair
	k0 [2]uint64 // each prime's k0 << 12 (see STEP in amm_amd64.s)
}

// prime is what one CRT half needs, precomputed once per key.
type prime struct {
	m     nat52  // the prime
	k0    uint64 // -m^-1 mod 2^52
	rr    nat52  // R^2 mod m, R = 2^1040
	c     nat52  // 2^1024 * R mod m: folds the top half of a 2048-bit input
	one   nat52  // R mod m, 1 in Montgomery form
	words [words]uint64
	exp   [words + 1]uint64 // the CRT exponent, one spare word for window reads
}

var bigR = new(big.Int).Lsh(big.NewInt(1), limbs*limbBits)

// newPrime precomputes the constants for modulus m and exponent d. It runs
// once per key with math/big, whose timing depends on the values; the
// per-signature path below does not.
func newPrime(m, d *big.Int) prime {
	var pr prime
	pr.m = toNat52(m)
	two52 := new(big.Int).Lsh(big.NewInt(1), limbBits)
	inv := new(big.Int).ModInverse(new(big.Int).Mod(m, two52), two52)
	pr.k0 = new(big.Int).Sub(two52, inv).Uint64() & limbMask
	rr := new(big.Int).Mul(bigR, bigR)
	pr.rr = toNat52(rr.Mod(rr, m))
	c := new(big.Int).Lsh(bigR, expBits)
	pr.c = toNat52(c.Mod(c, m))
	pr.one = toNat52(new(big.Int).Mod(bigR, m))
	fillWords(pr.words[:], m)
	fillWords(pr.exp[:words], d)
	return pr
}

func toNat52(x *big.Int) nat52 {
	var w [2 * words]uint64
	fillWords(w[:], x)
	var n nat52
	wordsToNat52(&n, w[:words+1])
	return n
}

func fillWords(dst []uint64, x *big.Int) {
	for i, b := range x.Bits() {
		dst[i] = uint64(b)
	}
}

// wordsToNat52 converts 64-bit words (least significant first) to 52-bit
// limbs; bits beyond 1040 are dropped.
func wordsToNat52(n *nat52, w []uint64) {
	for i := 0; i < limbs; i++ {
		bit := i * limbBits
		j, s := bit/64, uint(bit%64)
		v := w[j] >> s
		if s > 64-limbBits && j+1 < len(w) {
			v |= w[j+1] << (64 - s)
		}
		n[i] = v & limbMask
	}
}

// nat52ToWords converts limbs of a number below 2^1024 to 16 words.
func nat52ToWords(w *[words]uint64, n *nat52) {
	*w = [words]uint64{}
	for i := 0; i < limbs; i++ {
		bit := i * limbBits
		j, s := bit/64, uint(bit%64)
		if j < words {
			w[j] |= n[i] << s
		}
		if s > 64-limbBits && j+1 < words {
			w[j+1] |= n[i] >> (64 - s)
		}
	}
}

// expWindow returns the window-bit digit of the exponents at bit pos.
func expWindow(e *[words + 1]uint64, pos int) uint64 {
	j, s := pos/64, uint(pos%64)
	v := e[j] >> s
	if s != 0 {
		v |= e[j+1] << (64 - s)
	}
	return v & (tableSize - 1)
}

// toMont returns x*R mod p and x*R mod q (each below twice its modulus)
// for a 2048-bit x given as 32 little-endian words.
func toMont(x *[2 * words]uint64, pr *[2]prime, md *moduli) pair {
	var lo, hi, t, b pair
	// x = hi*2^1024 + lo, and ammX2(hi, c) = hi*2^1024 mod m (< 2m).
	wordsToNat52(&lo[0], x[:words])
	wordsToNat52(&hi[0], x[words:])
	lo[1], hi[1] = lo[0], hi[0]
	b[0], b[1] = pr[0].c, pr[1].c
	ammX2(&t, &hi, &b, md)
	// t + lo < 2m + 2^1024 < 2^1026: fits, and below 256m as ammX2 needs.
	for h := 0; h < 2; h++ {
		var carry uint64
		for i := 0; i < limbs; i++ {
			v := t[h][i] + lo[h][i] + carry
			t[h][i] = v & limbMask
			carry = v >> limbBits
		}
	}
	b[0], b[1] = pr[0].rr, pr[1].rr
	ammX2(&t, &t, &b, md)
	return t
}

// fromMont returns x/R reduced below each modulus, as words.
func fromMont(out *[2][words]uint64, x *pair, pr *[2]prime, md *moduli) {
	// x*1/R mod m is at most m.
	var unit, r pair
	unit[0][0], unit[1][0] = 1, 1
	ammX2(&r, x, &unit, md)
	for h := 0; h < 2; h++ {
		nat52ToWords(&out[h], &r[h])
		condSub(&out[h], &pr[h].words)
	}
}

// expCRT computes xR^dp mod p and xR^dq mod q (xR from toMont) with a
// fixed 5-bit window and constant-time table reads: the sequence of
// operations is the same for every exponent.
func expCRT(out *[2][words]uint64, xR *pair, pr *[2]prime, md *moduli) {
	var b, acc pair
	var table [tableSize]pair
	table[0][0], table[0][1] = pr[0].one, pr[1].one
	table[1] = *xR
	for i := 2; i < tableSize; i++ {
		ammX2(&table[i], &table[i-1], &table[1], md)
	}

	top := expBits - expBits%window
	if expBits%window == 0 {
		top -= window
	}
	selectX2(&acc, &table, expWindow(&pr[0].exp, top), expWindow(&pr[1].exp, top))
	for pos := top - window; pos >= 0; pos -= window {
		for i := 0; i < window; i++ {
			ammX2(&acc, &acc, &acc, md)
		}
		selectX2(&b, &table, expWindow(&pr[0].exp, pos), expWindow(&pr[1].exp, pos))
		ammX2(&acc, &acc, &b, md)
	}
	fromMont(out, &acc, pr, md)
	clear(table[:])
	clear(acc[:])
	clear(b[:])
}

// checkPublic reports whether sig^65537 equals x modulo both primes, that
// is modulo n: the signature is right. xR is x from toMont.
func checkPublic(sig *[2 * words]uint64, xR *pair, pr *[2]prime, md *moduli) bool {
	sR := toMont(sig, pr, md)
	acc := sR
	for i := 0; i < 16; i++ {
		ammX2(&acc, &acc, &acc, md)
	}
	ammX2(&acc, &acc, &sR, md)
	var got, want [2][words]uint64
	fromMont(&got, &acc, pr, md)
	fromMont(&want, xR, pr, md)
	// Compare without an early exit: x mod p is secret.
	var diff uint64
	for h := range got {
		for i := range got[h] {
			diff |= got[h][i] ^ want[h][i]
		}
	}
	return diff == 0
}

// condSub subtracts m from x when x >= m, in constant time. x < 2m.
func condSub(x, m *[words]uint64) {
	var d [words]uint64
	var borrow uint64
	for i := range x {
		d[i], borrow = bits.Sub64(x[i], m[i], borrow)
	}
	// borrow == 1: x < m, keep x.
	keep := -borrow
	for i := range x {
		x[i] = x[i]&keep | d[i]&^keep
	}
}
