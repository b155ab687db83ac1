package results

import (
	"bufio"
	"io"
	"strconv"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

// CSVHeader is the header line of the CSV contract in docs/design.md.
const CSVHeader = CSVHeader13 + ",request"

// CSVHeader13 is the header before the request column was appended; readers
// still accept files written with it.
const CSVHeader13 = "start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset,concurrency,rate,sched-lag,error"

// CSVWriter writes results as rows of the CSV contract. It is a load.Sink.
// The first write error is kept and returned by Flush and Close; rows after
// it are dropped.
type CSVWriter struct {
	w      *bufio.Writer
	c      io.Closer
	row    []byte
	err    error
	header bool
	rows   int64
}

// NewCSVWriter writes the header and then one row per Record to w. Close
// also closes w when it is an io.Closer; call Flush instead for a writer
// the caller keeps open (such as os.Stdout).
func NewCSVWriter(w io.Writer) *CSVWriter {
	cw := &CSVWriter{w: bufio.NewWriterSize(w, 256<<10), row: make([]byte, 0, 512)}
	if c, ok := w.(io.Closer); ok {
		cw.c = c
	}
	return cw
}

// Rows is the number of rows written (without the header).
func (cw *CSVWriter) Rows() int64 { return cw.rows }

// Record writes one row.
func (cw *CSVWriter) Record(r *load.Result) {
	if cw.err != nil {
		return
	}
	if !cw.header {
		cw.header = true
		if _, cw.err = cw.w.WriteString(CSVHeader + "\n"); cw.err != nil {
			return
		}
	}
	cw.row = AppendCSVRow(cw.row[:0], r)
	if _, cw.err = cw.w.Write(cw.row); cw.err == nil {
		cw.rows++
	}
}

// AppendCSVRow appends r as one CSV row (with its newline) to dst.
func AppendCSVRow(dst []byte, r *load.Result) []byte {
	dst = r.Start.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, ',')
	dst = appendSeconds(dst, r.Latency)
	dst = append(dst, ',')
	dst = appendSeconds(dst, r.DNSDial)
	dst = append(dst, ',')
	dst = appendSeconds(dst, r.DNS)
	dst = append(dst, ',')
	dst = appendSeconds(dst, r.ReqWrite)
	dst = append(dst, ',')
	dst = appendSeconds(dst, r.RespDelay)
	dst = append(dst, ',')
	dst = appendSeconds(dst, r.RespRead)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(r.Status), 10)
	dst = append(dst, ',')
	dst = appendSeconds(dst, r.Offset)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(r.Concurrency), 10)
	dst = append(dst, ',')
	dst = strconv.AppendFloat(dst, r.Rate, 'f', -1, 64)
	dst = append(dst, ',')
	dst = appendSeconds(dst, r.SchedLag)
	dst = append(dst, ',')
	if r.Err != "" {
		dst = appendQuoted(dst, r.Err)
	}
	dst = append(dst, ',')
	dst = append(dst, r.Request...)
	return append(dst, '\n')
}

// appendSeconds writes d as seconds with exactly 6 decimals, rounded to the
// nearest microsecond, without going through float formatting.
func appendSeconds(dst []byte, d time.Duration) []byte {
	if d < 0 {
		dst = append(dst, '-')
		d = -d
	}
	us := (int64(d) + 500) / 1000
	dst = strconv.AppendInt(dst, us/1e6, 10)
	frac := us % 1e6
	dst = append(dst, '.',
		byte('0'+frac/100000), byte('0'+frac/10000%10), byte('0'+frac/1000%10),
		byte('0'+frac/100%10), byte('0'+frac/10%10), byte('0'+frac%10))
	return dst
}

// appendQuoted writes s as a quoted CSV field. Line breaks become spaces so
// every row stays on one line for line-oriented tools.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			dst = append(dst, '"', '"')
		case '\n', '\r':
			dst = append(dst, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// Flush writes the header (even with no rows) and buffered rows.
func (cw *CSVWriter) Flush() error {
	if cw.err == nil && !cw.header {
		cw.header = true
		_, cw.err = cw.w.WriteString(CSVHeader + "\n")
	}
	if cw.err != nil {
		return cw.err
	}
	cw.err = cw.w.Flush()
	return cw.err
}

// Close flushes and closes the underlying writer if it is an io.Closer.
func (cw *CSVWriter) Close() error {
	err := cw.Flush()
	if cw.c != nil {
		if cerr := cw.c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
