package workload

import (
	"math"
	"sort"
)

// maxDistinctNames bounds the exact name counts: past it new names are
// counted only in aggregate (names.distinct then is a lower bound).
const maxDistinctNames = 2_000_000

// aggregator takes requests in time order and keeps the workload's
// figures in memory bounded by the distinct names and the distinct
// per-second counts, not by the requests.
type aggregator struct {
	requests, lines int64
	types           [numTypes]int64
	typeLines       [numTypes]int64
	auth            [numAuth]int64
	status          map[string]int64
	first, last     int64 // ms

	sec       int64 // the second being counted
	secCounts [numTypes]int64
	secTotal  int64
	started   bool
	hist      map[int64]int64 // per-second count -> seconds with it (zeros included)
	sum, sumq float64
	peak      int64
	peakAt    int64
	window    []secCount // the last 60 s of non-empty seconds
	winSum    int64
	minute    int64
	minuteAt  int64

	names    map[uint64]int64
	nameRefs int64
	overCap  int64
	arrivals func(sec int64, total int64, counts *[numTypes]int64) error
}

type secCount struct{ sec, n int64 }

func newAggregator() *aggregator {
	return &aggregator{status: map[string]int64{}, hist: map[int64]int64{}, names: map[uint64]int64{}}
}

func (a *aggregator) add(r *Request) error {
	s := r.At / 1000
	if !a.started {
		a.started, a.sec, a.first = true, s, r.At
	}
	if s != a.sec {
		if err := a.closeSecond(); err != nil {
			return err
		}
		if gap := s - a.sec - 1; gap > 0 {
			a.hist[0] += gap
		}
		a.sec = s
	}
	a.last = r.At
	a.requests++
	a.lines += int64(r.Lines)
	a.types[r.Type]++
	a.typeLines[r.Type] += int64(r.Lines)
	a.auth[r.Auth]++
	a.status[statusClass(r.Status)]++
	a.secCounts[r.Type]++
	a.secTotal++
	for _, n := range r.Names {
		a.nameRefs++
		if c, ok := a.names[n]; ok || len(a.names) < maxDistinctNames {
			a.names[n] = c + 1
		} else {
			a.overCap++
		}
	}
	return nil
}

func statusClass(code int) string {
	switch code / 100 {
	case 2:
		return "2xx"
	case 3:
		return "3xx"
	case 4:
		return "4xx"
	case 5:
		return "5xx"
	}
	return "1xx"
}

// closeSecond files the finished second: its histogram bin, the peak,
// the sliding minute, and its row of arrivals.
func (a *aggregator) closeSecond() error {
	n := a.secTotal
	a.hist[n]++
	a.sum += float64(n)
	a.sumq += float64(n) * float64(n)
	if n > a.peak {
		a.peak, a.peakAt = n, a.sec
	}
	a.window = append(a.window, secCount{a.sec, n})
	a.winSum += n
	drop := 0
	for drop < len(a.window) && a.window[drop].sec <= a.sec-60 {
		a.winSum -= a.window[drop].n
		drop++
	}
	a.window = append(a.window[:0], a.window[drop:]...)
	if a.winSum > a.minute {
		// The window's first second with a request: a log shorter than a
		// minute has no second before its first.
		a.minute, a.minuteAt = a.winSum, a.window[0].sec
	}
	var err error
	if a.arrivals != nil {
		err = a.arrivals(a.sec, n, &a.secCounts)
	}
	a.secCounts = [numTypes]int64{}
	a.secTotal = 0
	return err
}

// finish closes the last second.
func (a *aggregator) finish() error {
	if !a.started {
		return nil
	}
	return a.closeSecond()
}

// seconds is the number of whole seconds from the first request's to the
// last request's, both included.
func (a *aggregator) seconds() int64 {
	if !a.started {
		return 0
	}
	return a.last/1000 - a.first/1000 + 1
}

// p99 is the 99th percentile of per-second counts (nearest rank).
func (a *aggregator) p99() float64 {
	total := a.seconds()
	if total == 0 {
		return 0
	}
	keys := make([]int64, 0, len(a.hist))
	for k := range a.hist {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	rank := int64(math.Ceil(0.99 * float64(total)))
	var seen int64
	for _, k := range keys {
		seen += a.hist[k]
		if seen >= rank {
			return float64(k)
		}
	}
	return float64(keys[len(keys)-1])
}

// burstiness is the index of dispersion (variance / mean) of the
// per-second counts, empty seconds included: 1 for Poisson arrivals.
func (a *aggregator) burstiness() float64 {
	n := float64(a.seconds())
	if n == 0 || a.sum == 0 {
		return 0
	}
	mean := a.sum / n
	return (a.sumq/n - mean*mean) / mean
}

// nameCounts is the per-name request counts, most requested first.
func (a *aggregator) nameCounts() []int64 {
	c := make([]int64, 0, len(a.names))
	for _, n := range a.names {
		c = append(c, n)
	}
	sort.Slice(c, func(i, j int) bool { return c[i] > c[j] })
	return c
}

// zipfS fits count = C · rank^-s by least squares on log-log over the
// ranks that carry the requests (at most the top 10,000), 0 for one name
// or none.
func zipfS(counts []int64) float64 {
	n := len(counts)
	if n > 10000 {
		n = 10000
	}
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := 0; i < n; i++ {
		x, y := math.Log(float64(i+1)), math.Log(float64(counts[i]))
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	fn := float64(n)
	den := fn*sxx - sx*sx
	if den == 0 {
		return 0
	}
	s := -(fn*sxy - sx*sy) / den
	if s < 0 || math.IsNaN(s) {
		return 0
	}
	return math.Round(s*1000) / 1000
}
