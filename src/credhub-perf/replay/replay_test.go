package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/results"
)

const good = `{"format": "credhub-perf-workload/1", "tool_version": "x", "requests": 1000, "extra": {"added": "later"},
 "types": [
  {"type": "get_by_name", "requests": 600, "share": 0.6, "scenario": "get", "replayable": true},
  {"type": "get_by_id", "requests": 100, "share": 0.1, "scenario": "get", "replayable": true},
  {"type": "find_by_path", "requests": 200, "share": 0.2, "scenario": "", "replayable": false},
  {"type": "set", "requests": 100, "share": 0.1, "scenario": "set", "replayable": true, "body_bytes": {"p50": 90000}}
 ],
 "popularity": {"zipf_s": 0.9}}`

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "workload.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Shares of one scenario add up; the weights split 1000000 by the shares
// the run sends; a set body beyond seed.bytes's bound is sent at it.
func TestLoadKnownAnswer(t *testing.T) {
	w, err := Load(write(t, good))
	if err != nil {
		t.Fatal(err)
	}
	if w.Weights != (results.MetaMix{Get: 875000, Set: 125000}) || w.ReplayedShare != 0.8 || w.ZipfS != 0.9 || w.SetBytes != 60000 ||
		len(w.NotSent) != 1 || w.NotSent[0].Type != "find_by_path" || w.Requests != 1000 || len(w.SHA256) != 64 {
		t.Fatalf("%+v", w)
	}
}

func TestConfigure(t *testing.T) {
	p := write(t, good)
	c := config.Default()
	if w, err := Configure(&c); w != nil || err != nil || c.Scenarios[0] != "get" {
		t.Fatalf("no workload: %v %v", w, err)
	}
	c.Workload = p
	if _, err := Configure(&c); err != nil || len(c.Scenarios) != 1 || c.Scenarios[0] != "mix" || c.Mix.Get != 875000 {
		t.Fatalf("%v %+v %+v", err, c.Scenarios, c.Mix)
	}
	for name, edit := range map[string]func(c *config.Config){
		"scenarios is get,set":            func(c *config.Config) { c.Scenarios = []string{"get", "set"} },
		"mix.get/mix.set/mix.interpolate": func(c *config.Config) { c.Mix.Set = 3 },
	} {
		c := config.Default()
		c.Workload = p
		edit(&c)
		if _, err := Configure(&c); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Every bad file is one line naming the file, the problem and the fix.
func TestLoadHostile(t *testing.T) {
	typ := func(s string) string {
		return `{"format": "credhub-perf-workload/1", "requests": 10, "types": [` + s + `]}`
	}
	get := `{"type": "get_by_name", "requests": 10, "share": 1, "scenario": "get", "replayable": true}`
	cases := map[string]string{
		"":                      "not valid JSON",
		"{":                     "not valid JSON",
		"[]":                    "not valid JSON",
		"null":                  "format is none",
		"\x00\xff\xfe binary":   "not valid JSON",
		`{"format": 1}`:         "not valid JSON",
		`{"format": "other/1"}`: `format is "other/1"`,
		`{"format": "credhub-perf-workload/2", "requests": 1}`:     "want \"credhub-perf-workload/1\"",
		`{"format": "credhub-perf-workload/1"}`:                    "requests is missing",
		`{"format": "credhub-perf-workload/1", "requests": -1}`:    "requests is missing or not above 0",
		`{"format": "credhub-perf-workload/1", "requests": 1}`:     "types is missing or empty",
		`{"format": "credhub-perf-workload/1", "requests": 1e999}`: "not valid JSON",
		typ(get) + " {}": "data after the JSON object",
		typ(`{"type": "Get By Name", "requests": 10, "share": 1, "scenario": "get", "replayable": true}`):   "not an id",
		typ(`{"type": "get_by_name", "requests": -1, "share": 1, "scenario": "get", "replayable": true}`):   "requests is missing or negative",
		typ(`{"type": "get_by_name", "requests": 10, "share": 1.5, "scenario": "get", "replayable": true}`): "share is missing or not from 0 to 1",
		typ(`{"type": "get_by_name", "requests": 10, "share": 1, "replayable": true}`):                      "scenario is missing",
		typ(`{"type": "get_by_name", "requests": 10, "share": 1, "scenario": "find", "replayable": true}`):  `scenario "find" is not`,
		typ(`{"type": "get_by_name", "requests": 10, "share": 1, "scenario": "get", "replayable": false}`):  "disagrees with scenario",
		typ(`{"type": "get_by_name", "requests": 10, "share": 1, "scenario": "get"}`):                       "replayable is missing",
		typ(`{"type": "get_by_name", "requests": 5, "share": 1, "scenario": "get", "replayable": true}`):    "disagrees with its requests",
		typ(get + "," + get): "listed twice",
		typ(`{"type": "get_by_name", "requests": 5, "share": 0.5, "scenario": "get", "replayable": true}`):                           "add up to 0.5000, not 1",
		typ(`{"type": "find_by_path", "requests": 10, "share": 1, "scenario": "", "replayable": false}`):                             "no request type the run can send",
		typ(`{"type": "get_by_name", "requests": 10, "share": 1, "scenario": "get", "replayable": true, "body_bytes": {"p50": -3}}`): "not a size",
		`{"format": "credhub-perf-workload/1", "requests": 10, "types": [` + get + `], "popularity": {"zipf_s": 9}}`:                 "popularity.zipf_s 9 is out of range",
		`{"format": "credhub-perf-workload/1", "requests": 10, "types": [` + get + `], "popularity": {"zipf_s": "x"}}`:               "not valid JSON",
		`{"format": "credhub-perf-workload/1", "requests": 5, "types": [` + get + `]}`:                                               "disagrees with its requests",
	}
	for body, want := range cases {
		p := write(t, body)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "workload "+p+": ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", body, err, want)
		}
	}
	dir := t.TempDir()
	for p, want := range map[string]string{filepath.Join(dir, "missing.json"): "no such file", dir: "is a directory"} {
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", p, err, want)
		}
	}
	big := write(t, `{"format": "credhub-perf-workload/1", "pad": "`+strings.Repeat("x", MaxFileBytes)+`"}`)
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Errorf("big file: %v", err)
	}
}

// Whatever the bytes, parse returns a workload the run can send or an
// error of one line, and never panics.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"format": "credhub-perf-workload/1", "requests": 1, "types": [{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("two lines: %q", err)
			}
			return
		}
		if s := w.Weights.Get + w.Weights.Set + w.Weights.Interpolate; s < 999990 || s > 1000010 {
			t.Fatalf("weights %+v", w.Weights)
		}
		if !(w.ZipfS >= 0 && w.ZipfS <= maxZipfS) {
			t.Fatalf("zipf %v", w.ZipfS)
		}
	})
}
