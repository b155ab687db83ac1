package targetload

// The samples file's machine columns (cpus, machine, machine_busy,
// machine_steal, machine_iowait, machine_other) and the bounded line
// reader every samples file is read through.

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// maxLine bounds a samples line: real ones are under 200 bytes, and a
// file of one 2 GB line (a sparse or corrupted file) must cost a read of
// this much, not the whole file in memory.
const maxLine = 64 << 10

// machineFields is a sample's machine columns, unknown ones empty.
func machineFields(s Sample) string {
	if s.Machine == "" {
		return field(s.CPUs) + ",,,,,"
	}
	share := func(f float64) string {
		if math.IsNaN(f) {
			return ""
		}
		return strconv.FormatFloat(math.Round(f*1e4)/1e4, 'f', 4, 64)
	}
	return strings.Join([]string{field(s.CPUs), field(s.Machine), share(s.MachineBusy), share(s.MachineSteal), share(s.MachineIowait), share(s.MachineOther)}, ",")
}

// parseMachine reads the machine columns into s.
func parseMachine(s *Sample, rec []string) error {
	s.CPUs, s.Machine = rec[0], rec[1]
	if s.CPUs != "" {
		if _, err := ParseCPUList(s.CPUs); err != nil {
			return fmt.Errorf("cpus: %w", err)
		}
	}
	if s.Machine == "" {
		for _, v := range rec[2:] {
			if v != "" {
				return errors.New("machine figures without a machine name")
			}
		}
		return nil
	}
	var err error
	for i, dst := range []*float64{&s.MachineBusy, &s.MachineSteal, &s.MachineIowait, &s.MachineOther} {
		name := []string{"machine_busy", "machine_steal", "machine_iowait", "machine_other"}[i]
		if *dst, err = parseShare(name, rec[2+i]); err != nil {
			return err
		}
	}
	return nil
}

// lineReader hands out lines of at most maxLine bytes.
type lineReader struct{ r *bufio.Reader }

func newLineReader(r io.Reader) *lineReader { return &lineReader{bufio.NewReaderSize(r, maxLine)} }

// errLongLine: the line is longer than a samples line can be.
var errLongLine = fmt.Errorf("a line over %d KiB: not a samples line", maxLine>>10)

func (l *lineReader) next() (string, error) {
	b, err := l.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return "", errLongLine
	}
	if err != nil && !(errors.Is(err, io.EOF) && len(b) > 0) {
		return "", err
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// csvLine splits one line as CSV: names are written without quotes or
// commas, so a quote is a broken line.
func csvLine(line string) ([]string, error) {
	cr := csv.NewReader(strings.NewReader(line))
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return []string{""}, nil
	}
	return rec, err
}

// clip cuts s to n bytes for a message: names come from outside (a
// process name may be thousands of bytes long).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
