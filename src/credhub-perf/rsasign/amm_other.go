//go:build !amd64

package rsasign

func hasIFMA() bool { return false }

func ammX2(r, a, b *pair, md *moduli) { panic("rsasign: no IFMA on this architecture") }

func selectX2(dst *pair, table *[tableSize]pair, wA, wB uint64) {
	panic("rsasign: no IFMA on this architecture")
}

func normX2(x *pair) { panic("rsasign: no IFMA on this architecture") }
