package targetload

import (
	"bufio"
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

// Header is the samples file's header line; OldHeader, without the
// machine's columns, is still read.
const (
	Header    = OldHeader + ",cpus,machine,machine_busy,machine_steal,machine_iowait,machine_other"
	OldHeader = "source,resource,instance,start,end,cpu,rss_bytes"
)

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
	// CPUs the instance may use ("1", "0-3"); "" unknown.
	CPUs string
	// Machine names the CPUs the instance runs on: instances of one
	// machine share them (machine.go). "" when unknown; the Machine*
	// shares mean nothing then.
	Machine string
	// Shares (0..1) of the machine's CPUs over the interval: busy (every
	// process), stolen by the hypervisor, in iowait, and busy with work
	// other than the sampled resources'. NaN when unknown.
	MachineBusy, MachineSteal, MachineIowait, MachineOther float64
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
		fmt.Fprintf(w.w, "%s,%s,%s,%.3f,%.3f,%s,%s,%s\n", field(s.Source), field(s.Resource), field(s.Instance),
			s.Start.Seconds(), s.End.Seconds(), cpu, rss, machineFields(s))
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
	lines := newLineReader(r)
	headLine, err := lines.next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, fmt.Errorf("%s: empty, want the header %q", name, Header)
		}
		return nil, nil, fmt.Errorf("%s:1: %w", name, err)
	}
	head, err := csvLine(headLine)
	if err != nil {
		return nil, nil, fmt.Errorf("%s:1: %w", name, err)
	}
	fields := 0
	switch strings.Join(head, ",") {
	case Header:
		fields = 13
	case OldHeader:
		fields = 7
	default:
		return nil, nil, fmt.Errorf("%s:1: header %q is not %q", name, clip(strings.Join(head, ","), 200), Header)
	}
	var out []Sample
	var warnings []string
	bad := 0
	for line := 2; ; line++ {
		text, err := lines.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// A line past the bound is not a samples line, and reading on
			// through gigabytes of one would cost the run its memory.
			warnings = append(warnings, fmt.Sprintf("%s:%d: %v; the rest of the file is not read", name, line, err))
			break
		}
		if text == "" {
			continue
		}
		var s Sample
		rec, err := csvLine(text)
		if err == nil {
			s, err = parseRecord(rec, fields)
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

func parseRecord(rec []string, fields int) (Sample, error) {
	if len(rec) != fields {
		return Sample{}, fmt.Errorf("%d fields, want %d", len(rec), fields)
	}
	s := Sample{Source: rec[0], Resource: rec[1], Instance: rec[2], CPU: math.NaN(), RSSBytes: -1}
	s.MachineBusy, s.MachineSteal, s.MachineIowait, s.MachineOther = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if s.Source == "" || s.Resource == "" {
		return Sample{}, errors.New("no source or resource")
	}
	start, err1 := strconv.ParseFloat(rec[3], 64)
	end, err2 := strconv.ParseFloat(rec[4], 64)
	if err1 != nil || err2 != nil || !finite(start) || !finite(end) || end < start || math.Abs(start) > 1e10 || math.Abs(end) > 1e10 {
		return Sample{}, fmt.Errorf("start %q and end %q are not an interval in seconds", clip(rec[3], 40), clip(rec[4], 40))
	}
	s.Start, s.End = seconds(start), seconds(end)
	var err error
	if s.CPU, err = parseShare("cpu", rec[5]); err != nil {
		return Sample{}, err
	}
	if rec[6] != "" {
		rss, err := strconv.ParseInt(rec[6], 10, 64)
		if err != nil || rss < 0 {
			return Sample{}, fmt.Errorf("rss_bytes %q is not a byte count", clip(rec[6], 40))
		}
		s.RSSBytes = rss
	}
	if fields > 7 {
		if err := parseMachine(&s, rec[7:]); err != nil {
			return Sample{}, err
		}
	}
	if math.IsNaN(s.CPU) && s.RSSBytes < 0 && math.IsNaN(s.MachineBusy) {
		return Sample{}, errors.New("neither cpu, rss_bytes nor machine_busy")
	}
	return s, nil
}

// parseShare reads a share from 0 to 1 (a little over is timer jitter);
// "" is NaN, unknown.
func parseShare(name, v string) (float64, error) {
	if v == "" {
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !finite(f) || f < 0 || f > maxShare {
		return 0, fmt.Errorf("%s %q is not a share from 0 to 1", name, clip(v, 40))
	}
	return f, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func seconds(f float64) time.Duration { return time.Duration(math.Round(f * 1e9)) }
