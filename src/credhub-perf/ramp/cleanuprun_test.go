package ramp

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// Hostile or mismatched run directories are refused in one line before
// CredHub is contacted; nothing is deleted.
func TestCleanupRefusesBadRunDirs(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	srv := loadtest.NewMTLSServer(t, p, fake, true, false)
	c := fakeConfig(t, p, srv.URL)
	dir := func(meta string) string {
		d := t.TempDir()
		if meta != "" {
			if err := os.WriteFile(filepath.Join(d, "meta.json"), []byte(meta), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	for _, tc := range []struct {
		runID string
		dirs  []string
		want  string
	}{
		{"", nil, "give the run id"},
		{"../x", nil, "may only hold"},
		{"Rendezvous", nil, "reserved"},
		{"preflight", nil, "reserved"},
		{"", []string{dir("")}, "not a run directory"},
		{"", []string{dir("\x00{not json")}, "meta.json"},
		{"", []string{dir(`{"run_id": 5}`)}, "meta.json"},
		{"", []string{dir(`{"scenario": "get"}`)}, "has no run_id"},
		{"", []string{dir(`{"run_id": "../../etc"}`)}, "may only hold"},
		{"", []string{dir(`{"run_id": "a"}`), dir(`{"run_id": "b"}`)}, `belongs to run "b", not "a"`},
		{"a", []string{dir(`{"run_id": "b"}`)}, `belongs to run "b", not "a"`},
	} {
		cc := c
		cc.Tester.RunID = tc.runID
		var out, log bytes.Buffer
		code := Cleanup(context.Background(), CleanupOptions{Config: cc, RunDirs: tc.dirs, Stdout: &out, Log: &log})
		if code != ExitUsage || strings.Count(strings.TrimSpace(log.String()), "\n") != 0 || !strings.Contains(log.String(), tc.want) {
			t.Errorf("%q %v: exit %d, want 2 and one line with %q:\n%s", tc.runID, tc.dirs, code, tc.want, log.String())
		}
	}
	if n := fake.requests.Load(); n != 0 {
		t.Fatalf("CredHub was contacted %d times", n)
	}
}
