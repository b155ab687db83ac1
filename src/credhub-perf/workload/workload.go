package workload

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

// Format is workload.json's format id.
const Format = "credhub-perf-workload/1"

// DefaultWindow is how far (in rt) a line may come after a later-begun
// request's line in one file: CredHub stamps rt at a request's start and
// writes at its end, so this is the longest request it expects to see.
const DefaultWindow = 60 * time.Second

// Options says what Analyze reads and how.
type Options struct {
	Paths     []string
	KeepNames bool          // put the most requested names in workload.json
	Window    time.Duration // reorder window; 0 = DefaultWindow
	// Arrivals, when set, receives the per-second counts by type as CSV
	// (see WriteArrivalsHeader).
	Arrivals io.Writer
	Version  string
}

// Analyze reads every audit log in opts.Paths, merged by time, and sums
// up the workload. An error is one line naming the file and the fix.
func Analyze(opts Options) (*Workload, error) {
	if len(opts.Paths) == 0 {
		return nil, errors.New("no audit log given: pass credhub_security_events.log files (plain or .gz) or `bosh logs` tarballs")
	}
	window := opts.Window
	if window == 0 {
		window = DefaultWindow
	}
	var tmpDir string
	defer func() {
		if tmpDir != "" {
			os.RemoveAll(tmpDir)
		}
	}()
	mkTmp := func() (string, error) {
		if tmpDir == "" {
			d, err := os.MkdirTemp("", "credhub-perf-workload-")
			if err != nil {
				return "", fmt.Errorf("a directory for the tarballs' logs: %w", err)
			}
			tmpDir = d
		}
		return tmpDir, nil
	}
	inputs, err := expandInputs(opts.Paths, mkTmp)
	if err != nil {
		return nil, err
	}
	names := newNameTable(opts.KeepNames)
	srcs := make([]*source, 0, len(inputs))
	for _, in := range inputs {
		r, c, err := openLog(in.path)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		srcs = append(srcs, newSource(in.name, r, window.Milliseconds(), names))
	}
	agg := newAggregator()
	var aw *arrivalsWriter
	if opts.Arrivals != nil {
		aw = newArrivalsWriter(opts.Arrivals)
		if err := aw.header(); err != nil {
			return nil, err
		}
		agg.arrivals = aw.row
	}
	if err := merge(srcs, agg); err != nil {
		return nil, err
	}
	if aw != nil {
		if err := aw.flush(); err != nil {
			return nil, fmt.Errorf("writing the arrivals: %w", err)
		}
	}
	w := build(agg, srcs, names, opts)
	if w.Requests == 0 {
		return w, fmt.Errorf("no CredHub audit record in %s (%s): pass /var/vcap/sys/log/credhub/credhub_security_events.log* of the credhub VMs", strings.Join(opts.Paths, ", "), skippedText(w.Skipped))
	}
	return w, nil
}

// merge is a k-way merge of the sources by request time.
func merge(srcs []*source, agg *aggregator) error {
	heads := make([]int, 0, len(srcs))
	at := make([]int64, len(srcs))
	for i, s := range srcs {
		r, ok, err := s.peek()
		if err != nil {
			return err
		}
		if ok {
			heads = append(heads, i)
			at[i] = r.At
		}
	}
	for len(heads) > 0 {
		best := 0
		for j := 1; j < len(heads); j++ {
			if at[heads[j]] < at[heads[best]] {
				best = j
			}
		}
		i := heads[best]
		s := srcs[i]
		if err := agg.add(&s.pending[0]); err != nil {
			return err
		}
		s.pop()
		r, ok, err := s.peek()
		if err != nil {
			return err
		}
		if ok {
			at[i] = r.At
		} else {
			heads = append(heads[:best], heads[best+1:]...)
		}
	}
	return agg.finish()
}

func skippedText(sk map[string]int64) string {
	if len(sk) == 0 {
		return "no line"
	}
	keys := make([]string, 0, len(sk))
	for k := range sk {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d skipped: %s", sk[k], k)
	}
	return strings.Join(parts, "; ")
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
