package workload

import "hash/maphash"

// nameTable hashes credential names. Names stay private: only their
// 64-bit hashes are counted, and the names themselves are kept only when
// the operator asks for them (--keep-names).
type nameTable struct {
	keep  bool
	names map[uint64]string
}

func newNameTable(keep bool) *nameTable {
	t := &nameTable{keep: keep}
	if keep {
		t.names = map[uint64]string{}
	}
	return t
}

func (t *nameTable) hash(name []byte) uint64 {
	h := maphash.Bytes(hashSeed, name)
	if t.keep && len(t.names) < maxDistinctNames {
		if _, ok := t.names[h]; !ok {
			t.names[h] = string(name)
		}
	}
	return h
}
