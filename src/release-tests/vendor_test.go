package releasetests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The package compiles src/credhub-perf from its vendor/ tree; keep what
// the release ships small (the design keeps large generated dependencies,
// like the SQLite driver of credhub-sim, out of this module).
func TestVendoredTreeSize(t *testing.T) {
	const limit = 25 << 20
	root := repoRoot(t)
	mod := filepath.Join(root, "src", "credhub-perf")
	if _, err := os.Stat(filepath.Join(mod, "vendor", "modules.txt")); err != nil {
		t.Fatalf("src/credhub-perf/vendor/modules.txt: %v (run go mod vendor there and commit it)", err)
	}
	out, err := exec.Command("git", "-C", mod, "ls-files", "-z", "--cached", ".").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var vendor, shipped int64
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		fi, err := os.Stat(filepath.Join(mod, rel))
		if err != nil || rel == "" {
			continue
		}
		if strings.HasPrefix(rel, "vendor/") {
			vendor += fi.Size()
		}
		if !strings.HasSuffix(rel, "_test.go") && !strings.Contains(rel, "/testdata/") {
			shipped += fi.Size()
		}
	}
	t.Logf("vendor/: %.1f MB; package source: %.1f MB", float64(vendor)/(1<<20), float64(shipped)/(1<<20))
	if vendor == 0 {
		t.Fatal("no vendored files are tracked in src/credhub-perf/vendor")
	}
	if vendor >= limit {
		t.Errorf("src/credhub-perf/vendor is %d bytes; the limit is 25 MB", vendor)
	}
	if shipped >= limit {
		t.Errorf("the credhub-perf package source is %d bytes; the limit is 25 MB", shipped)
	}
	modules, _ := os.ReadFile(filepath.Join(mod, "vendor", "modules.txt"))
	if strings.Contains(string(modules), "modernc.org/sqlite") {
		t.Error("the shipped module vendors modernc.org/sqlite; it belongs to credhub-sim only")
	}
}
