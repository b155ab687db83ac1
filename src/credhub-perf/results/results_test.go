package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
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

// TestHistogramChunks: counts, merges and snapshots across the chunks the
// buckets are kept in (made on first use), against a plain count of the
// values: CountAtMost at every chunk edge, Quantile after a Merge into an
// empty histogram, and a snapshot that later Records leave alone. A step
// whose latencies span a few powers of two makes that many chunks.
func TestHistogramChunks(t *testing.T) {
	var a, b Histogram
	var vals []time.Duration
	for i := 0; i < 3000; i++ {
		v := time.Duration(i*i*7 + i) // 0 to 63 ms: exact buckets and many chunks
		vals = append(vals, v)
		if i%2 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	var m Histogram
	m.Merge(&a)
	m.Merge(&b)
	for k := 0; k < histChunks; k++ {
		for _, edge := range []int{k << subBits, k<<subBits + subCount - 1} {
			lo, w := bucketBounds(edge)
			d := time.Duration(lo + w - 1)
			var want uint64
			for _, v := range vals {
				if v <= d {
					want++
				}
			}
			if got := m.CountAtMost(d); got != want {
				t.Fatalf("CountAtMost(%v) = %d, want %d", d, got, want)
			}
		}
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	if got, want := m.Quantile(0.5), vals[len(vals)/2-1]; math.Abs(float64(got-want)) > math.Max(1, float64(want)/1000) {
		t.Errorf("merged median %v, want %v", got, want)
	}
	snap := m.clone()
	before := snap.Quantile(0.99)
	for i := 0; i < 10000; i++ {
		m.Record(time.Hour)
	}
	if snap.Quantile(0.99) != before || snap.Count() != 3000 {
		t.Errorf("a clone changed with its source: p99 %v (was %v), count %d", snap.Quantile(0.99), before, snap.Count())
	}
	var one Histogram
	one.Record(3 * time.Millisecond) // 3 and 4 ms: one power of two
	one.Record(4 * time.Millisecond)
	n := 0
	for _, c := range one.chunks {
		if c != nil {
			n++
		}
	}
	if n != 1 {
		t.Errorf("two values 3-4 ms made %d chunks, want 1", n)
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

// A type's own bound: set's 20 ms passes under slo.latency_set = 25 ms
// although the run's bound is 15 ms; get stays held to the run's.
func TestTypeStatsFiguresOwnBound(t *testing.T) {
	ts := NewTypeStats()
	for i := 0; i < 10; i++ {
		ts.Record(&load.Result{Request: "get", Latency: 10 * time.Millisecond, Status: 200})
		ts.Record(&load.Result{Request: "set", Latency: 20 * time.Millisecond, Status: 200})
	}
	slo := SLO{Percentile: 50, LatencyS: 0.015, MaxErrorRate: 0.1, LatencyByRequestS: map[string]float64{"set": 0.025}}
	f := ts.Figures(1, slo)
	if g, s := f["get"], f["set"]; !g.MeetsSLO || g.SLOLatencyS != 0.015 || !s.MeetsSLO || s.SLOLatencyS != 0.025 {
		t.Fatalf("get %+v set %+v", g, s)
	}
	slo.LatencyByRequestS = map[string]float64{"set": 0.019}
	if s := ts.Figures(1, slo)["set"]; s.MeetsSLO || s.SLOLatencyS != 0.019 {
		t.Fatalf("set over its own bound: %+v", s)
	}
}

// mixStep is a steady step of a mix: the whole step's p95 and each type's.
func mixStep(tput, p95 float64, types map[string]float64, slo SLO) SummaryStep {
	st := SummaryStep{Tally: Tally{Requests: 1000}, Throughput: tput, Latencies: Latencies{MeanS: p95 / 2, SLOPercentileS: p95}, Steady: bp(true), Concurrency: int(tput)}
	st.MeetsSLO = p95 <= slo.LatencyS
	figs := map[string]RequestStep{}
	for k, p := range types {
		figs[k] = RequestStep{Tally: Tally{Requests: 500}, Latencies: Latencies{SLOPercentileS: p}, SLOLatencyS: slo.LatencyFor(k), MeetsSLO: p <= slo.LatencyFor(k)}
	}
	st.SetByRequest(figs)
	return st
}

// Capacity of a mix: the highest load at which every type meets its own
// bound and the step meets the run's; the crossing is interpolated on the
// worst latency-to-bound ratio (known answers).
func TestMixCapacityEveryTypeMeetsItsSLO(t *testing.T) {
	slo := SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}
	steps := func(slo SLO) []SummaryStep {
		return []SummaryStep{
			// ratios: step 0.5, get 0.4, set 0.8 -> 0.8
			mixStep(100, 0.05, map[string]float64{"get": 0.04, "set": 0.08}, slo),
			// the step and get within 0.1; set at 0.12: ratio 1.2
			mixStep(200, 0.06, map[string]float64{"get": 0.05, "set": 0.12}, slo),
			mixStep(300, 0.2, map[string]float64{"get": 0.18, "set": 0.3}, slo),
		}
	}
	s := Summary{SLO: slo, Steps: steps(slo)}
	s.Finish()
	if s.Steps[1].MeetsSLO {
		t.Fatal("step 1 meets the SLO although set is over its bound")
	}
	// (1 - 0.8) / (1.2 - 0.8) = 0.5 of the way from 100 to 200 req/s.
	if s.MaxThroughputAtSLO == nil || *s.MaxThroughputAtSLO != 150 {
		t.Fatalf("max throughput at SLO %v, want 150", s.MaxThroughputAtSLO)
	}
	// set's own bound of 150 ms: step 1 passes (ratio max(0.6, 0.5, 0.8));
	// step 2 (ratio max(2, 1.8, 2)) fails: (1 - 0.8) / (2 - 0.8) of 200 -> 300.
	slo.LatencyByRequestS = map[string]float64{"set": 0.15}
	s = Summary{SLO: slo, Steps: steps(slo)}
	s.Finish()
	want := 200 + (1-0.8)/(2-0.8)*100
	if !s.Steps[1].MeetsSLO || s.MaxThroughputAtSLO == nil || math.Abs(*s.MaxThroughputAtSLO-want) > 0.001 {
		t.Fatalf("max throughput at SLO %v, want %.3f; steps %+v", s.MaxThroughputAtSLO, want, s.Steps)
	}
	// A type over the error bound fails the step, and is not interpolated into.
	s = Summary{SLO: slo, Steps: steps(slo)}
	bad := s.Steps[1].ByRequest["set"]
	bad.ErrorRate, bad.MeetsSLO = 0.5, false
	s.Steps[1].ByRequest["set"] = bad
	s.Steps[1].SetByRequest(s.Steps[1].ByRequest)
	s.Finish()
	if s.MaxThroughputAtSLO == nil || *s.MaxThroughputAtSLO != 100 {
		t.Fatalf("max throughput at SLO %v, want 100", s.MaxThroughputAtSLO)
	}
	var txt strings.Builder
	s.WriteTable(&txt)
	for _, w := range []string{"\n         get       500", "\n         set       500", "SLO per request type (p95): get <= 100.00 ms, set <= 150.00 ms"} {
		if !strings.Contains(txt.String(), w) {
			t.Errorf("summary.txt lacks %q:\n%s", w, txt.String())
		}
	}
}

// summary.json's keys keep the order docs/csv-format.md lists: the step and
// each by_request entry share Tally and Latencies, embedded at their place.
func TestSummaryStepKeyOrder(t *testing.T) {
	st := SummaryStep{TesterUsage: TesterUsage{TesterBound: true, TesterBoundReason: "x"}}
	st.Judge(Stationarity{})
	st.SetByRequest(map[string]RequestStep{"get": {}})
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	// keys lists an object's own keys in order (not those of its values).
	keys := func(b []byte) string {
		d := json.NewDecoder(bytes.NewReader(b))
		if _, err := d.Token(); err != nil {
			t.Fatal(err)
		}
		var out []string
		for d.More() {
			k, err := d.Token()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, k.(string))
			var v json.RawMessage
			if err := d.Decode(&v); err != nil {
				t.Fatal(err)
			}
		}
		return strings.Join(out, ",")
	}
	want := "step,concurrency,rate,requests,errors,error_rate,duration_s,throughput,mean_s,p50_s,p90_s,p95_s,p99_s,max_s,slo_percentile_s,meets_slo," +
		"sched_lag_mean_s,sched_lag_max_s,steady,stationarity,by_request,tester_cpu,host_cpu,host_steal,gc_pause_s,tester_bound,tester_bound_reason"
	if got := keys(b); got != want {
		t.Errorf("step keys\n got %s\nwant %s", got, want)
	}
	var raw struct {
		ByRequest map[string]json.RawMessage `json:"by_request"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	want = "requests,errors,error_rate,throughput,mean_s,p50_s,p90_s,p95_s,p99_s,max_s,slo_percentile_s,slo_latency_s,meets_slo"
	if got := keys(raw.ByRequest["get"]); got != want {
		t.Errorf("by_request keys\n got %s\nwant %s", got, want)
	}
}
