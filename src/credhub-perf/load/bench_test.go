package load_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/load"
)

// BenchmarkExternal drives an external server (LOAD_BENCH_URL, with
// LOAD_BENCH_CERT/KEY/CA for mTLS, LOAD_BENCH_FAST_HTTP=on for the lean
// client; LOAD_BENCH_RATE=R for an open loop at R requests/s) to profile
// the engine's own CPU cost:
//
//	LOAD_BENCH_URL=https://127.0.0.1:8443/ taskset -c 1 go test -run X -bench External -cpuprofile cpu.out ./load
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
	var n, failed int
	var rate float64
	if v := os.Getenv("LOAD_BENCH_RATE"); v != "" {
		if rate, err = strconv.ParseFloat(v, 64); err != nil || !(rate > 0) {
			b.Fatalf("LOAD_BENCH_RATE=%q: give requests/s above 0", v)
		}
	}
	b.ResetTimer()
	err = e.Run(context.Background(), load.Step{Concurrency: 50, Rate: rate, Requests: b.N}, load.SinkFunc(func(r *load.Result) {
		n++
		if r.Err != "" {
			failed++
		}
	}))
	if err != nil || n != b.N || failed > 0 {
		b.Fatalf("%v: %d results, %d failed", err, n, failed)
	}
}
