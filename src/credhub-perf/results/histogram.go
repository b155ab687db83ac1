package results

import (
	"math"
	"math/bits"
	"time"
)

// Histogram is a log-linear histogram of durations with a fixed memory
// footprint: exact below 2048 ns, then 1024 linear sub-buckets per power of
// two, so a bucket spans at most 1/1024 of its values and the midpoint that
// Quantile reports is within 0.05 % of any value in it. Values above
// maxTrackable (about 2.4 hours) are clamped.
type Histogram struct {
	counts [histBuckets]uint64
	total  uint64
}

const (
	subBits      = 10
	subCount     = 1 << subBits // linear buckets per power of two
	exactBelow   = 2 * subCount // values below are counted exactly
	maxShift     = 33
	histBuckets  = exactBelow + maxShift*subCount
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
	h.counts[bucketOf(int64(d))]++
	h.total++
}

// Count is the number of values recorded.
func (h *Histogram) Count() uint64 { return h.total }

// Merge adds o's values to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
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
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, w := bucketBounds(i)
			return time.Duration(lo + (w-1)/2)
		}
	}
	return 0
}

// CountAtMost returns how many values are <= d (to bucket resolution).
func (h *Histogram) CountAtMost(d time.Duration) uint64 {
	b := bucketOf(int64(d))
	var n uint64
	for i := 0; i <= b; i++ {
		n += h.counts[i]
	}
	return n
}
