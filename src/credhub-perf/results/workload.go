package results

import (
	"fmt"
	"io"
	"strings"
)

// Workload is the production workload a run replayed (`run --workload`):
// which file, the weights and name skew taken from it, and the request
// types of the log the tool cannot send, with their shares, so a reader
// of the result knows what part of production it did not test.
type Workload struct {
	File     string  `json:"file"`
	SHA256   string  `json:"sha256"`
	Requests int64   `json:"requests"` // requests the log counted
	Weights  MetaMix `json:"weights"`  // the mix.* weights used
	// ReplayedShare is the part of the log's requests the run sends
	// (the replayable types'); the weights split it.
	ReplayedShare float64 `json:"replayed_share"`
	ZipfS         float64 `json:"zipf_s"`              // name popularity; 0 uniform
	SetBytes      int     `json:"set_bytes,omitempty"` // set body size from the log's body_bytes.p50
	// NotSent lists the types the run cannot send, most requests first.
	NotSent []WorkloadType `json:"not_sent"`
}

// WorkloadType is one request type of the log and its share of requests.
type WorkloadType struct {
	Type  string  `json:"type"`
	Share float64 `json:"share"`
}

// WriteNote writes the workload lines of summary.txt (and of the run's
// log, before any load).
func (w *Workload) WriteNote(out io.Writer) {
	if w == nil {
		return
	}
	total := w.Weights.Get + w.Weights.Set + w.Weights.Interpolate
	pc := func(x int) float64 { return 100 * w.ReplayedShare * float64(x) / float64(max(total, 1)) }
	skew := "uniform"
	if w.ZipfS > 0 {
		skew = fmt.Sprintf("Zipf s=%g", w.ZipfS)
	}
	fmt.Fprintf(out, "workload: %s (sha256 %.12s, %d requests): sends get %.1f %%, set %.1f %%, interpolate %.1f %% of its requests; name popularity %s\n",
		w.File, w.SHA256, w.Requests, pc(w.Weights.Get), pc(w.Weights.Set), pc(w.Weights.Interpolate), skew)
	if len(w.NotSent) == 0 {
		fmt.Fprintln(out, "workload: every request type of the log is sent")
		return
	}
	var b []string
	for _, t := range w.NotSent {
		b = append(b, fmt.Sprintf("%s %.1f %%", t.Type, 100*t.Share))
	}
	fmt.Fprintf(out, "workload: NOT SENT (%.1f %% of its requests, not tested): %s\n", 100*(1-w.ReplayedShare), strings.Join(b, ", "))
}
