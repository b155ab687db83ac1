#include "textflag.h"

// Almost Montgomery multiplication (Gueron and Krasnov) in radix 2^52 with
// AVX-512 IFMA, for two independent 1024-bit moduli at once: the two
// halves of an RSA-2048 CRT exponentiation. Each number is 20 limbs of 52
// bits padded to 24 lanes (three ZMM registers), lanes 20..23 zero.
//
// Per multiplier limb b[i] the accumulator takes a*b[i] + m*y and drops
// its lowest limb. Products of a and of m go to separate accumulators (P
// and Q): P does not depend on y, so it runs ahead and the scalar side
// reads its lane 0 as soon as it is needed. The two lowest positions of Q
// are kept exactly in general registers, and Q's lane 2 is read one step
// before it is needed, so the latency chain from one reduction factor y to
// the next is short and scalar. Limbs stay unnormalised inside the loop (each lane gains
// at most two 52-bit values per step, far below 2^64) and are carried once
// at the end.
//
// Inputs: limbs below 2^52; a and b below 256 times the modulus; result
// below twice the modulus with limbs below 2^52. Constant time: no branch
// or address depends on the values.

DATA mask52<>+0(SB)/8, $0xfffffffffffff
GLOBL mask52<>(SB), RODATA|NOPTR, $8

#define MASK mask52<>(SB)

// STEP does multiplier limb i for one problem.
//   off, koff: byte offsets of the problem's numbers (0 or 192) and k0
//   q0, q1: the exact m-side values of positions 0 and 1; q2 is free and
//     becomes position 1 (the caller rotates the three registers: next
//     q0, q1, q2 = q1, q2, q0)
//   P0..P2: a*b accumulator, all lanes exact; Q0..Q2: m*y accumulator,
//     lanes 0 and 1 stale (q0, q1 hold them); XP0: low lanes of P0
//   A0..A2, M0..M2: a and m; BI, YV: broadcasts of b[i] and y; XT: scratch
// k0 is stored shifted left by 12, so DX = (position 0 * k0) << 12 is
// y << 12 without masking, and MULX by y << 12 leaves the high 52 bits of
// the 104-bit product (the part that carries to the next limb) alone in
// the high word and the low 52 bits at the top of the low word. The carry
// out of position 0 is pos0>>52 + hi52(m0*y) + (pos0 mod 2^52 != 0): the
// low halves sum to 0 or 2^52 by the choice of y.
// Temporaries: AX, DX, DI, R13, R15.
#define STEP(i, off, koff, q0, q1, q2, P0, P1, P2, XP0, Q0, Q1, Q2, A0, A1, A2, M0, M1, M2, BI, YV, XT) \
	VEXTRACTI64X2 $1, Q0, XT \
	VMOVQ XT, q2 \
	VPBROADCASTQ (off+8*i)(BX), BI \
	VPMADD52LUQ A0, BI, P0 \
	VPMADD52LUQ A1, BI, P1 \
	VPMADD52LUQ A2, BI, P2 \
	VMOVQ XP0, AX \
	ADDQ q0, AX \
	MOVQ AX, DX \
	IMULQ koff(R8), DX \
	VPBROADCASTQ DX, YV \
	MOVQ AX, DI \
	SHRQ $52, DI \
	SHLQ $12, AX \
	NEGQ AX \
	ADCQ DI, q1 \
	MULXQ off(R8), DI, R13 \
	ADDQ R13, q1 \
	MULXQ (off+8)(R8), DI, R15 \
	SHRQ $12, DI \
	ADDQ DI, q1 \
	ADDQ R15, q2 \
	MULXQ (off+16)(R8), DI, R15 \
	SHRQ $12, DI \
	ADDQ DI, q2 \
	VPSRLQ $12, YV, YV \
	VPMADD52LUQ M0, YV, Q0 \
	VPMADD52LUQ M1, YV, Q1 \
	VPMADD52LUQ M2, YV, Q2 \
	VALIGNQ $1, P0, P1, P0 \
	VALIGNQ $1, P1, P2, P1 \
	VALIGNQ $1, P2, Z28, P2 \
	VALIGNQ $1, Q0, Q1, Q0 \
	VALIGNQ $1, Q1, Q2, Q1 \
	VALIGNQ $1, Q2, Z28, Q2 \
	VPMADD52HUQ A0, BI, P0 \
	VPMADD52HUQ A1, BI, P1 \
	VPMADD52HUQ A2, BI, P2 \
	VPMADD52HUQ M0, YV, Q0 \
	VPMADD52HUQ M1, YV, Q1 \
	VPMADD52HUQ M2, YV, Q2

// ROUND does limb i for both problems; their chains are independent, so
// the core overlaps them.
#define ROUND(i, a0, a1, a2, b0, b1, b2) \
	STEP(i, 0, 384, a0, a1, a2, Z0, Z1, Z2, X0, Z3, Z4, Z5, Z12, Z13, Z14, Z15, Z16, Z17, Z24, Z25, X29) \
	STEP(i, 192, 392, b0, b1, b2, Z6, Z7, Z8, X6, Z9, Z10, Z11, Z18, Z19, Z20, Z21, Z22, Z23, Z26, Z27, X30)

// NORM carries the 20 limbs in T0..T2 (lane 0 already holds s0) below
// 2^52 without a loop over limbs: one vector carry step leaves every limb
// below 2^52 + 2^12, and the rare carries that remain ripple only through
// limbs equal to 2^52-1, which a carry-lookahead over lane masks resolves
// (carry-in lanes = ((generate << 1) + propagate) ^ propagate). Uses Z31
// (the mask), Z28 (zero), Z24..Z27, K1..K3, AX, DX, DI and R13 as scratch.
#define NORM(T0, T1, T2) \
	VPSRLQ $52, T0, Z24 \
	VPSRLQ $52, T1, Z25 \
	VPSRLQ $52, T2, Z26 \
	VPANDQ Z31, T0, T0 \
	VPANDQ Z31, T1, T1 \
	VPANDQ Z31, T2, T2 \
	VALIGNQ $7, Z25, Z26, Z27 \
	VALIGNQ $7, Z24, Z25, Z25 \
	VALIGNQ $7, Z28, Z24, Z24 \
	VPADDQ Z24, T0, T0 \
	VPADDQ Z25, T1, T1 \
	VPADDQ Z27, T2, T2 \
	VPCMPUQ $6, Z31, T0, K1 \
	VPCMPUQ $6, Z31, T1, K2 \
	VPCMPUQ $6, Z31, T2, K3 \
	KMOVB K1, AX \
	KMOVB K2, DX \
	KMOVB K3, DI \
	SHLQ $8, DX \
	SHLQ $16, DI \
	ORQ DX, AX \
	ORQ DI, AX \
	VPCMPEQQ Z31, T0, K1 \
	VPCMPEQQ Z31, T1, K2 \
	VPCMPEQQ Z31, T2, K3 \
	KMOVB K1, R13 \
	KMOVB K2, DX \
	KMOVB K3, DI \
	SHLQ $8, DX \
	SHLQ $16, DI \
	ORQ DX, R13 \
	ORQ DI, R13 \
	SHLQ $1, AX \
	ADDQ R13, AX \
	XORQ R13, AX \
	KMOVB AX, K1 \
	SHRQ $8, AX \
	KMOVB AX, K2 \
	SHRQ $8, AX \
	KMOVB AX, K3 \
	VPSUBQ Z31, T0, K1, T0 \
	VPSUBQ Z31, T1, K2, T1 \
	VPSUBQ Z31, T2, K3, T2 \
	VPANDQ Z31, T0, T0 \
	VPANDQ Z31, T1, T1 \
	VPANDQ Z31, T2, T2

// func ammX2(r, a, b *pair, md *moduli)
TEXT ·ammX2(SB), NOSPLIT, $0-32
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ md+24(FP), R8

	VMOVDQU64 0(SI), Z12
	VMOVDQU64 64(SI), Z13
	VMOVDQU64 128(SI), Z14
	VMOVDQU64 0(R8), Z15
	VMOVDQU64 64(R8), Z16
	VMOVDQU64 128(R8), Z17
	VMOVDQU64 192(SI), Z18
	VMOVDQU64 256(SI), Z19
	VMOVDQU64 320(SI), Z20
	VMOVDQU64 192(R8), Z21
	VMOVDQU64 256(R8), Z22
	VMOVDQU64 320(R8), Z23

	VPXORQ Z28, Z28, Z28
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	XORQ R9, R9
	XORQ R10, R10
	XORQ R12, R12
	XORQ CX, CX

	ROUND(0, R9, R10, R11, R12, CX, R14)
	ROUND(1, R10, R11, R9, CX, R14, R12)
	ROUND(2, R11, R9, R10, R14, R12, CX)
	ROUND(3, R9, R10, R11, R12, CX, R14)
	ROUND(4, R10, R11, R9, CX, R14, R12)
	ROUND(5, R11, R9, R10, R14, R12, CX)
	ROUND(6, R9, R10, R11, R12, CX, R14)
	ROUND(7, R10, R11, R9, CX, R14, R12)
	ROUND(8, R11, R9, R10, R14, R12, CX)
	ROUND(9, R9, R10, R11, R12, CX, R14)
	ROUND(10, R10, R11, R9, CX, R14, R12)
	ROUND(11, R11, R9, R10, R14, R12, CX)
	ROUND(12, R9, R10, R11, R12, CX, R14)
	ROUND(13, R10, R11, R9, CX, R14, R12)
	ROUND(14, R11, R9, R10, R14, R12, CX)
	ROUND(15, R9, R10, R11, R12, CX, R14)
	ROUND(16, R10, R11, R9, CX, R14, R12)
	ROUND(17, R11, R9, R10, R14, R12, CX)
	ROUND(18, R9, R10, R11, R12, CX, R14)
	ROUND(19, R10, R11, R9, CX, R14, R12)

	// After 20 rotations the m-side positions 0 and 1 are in R11, R9
	// (first problem) and R14, R12 (second); they replace the stale lanes
	// 0 and 1 of Q before P and Q are summed.
	MOVQ $1, AX
	KMOVB AX, K1
	MOVQ $2, AX
	KMOVB AX, K2
	VPBROADCASTQ R11, K1, Z3
	VPBROADCASTQ R9, K2, Z3
	VPBROADCASTQ R14, K1, Z9
	VPBROADCASTQ R12, K2, Z9
	VPADDQ Z3, Z0, Z0
	VPADDQ Z4, Z1, Z1
	VPADDQ Z5, Z2, Z2
	VPADDQ Z9, Z6, Z6
	VPADDQ Z10, Z7, Z7
	VPADDQ Z11, Z8, Z8
	VPBROADCASTQ MASK, Z31
	NORM(Z0, Z1, Z2)
	NORM(Z6, Z7, Z8)

	MOVQ r+0(FP), DI
	VMOVDQU64 Z0, 0(DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VMOVDQU64 Z6, 192(DI)
	VMOVDQU64 Z7, 256(DI)
	VMOVDQU64 Z8, 320(DI)
	VZEROUPPER
	RET

// func selectX2(dst *pair, table *[tableSize]pair, wA, wB uint64)
//
// Copies table[wA] (first half) and table[wB] (second half) into dst,
// reading every entry so that the memory access pattern does not depend
// on the secret window values.
TEXT ·selectX2(SB), NOSPLIT, $0-32
	MOVQ table+8(FP), SI
	MOVQ wA+16(FP), AX
	VPBROADCASTQ AX, Z30
	MOVQ wB+24(FP), AX
	VPBROADCASTQ AX, Z31
	MOVQ $1, AX
	VPBROADCASTQ AX, Z28
	VPXORQ Z29, Z29, Z29
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	MOVQ $32, CX

sel:
	VPCMPEQQ Z29, Z30, K1
	VPCMPEQQ Z29, Z31, K2
	VMOVDQU64 0(SI), K1, Z0
	VMOVDQU64 64(SI), K1, Z1
	VMOVDQU64 128(SI), K1, Z2
	VMOVDQU64 192(SI), K2, Z3
	VMOVDQU64 256(SI), K2, Z4
	VMOVDQU64 320(SI), K2, Z5
	VPADDQ Z28, Z29, Z29
	ADDQ $384, SI
	DECQ CX
	JNZ sel

	MOVQ dst+0(FP), DI
	VMOVDQU64 Z0, 0(DI)
	VMOVDQU64 Z1, 64(DI)
	VMOVDQU64 Z2, 128(DI)
	VMOVDQU64 Z3, 192(DI)
	VMOVDQU64 Z4, 256(DI)
	VMOVDQU64 Z5, 320(DI)
	VZEROUPPER
	RET

// func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv0() (eax uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	RET

// func normX2(x *pair)
//
// Runs NORM on both halves of x in place; ammX2 uses the same macro, and
// tests reach its rare carry-ripple cases through this entry point.
TEXT ·normX2(SB), NOSPLIT, $0-8
	MOVQ x+0(FP), SI
	VMOVDQU64 0(SI), Z0
	VMOVDQU64 64(SI), Z1
	VMOVDQU64 128(SI), Z2
	VMOVDQU64 192(SI), Z6
	VMOVDQU64 256(SI), Z7
	VMOVDQU64 320(SI), Z8
	VPXORQ Z28, Z28, Z28
	VPBROADCASTQ MASK, Z31
	NORM(Z0, Z1, Z2)
	NORM(Z6, Z7, Z8)
	VMOVDQU64 Z0, 0(SI)
	VMOVDQU64 Z1, 64(SI)
	VMOVDQU64 Z2, 128(SI)
	VMOVDQU64 Z6, 192(SI)
	VMOVDQU64 Z7, 256(SI)
	VMOVDQU64 Z8, 320(SI)
	VZEROUPPER
	RET
