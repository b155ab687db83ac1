// Command credhub-perf runs CredHub headroom studies: seed, a stepped
// concurrency (or rate) ramp for get, set and interpolate, cleanup, and
// exact per-request records; plus capacity search, summary and merge.
//
// It is a thin command line over the packages that do the work: run and
// capacity (package ramp, from a configuration file and one flag per
// configuration key), cleanup of a run that could not clean up after
// itself (ramp.Cleanup), summary and merge of run directories (package
// results), and collect of the tarballs that `bosh run-errand
// --download-logs` fetches from tester VMs (package collect). The exit
// status is the contract for scripts and the BOSH errand: 0 ok, 1 the run
// or its cleanup failed (its results kept), 2 a usage or configuration
// error or a target unusable at start.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/credhub-perf/credhub-perf/collect"
	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/ramp"
	"github.com/credhub-perf/credhub-perf/replay"
	"github.com/credhub-perf/credhub-perf/results"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `usage: credhub-perf COMMAND [flags]

commands:
  run       --config FILE [--KEY VALUE ...]   seed, ramp, clean up; one run directory per scenario
  capacity  --config FILE [--KEY VALUE ...]   find the highest concurrency (or rate) meeting the SLO
  cleanup   --run-id ID|RUN_DIR... [--config FILE] [--KEY VALUE ...]
                                              remove what a killed run left under /credhub-perf/ID/
  summary   RUN_DIR|CSV...                    recompute summary.json/summary.txt from the CSV files
  summary   --json RUN_DIR|CSV...             the same as one JSON document (with the merge and the
                                              no-capacity reason), for headroom-plot; writes no file
  merge     RUN_DIR                           summarize all results-<tester>.csv of a multi-tester run
  collect   --out DIR TARBALL...              run directories from bosh run-errand --download-logs tarballs
  workload  [--out DIR] [--keep-names] LOG... CredHub's audit logs (plain, .gz, bosh logs tarballs) as
                                              workload.json, workload-arrivals.csv and a summary
  vitals    record --deployment D --out FILE  sample a BOSH deployment's vitals until SIGTERM (scaling-study)
  vitals    attach FILE RUN_DIR...            put those samples on each run's time and recompute its summary
  version                                     print the version

Every configuration key is also a flag (--steps.max_concurrency 50); see
docs/configuration.md or 'credhub-perf run -h'.
Exit status: 0 ok, 1 run or cleanup failed, 2 usage/configuration error or target unusable at start.
`

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main is the whole program, for tests.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "run":
		return runCmd(args[1:], false, stdout, stderr)
	case "capacity":
		return runCmd(args[1:], true, stdout, stderr)
	case "cleanup":
		return cleanupCmd(args[1:], stdout, stderr)
	case "summary":
		return summaryCmd(args[1:], false, stdout, stderr)
	case "merge":
		return summaryCmd(args[1:], true, stdout, stderr)
	case "collect":
		return collectCmd(args[1:], stdout, stderr)
	case "workload":
		return workloadCmd(args[1:], stdout, stderr)
	case "vitals":
		return vitalsCmd(args[1:], stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "credhub-perf", version)
		return 0
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "credhub-perf: unknown command %q\n%s", args[0], usage)
	return 2
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func runCmd(args []string, capacity bool, stdout, stderr io.Writer) int {
	name := "run"
	if capacity {
		name = "capacity"
	}
	fs := flag.NewFlagSet("credhub-perf "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "configuration file (YAML or JSON); see docs/configuration.md")
	quiet := fs.Bool("quiet", false, "no live progress line, even on a terminal")
	over := config.BindFlags(fs)
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "credhub-perf %s: unexpected argument %q (configuration goes in --config or --KEY VALUE flags)\n", name, fs.Arg(0))
		return 2
	}
	cfg := config.Default()
	if *configFile != "" {
		if err := config.LoadFile(&cfg, *configFile); err != nil {
			fmt.Fprintf(stderr, "credhub-perf: %v\n", err)
			return 2
		}
	}
	errs := over.Apply(&cfg)
	var workload *results.Workload
	if len(errs) == 0 {
		// Before Validate: the workload sets the mix scenario's weights.
		var err error
		if workload, err = replay.Configure(&cfg); err != nil {
			fmt.Fprintf(stderr, "credhub-perf: %v\n", err)
			return 2
		}
		errs = cfg.Validate(capacity)
	}
	if len(errs) > 0 {
		for _, err := range errs {
			fmt.Fprintf(stderr, "credhub-perf: config: %v\n", err)
		}
		return 2
	}

	// A run must never die of its own log: when the reader of stdout or
	// stderr is gone (an errand's tee killed by `bosh cancel-task`), a
	// write fails instead of killing the process before its cleanup.
	signal.Ignore(syscall.SIGPIPE)
	// SIGHUP too: a dropped ssh session must stop the run and clean up,
	// not kill it with its credentials left behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	go func() {
		// After the first signal the run stops and cleans up; restoring the
		// default handling lets a second Ctrl-C abandon the cleanup.
		<-ctx.Done()
		stop()
		fmt.Fprintln(stderr, "credhub-perf: interrupted: stopping the ramp and cleaning up (a second interrupt abandons the cleanup)")
	}()
	return ramp.Execute(ctx, ramp.Options{
		Config: cfg, Capacity: capacity, Stdout: stdout, Log: stderr, ConfigFile: *configFile,
		TTY: !*quiet && isTerminal(stderr), Version: version, Workload: workload,
	})
}

func summaryCmd(args []string, merge bool, stdout, stderr io.Writer) int {
	name := "summary"
	if merge {
		name = "merge"
	}
	fs := flag.NewFlagSet("credhub-perf "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := config.Default()
	pct := fs.Float64("slo.percentile", def.SLO.Percentile, "SLO percentile when the run directory has no summary.json")
	lat := fs.String("slo.latency", def.SLO.Latency.String(), "SLO latency bound when the run directory has no summary.json")
	maxErr := fs.Float64("slo.max_error_rate", def.SLO.MaxErrorRate, "error bound of capacity figures when the run directory has no summary.json")
	var asJSON *bool
	if !merge {
		asJSON = fs.Bool("json", false, "write one JSON document for one run (a RUN_DIR, or the CSV files of one run's testers) to stdout, for headroom-plot, and write no file; with an --slo.* flag its figures are for the flags' SLO even where the run has a summary.json")
	}
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	if fs.NArg() == 0 || (merge && fs.NArg() != 1) {
		fmt.Fprintf(stderr, "usage: credhub-perf summary RUN_DIR|CSV... | credhub-perf merge RUN_DIR\n")
		return 2
	}
	var d config.Duration
	// headroom-plot asks --json for any SLO it accepts: latencies up to
	// the longest a results file holds.
	maxLat, maxLatText := config.MaxRequestTime, "1h"
	if asJSON != nil && *asJSON {
		maxLat, maxLatText = jsonMaxLatency()
	}
	// Written so that NaN fails every test: it compares false.
	if err := d.UnmarshalText([]byte(*lat)); err != nil || !(d > 0 && d.D() <= maxLat) || !(*pct > 0 && *pct <= 100) || !(*maxErr >= 0 && *maxErr <= 1) {
		fmt.Fprintf(stderr, "credhub-perf %s: bad SLO (--slo.percentile %g, --slo.latency %q, --slo.max_error_rate %g): give a percentile above 0 and at most 100, a latency above 0 and at most %s, an error rate from 0 to 1\n", name, *pct, *lat, *maxErr, maxLatText)
		return 2
	}
	slo := results.SLO{Percentile: *pct, LatencyS: d.D().Seconds(), MaxErrorRate: *maxErr}
	if asJSON != nil && *asJSON {
		forced := false
		fs.Visit(func(f *flag.Flag) { forced = forced || strings.HasPrefix(f.Name, "slo.") })
		return summaryJSON(fs.Args(), slo, forced, stdout, stderr)
	}
	status := 0
	for _, p := range fs.Args() {
		st, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(stderr, "credhub-perf %s: %v\n", name, err)
			status = 2
			continue
		}
		var sum *results.Summary
		if st.IsDir() {
			files, ferr := results.ResultFiles(p)
			if ferr == nil && !merge && len(files) > 1 {
				fmt.Fprintf(stderr, "credhub-perf summary: %s holds %d tester files; summarizing them together (as merge does)\n", p, len(files))
			}
			sum, err = results.SummarizeDir(p, slo)
		} else if strings.HasSuffix(p, ".csv") && !merge {
			sum, err = results.SummarizeFiles([]string{p}, slo)
		} else {
			err = fmt.Errorf("%s is not a run directory", p)
		}
		if err != nil {
			fmt.Fprintf(stderr, "credhub-perf %s: %v\n", name, err)
			status = 2
			continue
		}
		fmt.Fprintf(stdout, "== %s\n", p)
		sum.WriteTable(stdout)
	}
	return status
}

// collectCmd extracts the tarballs of every tester VM into run directories
// headroom-plot reads as they are.
func collectCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("credhub-perf collect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory that receives the run directories (created if missing)")
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	if *out == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: credhub-perf collect --out DIR TARBALL... (the .tgz files of bosh run-errand --download-logs, one per tester)")
		return 2
	}
	def := config.Default()
	slo := results.SLO{Percentile: def.SLO.Percentile, LatencyS: def.SLO.Latency.D().Seconds(), MaxErrorRate: def.SLO.MaxErrorRate}
	rep, err := collect.Tarballs(*out, fs.Args(), slo)
	if rep != nil {
		for _, w := range rep.Warnings {
			fmt.Fprintf(stderr, "credhub-perf collect: warning: %s\n", w)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "credhub-perf collect: %v\n", err)
		return 2
	}
	for _, d := range rep.RunDirs {
		fmt.Fprintln(stdout, d)
	}
	if len(rep.Logs) > 0 {
		fmt.Fprintf(stderr, "credhub-perf collect: %d run directories; the errand logs are beside them in %s\n", len(rep.RunDirs), *out)
	}
	return 0
}
