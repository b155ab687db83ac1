package results

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A full disk while meta.json or summary.json is rewritten: the write
// fails, the file before it stays whole, and no temporary file is left in
// the run directory. /dev/full (every write: ENOSPC) plays the full disk
// through a link at the temporary file's name, no privileges needed.
func TestAtomicWriteLeavesNoTempFileOnDiskFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "meta.json")
	if err := WriteMetaFile(path, &Meta{RunID: "before"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", path+".tmp"); err != nil {
		t.Fatal(err)
	}
	err := WriteMetaFile(path, &Meta{RunID: "after"})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("want ENOSPC, got %v", err)
	}
	if _, err := os.Lstat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left (%v)", err)
	}
	m, err := ReadMeta(dir)
	if err != nil || m.RunID != "before" {
		t.Fatalf("meta.json after the failed write: %+v %v", m, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("run directory holds %v", entries)
	}
}
