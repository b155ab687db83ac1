package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/results"
)

// credhub-perf summary on damaged CSVs: before issue 13 `ab"c,1,2` panicked
// (exit 2 with a goroutine dump) and `nan` or `1e309` latencies exited 0
// with a mean of -30,847,398,115 ms. Now: one line FILE:LINE: ..., exit 2,
// and no summary.json written.
func TestSummaryOfDamagedCSV(t *testing.T) {
	good := "2026-01-01T00:00:00.000001Z,0.001000,0,0,0,0,0,200,0.000001,1,0,0,,get\n"
	for name, bad := range map[string]string{
		"quote":  "ab\"c,1,2\n",
		"binary": "\x00\xff\x89PNG\r\n",
		"nan":    strings.Replace(good, "0.001000", "nan", 1),
		"1e309":  strings.Replace(good, "0.001000", "1e309", 1),
		"1e300":  strings.Replace(good, "0.001000", "1e300", 1),
		// a concatenated file: the header again, then more rows
		"header repeated": results.CSVHeader + "\n",
		// step 2's row between step 1's: a sorted or concatenated file
		// once gave a capacity taken from reordered rows
		"steps interleaved": strings.Replace(good, ",200,0.000001,1,", ",200,0.000001,2,", 1),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "results.csv")
			want := ":4: "
			if name == "steps interleaved" {
				want = ":5: " // the step 1 row after it is what is out of order
			}
			if err := os.WriteFile(p, []byte(results.CSVHeader+"\n"+good+good+bad+good), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, arg := range []string{p, dir} {
				var out, errb bytes.Buffer
				code := Main([]string{"summary", arg}, &out, &errb)
				msg := strings.TrimSuffix(errb.String(), "\n")
				if code != 2 || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "credhub-perf summary: "+p+want) {
					t.Fatalf("summary %s: exit %d, stderr %q; want exit 2 and one line naming %s%s", arg, code, errb.String(), p, want)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "summary.json")); !os.IsNotExist(err) {
				t.Fatalf("summary.json written from a damaged CSV (%v)", err)
			}
		})
	}
}
