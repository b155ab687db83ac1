//go:build unix

package workload

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// benchLog writes an audit log of n requests in a production-like mix
// (gets of one or two versions, interpolates of one to three refs, finds,
// sets, generates, gets by id) over Zipf-popular names, 2,000 req/s.
func benchLog(b *testing.B, n int) (path string, lines int) {
	path = filepath.Join(b.TempDir(), "credhub_security_events.log")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.1, 1, 4999)
	name := func() string { return "/cf/app/" + strconv.FormatUint(zipf.Uint64(), 10) }
	emit := func(ls ...string) {
		for _, l := range ls {
			w.WriteString(l)
			w.WriteByte('\n')
			lines++
		}
	}
	defer func() { testActor = "456654b3fa6c" }()
	for i := 0; i < n; i++ {
		at := t0 + int64(i)/2
		testActor = fmt.Sprintf("%012d", i%1000) // neighbours differ: see the package doc
		switch p := rng.IntN(100); {
		case p < 60:
			emit(getLines(at, name(), 1+rng.IntN(2))...)
		case p < 74:
			// A service binding's refs are distinct credentials.
			a := name()
			emit(interpolateLines(at, a, a+"/b1", a+"/b2")[:1+rng.IntN(3)]...)
		case p < 84:
			emit(findLine(at, "/cf/app"))
		case p < 92:
			emit(setLine(at, name()))
		case p < 97:
			g := name()
			emit(cefLine{at: at, method: "POST", uri: "/api/v1/data", status: 200, name: g, version: "v", resID: "r",
				action: "GENERATE", details: `{"name":"` + g + `","type":"password"}`}.String())
		default:
			emit(cefLine{at: at, method: "GET", uri: "/api/v1/data/" + strconv.Itoa(i), status: 200, name: name(),
				version: strconv.Itoa(i), resID: "r", action: "GET", details: `{"uuid":"x"}`}.String())
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path, lines
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAnalyze reads a file of WORKLOAD_BENCH_REQUESTS requests
// (default 200,000; scripts/bench-workload uses 1,000,000) and reports
// the CPU time per million audit lines (records), the target being 10 s
// on one core.
func BenchmarkAnalyze(b *testing.B) {
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("WORKLOAD_BENCH_REQUESTS")); err == nil && v > 0 {
		n = v
	}
	path, lines := benchLog(b, n)
	kind := "plain"
	if os.Getenv("WORKLOAD_BENCH_GZIP") == "1" {
		path, kind = gzipFile(b, path), "gzipped"
	}
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		w, err := Analyze(Options{Paths: []string{path}})
		if err != nil || w.Requests != int64(n) || w.Lines != int64(lines) {
			b.Fatalf("requests %d of %d, lines %d of %d: %v", w.Requests, n, w.Lines, lines, err)
		}
	}
	cpu := cpuTime() - start
	perMillion := cpu.Seconds() / float64(b.N) / float64(lines) * 1e6
	b.ReportMetric(perMillion, "cpu-s/1M-records")
	b.ReportMetric(float64(lines), "records")
	fmt.Fprintf(os.Stderr, "workload bench (%s): %d requests, %d records, %.2f CPU s per 1,000,000 records\n", kind, n, lines, perMillion)
}

// gzipFile compresses path as logrotate does (gzip's default level).
func gzipFile(b *testing.B, path string) string {
	in, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(path + ".1.gz")
	if err != nil {
		b.Fatal(err)
	}
	zw := gzip.NewWriter(out)
	if _, err := io.Copy(zw, in); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	os.Remove(path)
	return path + ".1.gz"
}
