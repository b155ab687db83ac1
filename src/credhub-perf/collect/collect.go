// Package collect turns the tarballs of `bosh run-errand --download-logs`
// (one per tester VM, each holding the job's log directory credhub-perf/)
// into run directories headroom-plot reads: every tester's files of a run
// side by side in one directory, tester 0's meta.json, and a summary over
// all testers (incomplete, without a capacity, when a tester's files are
// missing).
package collect

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/credhub-perf/credhub-perf/results"
)

var (
	runDirName = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[A-Za-z0-9._-]+$`)
	runFile    = regexp.MustCompile(`^(results(-[0-9]+)?\.csv|meta(-[0-9]+)?\.json|summary(-[0-9]+)?\.(json|txt))$`)
	logFile    = regexp.MustCompile(`^credhub-perf(-[0-9]+)?\.(stdout|stderr)\.log$`)
	testerMeta = regexp.MustCompile(`^meta-([0-9]+)\.json$`)
)

// Report says what Tarballs did.
type Report struct {
	RunDirs  []string // collected run directories, sorted
	Logs     []string // collected errand logs
	Warnings []string
}

// Tarballs extracts the credhub-perf run directories and logs of every
// tarball into out. Only the names credhub-perf writes are taken; any
// other entry is skipped, and an entry that would leave out, or a file
// that would replace a different one already collected, is an error.
func Tarballs(out string, tarballs []string, defaultSLO results.SLO) (*Report, error) {
	if len(tarballs) == 0 {
		return nil, errors.New("no tarball given: pass the .tgz files `bosh run-errand --download-logs` wrote")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	rep := &Report{}
	dirs := map[string]bool{}
	origin := map[string]string{} // collected file -> tarball it came from
	for _, tgz := range tarballs {
		if err := extract(out, tgz, dirs, origin, rep); err != nil {
			return rep, err
		}
	}
	for d := range dirs {
		dir := filepath.Join(out, d)
		if err := assemble(dir, defaultSLO, rep); err != nil {
			return rep, err
		}
		rep.RunDirs = append(rep.RunDirs, dir)
	}
	sort.Strings(rep.RunDirs)
	sort.Strings(rep.Logs)
	if len(rep.RunDirs) == 0 {
		return rep, fmt.Errorf("no credhub-perf run directory in %s: are these the tarballs of `bosh run-errand credhub-perf --download-logs`?", strings.Join(tarballs, ", "))
	}
	return rep, nil
}

func extract(out, tgz string, dirs map[string]bool, origin map[string]string, rep *Report) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: not a gzip tarball: %w", tgz, err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: reading the tarball: %w", tgz, err)
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		if strings.HasPrefix(name, "/") || strings.Contains("/"+name+"/", "/../") {
			return fmt.Errorf("%s: entry %q points outside the tarball; refusing it", tgz, hdr.Name)
		}
		name = path.Clean(name)
		parts := strings.Split(name, "/")
		if parts[0] != "credhub-perf" {
			continue
		}
		if hdr.Typeflag == tar.TypeSymlink || hdr.Typeflag == tar.TypeLink {
			if err := checkLink(tgz, name, hdr, rep); err != nil {
				return err
			}
			continue
		}
		if hdr.Typeflag != tar.TypeReg {
			continue // directories are implied
		}
		var dest string
		switch {
		case len(parts) == 2 && logFile.MatchString(parts[1]):
			// Beside the run directories, not in a directory of their own:
			// `headroom-plot OUT/*/` must see run directories only.
			dest = parts[1]
		case len(parts) == 3 && runDirName.MatchString(parts[1]) && runFile.MatchString(parts[2]):
			dest = filepath.Join(parts[1], parts[2])
			dirs[parts[1]] = true
		default:
			continue
		}
		if err := writeOnce(out, dest, tr, tgz, origin); err != nil {
			return err
		}
		if len(parts) == 2 {
			rep.Logs = append(rep.Logs, filepath.Join(out, dest))
		}
	}
}

// checkLink judges a link entry under credhub-perf/. Links are never
// followed or created (the job writes regular files only), but one that
// points outside the tarball's credhub-perf/ directory, where the output
// directory's contents come from, is a hostile or damaged tarball: refused.
// Others are skipped with a warning, so a file that is missing from a run
// directory for that reason is not a mystery.
func checkLink(tgz, name string, hdr *tar.Header, rep *Report) error {
	kind, target := "symbolic link", path.Join(path.Dir(name), hdr.Linkname)
	if hdr.Typeflag == tar.TypeLink {
		kind, target = "hard link", hdr.Linkname // relative to the tarball's root
	}
	target = path.Clean(strings.TrimPrefix(target, "./"))
	if path.IsAbs(hdr.Linkname) || !strings.HasPrefix(target, "credhub-perf/") {
		return fmt.Errorf("%s: entry %q is a %s to %q, outside the output directory; refusing the tarball (collect takes regular files only: re-download it with bosh run-errand --download-logs)", tgz, hdr.Name, kind, hdr.Linkname)
	}
	rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: skipped entry %q, a %s to %q (collect takes regular files only)", tgz, hdr.Name, kind, hdr.Linkname))
	return nil
}

// writeOnce writes one entry; the same name from two tarballs must have
// the same bytes (a re-download), else the two would overwrite each other.
func writeOnce(out, dest string, r io.Reader, tgz string, origin map[string]string) error {
	full := filepath.Join(out, dest)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(full), ".collect-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(tmp, h), r); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: extracting %s: %w", tgz, dest, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// summary.json and summary.txt are recomputed over every tester's
	// CSV once all tarballs are in (assemble), so a later copy may differ.
	derived := filepath.Base(dest) == "summary.json" || filepath.Base(dest) == "summary.txt"
	if derived {
		origin[dest] = tgz
		return os.Rename(tmp.Name(), full)
	}
	if old, err := os.Open(full); err == nil {
		oh := sha256.New()
		_, cerr := io.Copy(oh, old)
		old.Close()
		if cerr != nil {
			return cerr
		}
		if bytes.Equal(oh.Sum(nil), h.Sum(nil)) {
			return nil
		}
		from := origin[dest]
		if from == "" {
			from = "an earlier collect into " + out
		}
		return fmt.Errorf("%s: %s differs from the one collected from %s: two runs share that run directory name; collect them into different directories", tgz, dest, from)
	}
	origin[dest] = tgz
	return os.Rename(tmp.Name(), full)
}

// assemble makes a collected run directory whole: meta.json when tester
// 0's tarball was missing, and summary.json over every tester's CSV,
// flagged incomplete when a tester the run had left none.
func assemble(dir string, defaultSLO results.SLO, rep *Report) error {
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); errors.Is(err, os.ErrNotExist) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if testerMeta.MatchString(e.Name()) {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dir, "meta.json"), b, 0o644); err != nil {
					return err
				}
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: no tester 0 files (its tarball missing?); meta.json is a copy of %s", dir, e.Name()))
				break
			}
		}
	}
	files, err := results.ResultFiles(dir)
	if err != nil || len(files) == 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: no results CSV", dir))
		return nil
	}
	// One results file of a run of several testers (only tester 0's
	// tarball collected, or a tester that never ran) is recomputed too:
	// the tester's own summary.json cannot see the others and gives a
	// capacity the run does not have.
	if len(files) > 1 || results.PlannedTesters(dir) > 1 {
		sum, err := results.SummarizeDir(dir, defaultSLO)
		if err != nil {
			return fmt.Errorf("%s: summarizing the testers' CSVs: %w", dir, err)
		}
		if sum.Incomplete {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s: incomplete run: %s; every step is incomplete and the run gives no capacity: pass every tester's tarball to one collect", dir, sum.IncompleteReason))
		}
	}
	return nil
}
