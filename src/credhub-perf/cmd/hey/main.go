// Command hey is a hey-compatible HTTP load generator (rakyll/hey flags,
// defaults and summary) with mutual TLS, an open-loop mode and the CSV of
// docs/design.md, built on the load engine.
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"

	perfconfig "github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

const heyUA = "hey/0.0.1"

const usage = `Usage: hey [options...] <url>

Options:
  -n  Number of requests to run. Default is 200.
  -c  Number of workers to run concurrently. Total number of requests cannot
      be smaller than the concurrency level. Default is 50.
      With -rate: the most requests in flight at once; keep-alive
      connections are shared, most recently used first, so a light load
      uses few of them. The first are opened before the run's clock
      starts, and a new one only when none is idle and waiting for a
      busy one would not pay (a slow or stalled server, or too few for
      the rate) while the tester has CPU to spare; both clients.
  -q  Rate limit, in queries per second (QPS) per worker. Default is no rate limit.
  -rate  Total request rate (requests/s) of an open-loop run: requests are
      scheduled at this rate whatever the server does, and response times
      are measured from the scheduled time (no coordinated omission).
      Sends are paced by a kernel timer (Linux), within tens of
      microseconds of schedule on an idle machine.
  -z  Duration of application to send requests. When duration is reached,
      application stops and exits. If duration is specified, n is ignored.
      Examples: -z 10s -z 3m.
  -o  Output type. If none provided, a summary is printed.
      "csv" is the only supported alternative. Dumps the response
      metrics in comma-separated values format (one row per request,
      failures included), to stdout or to the -output file.
  -output  Write the CSV to this file (implies -o csv; the summary is
      still printed).

  -m  HTTP method, one of GET, POST, PUT, DELETE, HEAD, OPTIONS.
  -H  Custom HTTP header. You can specify as many as needed by repeating the flag.
      For example, -H "Accept: text/html" -H "Content-Type: application/xml" .
  -t  Timeout for each request in seconds. Default is 20, use 0 for infinite.
  -A  HTTP Accept header.
  -d  HTTP request body.
  -D  HTTP request body from file. For example, /home/user/file.txt or ./file.txt.
  -T  Content-type, defaults to "text/html".
  -U  User-Agent, defaults to version "hey/0.0.1".
  -a  Basic authentication, username:password.
  -x  HTTP Proxy address as host:port.
  -h2 Enable HTTP/2.

  -host	HTTP Host header.

  -disable-compression  Disable compression.
  -disable-keepalive    Disable keep-alive, prevents re-use of TCP
                        connections between different HTTP requests.
  -disable-redirects    Disable following of HTTP redirects
  -fast-http            Send HTTP/1.1 with credhub-perf's hand-made lean
                        client on raw connections instead of Go's net/http
                        (the default): less CPU per request. -h2 and -x
                        use net/http anyway (said on stderr).
  -cpus                 Number of used cpu cores.
                        (default for current machine is %d cores)

TLS:
  -cert        Client certificate (PEM) for mutual TLS. Default: $X509_USER_CERT.
  -key         Client private key (PEM, RSA or ECDSA). Default: $X509_USER_KEY.
  -cacert      CA bundle (PEM) that signed the server certificate.
               Default: the system roots.
  -servername  Name to verify in the server certificate (and send as SNI).
  -insecure    Do not verify the server certificate.

URL, -d/-D body and -H values may contain {{seq}} (request number),
{{cycle N}} ((seq-1) mod N), {{uuid}}, {{rand N}} (0..N-1),
{{zipf N S}} (0..N-1, P(k) ~ 1/(k+1)^S: 0 the most drawn) and
{{pick FILE}} (a random line of FILE).

After the load, a "WARNING: tester-bound" block (stderr, and the summary)
says when the figures describe this tester rather than the server: its
CPU, or its cores' (other work, steal), past credhub-perf's saturation
defaults; "WARNING: late schedule" when a -rate run fell behind anyway.
The exit status stays 0.
`

type headerList []string

func (h *headerList) String() string     { return strings.Join(*h, ", ") }
func (h *headerList) Set(v string) error { *h = append(*h, v); return nil }

var headerRE = regexp.MustCompile(`^([\w-]+):\s*(.+)`)

type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// maxCPUs bounds -cpus (GOMAXPROCS): far above any machine hey runs on.
const maxCPUs = 4096

// maxBodyBytes caps -D: a request body for CredHub is a few KB (its own
// limit is about 64 KiB); /dev/zero or a wrong path must not be read whole.
const maxBodyBytes = 16 << 20

// readCapped reads a file of at most max bytes, and refuses a larger one
// after reading one byte more.
func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d MiB; give the file holding the request body", path, max>>20)
	}
	return b, nil
}

// isSet says whether the command line gave the flag name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// config is everything parsed from the command line.
type config struct {
	opts    load.ClientOptions
	tmpl    load.Template
	step    load.Step
	csv     bool
	csvFile string
	cpus    int
}

func parse(args []string, getenv func(string) string) (*config, error) {
	fs := flag.NewFlagSet("hey", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var hs headerList
	fs.Var(&hs, "H", "")
	var (
		m           = fs.String("m", "GET", "")
		body        = fs.String("d", "", "")
		bodyFile    = fs.String("D", "", "")
		accept      = fs.String("A", "", "")
		contentType = fs.String("T", "text/html", "")
		authHeader  = fs.String("a", "", "")
		hostHeader  = fs.String("host", "", "")
		userAgent   = fs.String("U", "", "")
		output      = fs.String("o", "", "")
		outputFile  = fs.String("output", "", "")
		c           = fs.Int("c", 50, "")
		n           = fs.Int("n", 200, "")
		q           = fs.Float64("q", 0, "")
		rate        = fs.Float64("rate", 0, "")
		t           = fs.Int("t", 20, "")
		z           = fs.Duration("z", 0, "")
		h2          = fs.Bool("h2", false, "")
		cpus        = fs.Int("cpus", runtime.GOMAXPROCS(-1), "")
		noCompress  = fs.Bool("disable-compression", false, "")
		noKeepAlive = fs.Bool("disable-keepalive", false, "")
		noRedirects = fs.Bool("disable-redirects", false, "")
		proxyAddr   = fs.String("x", "", "")
		cert        = fs.String("cert", getenv("X509_USER_CERT"), "")
		key         = fs.String("key", getenv("X509_USER_KEY"), "")
		cacert      = fs.String("cacert", "", "")
		serverName  = fs.String("servername", "", "")
		insecure    = fs.Bool("insecure", false, "")
		fastHTTP    = fs.Bool("fast-http", false, "")
	)
	fs.Bool("fast-rsa", false, "") // retired: refused below, saying what changed
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("%v ('hey -h' lists the options)", err)
	}
	if isSet(fs, "fast-rsa") {
		return nil, usagef("-fast-rsa %s", perfconfig.RetiredMsg("tester.fast_rsa"))
	}
	if fs.NArg() < 1 {
		return nil, usagef("no URL given: hey [options...] <url>")
	}
	if fs.NArg() > 1 {
		return nil, usagef("unexpected arguments after the URL: %q (options go before the URL)", fs.Args()[1:])
	}
	// The upper bounds are credhub-perf's (perfconfig.Max*): beyond them a
	// value is a typo that would hang or exhaust memory (a million workers
	// is 2.8 GB of goroutines before the first request).
	switch {
	case *c <= 0:
		return nil, usagef("-c cannot be smaller than 1 (got %d)", *c)
	case *c > perfconfig.MaxConcurrency:
		return nil, usagef("-c must be at most %d workers (got %d): run several hey processes or machines for more", perfconfig.MaxConcurrency, *c)
	case *n > perfconfig.MaxRequests:
		return nil, usagef("-n must be at most %d requests (got %d): use -z for a long run", perfconfig.MaxRequests, *n)
	case *z > perfconfig.MaxStepTime:
		return nil, usagef("-z must be at most 24h (got %s)", *z)
	case *q > perfconfig.MaxRate:
		return nil, usagef("-q must be at most %d requests/s per worker (got %v)", perfconfig.MaxRate, *q)
	case *rate > perfconfig.MaxRate:
		return nil, usagef("-rate must be at most %d requests/s (got %v): run several hey processes or machines for more", perfconfig.MaxRate, *rate)
	case *t > int(perfconfig.MaxRequestTime/time.Second):
		return nil, usagef("-t must be at most %d seconds (got %d; 0 means no timeout)", int(perfconfig.MaxRequestTime/time.Second), *t)
	case *cpus > maxCPUs:
		return nil, usagef("-cpus must be at most %d (got %d)", maxCPUs, *cpus)
	case *z < 0:
		return nil, usagef("-z cannot be negative (got %s)", *z)
	case *z == 0 && *n <= 0:
		return nil, usagef("-n cannot be smaller than 1 (got %d)", *n)
	case *z == 0 && *rate == 0 && *n < *c:
		return nil, usagef("-n cannot be less than -c (%d < %d)", *n, *c)
	case *q < 0 || math.IsNaN(*q) || math.IsInf(*q, 0):
		return nil, usagef("-q must be a positive number of requests/s per worker (got %v)", *q)
	case *rate < 0 || math.IsNaN(*rate) || math.IsInf(*rate, 0):
		return nil, usagef("-rate must be a positive number of requests/s (got %v)", *rate)
	case *rate > 0 && *q > 0:
		return nil, usagef("-rate (total, open loop) and -q (per worker) cannot be combined: choose one")
	case *t < 0:
		return nil, usagef("-t cannot be negative (got %d; 0 means no timeout)", *t)
	case *cpus < 1:
		return nil, usagef("-cpus cannot be smaller than 1 (got %d)", *cpus)
	case *output != "" && *output != "csv":
		return nil, usagef("invalid output type %q; only csv is supported", *output)
	}

	cfg := &config{cpus: *cpus, csv: *output == "csv" || *outputFile != "", csvFile: *outputFile}
	cfg.step = load.Step{Concurrency: *c, QPS: *q, Rate: *rate, Duration: *z}
	if *z == 0 {
		cfg.step.Requests = *n
	}

	header := http.Header{}
	header.Set("Content-Type", *contentType)
	for _, h := range hs {
		match := headerRE.FindStringSubmatch(h)
		if match == nil {
			return nil, usagef("could not parse header %q: use -H \"Name: value\"", h)
		}
		header.Add(match[1], match[2])
	}
	if *accept != "" {
		header.Set("Accept", *accept)
	}
	if *authHeader != "" {
		user, pass, ok := strings.Cut(*authHeader, ":")
		if !ok {
			return nil, usagef("-a wants username:password")
		}
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	ua := header.Get("User-Agent")
	if *userAgent != "" {
		ua = *userAgent
	}
	if ua == "" {
		ua = heyUA
	} else {
		ua += " " + heyUA
	}
	header.Set("User-Agent", ua)

	bodyText := *body
	if *bodyFile != "" {
		b, err := readCapped(*bodyFile, maxBodyBytes)
		if err != nil {
			return nil, usagef("-D: %v", err)
		}
		bodyText = string(b)
	}
	cfg.tmpl = load.Template{Method: strings.ToUpper(*m), URL: fs.Arg(0), Header: header, Body: bodyText}

	var proxyURL *url.URL
	if *proxyAddr != "" {
		p := *proxyAddr
		if !strings.Contains(p, "://") {
			p = "http://" + p
		}
		var err error
		if proxyURL, err = url.Parse(p); err != nil || proxyURL.Host == "" {
			return nil, usagef("-x %q is not a proxy address: use host:port", *proxyAddr)
		}
	}
	cfg.opts = load.ClientOptions{
		TLS: load.TLSOptions{
			CertFile: *cert, KeyFile: *key, CAFile: *cacert,
			ServerName: *serverName, Insecure: *insecure,
		},
		KeepAlive:          !*noKeepAlive,
		HTTP2:              *h2,
		FastHTTP:           *fastHTTP,
		Timeout:            time.Duration(*t) * time.Second,
		DisableCompression: *noCompress,
		DisableRedirects:   *noRedirects,
		ProxyURL:           proxyURL,
		Host:               *hostHeader,
	}
	return cfg, nil
}

// summarySink feeds hey's summary: latency figures over responses (as
// rakyll/hey does), errors over everything. Each request is recorded once,
// into ok or failed, and all is their merge (snapshots): recording every
// response twice cost about 0.6 % of the lean client's CPU per request
// against a null server.
type summarySink struct {
	ok     *results.Stats
	failed *results.Stats
}

func (s summarySink) Record(r *load.Result) {
	if r.Err == "" {
		s.ok.Record(r)
	} else {
		s.failed.Record(r)
	}
}

// snapshots are the figures over the requests with a response (ok) and
// over every request (all).
func (s summarySink) snapshots() (ok, all results.Snapshot) {
	merged := results.NewStats()
	merged.Merge(s.ok)
	merged.Merge(s.failed)
	return s.ok.Snapshot(), merged.Snapshot()
}

// run is hey; cpu reads the tester's CPU figures (cpuload.Take, or a
// test's).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, cpu func(time.Time) cpuload.Sample) int {
	cfg, err := parse(args, getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, usage, runtime.NumCPU())
			return 0
		}
		fmt.Fprintf(stderr, "hey: %v\n", err)
		return 2
	}
	if cfg.opts.TLS.Insecure {
		fmt.Fprintln(stderr, "hey: warning: -insecure: the server's certificate is not verified; use it against test systems only")
	}
	runtime.GOMAXPROCS(cfg.cpus)
	engine, err := load.New(cfg.opts, cfg.tmpl)
	if err != nil {
		fmt.Fprintf(stderr, "hey: %v\n", err)
		return 2
	}
	if client, note := engine.HTTPClient(); note != "" {
		fmt.Fprintf(stderr, "hey: -fast-http: %s sends instead: %s\n", client, note)
	}
	load.TuneGC()
	sum := summarySink{ok: results.NewStats(), failed: results.NewStats()}
	var sink load.Sink = sum
	var csvw *results.CSVWriter
	var csvFile *os.File
	printSummary := true
	if cfg.csv {
		out := stdout
		if cfg.csvFile != "" {
			if csvFile, err = os.Create(cfg.csvFile); err != nil {
				fmt.Fprintf(stderr, "hey: -output: %v\n", err)
				return 2
			}
			out = csvFile
		} else {
			printSummary = false
		}
		csvw = results.NewCSVWriter(out)
		sink = load.Multi(sum, csvw)
	}
	// The CPU figures cover the load only, as a credhub-perf step's do:
	// setup (keys, templates) would dilute them.
	before := cpu(time.Now())
	start := time.Now()
	// Open loop starts its clock itself, after dialling its first
	// connection (a few milliseconds that Total includes).
	err = engine.Run(ctx, cfg.step, sink)
	total := time.Since(start)
	usage := cpuload.Between(before, cpu(time.Now()))
	code := 0
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "hey: %v\n", err)
		code = 1
	}
	if csvw != nil {
		if ferr := csvw.Flush(); ferr != nil {
			fmt.Fprintf(stderr, "hey: writing CSV: %v\n", ferr)
			code = 1
		}
		if csvFile != nil {
			if cerr := csvFile.Close(); cerr != nil && code == 0 {
				fmt.Fprintf(stderr, "hey: writing CSV: %v\n", cerr)
				code = 1
			}
		}
	}
	ok, all := sum.snapshots()
	// A completed run exits 0 even when tester-bound, as rakyll/hey's
	// callers expect: the warning is for the reader, on stderr always and
	// in the summary when there is one.
	warning := boundWarning(usage, all, cfg.step.Rate > 0)
	if len(warning) > 0 {
		fmt.Fprintln(stderr, strings.Join(warning, "\n"))
	}
	if printSummary {
		printReport(stdout, total, ok, all, cfg.step.Rate > 0, warning)
	}
	return code
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, cpuload.Take)
	stop()
	os.Exit(code)
}
