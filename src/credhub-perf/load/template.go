package load

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

type segKind uint8

const (
	segLit segKind = iota
	segSeq
	segUUID
	segRand
	segPick
	segCycle
	segZipf
)

type segment struct {
	kind  segKind
	lit   []byte
	n     uint64    // rand N, cycle N, zipf N S
	lines [][]byte  // pick FILE
	cdf   []float64 // zipf N S: cumulative weights of 0..N-1
}

// text is a compiled template string. {{seq}} is the request's sequence
// number (the same everywhere in one request, 1-based, increasing across
// Runs of one Engine); {{cycle N}} is (seq-1) mod N, so requests name N
// things in turn (the set scenario's bounded pool of names: requests in
// flight at once never share a name while fewer than N are in flight, and
// the run leaves at most N names to clean up); {{uuid}}, {{rand N}},
// {{zipf N S}} and {{pick FILE}} draw a fresh value at each occurrence.
// {{zipf N S}} draws 0..N-1 with P(k) proportional to 1/(k+1)^S, the
// skew of a production log's name popularity (0 is the most popular);
// math/rand's Zipf needs S > 1, which real name counts rarely show.
type text struct {
	segs []segment
}

func (t *text) static() bool {
	for _, s := range t.segs {
		if s.kind != segLit {
			return false
		}
	}
	return true
}

func (t *text) uses(k segKind) bool {
	for _, s := range t.segs {
		if s.kind == k {
			return true
		}
	}
	return false
}

// pickCache shares a file's lines between all places that name it, so a
// file is read once per Engine.
type pickCache map[string][][]byte

func compileText(src, where string, files pickCache) (*text, error) {
	t := &text{}
	rest := src
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			break
		}
		if i > 0 {
			t.segs = append(t.segs, segment{kind: segLit, lit: []byte(rest[:i])})
		}
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return nil, fmt.Errorf("template in %s: %q has {{ without a closing }}", where, src)
		}
		expr := strings.TrimSpace(rest[i+2 : i+j])
		rest = rest[i+j+2:]
		seg, err := compileExpr(expr, where, files)
		if err != nil {
			return nil, err
		}
		t.segs = append(t.segs, seg)
	}
	if rest != "" {
		t.segs = append(t.segs, segment{kind: segLit, lit: []byte(rest)})
	}
	return t, nil
}

func compileExpr(expr, where string, files pickCache) (segment, error) {
	name, arg, _ := strings.Cut(expr, " ")
	arg = strings.Trim(strings.TrimSpace(arg), `"'`)
	switch name {
	case "seq", "uuid":
		if arg != "" {
			return segment{}, fmt.Errorf("template in %s: {{%s}} takes no argument", where, name)
		}
		if name == "seq" {
			return segment{kind: segSeq}, nil
		}
		return segment{kind: segUUID}, nil
	case "rand", "cycle":
		n, err := strconv.ParseUint(arg, 10, 64)
		if err != nil || n == 0 {
			return segment{}, fmt.Errorf("template in %s: {{%s N}} needs a positive integer N, got %q", where, name, arg)
		}
		if name == "cycle" {
			return segment{kind: segCycle, n: n}, nil
		}
		return segment{kind: segRand, n: n}, nil
	case "zipf":
		return compileZipf(arg, where)
	case "pick":
		if arg == "" {
			return segment{}, fmt.Errorf("template in %s: {{pick FILE}} needs a file name", where)
		}
		lines, ok := files[arg]
		if !ok {
			data, err := os.ReadFile(arg)
			if err != nil {
				return segment{}, fmt.Errorf("template in %s: {{pick %s}}: %w", where, arg, err)
			}
			for _, l := range bytes.Split(data, []byte("\n")) {
				l = bytes.TrimRight(l, "\r")
				if len(bytes.TrimSpace(l)) > 0 {
					lines = append(lines, l)
				}
			}
			if len(lines) == 0 {
				return segment{}, fmt.Errorf("template in %s: {{pick %s}}: the file has no non-empty lines", where, arg)
			}
			files[arg] = lines
		}
		return segment{kind: segPick, lines: lines}, nil
	}
	return segment{}, fmt.Errorf("template in %s: unknown {{%s}}: use {{seq}}, {{cycle N}}, {{uuid}}, {{rand N}}, {{zipf N S}} or {{pick FILE}}", where, expr)
}

// render appends the template's value for request seq to dst.
func (t *text) render(dst []byte, seq uint64, rng *rand.Rand) []byte {
	for i := range t.segs {
		s := &t.segs[i]
		switch s.kind {
		case segLit:
			dst = append(dst, s.lit...)
		case segSeq:
			dst = strconv.AppendUint(dst, seq, 10)
		case segUUID:
			dst = appendUUID(dst, rng)
		case segRand:
			dst = strconv.AppendUint(dst, rng.Uint64N(s.n), 10)
		case segCycle:
			dst = strconv.AppendUint(dst, (seq-1)%s.n, 10)
		case segPick:
			dst = append(dst, s.lines[rng.IntN(len(s.lines))]...)
		case segZipf:
			u := rng.Float64() * s.cdf[len(s.cdf)-1]
			k := sort.SearchFloat64s(s.cdf, u)
			if k < len(s.cdf) && s.cdf[k] == u {
				k++ // SearchFloat64s finds the first >= u; the draw is in [cdf[k-1], cdf[k])
			}
			dst = strconv.AppendUint(dst, uint64(min(k, len(s.cdf)-1)), 10)
		}
	}
	return dst
}

// MaxZipfN and MaxZipfS bound {{zipf N S}}: the table of N cumulative
// weights is built once per (N, S) and kept for the process.
const (
	MaxZipfN = 1000000
	MaxZipfS = 5.0
)

type zipfKey struct {
	n uint64
	s float64
}

var zipfTables sync.Map // zipfKey -> []float64

func compileZipf(arg, where string) (segment, error) {
	f := strings.Fields(arg)
	if len(f) != 2 {
		return segment{}, fmt.Errorf("template in %s: {{zipf N S}} needs a count N and an exponent S, got %q", where, arg)
	}
	n, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil || n == 0 || n > MaxZipfN {
		return segment{}, fmt.Errorf("template in %s: {{zipf N S}} needs N from 1 to %d, got %q", where, MaxZipfN, f[0])
	}
	s, err := strconv.ParseFloat(f[1], 64)
	if err != nil || !(s >= 0 && s <= MaxZipfS) {
		return segment{}, fmt.Errorf("template in %s: {{zipf N S}} needs S from 0 to %g, got %q", where, MaxZipfS, f[1])
	}
	k := zipfKey{n, s}
	if t, ok := zipfTables.Load(k); ok {
		return segment{kind: segZipf, n: n, cdf: t.([]float64)}, nil
	}
	cdf := make([]float64, n)
	sum := 0.0
	for i := range cdf {
		sum += math.Pow(float64(i+1), -s)
		cdf[i] = sum
	}
	t, _ := zipfTables.LoadOrStore(k, cdf)
	return segment{kind: segZipf, n: n, cdf: t.([]float64)}, nil
}

const hexDigits = "0123456789abcdef"

// appendUUID writes a random (version 4) UUID. The generator is seeded from
// crypto/rand per worker, which is unique enough for test data names.
func appendUUID(dst []byte, rng *rand.Rand) []byte {
	var b [16]byte
	a, c := rng.Uint64(), rng.Uint64()
	for i := 0; i < 8; i++ {
		b[i] = byte(a >> (8 * i))
		b[8+i] = byte(c >> (8 * i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	for i, x := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[x>>4], hexDigits[x&0xf])
	}
	return dst
}
