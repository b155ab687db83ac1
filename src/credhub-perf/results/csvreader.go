package results

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

// Format names the CSV dialect a file was written in.
type Format string

const (
	// FormatOurs is the contract of docs/design.md (13 columns).
	FormatOurs Format = "credhub-perf"
	// FormatHeyFork7 is the cf-routing hey fork with -more: seven columns.
	FormatHeyFork7 Format = "hey-fork-7"
	// FormatHeyFork2 is the 2017 release's pinned fork: start-time,response-time.
	FormatHeyFork2 Format = "hey-fork-2"
	// FormatHey is upstream rakyll/hey -o csv (no start time; offset gives it).
	FormatHey Format = "hey"
)

// Row is one request read back from a CSV file.
type Row struct {
	load.Result
	// Segment counts the step the row belongs to within its file: it grows
	// when the header repeats (hey-fork files concatenate one block per
	// step) or, in our format, when the concurrency/rate pair changes.
	Segment int
	Line    int
}

// ReadInfo describes a file once read.
type ReadInfo struct {
	Format Format
	Rows   int64
	// HasStatus is false for formats without a status or error column:
	// their failures were never written, so error counts are unknown.
	HasStatus bool
	// Warnings such as a truncated last line (a run killed mid-write).
	Warnings []string
}

var columnAliases = map[string]string{
	"start-time": "start", "response-time": "latency", "dns+dialup": "dnsdial",
	"dns": "dns", "request-write": "reqwrite", "response-delay": "respdelay",
	"response-read": "respread", "status-code": "status", "offset": "offset",
	"concurrency": "concurrency", "rate": "rate", "sched-lag": "schedlag", "error": "error",
}

// ReadCSV streams the rows of a results file to fn, in file order, holding
// one row at a time. It detects the dialect from the header.
func ReadCSV(path string, fn func(*Row) error) (ReadInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return ReadInfo{}, err
	}
	defer f.Close()
	info, err := ReadCSVFrom(f, path, fn)
	return info, err
}

// ReadCSVFrom is ReadCSV on an open reader; name is used in messages.
func ReadCSVFrom(r io.Reader, name string, fn func(*Row) error) (ReadInfo, error) {
	var info ReadInfo
	lr := &lastByteReader{r: r}
	br := bufio.NewReaderSize(lr, 256<<10)
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true

	var cols map[string]int
	var headerLine []string
	var row Row
	var firstStart time.Time
	segment := -1
	lastKey := ""
	var pending error // a bad line is fatal only if another line follows it
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if pending != nil {
			return info, pending
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				pending = fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
				continue
			}
			return info, fmt.Errorf("%s: %w", name, err)
		}
		if isHeader(rec) {
			if cols == nil {
				cols, info.Format, err = parseHeader(rec)
				if err != nil {
					return info, fmt.Errorf("%s:%d: %w", name, line, err)
				}
				headerLine = append([]string(nil), rec...)
				_, info.HasStatus = cols["status"]
			} else if strings.Join(rec, ",") != strings.Join(headerLine, ",") {
				return info, fmt.Errorf("%s:%d: a second, different header", name, line)
			}
			if info.Format != FormatOurs {
				segment++ // hey-fork files repeat the header once per step
			}
			continue
		}
		if cols == nil {
			return info, fmt.Errorf("%s:%d: no recognised header (want %q or a hey CSV header)", name, line, CSVHeader)
		}
		if len(rec) != len(headerLine) {
			pending = fmt.Errorf("%s:%d: %d fields, the header has %d", name, line, len(rec), len(headerLine))
			continue
		}
		if err := parseRow(rec, cols, &row, &firstStart); err != nil {
			pending = fmt.Errorf("%s:%d: %w", name, line, err)
			continue
		}
		if info.Format == FormatOurs {
			key := rec[cols["concurrency"]] + "/" + rec[cols["rate"]]
			if key != lastKey {
				segment++
				lastKey = key
			}
		}
		row.Segment = segment
		row.Line = line
		info.Rows++
		if err := fn(&row); err != nil {
			return info, err
		}
	}
	if pending != nil {
		// Only the very last line is bad. Without its line end it is a run
		// killed while writing, and the rows before it stand; with one, the
		// file is damaged (headroom-plot agrees: it exits 2 on such a file).
		if lr.last == '\n' {
			return info, fmt.Errorf("%v: fix or delete that line", pending)
		}
		info.Warnings = append(info.Warnings, fmt.Sprintf("%s (skipped: last line has no line end, run killed mid-write?)", pending))
	}
	if cols == nil {
		return info, fmt.Errorf("%s: empty file: no header", name)
	}
	return info, nil
}

// lastByteReader remembers the last byte read, to tell a line cut short
// (no line end) from a complete but malformed one.
type lastByteReader struct {
	r    io.Reader
	last byte
}

func (l *lastByteReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = p[n-1]
	}
	return n, err
}

func isHeader(rec []string) bool {
	return len(rec) > 0 && (rec[0] == "start-time" || rec[0] == "response-time")
}

func parseHeader(rec []string) (map[string]int, Format, error) {
	cols := map[string]int{}
	for i, h := range rec {
		key, ok := columnAliases[strings.ToLower(strings.TrimSpace(h))]
		if !ok {
			return nil, "", fmt.Errorf("unknown column %q in the header", h)
		}
		cols[key] = i
	}
	if _, ok := cols["latency"]; !ok {
		return nil, "", fmt.Errorf("the header has no response-time column")
	}
	_, hasStart := cols["start"]
	_, hasOffset := cols["offset"]
	switch {
	case strings.Join(rec, ",") == CSVHeader:
		return cols, FormatOurs, nil
	case hasStart && len(rec) == 7:
		return cols, FormatHeyFork7, nil
	case hasStart && len(rec) == 2:
		return cols, FormatHeyFork2, nil
	case !hasStart && hasOffset:
		return cols, FormatHey, nil
	}
	return nil, "", fmt.Errorf("unrecognised header %q", strings.Join(rec, ","))
}

func parseSeconds(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number of seconds", s)
	}
	return time.Duration(f*1e9 + 0.5), nil
}

func parseRow(rec []string, cols map[string]int, r *Row, firstStart *time.Time) error {
	r.Result = load.Result{}
	var err error
	durs := []struct {
		col string
		dst *time.Duration
	}{{"latency", &r.Latency}, {"dnsdial", &r.DNSDial}, {"dns", &r.DNS}, {"reqwrite", &r.ReqWrite},
		{"respdelay", &r.RespDelay}, {"respread", &r.RespRead}, {"offset", &r.Offset}, {"schedlag", &r.SchedLag}}
	for _, d := range durs {
		if i, ok := cols[d.col]; ok {
			if *d.dst, err = parseSeconds(rec[i]); err != nil {
				return fmt.Errorf("%s: %w", d.col, err)
			}
		}
	}
	if i, ok := cols["start"]; ok {
		if r.Start, err = time.Parse(time.RFC3339Nano, rec[i]); err != nil {
			return fmt.Errorf("start-time %q is not an RFC3339 time", rec[i])
		}
		if _, hasOffset := cols["offset"]; !hasOffset {
			// hey-fork rows are in completion order, so offsets from the
			// first row may be negative; they only need a common origin.
			if firstStart.IsZero() {
				*firstStart = r.Start
			}
			r.Offset = r.Start.Sub(*firstStart)
		}
	}
	if i, ok := cols["status"]; ok {
		if r.Status, err = strconv.Atoi(rec[i]); err != nil {
			return fmt.Errorf("status-code %q is not an integer", rec[i])
		}
	} else {
		r.Status = 200 // formats that only wrote successes
	}
	if i, ok := cols["concurrency"]; ok {
		if r.Concurrency, err = strconv.Atoi(rec[i]); err != nil {
			return fmt.Errorf("concurrency %q is not an integer", rec[i])
		}
	}
	if i, ok := cols["rate"]; ok {
		if r.Rate, err = strconv.ParseFloat(rec[i], 64); err != nil {
			return fmt.Errorf("rate %q is not a number", rec[i])
		}
	}
	if i, ok := cols["error"]; ok {
		r.Err = rec[i]
	}
	return nil
}
