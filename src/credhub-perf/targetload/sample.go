package targetload

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// FileName is the samples file of a run directory.
const FileName = "target-samples.csv"

// Header is the samples file's header line.
const Header = "source,resource,instance,start,end,cpu,rss_bytes"

// Resources the verdict knows by name; a process source may name others.
const (
	CredHub  = "credhub"
	Database = "database"
)

// Sample is one resource instance's use over [Start, End), offsets on the
// run's CSV origin.
type Sample struct {
	Source   string // proc, bosh, credhub-sim
	Resource string // credhub, database, or a name the operator gave
	Instance string // pid 1234, postgres, credhub/0, instance 2
	Start    time.Duration
	End      time.Duration
	// CPU is the share (0..1) of the cores the instance may use; NaN when
	// unknown (never a zero standing in for it).
	CPU float64
	// RSSBytes is resident memory; -1 when unknown.
	RSSBytes int64
}

// Writer appends samples to a file, one line each, flushed per batch so a
// run that dies keeps what was sampled.
type Writer struct {
	f *os.File
	w *bufio.Writer
}

// Create makes path (refusing an existing file) and writes the header.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("target samples file: %w", err)
	}
	w := &Writer{f: f, w: bufio.NewWriter(f)}
	w.w.WriteString(Header + "\n")
	return w, nil
}

// Write appends samples and flushes them.
func (w *Writer) Write(samples []Sample) error {
	for _, s := range samples {
		cpu, rss := "", ""
		if !math.IsNaN(s.CPU) {
			cpu = strconv.FormatFloat(s.CPU, 'f', 4, 64)
		}
		if s.RSSBytes >= 0 {
			rss = strconv.FormatInt(s.RSSBytes, 10)
		}
		fmt.Fprintf(w.w, "%s,%s,%s,%.3f,%.3f,%s,%s\n", field(s.Source), field(s.Resource), field(s.Instance),
			s.Start.Seconds(), s.End.Seconds(), cpu, rss)
	}
	return w.w.Flush()
}

// Close flushes and closes the file.
func (w *Writer) Close() error {
	err := w.w.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// field keeps a name to one CSV field without quoting: names come from
// configuration and command output.
func field(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ',' || r == '"' || r == '\n' || r == '\r' {
			return '_'
		}
		return r
	}, s)
}

// Shift moves samples' intervals by d (from one time origin to another),
// keeping those that end after from and start before to (in the new
// origin's terms).
func Shift(samples []Sample, d, from, to time.Duration) []Sample {
	var out []Sample
	for _, x := range samples {
		x.Start, x.End = x.Start+d, x.End+d
		if x.End > from && x.Start < to {
			out = append(out, x)
		}
	}
	return out
}

// maxShare bounds a CPU share read back: a little over 1 is rounding and
// timer jitter, far over it is a broken file.
const maxShare = 1.5

// Read reads a samples file. Lines it cannot use are skipped with a
// warning naming FILE:LINE (at most a few, then a count); a file that is
// not a samples file is an error.
func Read(path string) ([]Sample, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return read(f, path)
}

func read(r io.Reader, name string) ([]Sample, []string, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%s: empty, want the header %q", name, Header)
		}
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if strings.Join(head, ",") != Header {
		return nil, nil, fmt.Errorf("%s:1: header %q is not %q", name, strings.Join(head, ","), Header)
	}
	var out []Sample
	var warnings []string
	bad := 0
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var s Sample
		if err == nil {
			s, err = parseRecord(rec)
		}
		if err != nil {
			bad++
			if bad <= 3 {
				warnings = append(warnings, fmt.Sprintf("%s:%d: %v; line skipped", name, line, err))
			}
			continue
		}
		out = append(out, s)
	}
	if bad > 3 {
		warnings = append(warnings, fmt.Sprintf("%s: %d lines skipped in all", name, bad))
	}
	return out, warnings, nil
}

func parseRecord(rec []string) (Sample, error) {
	if len(rec) != 7 {
		return Sample{}, fmt.Errorf("%d fields, want 7", len(rec))
	}
	s := Sample{Source: rec[0], Resource: rec[1], Instance: rec[2], CPU: math.NaN(), RSSBytes: -1}
	if s.Source == "" || s.Resource == "" {
		return Sample{}, errors.New("no source or resource")
	}
	start, err1 := strconv.ParseFloat(rec[3], 64)
	end, err2 := strconv.ParseFloat(rec[4], 64)
	if err1 != nil || err2 != nil || !finite(start) || !finite(end) || end < start || math.Abs(start) > 1e10 || math.Abs(end) > 1e10 {
		return Sample{}, fmt.Errorf("start %q and end %q are not an interval in seconds", rec[3], rec[4])
	}
	s.Start, s.End = seconds(start), seconds(end)
	if rec[5] != "" {
		cpu, err := strconv.ParseFloat(rec[5], 64)
		if err != nil || !finite(cpu) || cpu < 0 || cpu > maxShare {
			return Sample{}, fmt.Errorf("cpu %q is not a share from 0 to 1", rec[5])
		}
		s.CPU = cpu
	}
	if rec[6] != "" {
		rss, err := strconv.ParseInt(rec[6], 10, 64)
		if err != nil || rss < 0 {
			return Sample{}, fmt.Errorf("rss_bytes %q is not a byte count", rec[6])
		}
		s.RSSBytes = rss
	}
	if math.IsNaN(s.CPU) && s.RSSBytes < 0 {
		return Sample{}, errors.New("neither cpu nor rss_bytes")
	}
	return s, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func seconds(f float64) time.Duration { return time.Duration(math.Round(f * 1e9)) }
