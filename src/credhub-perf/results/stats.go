package results

import (
	"math"
	"math/bits"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

// maxErrorKinds bounds the distinct error messages kept; the rest are
// counted under otherErrors so memory stays flat.
const (
	maxErrorKinds = 1000
	otherErrors   = "(other errors)"
)

// Phase is the sum, count, fastest and slowest of one request phase.
type Phase struct {
	Sum, Min, Max time.Duration
	Count         int64
}

func (p *Phase) add(d time.Duration) {
	if p.Count == 0 || d < p.Min {
		p.Min = d
	}
	if d > p.Max {
		p.Max = d
	}
	p.Sum += d
	p.Count++
}

// Mean is Sum/Count, 0 when empty.
func (p Phase) Mean() time.Duration {
	if p.Count == 0 {
		return 0
	}
	return p.Sum / time.Duration(p.Count)
}

// Stats accumulates step statistics from results in fixed memory. Latency
// figures cover every request (successes and failures), like the CSV.
// Not safe for concurrent use; the engine calls sinks one at a time.
type Stats struct {
	hist        Histogram
	requests    int64
	errors      int64
	sum         wideSum // exact: a read-back CSV may hold more latency than an int64 of nanoseconds
	min, max    time.Duration
	firstStart  time.Duration // min offset
	lastEnd     time.Duration // max offset+latency
	bytesIn     int64
	status      [1000]int64
	errs        map[string]int64
	conn        Phase // DNS+dial(+TLS), only for requests that opened a connection
	dns         Phase // only for requests that resolved a name
	reqWrite    Phase
	respDelay   Phase
	respRead    Phase
	schedLagMax time.Duration
	schedLagSum wideSum
}

// NewStats returns empty Stats.
func NewStats() *Stats { return &Stats{errs: map[string]int64{}} }

// Record adds one request.
func (s *Stats) Record(r *load.Result) {
	if s.requests == 0 || r.Offset < s.firstStart {
		s.firstStart = r.Offset
	}
	if end := r.Offset + r.Latency; s.requests == 0 || end > s.lastEnd {
		s.lastEnd = end
	}
	if s.requests == 0 || r.Latency < s.min {
		s.min = r.Latency
	}
	if r.Latency > s.max {
		s.max = r.Latency
	}
	s.requests++
	s.sum.add(r.Latency)
	s.hist.Record(r.Latency)
	s.bytesIn += r.BytesIn
	if r.Status >= 0 && r.Status < len(s.status) {
		s.status[r.Status]++
	}
	if r.Failed() {
		s.errors++
	}
	if r.Err != "" {
		if _, ok := s.errs[r.Err]; ok || len(s.errs) < maxErrorKinds {
			s.errs[r.Err]++
		} else {
			s.errs[otherErrors]++
		}
	}
	if r.DNSDial > 0 {
		s.conn.add(r.DNSDial)
	}
	if r.DNS > 0 {
		s.dns.add(r.DNS)
	}
	s.reqWrite.add(r.ReqWrite)
	s.respDelay.add(r.RespDelay)
	s.respRead.add(r.RespRead)
	s.schedLagSum.add(r.SchedLag)
	if r.SchedLag > s.schedLagMax {
		s.schedLagMax = r.SchedLag
	}
}

// Snapshot is a point-in-time copy of Stats, with the definitions of
// docs/design.md: Duration = last response end - first request start,
// Throughput = Requests / Duration, Errors = status 0 or >= 400 or an error.
type Snapshot struct {
	Requests    int64
	Errors      int64
	Duration    time.Duration
	Throughput  float64 // requests/s, failures included
	Mean        time.Duration
	Min         time.Duration
	P50         time.Duration
	P90         time.Duration
	P95         time.Duration
	P99         time.Duration
	Max         time.Duration
	BytesIn     int64
	StatusCodes map[int]int64    // status 0 = no response
	ErrorCounts map[string]int64 // by error message
	// Phases for hey's details: DNSDial and DNS cover only the requests
	// that opened a connection or resolved a name.
	DNSDial, DNS, ReqWrite, RespDelay, RespRead Phase
	SchedLagMean, SchedLagMax                   time.Duration
	// FirstStart and LastEnd bound the step in time: offsets on the
	// CSV's origin, as its rows hold them.
	FirstStart, LastEnd time.Duration
	hist                *Histogram
}

// Snapshot copies the current figures (the histogram too, so later Records
// do not change it).
func (s *Stats) Snapshot() Snapshot {
	h := s.hist.clone()
	out := Snapshot{
		Requests:    s.requests,
		Errors:      s.errors,
		Duration:    s.lastEnd - s.firstStart,
		Min:         s.min,
		Max:         s.max,
		BytesIn:     s.bytesIn,
		StatusCodes: map[int]int64{},
		ErrorCounts: make(map[string]int64, len(s.errs)),
		DNSDial:     s.conn,
		DNS:         s.dns,
		ReqWrite:    s.reqWrite,
		RespDelay:   s.respDelay,
		RespRead:    s.respRead,
		SchedLagMax: s.schedLagMax,
		FirstStart:  s.firstStart,
		LastEnd:     s.lastEnd,
		hist:        &h,
	}
	if s.requests > 0 {
		out.Mean = s.sum.mean(s.requests)
		out.SchedLagMean = s.schedLagSum.mean(s.requests)
	}
	if out.Duration > 0 {
		out.Throughput = float64(s.requests) / out.Duration.Seconds()
	}
	out.P50, out.P90, out.P95, out.P99 = h.Quantile(0.50), h.Quantile(0.90), h.Quantile(0.95), h.Quantile(0.99)
	for code, n := range s.status {
		if n > 0 {
			out.StatusCodes[code] = n
		}
	}
	for k, v := range s.errs {
		out.ErrorCounts[k] = v
	}
	return out
}

// Quantile returns the latency at quantile q in [0, 1], within 0.1 %.
func (s *Stats) Quantile(q float64) time.Duration { return s.hist.Quantile(q) }

// Quantile returns the latency at quantile q in [0, 1], within 0.1 %.
func (s Snapshot) Quantile(q float64) time.Duration {
	if s.hist == nil {
		return 0
	}
	return s.hist.Quantile(q)
}

// CountAtMost returns how many requests took at most d (to 0.1 %).
func (s Snapshot) CountAtMost(d time.Duration) uint64 {
	if s.hist == nil {
		return 0
	}
	return s.hist.CountAtMost(d)
}

// Merge adds o's requests to s (for per-tester results of one step).
func (s *Stats) Merge(o *Stats) {
	if o.requests == 0 {
		return
	}
	if s.requests == 0 {
		s.firstStart, s.lastEnd, s.min = o.firstStart, o.lastEnd, o.min
	}
	if o.firstStart < s.firstStart {
		s.firstStart = o.firstStart
	}
	if o.lastEnd > s.lastEnd {
		s.lastEnd = o.lastEnd
	}
	if o.min < s.min {
		s.min = o.min
	}
	if o.max > s.max {
		s.max = o.max
	}
	s.requests += o.requests
	s.errors += o.errors
	s.sum.merge(o.sum)
	s.hist.Merge(&o.hist)
	s.bytesIn += o.bytesIn
	for i, n := range o.status {
		s.status[i] += n
	}
	for k, v := range o.errs {
		s.errs[k] += v
	}
	for _, p := range []struct{ dst, src *Phase }{{&s.conn, &o.conn}, {&s.dns, &o.dns}, {&s.reqWrite, &o.reqWrite}, {&s.respDelay, &o.respDelay}, {&s.respRead, &o.respRead}} {
		if p.src.Count == 0 {
			continue
		}
		if p.dst.Count == 0 || p.src.Min < p.dst.Min {
			p.dst.Min = p.src.Min
		}
		if p.src.Max > p.dst.Max {
			p.dst.Max = p.src.Max
		}
		p.dst.Sum += p.src.Sum
		p.dst.Count += p.src.Count
	}
	s.schedLagSum.merge(o.schedLagSum)
	if o.schedLagMax > s.schedLagMax {
		s.schedLagMax = o.schedLagMax
	}
}

// wideSum is a signed 128-bit sum of durations (two's complement in hi:lo).
// An int64 of nanoseconds overflows after 292 years of summed latency: a
// million rows of 3 hours each, which a damaged or hostile CSV can hold,
// and the mean then came out negative. The mean of values that each fit in
// an int64 always fits in one, so mean never overflows.
type wideSum struct{ hi, lo uint64 }

func (w *wideSum) add(d time.Duration) {
	var carry uint64
	w.lo, carry = bits.Add64(w.lo, uint64(d), 0)
	ext := uint64(0)
	if d < 0 {
		ext = math.MaxUint64 // sign extension
	}
	w.hi, _ = bits.Add64(w.hi, ext, carry)
}

func (w *wideSum) merge(o wideSum) {
	var carry uint64
	w.lo, carry = bits.Add64(w.lo, o.lo, 0)
	w.hi, _ = bits.Add64(w.hi, o.hi, carry)
}

// mean is the sum divided by n (n > 0), truncated toward zero like
// time.Duration division.
func (w wideSum) mean(n int64) time.Duration {
	hi, lo := w.hi, w.lo
	neg := hi>>63 == 1
	if neg { // negate: two's complement
		lo, hi = ^lo, ^hi
		var c uint64
		lo, c = bits.Add64(lo, 1, 0)
		hi += c
	}
	q, _ := bits.Div64(hi%uint64(n), lo, uint64(n)) // hi < n holds (see the type), the modulo only guards Div64
	if neg {
		return -time.Duration(q)
	}
	return time.Duration(q)
}
