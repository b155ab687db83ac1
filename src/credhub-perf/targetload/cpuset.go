package targetload

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// CPUSet is a set of CPU numbers, sorted, each once.
type CPUSet []int

// maxCPU bounds a CPU number read from outside: Linux's NR_CPUS is at
// most 8192; a list past it is broken, and must not make a huge set.
const maxCPU = 1 << 13

// ParseCPUList reads the kernel's list format: "0-3,8,10-11".
func ParseCPUList(s string) (CPUSet, error) {
	s = strings.TrimSpace(s)
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, rng := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a >= maxCPU {
			return nil, fmt.Errorf("%q is not a CPU list", clip(s, 40))
		}
		b := a
		if rng {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b >= maxCPU {
				return nil, fmt.Errorf("%q is not a CPU list", clip(s, 40))
			}
		}
		for c := a; c <= b; c++ {
			seen[c] = true
		}
	}
	return setOf(seen), nil
}

func setOf(m map[int]bool) CPUSet {
	out := CPUSet{}
	for c := range m {
		out = append(out, c)
	}
	sort.Ints(out)
	return out
}

// String is the kernel's list format, ranges joined: "0-3,8".
func (s CPUSet) String() string {
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		} else {
			parts = append(parts, strconv.Itoa(s[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Intersect is the CPUs in both.
func (s CPUSet) Intersect(o CPUSet) CPUSet {
	in := map[int]bool{}
	for _, c := range o {
		in[c] = true
	}
	m := map[int]bool{}
	for _, c := range s {
		if in[c] {
			m[c] = true
		}
	}
	return setOf(m)
}

// Union is the CPUs in either.
func (s CPUSet) Union(o CPUSet) CPUSet {
	m := map[int]bool{}
	for _, c := range append(append(CPUSet{}, s...), o...) {
		m[c] = true
	}
	return setOf(m)
}
