package results

import (
	"math"
	"math/bits"
	"time"
)

// Histogram is a log-linear histogram of durations with a bounded memory
// footprint: exact below 2048 ns, then 1024 linear sub-buckets per power of
// two, so a bucket spans at most 1/1024 of its values and the midpoint that
// Quantile reports is within 0.05 % of any value in it. Values above
// maxTrackable (2^44 ns, about 4 h 53 min) are clamped. The buckets are
// kept in chunks of one power of two (8 KB), made when a value first falls
// in them: a step's latencies span a few powers of two, so a step costs
// tens of KB instead of 280 KB, and a hostile CSV whose every row starts a
// step (40,000 steps) takes megabytes, not the 13 GB of whole histograms.
// Copy with clone: chunks are shared by a plain copy.
type Histogram struct {
	chunks [histChunks]*[subCount]uint64
	total  uint64
}

const (
	subBits      = 10
	subCount     = 1 << subBits // linear buckets per power of two
	exactBelow   = 2 * subCount // values below are counted exactly
	maxShift     = 33
	histBuckets  = exactBelow + maxShift*subCount
	histChunks   = histBuckets / subCount
	maxTrackable = int64(exactBelow)<<maxShift - 1
)

func bucketOf(v int64) int {
	if v < exactBelow {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	if v > maxTrackable {
		v = maxTrackable
	}
	shift := bits.Len64(uint64(v)) - (subBits + 1)
	top := int(v >> uint(shift)) // in [subCount, 2*subCount)
	return exactBelow + (shift-1)*subCount + (top - subCount)
}

// bucketBounds returns the lowest value of bucket i and its width.
func bucketBounds(i int) (lo, width int64) {
	if i < exactBelow {
		return int64(i), 1
	}
	k := i - exactBelow
	shift := k/subCount + 1
	top := int64(k%subCount + subCount)
	return top << uint(shift), int64(1) << uint(shift)
}

// Record adds one value.
func (h *Histogram) Record(d time.Duration) {
	i := bucketOf(int64(d))
	c := h.chunks[i>>subBits]
	if c == nil {
		c = new([subCount]uint64)
		h.chunks[i>>subBits] = c
	}
	c[i&(subCount-1)]++
	h.total++
}

// clone is a copy that later Records to h do not change.
func (h *Histogram) clone() Histogram {
	out := Histogram{total: h.total}
	for k, c := range h.chunks {
		if c != nil {
			cc := *c
			out.chunks[k] = &cc
		}
	}
	return out
}

// Count is the number of values recorded.
func (h *Histogram) Count() uint64 { return h.total }

// Merge adds o's values to h.
func (h *Histogram) Merge(o *Histogram) {
	for k, oc := range o.chunks {
		if oc == nil {
			continue
		}
		c := h.chunks[k]
		if c == nil {
			c = new([subCount]uint64)
			h.chunks[k] = c
		}
		for i, n := range oc {
			c[i] += n
		}
	}
	h.total += o.total
}

// Quantile returns the value at quantile q in [0, 1] (nearest rank), or 0
// when empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	if q < 0 {
		q = 0
	}
	if q > 1 {
		q = 1
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	if rank < 1 {
		rank = 1
	}
	if rank > h.total {
		rank = h.total
	}
	var seen uint64
	for k, c := range h.chunks {
		if c == nil {
			continue
		}
		for j, n := range c {
			seen += n
			if seen >= rank {
				lo, w := bucketBounds(k<<subBits + j)
				return time.Duration(lo + (w-1)/2)
			}
		}
	}
	return 0
}

// CountAtMost returns how many values are <= d (to bucket resolution).
func (h *Histogram) CountAtMost(d time.Duration) uint64 {
	b := bucketOf(int64(d))
	var n uint64
	for k := 0; k <= b>>subBits; k++ {
		c := h.chunks[k]
		if c == nil {
			continue
		}
		last := subCount - 1
		if k == b>>subBits {
			last = b & (subCount - 1)
		}
		for _, x := range c[:last+1] {
			n += x
		}
	}
	return n
}
