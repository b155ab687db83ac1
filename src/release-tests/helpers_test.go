package releasetests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// repoRoot is the repository this module sits in (src/release-tests).
func repoRoot(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() {
		wd, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		rootDir, rootErr = filepath.Abs(filepath.Join(wd, "..", ".."))
	})
	if rootErr != nil {
		t.Fatalf("finding repository root: %v", rootErr)
	}
	return rootDir
}

var (
	boshOnce sync.Once
	boshPath string
	boshErr  error
)

// boshCLI is the bosh CLI v7.4.0 that scripts/bosh-cli builds and caches.
func boshCLI(t testing.TB) string {
	t.Helper()
	boshOnce.Do(func() {
		if p := os.Getenv("BOSH"); p != "" {
			boshPath = p
			return
		}
		cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "bosh-cli"))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		boshPath, boshErr = strings.TrimSpace(string(out)), err
	})
	if boshErr != nil {
		t.Fatalf("scripts/bosh-cli: %v", boshErr)
	}
	return boshPath
}

// fixture is the path of a file in testdata.
func fixture(t *testing.T, name string) string {
	return filepath.Join(repoRoot(t), "src", "release-tests", "testdata", name)
}
