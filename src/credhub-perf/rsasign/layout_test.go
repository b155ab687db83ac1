package rsasign

import (
	"testing"
	"unsafe"
)

// The assembly addresses these by byte offset.
func TestLayoutMatchesAssembly(t *testing.T) {
	var md moduli
	var p pair
	var table [tableSize]pair
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"pair half", unsafe.Sizeof(p[0]), 192},
		{"moduli.k0", unsafe.Offsetof(md.k0), 384},
		{"table entry", unsafe.Sizeof(table[0]), 384},
	} {
		if f.got != f.want {
			t.Fatalf("%s: %d bytes, the assembly assumes %d", f.name, f.got, f.want)
		}
	}
}
