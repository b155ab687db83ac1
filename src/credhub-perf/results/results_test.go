package results

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

func TestCSVRow(t *testing.T) {
	var buf bytes.Buffer
	w := NewCSVWriter(&buf)
	start := time.Date(2026, 11, 22, 13, 4, 5, 123456789, time.FixedZone("X", 3600))
	w.Record(&load.Result{
		Start: start, Offset: 1500 * time.Millisecond, Latency: 12345678 * time.Nanosecond,
		DNSDial: 1000, DNS: 499, ReqWrite: 1500, RespDelay: 10 * time.Millisecond, RespRead: 2 * time.Millisecond,
		Status: 200, Concurrency: 8, Rate: 250.5, SchedLag: 3 * time.Microsecond, Request: "get",
	})
	w.Record(&load.Result{Start: start, Latency: 2 * time.Second, Err: "dial: connection \"refused\"\nagain", Concurrency: 8, Request: "set"})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := CSVHeader + "\n" +
		"2026-11-22T12:04:05.123456789Z,0.012346,0.000001,0.000000,0.000002,0.010000,0.002000,200,1.500000,8,250.5,0.000003,,get\n" +
		"2026-11-22T12:04:05.123456789Z,2.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0,0.000000,8,0,0.000000,\"dial: connection \"\"refused\"\" again\",set\n"
	if buf.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", buf.String(), want)
	}
	recs, err := csv.NewReader(strings.NewReader(buf.String())).ReadAll()
	if err != nil || len(recs) != 3 || len(recs[2]) != 14 || recs[2][12] != `dial: connection "refused" again` || recs[2][13] != "set" {
		t.Fatalf("not valid CSV: %v %q", err, recs)
	}
	if w.Rows() != 2 {
		t.Fatalf("Rows() = %d", w.Rows())
	}
	var empty bytes.Buffer
	if err := NewCSVWriter(&empty).Flush(); err != nil || empty.String() != CSVHeader+"\n" {
		t.Fatalf("empty CSV: %q %v", empty.String(), err)
	}
}

func TestHistogramRelativeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var h Histogram
	vals := make([]time.Duration, 200000)
	for i := range vals {
		// Log-uniform from 100 ns to 100 s.
		vals[i] = time.Duration(math.Exp(math.Log(100) + rng.Float64()*(math.Log(1e11)-math.Log(100))))
		h.Record(vals[i])
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, q := range []float64{0, 0.001, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1} {
		rank := int(math.Ceil(q * float64(len(vals))))
		if rank < 1 {
			rank = 1
		}
		exact := vals[rank-1]
		got := h.Quantile(q)
		if rel := math.Abs(float64(got-exact)) / float64(exact); rel > 0.001 {
			t.Errorf("q=%v: got %v, exact %v, relative error %.5f", q, got, exact, rel)
		}
	}
	for _, v := range []int64{0, 1, 2047, 2048, 4095, 4096, 1 << 30, maxTrackable} {
		lo, w := bucketBounds(bucketOf(v))
		if v < lo || v >= lo+w || float64(w) > math.Max(1, float64(v)/1000) {
			t.Errorf("value %d in bucket [%d,+%d)", v, lo, w)
		}
	}
	if bucketOf(math.MaxInt64) != histBuckets-1 || bucketOf(-5) != 0 {
		t.Error("out-of-range values not clamped")
	}
}

func TestStats(t *testing.T) {
	s := NewStats()
	base := time.Now()
	for i := 0; i < 100; i++ {
		r := load.Result{
			Start: base.Add(time.Duration(i) * 10 * time.Millisecond), Offset: time.Second + time.Duration(i)*10*time.Millisecond,
			Latency: time.Duration(i+1) * time.Millisecond, Status: 200, BytesIn: 10,
			ReqWrite: time.Microsecond, RespDelay: time.Duration(i+1) * time.Millisecond / 2,
		}
		switch {
		case i%10 == 0:
			r.Status, r.Err = 0, "dial: connection refused"
		case i%10 == 1:
			r.Status = 503
		case i%10 == 2:
			r.Status = 302
		}
		s.Record(&r)
	}
	sn := s.Snapshot()
	// first start 1.0 s, last end 1.99 s + 100 ms
	if sn.Requests != 100 || sn.Errors != 20 || sn.Duration != 1090*time.Millisecond {
		t.Fatalf("requests %d errors %d duration %v", sn.Requests, sn.Errors, sn.Duration)
	}
	if math.Abs(sn.Throughput-100/1.09) > 1e-9 {
		t.Fatalf("throughput %v", sn.Throughput)
	}
	near := func(got, want time.Duration) bool { return math.Abs(float64(got-want)) <= float64(want)/1000 }
	if !near(sn.P50, 50*time.Millisecond) || !near(sn.P99, 99*time.Millisecond) || sn.Max != 100*time.Millisecond ||
		sn.Min != time.Millisecond || sn.Mean != 50500*time.Microsecond || !near(sn.Quantile(0.9), 90*time.Millisecond) {
		t.Fatalf("latencies: %+v", sn)
	}
	if sn.StatusCodes[200] != 70 || sn.StatusCodes[0] != 10 || sn.StatusCodes[503] != 10 || sn.ErrorCounts["dial: connection refused"] != 10 {
		t.Fatalf("status %v errors %v", sn.StatusCodes, sn.ErrorCounts)
	}
	if sn.BytesIn != 1000 || sn.ReqWrite.Mean() != time.Microsecond || sn.RespDelay.Max != 50*time.Millisecond || sn.DNSDial.Count != 0 {
		t.Fatalf("phases: %+v", sn)
	}
	// Later records do not change a snapshot.
	s.Record(&load.Result{Latency: time.Hour, Status: 200})
	if sn.Quantile(1) > time.Second {
		t.Fatal("snapshot shares the live histogram")
	}
	m := NewStats()
	m.Merge(s)
	m.Merge(s)
	if ms := m.Snapshot(); ms.Requests != 202 || ms.Errors != 40 || ms.Max != time.Hour {
		t.Fatalf("merge: %+v", ms)
	}
}

// Per-type figures: known answers, and none for a single type.
func TestTypeStatsFigures(t *testing.T) {
	ts := NewTypeStats()
	slo := SLO{Percentile: 50, LatencyS: 0.015, MaxErrorRate: 0.1}
	for i := 0; i < 30; i++ {
		ts.Record(&load.Result{Request: "get", Latency: 10 * time.Millisecond, Status: 200, Offset: time.Duration(i) * time.Millisecond})
	}
	if f := ts.Figures(1, slo); f != nil {
		t.Fatalf("one type gave %+v", f)
	}
	other := NewTypeStats()
	for i := 0; i < 10; i++ {
		st := 200
		if i == 0 {
			st = 500
		}
		other.Record(&load.Result{Request: "set", Latency: 20 * time.Millisecond, Status: st})
	}
	other.Record(&load.Result{Latency: time.Second, Status: 200}) // no type: left out
	ts.Merge(other)
	f := ts.Figures(2, slo)
	g, s := f["get"], f["set"]
	if len(f) != 2 || g.Requests != 30 || g.Throughput != 15 || g.Errors != 0 || !g.MeetsSLO || math.Abs(g.P50S-0.01) > 0.0001 {
		t.Fatalf("get %+v", g)
	}
	if s.Requests != 10 || s.Errors != 1 || s.ErrorRate != 0.1 || s.Throughput != 5 || s.MeetsSLO || math.Abs(s.SLOPercentileS-0.02) > 0.0002 {
		t.Fatalf("set %+v", s)
	}
}
