package releasetests

// The errand rehearsal compiles the release's packages and runs the errand
// inside a stemcell-like root file system: Debian minbase from this
// machine's own mirror, plus only the development packages a BOSH
// Jammy/Noble stemcell carries (testdata/stemcell-root.sh). Compiled on
// this machine instead, CPython finds libffi, liblzma and SQLite headers a
// stemcell lacks, and code that needs ctypes passes here and fails on the VM.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// stemcellRootRequired: CI (CI=true, or TEST_QUIET=require as .ci/run
// sets) fails when the root cannot be built; elsewhere the rehearsal runs
// on this machine's root and says the stemcell part was not run.
func stemcellRootRequired() bool {
	return os.Getenv("CI") == "true" || os.Getenv("TEST_QUIET") == "require"
}

// noteNotRun logs that part of a test was not run, and why, and appends
// the line to $TEST_NOTES (scripts/test-all prints those lines in its
// summary, since go test shows a passing test's log only with -v).
func noteNotRun(t *testing.T, what string) {
	t.Helper()
	t.Logf("NOT RUN: %s", what)
	if notes := os.Getenv("TEST_NOTES"); notes != "" {
		f, err := os.OpenFile(notes, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Errorf("TEST_NOTES: %v", err)
			return
		}
		defer f.Close()
		if _, err := fmt.Fprintf(f, "%s: %s\n", t.Name(), what); err != nil {
			t.Errorf("TEST_NOTES: %v", err)
		}
	}
}

// cacheBase is ${CREDHUB_PERF_CACHE:-~/.cache/credhub-perf}, or "" when
// there is no cache directory.
func cacheBase(t *testing.T) string {
	t.Helper()
	if base := os.Getenv("CREDHUB_PERF_CACHE"); base != "" {
		return base
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Logf("no cache directory (%v): nothing is kept between runs", err)
		return ""
	}
	return filepath.Join(cache, "credhub-perf")
}

// stemcellRootKey names a build of the root: the script that builds it
// and the Debian release it is built from (this machine's).
func stemcellRootKey(script string) (string, error) {
	h := sha256.New()
	for _, f := range []string{script, "/etc/os-release"} {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("stemcell-like root key: %w", err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// stemcellRoot unpacks the stemcell-like root into a directory of its own
// and returns it with its key, building the root first (minutes) when the
// cache does not hold it; or, when it cannot be built (no root, no
// debootstrap, no mirror reachable), "" and why.
func stemcellRoot(t *testing.T) (dir, key, why string) {
	t.Helper()
	return unpackStemcellRoot(t, prepareStemcellRoot(context.Background(), stemcellRootSpec(t)))
}

// rootSpec is where a build of the stemcell-like root goes.
type rootSpec struct {
	script, key, cacheDir string
}

func stemcellRootSpec(t *testing.T) rootSpec {
	t.Helper()
	script := fixture(t, "stemcell-root.sh")
	key, err := stemcellRootKey(script)
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	if base := cacheBase(t); base != "" {
		cacheDir = filepath.Join(base, "stemcell-root")
	}
	return rootSpec{script: script, key: key, cacheDir: cacheDir}
}

// rootTarball is the outcome of prepareStemcellRoot.
type rootTarball struct {
	spec    rootSpec
	tarball string // the packed root ("": why says why not, or err)
	why     string // why it cannot be built on this machine
	log     string // what building it said ("": it was cached)
	took    time.Duration
	err     error
}

// prepareStemcellRoot builds the root's tarball unless the cache holds it.
// It touches no testing.T, so the errand rehearsal runs it in a goroutine
// while the dev release is built: the root is mostly downloads and
// unpacking, the release CPU.
func prepareStemcellRoot(ctx context.Context, spec rootSpec) rootTarball {
	res := rootTarball{spec: spec}
	if err := os.MkdirAll(spec.cacheDir, 0o755); err != nil {
		res.err = err
		return res
	}
	tarball := filepath.Join(spec.cacheDir, spec.key+".tar.gz")
	if os.Geteuid() != 0 {
		// debootstrap, and unpacking the root with its owners and device
		// nodes, need the real root.
		res.why = fmt.Sprintf("building and unpacking it need root; running as uid %d", os.Geteuid())
		return res
	}
	if _, err := os.Stat(tarball); err != nil {
		began := time.Now()
		ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
		defer cancel()
		// A private mount namespace: the root's /proc mount goes with it.
		cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "bash", spec.script, tarball)
		// Cancelled (the rehearsal failed before it needed the root), the
		// script's children may hold its output open: stop waiting for them.
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.CombinedOutput()
		res.log, res.took = string(out), time.Since(began)
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 {
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			res.why = lines[len(lines)-1]
			return res
		}
		if err != nil {
			res.err = fmt.Errorf("building the stemcell-like root: %w\n%s", err, out)
			return res
		}
	}
	res.tarball = tarball
	return res
}

// unpackStemcellRoot reports a prepared root and unpacks it into a
// directory of its own: its dir and key, or "" and why it was not built.
func unpackStemcellRoot(t *testing.T, res rootTarball) (dir, key, why string) {
	t.Helper()
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.why != "" {
		if res.log != "" {
			t.Logf("stemcell-root.sh:\n%s", indent(res.log, "  "))
		}
		return "", "", res.why
	}
	if res.log != "" {
		t.Logf("built the stemcell-like root in %s:\n%s", res.took.Round(time.Second), indent(res.log, "  "))
		pruneCache(t, res.spec.cacheDir, 2)
	}
	dir = t.TempDir()
	if out, err := exec.Command("tar", "-xzf", res.tarball, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("unpacking the stemcell-like root %s: %v\n%s", res.tarball, err, out)
	}
	return dir, res.spec.key, ""
}

// pruneCache keeps the newest keep files in dir (branches in CI differ).
func pruneCache(t *testing.T, dir string, keep int) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && strings.HasSuffix(e.Name(), ".tar.gz") {
			files = append(files, file{filepath.Join(dir, e.Name()), info.ModTime()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.After(files[j].mod) })
	for _, f := range files[min(keep, len(files)):] {
		if err := os.Remove(f.path); err != nil {
			t.Logf("pruning the cache: %v", err)
		}
	}
}

// checkStemcellPython checks the python3 package compiled in the
// stemcell-like root lacks what a stemcell's headers cannot build: were
// any of these modules there, the root would not be stemcell-like and
// code that needs them would pass here and fail on the VM.
func checkStemcellPython(t *testing.T, work string) {
	t.Helper()
	got, _ := os.ReadFile(filepath.Join(work, "python3-modules"))
	want := "ctypes absent\nlzma absent\nsqlite3 absent\ntkinter absent\n"
	if string(got) != want {
		t.Errorf("python3 compiled in the stemcell-like root: modules %q; want %q (is a header a stemcell lacks in the root?)", got, want)
	}
}

// TestStemcellRootMirror: the root is built from the mirror the machine's
// apt uses, whatever form its sources take; none found is a reason, not a
// crash or a guess.
func TestStemcellRootMirror(t *testing.T) {
	const def = "/usr/share/keyrings/debian-archive-keyring.gpg"
	machine := "Types: deb\n# http://snapshot.debian.org/archive/debian/20250520T000000Z\nURIs: http://deb.debian.org/debian\n" +
		"Suites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n" +
		"Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string // "MIRROR KEYRING", or the reason's start when it exits 3
		fail  bool
	}{
		{"this machine's deb822", map[string]string{"sources.list.d/debian.sources": machine}, "http://deb.debian.org/debian " + def, false},
		{"disabled and source-only stanzas skipped", map[string]string{"sources.list.d/a.sources": "Types: deb\nURIs: http://off/debian\nSuites: bookworm\nEnabled: no\n\n" +
			"Types: deb-src\nURIs: http://src/debian\nSuites: bookworm\n\nTypes: deb deb-src\nURIs: https://on/debian\nSuites: bookworm\nSigned-By: /k/on.gpg\n"},
			"https://on/debian /k/on.gpg", false},
		{"inline key falls back to the archive keyring", map[string]string{"sources.list.d/a.sources": "Types: deb\nURIs: http://m/debian\nSuites: bookworm\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n -----END PGP PUBLIC KEY BLOCK-----\n"},
			"http://m/debian " + def, false},
		{"one-line list with options", map[string]string{"sources.list": "# deb http://commented/debian bookworm main\ndeb cdrom:[Debian]/ bookworm main\n" +
			"deb [arch=amd64 signed-by=/k/list.gpg] http://m/debian bookworm main\n"}, "http://m/debian /k/list.gpg", false},
		{"deb822 before one-line lists", map[string]string{"sources.list": "deb http://list/debian bookworm main\n", "sources.list.d/x.sources": machine},
			"http://deb.debian.org/debian " + def, false},
		{"another release only", map[string]string{"sources.list": "deb http://m/debian bullseye main\n"}, "no http(s) mirror for bookworm", true},
		{"disabled farm lists are not read", map[string]string{"sources.list.d/google.list.disabled-by-farm": "deb http://m/debian bookworm main\n"}, "no http(s) mirror for bookworm", true},
		{"no sources", nil, "no http(s) mirror for bookworm", true},
		{"binary garbage", map[string]string{"sources.list": "\x00\xff\xfedeb\x00 http://\n", "sources.list.d/a.sources": "\xff\x00URIs:\x00\n"}, "no http(s) mirror for bookworm", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range c.files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("bash", fixture(t, "stemcell-root.sh"), "--mirror")
			cmd.Env = append(os.Environ(), "STEMCELL_APT_DIR="+dir, "STEMCELL_SUITE=bookworm")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			switch {
			case c.fail && (!errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.HasPrefix(stderr.String(), c.want)):
				t.Errorf("got %v, stdout %q, stderr %q; want exit 3 and %q", err, stdout.String(), stderr.String(), c.want)
			case !c.fail && (err != nil || strings.TrimSpace(stdout.String()) != c.want):
				t.Errorf("got %v, stdout %q, stderr %q; want %q", err, stdout.String(), stderr.String(), c.want)
			}
		})
	}
}

// TestStemcellRootNotBuilt: without a mirror, stemcellRoot gives the
// reason (the rehearsal reports NOT RUN or, under CI, fails) and
// noteNotRun hands the line to scripts/test-all.
func TestStemcellRootNotBuilt(t *testing.T) {
	t.Setenv("CREDHUB_PERF_CACHE", t.TempDir())
	t.Setenv("STEMCELL_APT_DIR", t.TempDir())
	t.Setenv("STEMCELL_SUITE", "bookworm")
	dir, key, why := stemcellRoot(t)
	if dir != "" || key != "" || !strings.HasPrefix(why, "no http(s) mirror for bookworm in ") {
		t.Fatalf("stemcellRoot without a mirror: %q, %q, %q; want the reason alone", dir, key, why)
	}
	notes := filepath.Join(t.TempDir(), "notes")
	t.Setenv("TEST_NOTES", notes)
	noteNotRun(t, "a part ("+why+")")
	if b, _ := os.ReadFile(notes); string(b) != t.Name()+": a part ("+why+")\n" {
		t.Errorf("TEST_NOTES holds %q", b)
	}
	for env, want := range map[string]bool{"CI=true": true, "TEST_QUIET=require": true, "TEST_QUIET=auto": false, "CI=": false} {
		t.Run(env, func(t *testing.T) {
			t.Setenv("CI", "")
			t.Setenv("TEST_QUIET", "")
			k, v, _ := strings.Cut(env, "=")
			t.Setenv(k, v)
			if got := stemcellRootRequired(); got != want {
				t.Errorf("stemcellRootRequired() = %v with %s", got, env)
			}
		})
	}
}
