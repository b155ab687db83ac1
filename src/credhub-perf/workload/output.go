package workload

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/credhub-perf/credhub-perf/results"
)

// Workload is workload.json (see the package doc; fields may be added,
// never renamed: run --workload and headroom-plot read it).
type Workload struct {
	Format      string           `json:"format"`
	ToolVersion string           `json:"tool_version"`
	Interval    Interval         `json:"interval"`
	Requests    int64            `json:"requests"`
	Lines       int64            `json:"lines"` // audit lines the requests wrote
	Types       []TypeCount      `json:"types"`
	Auth        map[string]int64 `json:"auth"`
	Status      map[string]int64 `json:"status"`
	Rates       Rates            `json:"rates"`
	Names       Names            `json:"names"`
	Popularity  Popularity       `json:"popularity"`
	Skipped     map[string]int64 `json:"skipped"`
	Sources     []Source         `json:"sources"`
	Warnings    []string         `json:"warnings,omitempty"`
}

// Interval is the time the requests cover, in whole seconds.
type Interval struct {
	Start   string  `json:"start"`
	End     string  `json:"end"`
	Seconds float64 `json:"seconds"`
}

// TypeCount is one request type's share.
type TypeCount struct {
	Type       string  `json:"type"`
	Method     string  `json:"method"`
	Endpoint   string  `json:"endpoint"`
	Requests   int64   `json:"requests"`
	Lines      int64   `json:"lines"`
	Share      float64 `json:"share"`
	Scenario   string  `json:"scenario"`
	Replayable bool    `json:"replayable"`
}

// Rates are the arrival rates.
type Rates struct {
	Mean          float64    `json:"mean"`
	PeakSecond    PeakSecond `json:"peak_second"`
	BusiestMinute Minute     `json:"busiest_minute"`
	P99Second     float64    `json:"p99_second"`
	Burstiness    float64    `json:"burstiness"`
}

// PeakSecond is the second with the most requests (the first of ties).
type PeakSecond struct {
	At       string `json:"at"`
	Requests int64  `json:"requests"`
}

// Minute is the 60 s window (sliding, by the second) with the most
// requests; At is its first second with a request.
type Minute struct {
	At       string  `json:"at"`
	Requests int64   `json:"requests"`
	Mean     float64 `json:"mean"`
}

// Names is how requests spread over credentials.
type Names struct {
	Distinct      int64       `json:"distinct"`
	DistinctExact bool        `json:"distinct_exact"`
	Requests      int64       `json:"requests"` // (request, name) pairs counted
	Top1Share     float64     `json:"top1_share"`
	Top10Share    float64     `json:"top10_share"`
	Top1PctShare  float64     `json:"top1pct_share"`
	Top           []NameCount `json:"top,omitempty"` // only with --keep-names
}

// NameCount is one credential's requests (--keep-names only).
type NameCount struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// Popularity is what a replay needs of the names' spread.
type Popularity struct {
	ZipfS float64 `json:"zipf_s"`
}

// Source is one file read.
type Source struct {
	File    string `json:"file"`
	Records int64  `json:"records"`
	Skipped int64  `json:"skipped"`
}

func stamp(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func build(a *aggregator, srcs []*source, names *nameTable, opts Options) *Workload {
	w := &Workload{
		Format: Format, ToolVersion: opts.Version, Requests: a.requests, Lines: a.lines,
		Auth:    map[string]int64{"mutual_tls": a.auth[authMTLS], "uaa": a.auth[authUAA], "other": a.auth[authOther]},
		Status:  map[string]int64{"2xx": a.status["2xx"], "3xx": a.status["3xx"], "4xx": a.status["4xx"], "5xx": a.status["5xx"]},
		Skipped: map[string]int64{},
	}
	if v := a.status["1xx"]; v > 0 {
		w.Status["1xx"] = v
	}
	for _, s := range srcs {
		w.Sources = append(w.Sources, Source{File: s.name, Records: s.records, Skipped: s.nskip})
		for k, v := range s.skipped {
			w.Skipped[k] += v
		}
	}
	if a.requests == 0 {
		return w
	}
	secs := a.seconds()
	w.Interval = Interval{Start: stamp(a.first / 1000 * 1000), End: stamp((a.last/1000 + 1) * 1000), Seconds: float64(secs)}
	w.Types = typeCounts(a)
	w.Rates = Rates{
		Mean:          round(float64(a.requests)/float64(secs), 3),
		PeakSecond:    PeakSecond{At: stamp(a.peakAt * 1000), Requests: a.peak},
		BusiestMinute: Minute{At: stamp(a.minuteAt * 1000), Requests: a.minute, Mean: round(float64(a.minute)/60, 3)},
		P99Second:     a.p99(),
		Burstiness:    round(a.burstiness(), 3),
	}
	w.Names, w.Popularity = nameFigures(a, names, opts.KeepNames)
	if secs > 400*86400 {
		w.Warnings = append(w.Warnings, fmt.Sprintf("the records span %d days: a clock far off, or logs of different periods together?", secs/86400))
	}
	return w
}

func typeCounts(a *aggregator) []TypeCount {
	var out []TypeCount
	for t := Type(0); t < numTypes; t++ {
		if a.types[t] == 0 {
			continue
		}
		out = append(out, TypeCount{
			Type: t.String(), Method: typeEndpoint[t][0], Endpoint: typeEndpoint[t][1],
			Requests: a.types[t], Lines: a.typeLines[t], Share: round(float64(a.types[t])/float64(a.requests), 4),
			Scenario: typeScenario[t], Replayable: typeScenario[t] != "",
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Requests > out[j].Requests })
	return out
}

func nameFigures(a *aggregator, names *nameTable, keep bool) (Names, Popularity) {
	counts := a.nameCounts()
	n := Names{Distinct: int64(len(counts)), DistinctExact: a.overCap == 0, Requests: a.nameRefs}
	if a.nameRefs == 0 {
		return n, Popularity{}
	}
	share := func(k int) float64 {
		var s int64
		for i := 0; i < k && i < len(counts); i++ {
			s += counts[i]
		}
		return round(float64(s)/float64(a.nameRefs), 4)
	}
	n.Top1Share, n.Top10Share = share(1), share(10)
	n.Top1PctShare = share(int(math.Ceil(float64(len(counts)) / 100)))
	if keep {
		n.Top = topNames(a, names, 100)
	}
	return n, Popularity{ZipfS: zipfS(counts)}
}

func topNames(a *aggregator, names *nameTable, k int) []NameCount {
	out := make([]NameCount, 0, len(a.names))
	for h, c := range a.names {
		out = append(out, NameCount{Name: names.names[h], Count: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// WriteJSON writes w to path through path.tmp and a rename, so a reader
// never sees half a file.
func WriteJSON(path string, w *Workload) error {
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return err
	}
	return results.WriteFileAtomic(path, append(b, '\n'), 0o600)
}

// ReadJSON reads a workload.json.
func ReadJSON(path string) (*Workload, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var w Workload
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%s: not a workload.json: %w", filepath.Base(path), err)
	}
	if w.Format != Format {
		return nil, fmt.Errorf("%s: format %q, want %q: write it with this credhub-perf's workload command", path, w.Format, Format)
	}
	return &w, nil
}

// arrivalsWriter writes workload-arrivals.csv: one row per second that
// had a request (a second without a row had none).
type arrivalsWriter struct {
	bw  *bufio.Writer
	buf []byte
}

func newArrivalsWriter(w io.Writer) *arrivalsWriter {
	return &arrivalsWriter{bw: bufio.NewWriterSize(w, 64<<10)}
}

func (w *arrivalsWriter) header() error {
	_, err := w.bw.WriteString("time,unix_s,requests")
	for _, id := range typeIDs {
		w.bw.WriteString("," + id)
	}
	w.bw.WriteByte('\n')
	return err
}

func (w *arrivalsWriter) row(sec, total int64, counts *[numTypes]int64) error {
	b := time.Unix(sec, 0).UTC().AppendFormat(w.buf[:0], "2006-01-02T15:04:05Z")
	b = append(b, ',')
	b = strconv.AppendInt(b, sec, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, total, 10)
	for _, c := range counts {
		b = append(b, ',')
		b = strconv.AppendInt(b, c, 10)
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.bw.Write(b)
	return err
}

func (w *arrivalsWriter) flush() error { return w.bw.Flush() }
