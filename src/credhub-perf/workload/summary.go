package workload

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteSummary writes the workload for a person: the mix, who asks, the
// rates, the names' spread, and what was skipped.
func WriteSummary(out io.Writer, w *Workload) {
	fmt.Fprintf(out, "CredHub workload %s .. %s (%.0f s): %d requests (%d audit lines), mean %.2f req/s\n",
		w.Interval.Start, w.Interval.End, w.Interval.Seconds, w.Requests, w.Lines, w.Rates.Mean)
	fmt.Fprintf(out, "peak second %s: %d requests; busiest minute from %s: %d (%.1f req/s); p99 second %.0f; burstiness %.2f (1 = Poisson)\n",
		w.Rates.PeakSecond.At, w.Rates.PeakSecond.Requests, w.Rates.BusiestMinute.At, w.Rates.BusiestMinute.Requests,
		w.Rates.BusiestMinute.Mean, w.Rates.P99Second, w.Rates.Burstiness)
	fmt.Fprintln(out, "requests by type:")
	var unsent []string
	for _, t := range w.Types {
		replay := "replays as " + t.Scenario
		if !t.Replayable {
			replay = "not replayable"
			unsent = append(unsent, fmt.Sprintf("%s %.1f %%", t.Type, 100*t.Share))
		}
		fmt.Fprintf(out, "  %-18s %10d  %5.1f %%  %s\n", t.Type, t.Requests, 100*t.Share, replay)
	}
	if len(unsent) > 0 {
		fmt.Fprintf(out, "not replayable by credhub-perf: %s\n", strings.Join(unsent, ", "))
	}
	fmt.Fprintf(out, "auth: mutual TLS %d, UAA %d, other %d; status: %s\n",
		w.Auth["mutual_tls"], w.Auth["uaa"], w.Auth["other"], countsText(w.Status))
	exact := ""
	if !w.Names.DistinctExact {
		exact = " (at least)"
	}
	fmt.Fprintf(out, "names: %d distinct%s; top 1 %.1f %%, top 10 %.1f %%, top 1 %% of names %.1f %% of name lookups; Zipf s %.2f\n",
		w.Names.Distinct, exact, 100*w.Names.Top1Share, 100*w.Names.Top10Share, 100*w.Names.Top1PctShare, w.Popularity.ZipfS)
	if len(w.Skipped) > 0 {
		fmt.Fprintf(out, "skipped lines: %s\n", skippedText(w.Skipped))
	}
	for _, warn := range w.Warnings {
		fmt.Fprintf(out, "warning: %s\n", warn)
	}
}

func countsText(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
