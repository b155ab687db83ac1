// Package resultstest reads a run directory in tests: its summary.json and
// meta.json, failing the test when either is missing or unreadable, so a test
// checks what a run wrote in one line instead of five.
package resultstest

import (
	"path/filepath"
	"testing"

	"github.com/credhub-perf/credhub-perf/results"
)

// Summary reads dir's summary.json.
func Summary(t testing.TB, dir string) *results.Summary {
	t.Helper()
	return SummaryFile(t, filepath.Join(dir, "summary.json"))
}

// SummaryFile reads one summary file (a tester's summary-<i>.json, say).
func SummaryFile(t testing.TB, path string) *results.Summary {
	t.Helper()
	sum, err := results.ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// Meta reads dir's meta.json.
func Meta(t testing.TB, dir string) *results.Meta {
	t.Helper()
	meta, err := results.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	return meta
}

// Run reads dir's summary.json and meta.json.
func Run(t testing.TB, dir string) (*results.Summary, *results.Meta) {
	t.Helper()
	return Summary(t, dir), Meta(t, dir)
}
