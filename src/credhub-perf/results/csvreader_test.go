package results

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

func writeOurs(t *testing.T, path string, steps []int, perStep int, base time.Time, fail func(i int) bool) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := NewCSVWriter(f)
	k := 0
	for si, conc := range steps {
		for j := 0; j < perStep; j++ {
			r := load.Result{
				Start:       base.Add(time.Duration(si)*time.Second + time.Duration(j)*time.Millisecond),
				Offset:      time.Duration(si)*time.Second + time.Duration(j)*time.Millisecond,
				Latency:     time.Duration(1+j%10) * time.Millisecond,
				Status:      200,
				Concurrency: conc,
			}
			if fail != nil && fail(k) {
				r.Status, r.Err = 0, "dial: connection refused"
			}
			k++
			w.Record(&r)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReadOurFormatSegmentsAndRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "results.csv")
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	writeOurs(t, p, []int{1, 2, 4}, 100, base, func(i int) bool { return i%50 == 0 })
	var n, errs int
	segs := map[int]int{}
	info, err := ReadCSV(p, func(r *Row) error {
		n++
		segs[r.Segment]++
		if r.Failed() {
			errs++
		}
		if r.Segment == 2 && r.Concurrency != 4 {
			t.Fatalf("segment 2 has concurrency %d", r.Concurrency)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if info.Format != FormatOurs || !info.HasStatus || n != 300 || errs != 6 || len(segs) != 3 || segs[1] != 100 {
		t.Fatalf("info %+v n=%d errs=%d segs=%v", info, n, errs, segs)
	}
	sum, err := SummarizeFiles([]string{p}, SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Steps) != 3 || sum.Requests != 300 || sum.Errors != 6 {
		t.Fatalf("summary %+v", sum)
	}
	// duration = last end - first start = 99 ms + latency of row 99 (10 ms)
	if st := sum.Steps[0]; math.Abs(st.DurationS-0.109) > 1e-6 || st.Concurrency != 1 || math.Abs(st.MaxS-0.010) > 1e-5 {
		t.Fatalf("step 0 %+v", st)
	}
}

func TestReadHeyForkFormats(t *testing.T) {
	seven := "start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read\n" +
		"2017-06-01T10:00:00.002Z,0.0050,0.0010,0.0001,0.0000,0.0039,0.0000\n" +
		"2017-06-01T10:00:00.000Z,0.0040,0.0010,0.0001,0.0000,0.0029,0.0000\n" +
		"start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read\n" +
		"2017-06-01T10:00:01.000Z,0.0100,0.0010,0.0001,0.0000,0.0089,0.0000\n"
	var segs []int
	info, err := ReadCSVFrom(strings.NewReader(seven), "seven.csv", func(r *Row) error {
		segs = append(segs, r.Segment)
		if r.Status != 200 {
			t.Fatalf("hey-fork rows are successes")
		}
		return nil
	})
	if err != nil || info.Format != FormatHeyFork7 || info.HasStatus || len(segs) != 3 || segs[2] != 1 {
		t.Fatalf("err=%v info=%+v segs=%v", err, info, segs)
	}
	two := "start-time,response-time\n2017-06-01T10:00:00Z,0.0050\n2017-06-01T10:00:00.5Z,0.0070\n"
	info, err = ReadCSVFrom(strings.NewReader(two), "two.csv", func(r *Row) error { return nil })
	if err != nil || info.Format != FormatHeyFork2 || info.Rows != 2 {
		t.Fatalf("err=%v info=%+v", err, info)
	}
	hey := "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n0.0050,0.0010,0.0001,0.0000,0.0039,0.0000,500,0.0010\n"
	var status int
	info, err = ReadCSVFrom(strings.NewReader(hey), "hey.csv", func(r *Row) error { status = r.Status; return nil })
	if err != nil || info.Format != FormatHey || !info.HasStatus || status != 500 {
		t.Fatalf("err=%v info=%+v status=%d", err, info, status)
	}
}

func TestReadBadInput(t *testing.T) {
	cases := map[string]string{
		"":                         "no header",
		"a,b,c\n1,2,3\n":           "no recognised header",
		CSVHeader + "\nx,y\n1,2\n": "fields",
	}
	for in, want := range cases {
		_, err := ReadCSVFrom(strings.NewReader(in), "f.csv", func(*Row) error { return nil })
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: want one-line error containing %q, got %v", in, want, err)
		}
	}
}

func TestTruncatedLastLineIsAWarning(t *testing.T) {
	var b bytes.Buffer
	w := NewCSVWriter(&b)
	r := load.Result{Start: time.Now(), Latency: time.Millisecond, Status: 200, Concurrency: 1}
	w.Record(&r)
	w.Record(&r)
	_ = w.Flush()
	in := b.String() + "2026-01-01T00:00:00Z,0.00"
	info, err := ReadCSVFrom(strings.NewReader(in), "t.csv", func(*Row) error { return nil })
	if err != nil || info.Rows != 2 || len(info.Warnings) != 1 {
		t.Fatalf("err=%v info=%+v", err, info)
	}
	// The same bad line with a line end is damage, not a killed writer.
	_, err = ReadCSVFrom(strings.NewReader(in+"\n"), "t.csv", func(*Row) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "t.csv:4") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("terminated bad last line: want a one-line error naming t.csv:4, got %v", err)
	}
}

func TestMergeAddsThroughput(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	writeOurs(t, filepath.Join(dir, "results-0.csv"), []int{2, 4}, 200, base, nil)
	writeOurs(t, filepath.Join(dir, "results-1.csv"), []int{2, 4}, 200, base, nil)
	slo := SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}
	one, err := SummarizeFiles([]string{filepath.Join(dir, "results-0.csv")}, slo)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := SummarizeDir(dir, slo)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Testers != 2 || len(sum.Steps) != 2 {
		t.Fatalf("merged: %+v", sum)
	}
	for i := range sum.Steps {
		if got, want := sum.Steps[i].Throughput, 2*one.Steps[i].Throughput; math.Abs(got-want) > 0.01*want {
			t.Fatalf("step %d: merged throughput %g, want the sum %g", i, got, want)
		}
		if sum.Steps[i].Concurrency != 2*one.Steps[i].Concurrency {
			t.Fatalf("step %d: merged concurrency %d", i, sum.Steps[i].Concurrency)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err != nil {
		t.Fatal(err)
	}
}

func TestKneeAndMaxThroughputAtSLO(t *testing.T) {
	s := &Summary{SLO: SLO{Percentile: 95, LatencyS: 0.100, MaxErrorRate: 0.01}}
	add := func(conc int, tput, mean, p float64, errRate float64) {
		st := SummaryStep{Concurrency: conc, Tally: Tally{Requests: 1000, ErrorRate: errRate}, Throughput: tput, Latencies: Latencies{MeanS: mean, SLOPercentileS: p}, Steady: bp(true)}
		st.MeetsSLO = errRate <= 0.01 && p <= 0.100
		s.Steps = append(s.Steps, st)
	}
	add(1, 100, 0.010, 0.012, 0)
	add(2, 190, 0.0105, 0.013, 0)
	add(4, 300, 0.013, 0.050, 0)
	add(8, 350, 0.023, 0.150, 0)    // misses the SLO: 100 ms lies 50 % of the way
	add(16, 360, 0.044, 0.300, 0.5) // errors: never capacity
	s.Finish()
	if s.MaxThroughputAtSLO == nil || math.Abs(*s.MaxThroughputAtSLO-325) > 0.01 {
		t.Fatalf("max throughput at SLO %v, want 325", s.MaxThroughputAtSLO)
	}
	if s.Knee == nil || *s.Knee != 300 || *s.KneeConcurrency != 4 {
		t.Fatalf("knee %v", s.Knee)
	}
	none := &Summary{SLO: s.SLO, Steps: []SummaryStep{{Concurrency: 1, Tally: Tally{Requests: 10}, Throughput: 5, Latencies: Latencies{MeanS: 1, SLOPercentileS: 1}}}}
	none.Finish()
	if none.MaxThroughputAtSLO != nil {
		t.Fatalf("want null when never met")
	}
}

func TestOpenLoopLagWarning(t *testing.T) {
	s := &Summary{SLO: SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01}, Steps: []SummaryStep{
		{Concurrency: 4, Rate: 100, Tally: Tally{Requests: 100}, Latencies: Latencies{MeanS: 0.010}, SchedLagMeanS: 0.0002, Steady: bp(true)},
		{Concurrency: 4, Rate: 800, Tally: Tally{Requests: 800}, Latencies: Latencies{MeanS: 0.050}, SchedLagMeanS: 0.030, SchedLagMaxS: 0.090, Steady: bp(true)},
	}}
	s.Finish()
	if len(s.StepWarnings) != 1 || !strings.Contains(s.StepWarnings[0], "rate 800/s") {
		t.Fatalf("warnings %v", s.StepWarnings)
	}
	var b strings.Builder
	s.WriteTable(&b)
	if !strings.Contains(b.String(), "could not keep the schedule") {
		t.Fatal(b.String())
	}
}

// TestHeadersFixture holds the reader to testdata/headers/expect.json,
// which headroom-plot's reader is held to too: each file's format, or a
// one-line refusal.
func TestHeadersFixture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "headers", "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []struct {
			Name   string  `json:"name"`
			Text   string  `json:"text"`
			Format *string `json:"format"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Files) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range doc.Files {
		info, err := ReadCSVFrom(strings.NewReader(c.Text), "f.csv", func(*Row) error { return nil })
		switch {
		case c.Format == nil && err == nil:
			t.Errorf("%s: accepted as %s, want refused", c.Name, info.Format)
		case c.Format == nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: refusal of more than one line: %q", c.Name, err)
		case c.Format != nil && err != nil:
			t.Errorf("%s: refused (%v), want %s", c.Name, err, *c.Format)
		case c.Format != nil && string(info.Format) != *c.Format:
			t.Errorf("%s: read as %s, want %s", c.Name, info.Format, *c.Format)
		}
	}
}
