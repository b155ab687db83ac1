package results

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
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
	"request": "request",
}

// RequestTypes are the names the request column may hold (empty too: hey
// names no type). A reader refuses others rather than guess: a summary per
// type of a misspelt name would be silently wrong.
var RequestTypes = []string{"get", "set", "interpolate", "custom"}

// Limits of what a results file can hold. Anything outside them is damage,
// not a measurement: reading it as one gives silently wrong figures (a NaN
// or 1e309 latency wrapped into a negative time.Duration, a latency beyond
// the histogram's range clamped). headroom-plot applies the same limits
// (plotting/headroom_plot/csvread.py); docs/csv-format.md lists them.
const (
	// MaxLineBytes bounds one line, so a file without line ends (binary
	// junk) is refused instead of read into memory whole.
	MaxLineBytes = 1 << 20
	// MaxDurationS bounds response-time, the phase columns and sched-lag:
	// under the histogram's range (maxTrackable, about 4.9 hours).
	MaxDurationS = 10000
	// MaxOffsetS bounds |offset| (about 115 days).
	MaxOffsetS = 1e7
	// MaxStatus is the largest status-code (HTTP statuses have 3 digits).
	MaxStatus = 999
	// MaxConcurrency and MaxRate bound the step columns.
	MaxConcurrency = 1000000
	MaxRate        = 1e9
)

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
//
// Every row is one line (the writer turns line breaks in error messages into
// spaces), so the reader is line-oriented rather than encoding/csv: a stray
// quote then damages one line, reported with its number, instead of
// swallowing the rest of the file into one field. Quotes are allowed only
// around the last (error) field. A last line without a line end is a run
// killed mid-write: it is skipped with a warning whatever it holds; any
// other bad line stops the read with "NAME:LINE: what is wrong". In our
// format the header appears once and each step's rows are contiguous: a
// repeated header or a step that reappears is refused, since the figures of
// a reordered or concatenated file would be silently wrong.
func ReadCSVFrom(r io.Reader, name string, fn func(*Row) error) (ReadInfo, error) {
	var info ReadInfo
	br := bufio.NewReaderSize(r, 256<<10)
	var long []byte
	var fields [][]byte
	var cols map[string]int
	var headerLine string
	var row Row
	var firstStart time.Time
	segment := -1
	var steps stepOrder
	lineNo := 0
	for {
		line, err := readLine(br, &long, name, lineNo)
		if err != nil {
			return info, err
		}
		if len(line) == 0 {
			break // io.EOF after the last line end
		}
		lineNo++
		terminated := line[len(line)-1] == '\n'
		text := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if lineNo == 1 {
			text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
		}
		if !terminated && cols != nil {
			if len(bytes.TrimSpace(text)) > 0 {
				info.Warnings = append(info.Warnings, fmt.Sprintf("%s:%d: last line has no line end (run killed mid-write?): skipped it", name, lineNo))
			}
			break
		}
		if len(text) == 0 {
			continue
		}
		if isHeaderLine(text) {
			rec := strings.Split(string(text), ",")
			if cols == nil {
				cols, info.Format, err = parseHeader(rec)
				if err != nil {
					return info, fmt.Errorf("%s:%d: %w", name, lineNo, err)
				}
				headerLine = string(text)
				_, info.HasStatus = cols["status"]
			} else if string(text) != headerLine {
				return info, fmt.Errorf("%s:%d: a second, different header: split the file or convert it to one format", name, lineNo)
			} else if info.Format == FormatOurs {
				// credhub-perf writes its header once: a second one means
				// two files were joined, and their steps would be read as
				// one run's.
				return info, fmt.Errorf("%s:%d: the header repeats (two results files concatenated?): summarise each file on its own, or split it at that line", name, lineNo)
			}
			if info.Format != FormatOurs {
				segment++ // hey-fork files repeat the header once per step
			}
			continue
		}
		if cols == nil {
			return info, fmt.Errorf("%s:%d: no recognised header (want %q or a hey CSV header)", name, lineNo, CSVHeader)
		}
		quoted, hasErr := cols["error"]
		if !hasErr {
			quoted = -1
		}
		fields, err = splitLine(text, len(cols), quoted, fields[:0])
		if err != nil {
			return info, fmt.Errorf("%s:%d: %w: fix or delete that line", name, lineNo, err)
		}
		if err := parseRow(fields, cols, &row, &firstStart); err != nil {
			return info, fmt.Errorf("%s:%d: %w: fix or delete that line", name, lineNo, err)
		}
		if info.Format == FormatOurs {
			first, err := steps.next(stepKey{row.Concurrency, row.Rate}, lineNo)
			if err != nil {
				return info, fmt.Errorf("%s:%d: rows of the step at concurrency %s, rate %s %w", name, lineNo, fields[cols["concurrency"]], fields[cols["rate"]], err)
			}
			if first {
				segment++
			}
		}
		row.Segment = segment
		row.Line = lineNo
		info.Rows++
		if err := fn(&row); err != nil {
			return info, err
		}
	}
	if cols == nil {
		return info, fmt.Errorf("%s:1: empty file: no header", name)
	}
	return info, nil
}

// readLine reads the next line with its line end (empty at the end of
// the input), refusing one longer than MaxLineBytes; long is the buffer
// such lines are gathered in. lineNo: the lines read so far.
func readLine(br *bufio.Reader, long *[]byte, name string, lineNo int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		*long = append((*long)[:0], line...)
		for err == bufio.ErrBufferFull && len(*long) <= MaxLineBytes {
			line, err = br.ReadSlice('\n')
			*long = append(*long, line...)
		}
		if len(*long) > MaxLineBytes {
			return nil, fmt.Errorf("%s:%d: line longer than %d bytes: not a results CSV (binary data?)", name, lineNo+1, MaxLineBytes)
		}
		line = *long
	}
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s:%d: %w", name, lineNo+1, err)
	}
	return line, nil
}

// stepOrder follows the steps of a file in our format. A step is its
// (concurrency, rate) as numbers, as headroom-plot reads it: "50" and
// "50.0" are one step in both readers.
type stepOrder struct {
	last     stepKey
	haveLast bool
	line     map[stepKey]int // step -> line of its first row
}

// next says whether the row at line lineNo of step key starts a step. A
// step's rows are contiguous as written; a step that comes back after
// another began means the rows were reordered (a sorted or concatenated
// file) and every step figure taken from them would be wrong: an error.
func (o *stepOrder) next(key stepKey, lineNo int) (bool, error) {
	if o.haveLast && key == o.last {
		return false, nil
	}
	if first, ok := o.line[key]; ok {
		return false, fmt.Errorf("appear again after another step (first at line %d): the rows are out of order (a sorted or concatenated file?); use the file as credhub-perf wrote it, each step's rows together in run order", first)
	}
	if o.line == nil {
		o.line = map[stepKey]int{}
	}
	o.line[key] = lineNo
	o.last, o.haveLast = key, true
	return true, nil
}

// splitLine cuts a line into n fields. Quotes may only enclose the error
// column (index quoted; -1 when the format has none): the writer quotes
// nothing else. The error column is last in older files and followed by the
// request column since it was appended.
func splitLine(line []byte, n int, quoted int, dst [][]byte) ([][]byte, error) {
	if quoted < 0 && bytes.IndexByte(line, '"') >= 0 {
		return nil, fmt.Errorf("a quote (\") in a file whose columns are never quoted")
	}
	rest := line
	for i := 0; ; i++ {
		var f []byte
		if i == quoted && len(rest) > 0 && rest[0] == '"' {
			// The error field: "..." with inner quotes doubled, then a comma or the end.
			j := 1
			for ; j < len(rest); j++ {
				if rest[j] == '"' {
					if j+1 < len(rest) && rest[j+1] == '"' {
						j++
						continue
					}
					break
				}
			}
			if j >= len(rest) || (j+1 < len(rest) && rest[j+1] != ',') {
				return nil, fmt.Errorf("the error column is not one quoted field (a stray or undoubled quote, or text after the closing quote)")
			}
			f, rest = rest[:j+1], rest[j+1:]
		} else {
			c := bytes.IndexByte(rest, ',')
			if c < 0 {
				c = len(rest)
			}
			f = rest[:c]
			if q := bytes.IndexByte(f, '"'); q >= 0 {
				if i == quoted {
					return nil, fmt.Errorf("the error column is not one quoted field (a stray or undoubled quote, or text after the closing quote)")
				}
				if i > quoted && quoted >= 0 && i == n-1 {
					return nil, fmt.Errorf("a quote (\") in the request column, which is never quoted")
				}
				return nil, fmt.Errorf("a quote (\") outside the error column")
			}
			rest = rest[c:]
		}
		dst = append(dst, f)
		if len(rest) == 0 {
			if i+1 != n {
				return nil, fmt.Errorf("%d fields, the header has %d", i+1, n)
			}
			return dst, nil
		}
		rest = rest[1:] // the comma
		if i+1 >= n {
			return nil, fmt.Errorf("%d fields, the header has %d", i+2+bytes.Count(rest, []byte(",")), n)
		}
	}
}

// unquote returns a field's text: the error column without its quotes.
func unquote(f []byte) string {
	if len(f) >= 2 && f[0] == '"' {
		return strings.ReplaceAll(string(f[1:len(f)-1]), `""`, `"`)
	}
	return string(f)
}

func isHeaderLine(text []byte) bool {
	return bytes.HasPrefix(text, []byte("start-time,")) || bytes.HasPrefix(text, []byte("response-time,")) ||
		string(text) == "start-time" || string(text) == "response-time"
}

func parseHeader(rec []string) (map[string]int, Format, error) {
	cols := map[string]int{}
	for i, h := range rec {
		key, ok := columnAliases[strings.ToLower(strings.TrimSpace(h))]
		if !ok {
			return nil, "", fmt.Errorf("unknown column %q in the header", h)
		}
		if _, dup := cols[key]; dup {
			return nil, "", fmt.Errorf("column %q appears twice in the header", h)
		}
		cols[key] = i
	}
	if _, ok := cols["latency"]; !ok {
		return nil, "", fmt.Errorf("the header has no response-time column")
	}
	_, hasStart := cols["start"]
	_, hasOffset := cols["offset"]
	switch {
	case strings.Join(rec, ",") == CSVHeader, strings.Join(rec, ",") == CSVHeader13:
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

// isDecimal accepts [-]digits[.digits][e[-+]digits] (and .5, 5.): what a
// writer of seconds produces, and what headroom-plot accepts. ParseFloat
// alone would also take NaN, Inf, hex floats and underscores.
func isDecimal(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// parseNumber reads a finite decimal number within [lo, hi].
func parseNumber(s []byte, col string, lo, hi float64, unit string) (float64, error) {
	if !isDecimal(s) {
		return 0, fmt.Errorf("%s %q is not a decimal number", col, shorten(s))
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%s %q is not a finite number", col, shorten(s))
	}
	if f < lo || f > hi {
		return 0, fmt.Errorf("%s %s is out of range [%g, %g]%s", col, s, lo, hi, unit)
	}
	return f, nil
}

// parseInt reads canonical digits only (no sign, decimals or leading zero,
// as headroom-plot requires too) within [lo, hi].
func parseInt(s []byte, col string, lo, hi int) (int, error) {
	if len(s) == 0 || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%s %q is not an integer in [%d, %d]", col, shorten(s), lo, hi)
	}
	v := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%s %q is not an integer in [%d, %d]", col, shorten(s), lo, hi)
		}
		v = v*10 + int(c-'0')
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("%s %d is out of range [%d, %d]", col, v, lo, hi)
	}
	return v, nil
}

// shorten keeps messages one short line whatever the field holds.
func shorten(s []byte) string {
	if len(s) > 40 {
		return string(s[:40]) + "..."
	}
	return string(s)
}

func parseRow(rec [][]byte, cols map[string]int, r *Row, firstStart *time.Time) error {
	r.Result = load.Result{}
	durs := []struct {
		col, name string
		dst       *time.Duration
	}{{"latency", "response-time", &r.Latency}, {"dnsdial", "DNS+dialup", &r.DNSDial}, {"dns", "DNS", &r.DNS},
		{"reqwrite", "Request-write", &r.ReqWrite}, {"respdelay", "Response-delay", &r.RespDelay},
		{"respread", "Response-read", &r.RespRead}, {"offset", "offset", &r.Offset}, {"schedlag", "sched-lag", &r.SchedLag}}
	for _, d := range durs {
		i, ok := cols[d.col]
		if !ok {
			continue
		}
		lo, hi := 0.0, float64(MaxDurationS)
		if d.col == "offset" {
			// offset is a time difference, not a duration: testers share an
			// origin, so a slightly negative one is possible.
			lo, hi = -MaxOffsetS, MaxOffsetS
		}
		f, err := parseNumber(rec[i], d.name, lo, hi, " seconds")
		if err != nil {
			return err
		}
		*d.dst = time.Duration(math.Round(f * 1e9))
	}
	var err error
	if i, ok := cols["start"]; ok {
		if r.Start, err = time.Parse(time.RFC3339Nano, string(rec[i])); err != nil {
			return fmt.Errorf("start-time %q is not an RFC 3339 time (like 2017-06-01T12:00:00.123456789Z)", shorten(rec[i]))
		}
		if _, hasOffset := cols["offset"]; !hasOffset {
			// hey-fork rows are in completion order, so offsets from the
			// first row may be negative; they only need a common origin.
			if firstStart.IsZero() {
				*firstStart = r.Start
			}
			d := r.Start.Sub(*firstStart)
			if d > MaxOffsetS*time.Second || d < -MaxOffsetS*time.Second {
				return fmt.Errorf("start-time %s is more than %g s from the first row's", rec[i], float64(MaxOffsetS))
			}
			r.Offset = d
		}
	}
	if i, ok := cols["status"]; ok {
		if r.Status, err = parseInt(rec[i], "status-code", 0, MaxStatus); err != nil {
			return err
		}
	} else {
		r.Status = 200 // formats that only wrote successes
	}
	if i, ok := cols["concurrency"]; ok {
		if r.Concurrency, err = parseInt(rec[i], "concurrency", 1, MaxConcurrency); err != nil {
			return err
		}
	}
	if i, ok := cols["rate"]; ok {
		if r.Rate, err = parseNumber(rec[i], "rate", 0, MaxRate, " requests/s"); err != nil {
			return err
		}
	}
	if i, ok := cols["error"]; ok {
		r.Err = unquote(rec[i])
	}
	if i, ok := cols["request"]; ok && len(rec[i]) > 0 {
		// The interned name, so a row costs no allocation for it.
		for _, t := range RequestTypes {
			if string(rec[i]) == t {
				r.Request = t
				break
			}
		}
		if r.Request == "" {
			return fmt.Errorf("request %q is not a request type (want one of %s, or empty)", shorten(rec[i]), strings.Join(RequestTypes, ", "))
		}
	}
	return nil
}
