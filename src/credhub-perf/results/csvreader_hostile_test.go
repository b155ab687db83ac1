package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

const goodRow = "2026-01-01T00:00:00.000001Z,0.001000,0.000000,0.000000,0.000010,0.000900,0.000090,200,0.000001,1,0,0.000000,,get\n"

// ours builds a file of our format: the header, two good rows, then body.
func ours(body string) string { return CSVHeader + "\n" + goodRow + goodRow + body }

// row is goodRow with column i replaced.
func row(i int, v string) string {
	f := strings.Split(strings.TrimSuffix(goodRow, "\n"), ",")
	f[i] = v
	return strings.Join(f, ",") + "\n"
}

var oneLineError = regexp.MustCompile(`^f\.csv:[0-9]+: [^\n]+$`)

// Damaged rows a lenient reader panics on or reads as a number: each is a
// one-line error naming the file and line.
func TestReadHostileRowsAreOneLineErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"bare quote (panicked at FieldPos)", ours("ab\"c,1,2\n"), "f.csv:4: a quote"},
		{"binary junk", ours("\x00\xff\xfe\x89PNG\r\n\x1a,\"\x01\x02\n"), "f.csv:4: "},
		{"nan latency", ours(row(1, "nan")), "f.csv:4: response-time \"nan\" is not a decimal number"},
		{"NaN latency", ours(row(1, "NaN")), "not a decimal number"},
		{"inf latency", ours(row(1, "inf")), "not a decimal number"},
		{"+Inf offset", ours(row(8, "+Inf")), "offset \"+Inf\" is not a decimal"},
		{"1e309 latency", ours(row(1, "1e309")), "response-time \"1e309\" is not a finite number"},
		{"1e300 latency (overflowed time.Duration)", ours(row(1, "1e300")), "out of range"},
		{"negative latency", ours(row(1, "-0.5")), "response-time -0.5 is out of range"},
		{"negative phase", ours(row(4, "-0.000001")), "Request-write -0.000001 is out of range"},
		{"negative sched-lag", ours(row(11, "-1")), "sched-lag -1 is out of range"},
		{"hex float", ours(row(1, "0x1p-3")), "not a decimal number"},
		{"underscores", ours(row(1, "1_0")), "not a decimal number"},
		{"spaces", ours(row(1, " 0.1")), "not a decimal number"},
		{"empty latency", ours(row(1, "")), "not a decimal number"},
		{"status 70000", ours(row(7, "70000")), "status-code 70000 is out of range"},
		{"status 200.0", ours(row(7, "200.0")), "status-code \"200.0\" is not an integer"},
		{"status -1", ours(row(7, "-1")), "not an integer"},
		{"status 0200", ours(row(7, "0200")), "not an integer"},
		{"concurrency 0", ours(row(9, "0")), "concurrency 0 is out of range"},
		{"rate nan", ours(row(10, "nan")), "rate \"nan\" is not a decimal"},
		{"rate negative", ours(row(10, "-5")), "rate -5 is out of range"},
		{"bad start-time", ours(row(0, "2026-13-01T00:00:00Z")), "start-time"},
		{"quoted number", ours(row(1, `"0.1"`)), "a quote"},
		{"unclosed quote in error, more lines follow", ours(row(12, `"dial: refused`) + goodRow), "f.csv:4: the error column is not one quoted field"},
		{"text after the closing quote", ours(row(12, `"a"b`)), "not one quoted field"},
		{"undoubled inner quote", ours(row(12, `"a"b"`)), "undoubled quote"},
		{"too many fields", ours(goodRow[:len(goodRow)-1] + ",x\n"), "15 fields, the header has 14"},
		{"too few fields", ours("1,2\n"), "2 fields, the header has 14"},
		{"unknown request type", ours(row(13, "delete")), `f.csv:4: request "delete" is not a request type`},
		{"request type in capitals", ours(row(13, "GET")), "is not a request type"},
		{"request type too long", ours(row(13, strings.Repeat("g", 5000))), `request "gggggggggggggggggggggggggggggggggggggggg..." is not a request type`},
		{"quoted request type", ours(row(13, `"get"`)), "a quote (\") in the request column"},
		{"request type with a space", ours(row(13, "get ")), "is not a request type"},
		{"binary request type", ours(row(13, "\x00\xff")), "is not a request type"},
		{"request column missing after a quoted error", ours(strings.Replace(row(12, `"a, b"`), ",get\n", "\n", 1)), "13 fields, the header has 14"},
		{"quoted error then junk", ours(row(12, `"a"x`)), "not one quoted field"},
		{"13-column row in a 14-column file", ours(strings.Replace(goodRow, ",,get\n", ",\n", 1)), "13 fields, the header has 14"},
		{"long line", ours(strings.Repeat("1", MaxLineBytes+10) + "\n"), "f.csv:4: line longer than"},
		{"no line ends at all", CSVHeader + "\n" + strings.Repeat("\x00", 3*MaxLineBytes), "f.csv:2: line longer than"},
		{"different second header", ours("start-time,response-time\n"), "a second, different header"},
		{"repeated header (two files concatenated)", ours(CSVHeader + "\n" + goodRow), "f.csv:4: the header repeats (two results files concatenated?)"},
		{"steps interleaved (a sorted file)", ours(row(9, "2") + goodRow), "f.csv:5: rows of the step at concurrency 1, rate 0 appear again after another step (first at line 2)"},
		{"a step back after two others", ours(row(9, "2") + row(9, "3") + row(9, "2")), "f.csv:6: rows of the step at concurrency 2"},
		{"same concurrency, another rate, then back", ours(row(10, "50") + goodRow), "f.csv:5: "},
		{"empty", "", "f.csv:1: empty file"},
		{"hey fork nan", "start-time,response-time\n2017-06-01T10:00:00Z,nan\n2017-06-01T10:00:00Z,0.1\n", "f.csv:2: response-time"},
		{"hey fork quote", "start-time,response-time\n2017-06-01T10:00:00Z,\"0.1\"\n", "f.csv:2: a quote"},
		{"upstream hey inf", "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n0.0050,0.0010,0.0001,0.0000,0.0039,0.0000,200,inf\n", "f.csv:2: offset"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			_, err := ReadCSVFrom(strings.NewReader(c.in), "f.csv", func(*Row) error { n++; return nil })
			if err == nil {
				t.Fatalf("read %d rows, no error; want one containing %q", n, c.want)
			}
			if !oneLineError.MatchString(err.Error()) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %q; want one line FILE:LINE: ... containing %q", err, c.want)
			}
		})
	}
}

func TestReadAcceptsWhatWritersWrite(t *testing.T) {
	var b bytes.Buffer
	w := NewCSVWriter(&b)
	r := load.Result{Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Latency: 1500 * time.Microsecond, Offset: -time.Millisecond,
		Status: 0, Concurrency: 3, Err: "tls: \"bad\", cert\nline two"}
	w.Record(&r)
	r.Err, r.Status = "", 200
	w.Record(&r)
	_ = w.Flush()
	// CRLF line ends and a BOM, as an editor on Windows leaves them; blank lines.
	in := "\xef\xbb\xbf" + strings.ReplaceAll(b.String(), "\n", "\r\n") + "\r\n\n"
	var rows []Row
	info, err := ReadCSVFrom(strings.NewReader(in), "f.csv", func(r *Row) error { rows = append(rows, *r); return nil })
	if err != nil || len(rows) != 2 || len(info.Warnings) != 0 {
		t.Fatalf("err=%v rows=%d warnings=%v", err, len(rows), info.Warnings)
	}
	if rows[0].Err != `tls: "bad", cert line two` || rows[0].Latency != 1500*time.Microsecond || rows[0].Offset != -time.Millisecond || rows[0].Concurrency != 3 {
		t.Fatalf("row 0 %+v", rows[0])
	}
	if rows[1].Line != 3 || rows[1].Status != 200 {
		t.Fatalf("row 1 %+v", rows[1])
	}
}

// The documented rule: only a last line without a line end is skipped, with
// a warning, whatever it holds (a valid-looking row may be cut short in its
// error message); the same line with its line end is damage.
func TestOnlyTheUnterminatedLastLineIsSkipped(t *testing.T) {
	for _, last := range []string{`ab"c,1,2`, "\x00\xff", strings.TrimSuffix(row(1, "nan"), "\n"), strings.TrimSuffix(goodRow, "\n"), `2026-01-01T00:00:00Z,0.1,0,0,0,0,0,500,0,1,0,0,"dial: conn`, `2026-01-01T00:00:00Z,0.1,0,0,0,0,0,500,0,1,0,0,"dial: conn",inter`} {
		info, err := ReadCSVFrom(strings.NewReader(ours(last)), "f.csv", func(*Row) error { return nil })
		if err != nil || info.Rows != 2 || len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "f.csv:4: last line has no line end") {
			t.Errorf("%q: err=%v info=%+v", last, err, info)
		}
		if _, err := ReadCSVFrom(strings.NewReader(ours(last+"\n")), "f.csv", func(*Row) error { return nil }); last != strings.TrimSuffix(goodRow, "\n") && (err == nil || !strings.HasPrefix(err.Error(), "f.csv:4: ")) {
			t.Errorf("%q with a line end: want an error at f.csv:4, got %v", last, err)
		}
	}
}

// Before the wide sum, 10^6 rows of 10,000 s wrapped the int64 sum and the
// mean came out negative.
func TestStatsMeanDoesNotOverflow(t *testing.T) {
	s := NewStats()
	r := load.Result{Latency: MaxDurationS * time.Second, Status: 200}
	const n = 1_000_000
	for i := 0; i < n; i++ {
		s.Record(&r)
	}
	o := NewStats()
	o.Record(&r)
	s.Merge(o)
	if got := s.Snapshot().Mean; got != MaxDurationS*time.Second {
		t.Fatalf("mean %v, want %v", got, MaxDurationS*time.Second)
	}
	var w wideSum
	for _, d := range []time.Duration{-7, 3, -2} {
		w.add(d)
	}
	if got := w.mean(3); got != -2 {
		t.Fatalf("signed mean %v, want -2", got)
	}
}

// FuzzReadCSV: whatever the bytes, the reader returns rows within the
// documented limits or one line "f.csv:LINE: ...", and the statistics of
// what it returns are sane (no wrapped sums). `make test` runs it for 10 s
// (scripts/test-all), `make bench` longer (scripts/bench-fuzz).
func FuzzReadCSV(f *testing.F) {
	seeds := []string{
		ours(""), ours("ab\"c,1,2\n"), ours("\x00\xff\xfe\x89PNG\r\n"), ours(row(1, "nan")), ours(row(1, "inf")),
		ours(row(1, "1e309")), ours(row(1, "1e300")), ours(row(1, "-0.5")), ours(row(7, "70000")), ours(row(12, `"a""b,c"`)),
		ours(row(12, `"unclosed`)), ours(strings.TrimSuffix(goodRow, "\n")), "",
		ours(CSVHeader + "\n" + goodRow), ours(row(9, "2") + goodRow), ours(row(9, "2") + row(9, "3")),
		ours(row(13, "interpolate")), ours(row(13, `"set"`)), ours(row(13, "custom,x")), ours(row(12, `"e, ""q"""`)),
		CSVHeader13 + "\n" + strings.Replace(goodRow, ",,get\n", ",\n", 1),
		"start-time,response-time\n2017-06-01T10:00:00Z,0.0050\nstart-time,response-time\n2017-06-01T10:00:01Z,0.0070\n",
		"start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read\n2017-06-01T10:00:00.002Z,0.0050,0.0010,0.0001,0.0000,0.0039,0.0000\n",
		"response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n0.0050,0.0010,0.0001,0.0000,0.0039,0.0000,500,0.0010\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, steady := NewStats(), NewSteadiness()
		conc, rate := 0, 0.0
		lines := bytes.Count(data, []byte("\n")) + 1
		info, err := ReadCSVFrom(bytes.NewReader(data), "f.csv", func(r *Row) error {
			for _, d := range []time.Duration{r.Latency, r.DNSDial, r.DNS, r.ReqWrite, r.RespDelay, r.RespRead, r.SchedLag} {
				if d < 0 || d > MaxDurationS*time.Second {
					t.Fatalf("line %d: duration %v outside [0, %d s]", r.Line, d, MaxDurationS)
				}
			}
			if r.Offset < -MaxOffsetS*time.Second || r.Offset > MaxOffsetS*time.Second {
				t.Fatalf("line %d: offset %v", r.Line, r.Offset)
			}
			if r.Status < 0 || r.Status > MaxStatus || r.Concurrency < 0 || r.Concurrency > MaxConcurrency ||
				math.IsNaN(r.Rate) || r.Rate < 0 || r.Rate > MaxRate || r.Line < 1 || r.Line > lines {
				t.Fatalf("row out of range: %+v", r)
			}
			if r.Request != "" && !slices.Contains(RequestTypes, r.Request) {
				t.Fatalf("line %d: request %q", r.Line, r.Request)
			}
			st.Record(&r.Result)
			steady.Record(&r.Result)
			conc, rate = r.Concurrency, r.Rate
			return nil
		})
		if err != nil {
			if !oneLineError.MatchString(err.Error()) {
				t.Fatalf("error %q is not one line FILE:LINE: ...", err)
			}
			return
		}
		if info.Rows > 0 {
			s := st.Snapshot()
			if s.Mean < s.Min || s.Mean > s.Max || s.Duration < 0 || math.IsNaN(s.Throughput) {
				t.Fatalf("snapshot %+v", s)
			}
			// what summary.json would hold must be valid JSON (NaN and Inf are not)
			step := NewSummaryStep(0, conc, rate, s, SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01})
			step.Judge(steady.Verdict())
			if _, err := json.Marshal(step); err != nil {
				t.Fatalf("summary step: %v", err)
			}
		}
	})
}

// hostileDir holds small damaged results files that headroom-plot's reader
// (src/headroom-plot/tests/test_csvread_shared.py) reads too: expect.json
// gives each file the verdict both readers must reach, the line a refusal
// must name, and an accepted file's steps (concurrency, rate, requests):
// one rule for where a step begins, two steps of one concurrency and rate
// included.
const hostileDir = "testdata/hostile-csv"

// checkFileSteps holds the summary of one file to want's steps, each
// [concurrency, rate, requests] in file order.
func checkFileSteps(t *testing.T, path, why string, want [][3]float64) {
	t.Helper()
	sum, err := SummarizeFiles([]string{path}, SLO{Percentile: 95, LatencyS: 0.1, MaxErrorRate: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	var got [][3]float64
	for _, st := range sum.Steps {
		got = append(got, [3]float64{float64(st.Concurrency), st.Rate, float64(st.Requests)})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s (%s): steps %v, want %v", path, why, got, want)
	}
}

func TestSharedHostileCSVVerdicts(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(hostileDir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Files []struct {
			File    string       `json:"file"`
			Verdict string       `json:"verdict"`
			Line    int          `json:"line"`
			Why     string       `json:"why"`
			Steps   [][3]float64 `json:"steps"`
		} `json:"files"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, c := range want.Files {
		listed[c.File] = true
		t.Run(c.File, func(t *testing.T) {
			path := filepath.Join(hostileDir, c.File)
			_, err := ReadCSV(path, func(*Row) error { return nil })
			switch c.Verdict {
			case "accept":
				if err != nil {
					t.Fatalf("%s (%s): refused: %v", c.File, c.Why, err)
				}
				if c.Steps != nil {
					checkFileSteps(t, path, c.Why, c.Steps)
				}
			case "refuse":
				if err == nil {
					t.Fatalf("%s (%s): accepted", c.File, c.Why)
				}
				prefix := fmt.Sprintf("%s:%d: ", path, c.Line)
				if msg := err.Error(); !strings.HasPrefix(msg, prefix) || strings.Contains(msg, "\n") {
					t.Fatalf("%s (%s): want one line starting %q, got %q", c.File, c.Why, prefix, msg)
				}
			default:
				t.Fatalf("%s: verdict %q: want accept or refuse", c.File, c.Verdict)
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join(hostileDir, "*.csv"))
	for _, f := range files {
		if !listed[filepath.Base(f)] {
			t.Errorf("%s has no verdict in expect.json", f)
		}
	}
}
