package rsasign

// ammX2 sets r to the almost Montgomery products a*b/R mod m of both
// problems (R = 2^1040). r may alias a or b.
//
//go:noescape
func ammX2(r, a, b *pair, md *moduli)

// selectX2 copies table[wA] of the first problem and table[wB] of the
// second into dst in constant time.
//
//go:noescape
func selectX2(dst *pair, table *[tableSize]pair, wA, wB uint64)

func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
func xgetbv0() (eax uint32)

// hasIFMA reports whether the CPU has the AVX-512 instructions the
// assembly uses (F, VL, IFMA; BMI2 for MULX) and the OS saves ZMM state.
func hasIFMA() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const osxsave = 1 << 27
	if ecx1&osxsave == 0 {
		return false
	}
	// XCR0: SSE, AVX, opmask, ZMM_Hi256 and Hi16_ZMM state enabled by the OS.
	const zmmState = 1<<1 | 1<<2 | 1<<5 | 1<<6 | 1<<7
	if xgetbv0()&zmmState != zmmState {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const (
		bmi2       = 1 << 8
		avx512f    = 1 << 16
		avx512ifma = 1 << 21
		avx512vl   = 1 << 31
	)
	want := uint32(bmi2 | avx512f | avx512ifma | avx512vl)
	return ebx7&want == want
}

// normX2 carries every limb of both halves of x below 2^52 (the value is
// unchanged); lanes may hold up to 64 bits but the value must fit 20 limbs.
//
//go:noescape
func normX2(x *pair)
