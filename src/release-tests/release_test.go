package releasetests

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	yaml "gopkg.in/yaml.v3"
)

// cleanCopy copies the repository's tracked files (working-tree content)
// into a new directory and commits them there: what a fresh clone holds,
// without build outputs, blobs or stray files.
func cleanCopy(dst, root string) error {
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if rel == "" {
			continue
		}
		src := filepath.Join(root, rel)
		fi, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree
		}
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			link, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, b, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

func run(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

var gitEnv = []string{
	"GIT_AUTHOR_NAME=release-tests", "GIT_AUTHOR_EMAIL=release-tests@localhost",
	"GIT_COMMITTER_NAME=release-tests", "GIT_COMMITTER_EMAIL=release-tests@localhost",
}

type builtRelease struct {
	dir     string // the clean copy, with blobs added
	tarball string // its dev release tarball
}

var (
	releaseOnce sync.Once
	release     builtRelease
	releaseErr  error
	releaseDir  string
)

// sharedReleaseEnv names a directory (scripts/test-all makes one per run)
// where the release suites' test binaries share one dev release: the
// errand rehearsal and the other release tests run as two processes side
// by side, and building the release (blobs, then bosh create-release)
// twice at once cost each of them the other's CPU.
const sharedReleaseEnv = "RELEASE_TESTS_SHARED_DIR"

// devRelease builds the dev release tarball the way an operator does on a
// fresh clone: scripts/add-blobs, then scripts/create-release (bosh
// create-release --force --tarball). Once per test binary, or once per
// $RELEASE_TESTS_SHARED_DIR: the first process there builds it, the others
// wait for it and use the same copy.
func devRelease(t *testing.T) builtRelease {
	t.Helper()
	releaseOnce.Do(func() {
		if shared := os.Getenv(sharedReleaseEnv); shared != "" {
			release, releaseErr = sharedRelease(t, shared)
			return
		}
		var err error
		releaseDir, err = os.MkdirTemp("", "credhub-perf-release-")
		if err != nil {
			releaseErr = err
			return
		}
		release, releaseErr = buildRelease(t, filepath.Join(releaseDir, "repo"))
	})
	if releaseErr != nil {
		t.Fatal(releaseErr)
	}
	return release
}

// sharedRelease builds the dev release in dir/repo under an exclusive lock
// on dir/lock, unless an earlier process there did: then its release, or
// its failure (dir/failed, so a broken tree fails both suites once, not
// twice at full cost). Nothing may change dir/repo: tests that do copy it.
func sharedRelease(t *testing.T, dir string) (builtRelease, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return builtRelease{}, fmt.Errorf("%s: %w", sharedReleaseEnv, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return builtRelease{}, fmt.Errorf("%s: %w", sharedReleaseEnv, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return builtRelease{}, fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	repo := filepath.Join(dir, "repo")
	built := builtRelease{dir: repo, tarball: filepath.Join(repo, "dev_releases", "credhub-perf-dev.tgz")}
	if b, err := os.ReadFile(filepath.Join(dir, "failed")); err == nil {
		return builtRelease{}, fmt.Errorf("the dev release, built by another release suite of this run, failed: %s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		t.Logf("dev release from %s (built by another release suite of this run)", repo)
		return built, nil
	}
	if err := os.RemoveAll(repo); err != nil {
		return builtRelease{}, err
	}
	built, err = buildRelease(t, repo)
	if err != nil {
		_ = os.WriteFile(filepath.Join(dir, "failed"), []byte(err.Error()), 0o644)
		return builtRelease{}, err
	}
	return built, os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
}

func buildRelease(t *testing.T, dir string) (builtRelease, error) {
	root := repoRoot(t)
	env := append([]string{"BOSH=" + boshCLI(t)}, gitEnv...)
	if err := cleanCopy(dir, root); err != nil {
		return builtRelease{}, fmt.Errorf("copying the repository: %w", err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "clean checkout"}} {
		if _, err := run(dir, env, "git", args...); err != nil {
			return builtRelease{}, err
		}
	}
	// No arguments: every blob, the CredHub CLI's included (built from its
	// source), comes from the module proxy.
	if _, err := run(dir, env, "scripts/add-blobs"); err != nil {
		return builtRelease{}, err
	}
	// The committed config/blobs.yml must already name the blobs add-blobs
	// builds (they are reproducible), or every clone is dirty.
	if err := checkoutUnchanged(dir, env); err != nil {
		return builtRelease{}, err
	}
	if _, err := run(dir, env, "scripts/create-release"); err != nil {
		return builtRelease{}, err
	}
	return builtRelease{dir: dir, tarball: filepath.Join(dir, "dev_releases", "credhub-perf-dev.tgz")}, nil
}

// checkoutUnchanged checks that scripts/add-blobs left the checkout as
// committed: config/blobs.yml already names every blob it adds.
func checkoutUnchanged(dir string, env []string) error {
	st, err := run(dir, env, "git", "status", "--porcelain")
	if err != nil || strings.TrimSpace(st) != "" {
		diff, _ := run(dir, env, "git", "diff", "config/blobs.yml")
		return fmt.Errorf("scripts/add-blobs changed the checkout (run it and commit config/blobs.yml?): %v\n%s\n%s", err, st, diff)
	}
	return nil
}

// tgzEntries reads a .tgz (from a file or a reader) into name -> content
// for the entries keep selects (nil content for the others).
// hasAll checks that an archive's entries include every one of want.
func hasAll(t *testing.T, what string, entries map[string][]byte, want ...string) {
	t.Helper()
	for _, w := range want {
		if _, ok := entries[w]; !ok {
			t.Errorf("%s lacks %s", what, w)
		}
	}
}

func tgzEntries(r io.Reader, keep func(string) bool) (map[string][]byte, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(h.Name, "./")
		out[name] = nil
		if keep != nil && keep(name) {
			if out[name], err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		}
	}
}

func tgzFile(t *testing.T, path string, keep func(string) bool) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := tgzEntries(f, keep)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return m
}

func TestReleaseCreateOffline(t *testing.T) {
	rel := devRelease(t)
	all := func(string) bool { return true }
	entries := tgzFile(t, rel.tarball, func(n string) bool {
		return n == "release.MF" || strings.HasPrefix(n, "jobs/") || n == "packages/credhub-perf.tgz" ||
			n == "packages/bosh-cli.tgz" || n == "packages/credhub-cli.tgz" ||
			n == "packages/python3.tgz" || n == "packages/headroom-plot.tgz"
	})

	var mf struct {
		Name string `yaml:"name"`
		Jobs []struct {
			Name string `yaml:"name"`
		} `yaml:"jobs"`
		Packages []struct {
			Name         string   `yaml:"name"`
			Dependencies []string `yaml:"dependencies"`
		} `yaml:"packages"`
	}
	if err := yaml.Unmarshal(entries["release.MF"], &mf); err != nil {
		t.Fatalf("release.MF: %v", err)
	}
	assertEqual(t, "release name", mf.Name, "credhub-perf")
	if len(mf.Jobs) != 1 || mf.Jobs[0].Name != "credhub-perf" {
		t.Errorf("release jobs = %+v; want credhub-perf", mf.Jobs)
	}
	pkgs := map[string][]string{}
	for _, p := range mf.Packages {
		pkgs[p.Name] = p.Dependencies
	}
	wantPkgs := []string{"golang-1-linux", "credhub-perf", "bosh-cli", "credhub-cli", "scaling-study", "python3", "headroom-plot"}
	for _, name := range wantPkgs {
		if _, ok := pkgs[name]; !ok {
			t.Errorf("release packages = %v; want %v", pkgs, wantPkgs)
		}
	}
	if len(pkgs) != len(wantPkgs) {
		t.Errorf("release packages = %v; want only %v", pkgs, wantPkgs)
	}
	if deps := pkgs["credhub-perf"]; len(deps) != 1 || deps[0] != "golang-1-linux" {
		t.Errorf("credhub-perf package dependencies = %v; want [golang-1-linux]", deps)
	}
	if deps := pkgs["python3"]; len(deps) != 0 {
		t.Errorf("python3 package dependencies = %v; want none (it compiles against the stemcell)", deps)
	}
	if deps := pkgs["headroom-plot"]; len(deps) != 1 || deps[0] != "python3" {
		t.Errorf("headroom-plot package dependencies = %v; want [python3]", deps)
	}
	hasAll(t, "release tarball", entries, "jobs/credhub-perf.tgz", "packages/golang-1-linux.tgz", "packages/credhub-perf.tgz",
		"packages/python3.tgz", "packages/headroom-plot.tgz")
	checkPythonPackages(t, rel.tarball, entries["jobs/credhub-perf.tgz"])

	job, err := tgzEntries(strings.NewReader(string(entries["jobs/credhub-perf.tgz"])), all)
	if err != nil {
		t.Fatalf("job archive: %v", err)
	}
	hasAll(t, "job archive", job, "job.MF", "monit", "templates/bin/run.erb", "templates/config/config.yml.erb", "templates/config/validation_properties.yml.erb", "templates/config/validation_certificates.yml.erb", "templates/config/client.key.erb")

	// The CLIs: a prebuilt blob each, no compile-time dependency.
	for name, blob := range map[string]string{
		"bosh-cli":    "bosh-cli/bosh-cli-7.4.0-linux-amd64",
		"credhub-cli": credhubCLISourceBlob,
	} {
		if deps := pkgs[name]; len(deps) != 0 {
			t.Errorf("%s package dependencies = %v; want none", name, deps)
		}
		pkg, err := tgzEntries(strings.NewReader(string(entries["packages/"+name+".tgz"])), nil)
		if err != nil {
			t.Fatalf("%s package archive: %v", name, err)
		}
		hasAll(t, name+" package", pkg, "packaging", blob)
	}
	var jobMF struct {
		Packages []string `yaml:"packages"`
	}
	if err := yaml.Unmarshal(job["job.MF"], &jobMF); err != nil {
		t.Fatalf("job.MF: %v", err)
	}
	for _, name := range []string{"credhub-perf", "bosh-cli", "credhub-cli"} {
		if !strings.Contains(" "+strings.Join(jobMF.Packages, " ")+" ", " "+name+" ") {
			t.Errorf("job packages = %v; the errand VM needs %s at run time", jobMF.Packages, name)
		}
	}
	hasAll(t, "job archive", job, "templates/bin/credhub-env.erb")

	src, err := tgzEntries(strings.NewReader(string(entries["packages/credhub-perf.tgz"])), nil)
	if err != nil {
		t.Fatalf("credhub-perf package archive: %v", err)
	}
	hasAll(t, "credhub-perf package", src, "packaging", "credhub-perf/go.mod", "credhub-perf/vendor/modules.txt", "credhub-perf/cmd/credhub-perf/main.go", "credhub-perf/cmd/hey/main.go")
	for name := range src {
		if strings.HasSuffix(name, "_test.go") {
			t.Errorf("credhub-perf package ships test file %s", name)
			break
		}
	}
}

// releaseCopy is a copy of the dev release's repository to change, and the
// environment to run bosh and git in it.
func releaseCopy(t *testing.T) (string, []string) {
	t.Helper()
	rel := devRelease(t)
	env := append([]string{"BOSH=" + boshCLI(t)}, gitEnv...)
	dir := filepath.Join(t.TempDir(), "repo")
	if _, err := run("", env, "cp", "-a", rel.dir, dir); err != nil {
		t.Fatal(err)
	}
	return dir, env
}

// setLocalBlobstore makes the release in dir keep its final blobs in a
// local blobstore at path.
func setLocalBlobstore(t *testing.T, dir, path string) {
	t.Helper()
	final := fmt.Sprintf("---\nname: credhub-perf\nblobstore:\n  provider: local\n  options:\n    blobstore_path: %s\n", path)
	if err := os.WriteFile(filepath.Join(dir, "config", "final.yml"), []byte(final), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if releaseDir != "" {
		os.RemoveAll(releaseDir)
	}
	os.Exit(code)
}

// scripts/create-release --final refuses a work tree with changes, and a
// final build that fails leaves nothing behind: the same command succeeds
// once the cause is fixed. The blobs go to a local blobstore first, and
// the successful build runs as on a clone that has only config/blobs.yml,
// fetching them from there, as an operator does with a real one. (One
// test, not two: each copies the release and builds it final.)
func TestCreateReleaseFinalScript(t *testing.T) {
	dir, env := releaseCopy(t)
	store := filepath.Join(t.TempDir(), "blobstore")
	commit := func(msg string) {
		t.Helper()
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", msg}} {
			if _, err := run(dir, env, "git", args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	tarball := filepath.Join(dir, "credhub-perf-1.0.0.tgz")
	final := []string{"--final", "--version", "1.0.0", "--tarball", tarball}
	nothingLeft := func(t *testing.T, when string) {
		t.Helper()
		if st, err := run(dir, env, "git", "status", "--porcelain"); err != nil || strings.TrimSpace(st) != "" {
			t.Errorf("%s: the work tree changed: %v\n%s", when, err, st)
		}
		for _, p := range []string{tarball, filepath.Join(dir, "releases", "credhub-perf", "credhub-perf-1.0.0.yml")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s: %s was left behind", when, p)
			}
		}
	}

	setLocalBlobstore(t, dir, store)
	out, err := run(dir, env, "scripts/create-release", final...)
	if err == nil || !strings.Contains(out+err.Error(), "uncommitted changes") || !strings.Contains(out+err.Error(), "config/final.yml") {
		t.Fatalf("--final on a dirty tree: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "releases")); err == nil {
		t.Error("--final on a dirty tree created releases/")
	}
	if _, err := run(dir, env, boshCLI(t), "upload-blobs"); err != nil {
		t.Fatal(err)
	}
	if blobs := readFileString(t, filepath.Join(dir, "config", "blobs.yml")); !strings.Contains(blobs, "object_id:") {
		t.Fatalf("upload-blobs did not record an object_id:\n%s", blobs)
	}
	uploaded, _ := os.ReadDir(store)
	// A blobstore the final jobs and packages cannot be written to.
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	setLocalBlobstore(t, dir, filepath.Join(blocker, "store"))
	commit("final blobstore that fails")
	if out, err := run(dir, env, "scripts/create-release", final...); err == nil || !strings.Contains(out+err.Error(), "nothing was kept") {
		t.Fatalf("--final with an unwritable blobstore: %v\n%s", err, out)
	}
	nothingLeft(t, "after the failed --final")

	setLocalBlobstore(t, dir, store)
	commit("final blobstore")
	// Ignored by git: what a fresh clone lacks.
	for _, d := range []string{"blobs", ".dev_builds", "dev_releases"} {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := run(dir, env, "scripts/create-release", final...); err != nil {
		t.Fatalf("retrying --final with the same version: %v\n%s", err, out)
	}
	if _, ok := tgzFile(t, tarball, nil)["packages/golang-1-linux.tgz"]; !ok {
		t.Errorf("final release lacks packages/golang-1-linux.tgz")
	}
	// Final jobs and packages are stored in the blobstore next to the blobs.
	if stored, _ := os.ReadDir(store); len(uploaded) == 0 || len(stored) <= len(uploaded) {
		t.Errorf("local blobstore holds %d objects after the final release, %d after upload-blobs; want the final jobs and packages added to the blobs", len(stored), len(uploaded))
	}
	if _, err := os.Stat(filepath.Join(dir, "releases", "credhub-perf", "credhub-perf-1.0.0.yml")); err != nil {
		t.Errorf("final release manifest: %v", err)
	}
	if m, _ := os.ReadFile(filepath.Join(dir, "releases", "credhub-perf", "credhub-perf-1.0.0.yml")); !strings.Contains(string(m), "uncommitted_changes: false") {
		t.Errorf("the final release records uncommitted changes:\n%s", m)
	}
}

// TestSharedReleaseReused: a release suite finds the dev release another
// one of the same run built (or its failure) instead of building again.
func TestSharedReleaseReused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "done"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := sharedRelease(t, dir)
	if want := filepath.Join(dir, "repo", "dev_releases", "credhub-perf-dev.tgz"); err != nil || got.tarball != want || got.dir != filepath.Join(dir, "repo") {
		t.Errorf("sharedRelease after a build: %+v, %v; want the tarball %s", got, err, want)
	}
	failed := t.TempDir()
	if err := os.WriteFile(filepath.Join(failed, "failed"), []byte("scripts/add-blobs: exit 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sharedRelease(t, failed); err == nil || !strings.Contains(err.Error(), "another release suite") || !strings.Contains(err.Error(), "scripts/add-blobs: exit 1") {
		t.Errorf("sharedRelease after a failed build: %v; want the other suite's failure", err)
	}
}
