package releasetests

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"

	yaml "gopkg.in/yaml.v3"
)

// pythonGrowthLimit bounds what python3 and headroom-plot add to the
// release tarball (the CPython tarball and the plotting wheels, gzipped
// again by create-release).
const pythonGrowthLimit = 100 << 20

// checkPythonPackages checks the two Python packages of a dev release: what
// each ships (the blobs and headroom-plot's sources, no tests or caches),
// that the job lists both as run-time packages, and that together they stay
// under pythonGrowthLimit.
func checkPythonPackages(t *testing.T, tarball string, jobTgz []byte) {
	t.Helper()
	sizes := tgzSizes(t, tarball)
	grow := sizes["packages/python3.tgz"] + sizes["packages/headroom-plot.tgz"]
	t.Logf("python3 %.1f MB + headroom-plot %.1f MB = %.1f MB of the %.1f MB release tarball",
		mb(sizes["packages/python3.tgz"]), mb(sizes["packages/headroom-plot.tgz"]), mb(grow), mb(fileSize(t, tarball)))
	if grow == 0 || grow > pythonGrowthLimit {
		t.Errorf("python3 and headroom-plot add %.1f MB to the release tarball; want at most %.0f MB", mb(grow), mb(pythonGrowthLimit))
	}

	f, err := os.Open(tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entries, err := tgzEntries(f, func(n string) bool { return n == "packages/python3.tgz" || n == "packages/headroom-plot.tgz" })
	if err != nil {
		t.Fatal(err)
	}
	py, err := tgzEntries(strings.NewReader(string(entries["packages/python3.tgz"])), nil)
	if err != nil {
		t.Fatalf("python3 package archive: %v", err)
	}
	hasAll(t, "python3 package", py, "packaging", "python3/Python-3.13.5.tar.xz")

	hp, err := tgzEntries(strings.NewReader(string(entries["packages/headroom-plot.tgz"])), nil)
	if err != nil {
		t.Fatalf("headroom-plot package archive: %v", err)
	}
	hasAll(t, "headroom-plot package", hp, "packaging", "headroom-plot/pyproject.toml", "headroom-plot/README.md",
		"headroom-plot/requirements-bosh.txt", "headroom-plot/headroom_plot/cli.py", "headroom-plot/headroom_plot/study.py")
	wheels := 0
	for name := range hp {
		switch {
		case strings.HasPrefix(name, "headroom-plot/wheels/") && strings.HasSuffix(name, ".whl"):
			wheels++
		case strings.Contains(name, "/tests/"), strings.Contains(name, "__pycache__"), strings.Contains(name, ".egg-info"):
			t.Errorf("headroom-plot package ships %s", name)
		}
	}
	for _, w := range []string{"numpy-", "matplotlib-"} {
		found := false
		for name := range hp {
			found = found || strings.HasPrefix(name, "headroom-plot/wheels/"+w)
		}
		if !found {
			t.Errorf("headroom-plot package has no %s wheel", w)
		}
	}
	if wheels < 10 {
		t.Errorf("headroom-plot package has %d wheels; want the whole pinned stack", wheels)
	}

	job, err := tgzEntries(strings.NewReader(string(jobTgz)), func(n string) bool { return n == "job.MF" })
	if err != nil {
		t.Fatalf("job archive: %v", err)
	}
	var mf struct {
		Packages []string `yaml:"packages"`
	}
	if err := yaml.Unmarshal(job["job.MF"], &mf); err != nil {
		t.Fatalf("job.MF: %v", err)
	}
	for _, want := range []string{"credhub-perf", "python3", "headroom-plot"} {
		found := false
		for _, p := range mf.Packages {
			found = found || p == want
		}
		if !found {
			t.Errorf("job credhub-perf packages = %v; want %s (a job lists every package it runs)", mf.Packages, want)
		}
	}
}

func tgzSizes(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		out[strings.TrimPrefix(h.Name, "./")] = h.Size
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }
