package ramp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/load/loadtest"
)

// A full disk at start: refused before CredHub is contacted (the load
// could not be recorded), and no run directory is made.
func TestFullDiskRefusedBeforeLoad(t *testing.T) {
	old := freeSpace
	t.Cleanup(func() { freeSpace = old })
	freeSpace = func(string) (uint64, bool) { return 10 << 20, true }
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	srv := loadtest.NewMTLSServer(t, p, fake, true, false)
	c := fakeConfig(t, p, srv.URL)
	code, _, log := execute(t, c, false)
	if code != ExitUsage || !strings.Contains(log, `output_dir "`+c.OutputDir+`" has 10.0 MiB free, under the 64 MiB a run needs`) || !strings.Contains(log, "nothing was sent") {
		t.Fatalf("exit %d\n%s", code, log)
	}
	if n := fake.requests.Load(); n != 0 {
		t.Fatalf("the target was contacted %d times with a full disk", n)
	}
	if entries, _ := os.ReadDir(c.OutputDir); len(entries) != 0 {
		t.Fatalf("left in the output directory: %v", entries)
	}
}

// A run id that already has credentials in CredHub is warned about, with
// the command that removes them; the run goes ahead.
func TestRunIDInUseWarned(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	fake.mu.Lock()
	fake.put("/credhub-perf/shared-id/get/seed/cred-0", json.RawMessage(`{"password":"x"}`))
	fake.mu.Unlock()
	srv := loadtest.NewMTLSServer(t, p, fake, true, false)
	c := fakeConfig(t, p, srv.URL)
	c.Tester.RunID = "shared-id"
	c.Scenarios = []string{"get"}
	code, _, log := execute(t, c, false)
	if code != ExitOK || !strings.Contains(log, "warning: run id shared-id is already in use: 1 credentials under /credhub-perf/shared-id/") ||
		!strings.Contains(log, "credhub-perf cleanup --target.url "+c.Target.URL) || !strings.Contains(log, "--run-id shared-id") {
		t.Fatalf("exit %d\n%s", code, log)
	}
	// A fresh id says nothing of the kind.
	c.Tester.RunID = "fresh-id"
	c.OutputDir = t.TempDir()
	if code, _, log := execute(t, c, false); code != ExitOK || strings.Contains(log, "already in use") {
		t.Fatalf("exit %d\n%s", code, log)
	}
	if m, _ := filepath.Glob(filepath.Join(c.OutputDir, "*", "*.tmp")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
}
