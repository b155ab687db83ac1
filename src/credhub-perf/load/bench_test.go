package load_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/load"
)

// BenchmarkExternal drives an external server (LOAD_BENCH_URL, with
// LOAD_BENCH_CERT/KEY/CA for mTLS, LOAD_BENCH_FAST_HTTP=on for the lean
// client; LOAD_BENCH_RATE=R for an open loop at R requests/s) to profile
// the engine's own CPU cost:
//
//	LOAD_BENCH_URL=https://127.0.0.1:8443/ taskset -c 1 go test -run X -bench External -cpuprofile cpu.out ./load
//
// LOAD_BENCH_C sets the workers (default 50): in open loop the most
// requests in flight and connections (hey's -c). Options are hey's
// defaults (20 s timeout, compression on), and the GC is tuned as hey's
// is. Besides ns/op it reports the process's CPU (user + system, where the
// system tells it) per request, which, unlike wall time, other work on a
// shared machine barely moves; -benchmem adds the allocations per request.
func BenchmarkExternal(b *testing.B) {
	u := os.Getenv("LOAD_BENCH_URL")
	if u == "" {
		b.Skip("LOAD_BENCH_URL not set")
	}
	opts := load.ClientOptions{
		KeepAlive: os.Getenv("LOAD_BENCH_KEEPALIVE") != "off",
		FastHTTP:  os.Getenv("LOAD_BENCH_FAST_HTTP") == "on",
		Timeout:   20 * time.Second,
		TLS: load.TLSOptions{CertFile: os.Getenv("LOAD_BENCH_CERT"), KeyFile: os.Getenv("LOAD_BENCH_KEY"),
			CAFile: os.Getenv("LOAD_BENCH_CA")},
	}
	e, err := load.New(opts, load.Template{URL: u})
	if err != nil {
		b.Fatal(err)
	}
	step := load.Step{Concurrency: 50, Requests: b.N}
	if v := os.Getenv("LOAD_BENCH_RATE"); v != "" {
		if step.Rate, err = strconv.ParseFloat(v, 64); err != nil || !(step.Rate > 0) {
			b.Fatalf("LOAD_BENCH_RATE=%q: give requests/s above 0", v)
		}
	}
	if v := os.Getenv("LOAD_BENCH_C"); v != "" {
		if step.Concurrency, err = strconv.Atoi(v); err != nil || step.Concurrency < 1 {
			b.Fatalf("LOAD_BENCH_C=%q: give a worker count of at least 1", v)
		}
	}
	load.TuneGC() // as hey and credhub-perf do after setup
	var n, failed int
	cpu0 := cpuload.Take(time.Now())
	b.ResetTimer()
	err = e.Run(context.Background(), step, load.SinkFunc(func(r *load.Result) {
		n++
		if r.Err != "" {
			failed++
		}
	}))
	b.StopTimer()
	if cpu1 := cpuload.Take(time.Now()); cpu0.ProcessOK && cpu1.ProcessOK {
		b.ReportMetric(float64((cpu1.Process-cpu0.Process).Microseconds())/float64(b.N), "cpu-µs/req")
	}
	if err != nil || n != b.N || failed > 0 {
		b.Fatalf("%v: %d results, %d failed", err, n, failed)
	}
}
