package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/targetload"
)

// vitalsCmd samples a BOSH deployment's vitals beside a run that cannot
// sample them itself (scripts/scaling-study around bosh run-errand), and
// puts the samples on the runs' time afterwards:
//
//	credhub-perf vitals record --deployment D [--group G=R]... --out FILE
//	credhub-perf vitals attach FILE RUN_DIR...
//
// record writes the samples file format with times in seconds since the
// Unix epoch, until SIGTERM or SIGINT (one last read then); attach shifts
// them onto each run directory's offset origin (meta.json offset_origin,
// else its first row's start-time less its offset), writes the run's
// target-samples.csv and recomputes its summary.
func vitalsCmd(args []string, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "record":
			return vitalsRecord(args[1:], stderr)
		case "attach":
			return vitalsAttach(args[1:], stderr)
		}
	}
	fmt.Fprintln(stderr, "usage: credhub-perf vitals record --deployment D [--group GROUP=RESOURCE]... [--bosh PATH] [--interval 10s] [--timeout 60s] --out FILE\n       credhub-perf vitals attach FILE RUN_DIR...")
	return 2
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func vitalsRecord(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("credhub-perf vitals record", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dep := fs.String("deployment", "", "the BOSH deployment whose VMs to sample")
	out := fs.String("out", "", "samples file to write (refused if it exists)")
	bosh := fs.String("bosh", "bosh", "the bosh CLI; director credentials come from BOSH_ENVIRONMENT, BOSH_CLIENT, BOSH_CLIENT_SECRET, BOSH_CA_CERT")
	every := fs.Duration("interval", targetload.VitalsWindow, "time between two vitals calls (at least 10s, the agent's own interval)")
	timeout := fs.Duration("timeout", 60*time.Second, "how long one vitals call may take")
	var groups listFlag
	fs.Var(&groups, "group", "instance group to sample as GROUP=RESOURCE (repeatable; a group of colocated jobs twice, credhub=credhub and credhub=database; default credhub=credhub and database=database)")
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	if *dep == "" || *out == "" || fs.NArg() > 0 || *timeout <= 0 {
		fmt.Fprintln(stderr, "credhub-perf vitals record: --deployment and --out are required, a positive --timeout, no arguments")
		return 2
	}
	if len(groups) == 0 {
		groups = listFlag{"credhub=credhub", "database=database"}
	}
	gm, err := targetload.ParseGroups(groups)
	if err != nil {
		fmt.Fprintf(stderr, "credhub-perf vitals record: --group %v\n", err)
		return 2
	}
	w, err := targetload.Create(*out)
	if err != nil {
		fmt.Fprintf(stderr, "credhub-perf vitals record: %v\n", err)
		return 2
	}
	src := &targetload.BoshSource{Command: *bosh, Deployment: *dep, Groups: gm, Timeout: *timeout, Every: *every, Secret: os.Getenv("BOSH_CLIENT_SECRET")}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := targetload.NewSampler([]targetload.Source{src}, time.Unix(0, 0), time.Now, w, func(m string) { fmt.Fprintf(stderr, "credhub-perf vitals: %s\n", m) })
	s.Start(ctx)
	<-ctx.Done()
	stop()
	// One last read: the agent's window then covers the run's last seconds.
	last, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	s.SampleNowAll(last)
	if err := s.Stop(); err != nil {
		fmt.Fprintf(stderr, "credhub-perf vitals record: %v\n", err)
		return 1
	}
	return 0
}

func vitalsAttach(args []string, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "usage: credhub-perf vitals attach FILE RUN_DIR...")
		return 2
	}
	samples, warnings, err := targetload.Read(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "credhub-perf vitals attach: %v\n", err)
		return 2
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	status := 0
	for _, dir := range args[1:] {
		if err := attachTo(dir, samples); err != nil {
			fmt.Fprintf(stderr, "credhub-perf vitals attach: %s: %v\n", dir, err)
			status = 1
		}
	}
	return status
}

func attachTo(dir string, samples []targetload.Sample) error {
	origin, err := offsetOrigin(dir)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, targetload.FileName)
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s exists already (the run sampled the target itself); left as it is", targetload.FileName)
	}
	// The run's samples: those within a day of its origin either way is far
	// more than any run; the summary attributes them to steps.
	mine := targetload.Shift(samples, -time.Duration(origin.UnixNano()), -24*time.Hour, 24*time.Hour)
	w, err := targetload.Create(path)
	if err != nil {
		return err
	}
	if err := w.Write(mine); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	// The run's own SLO (summary.json's, else meta.json's), as summary does.
	def := config.Default()
	slo := results.SLO{Percentile: def.SLO.Percentile, LatencyS: def.SLO.Latency.D().Seconds(), MaxErrorRate: def.SLO.MaxErrorRate}
	if m, err := results.ReadMeta(dir); err == nil && m.SLO.LatencyS > 0 && m.SLO.Percentile > 0 {
		slo.Percentile, slo.LatencyS, slo.LatencyByRequestS = m.SLO.Percentile, m.SLO.LatencyS, m.SLO.LatencyByRequestS
	}
	if _, err := results.SummarizeDir(dir, slo); err != nil {
		return fmt.Errorf("recomputing its summary: %w", err)
	}
	return nil
}

// offsetOrigin is when a run's offsets count from: meta.json's
// offset_origin, else its first row's start-time less its offset.
func offsetOrigin(dir string) (time.Time, error) {
	if m, err := results.ReadMeta(dir); err == nil && m.OffsetOrigin != "" {
		if t, err := time.Parse(time.RFC3339Nano, m.OffsetOrigin); err == nil {
			return t, nil
		}
		return time.Time{}, fmt.Errorf("meta.json offset_origin %q is not an RFC3339 time", m.OffsetOrigin)
	}
	files, err := results.ResultFiles(dir)
	if err != nil {
		return time.Time{}, err
	}
	var origin time.Time
	stop := errors.New("stop")
	_, err = results.ReadCSV(files[0], func(r *results.Row) error {
		origin = r.Start.Add(-r.Offset)
		return stop
	})
	if err != nil && !errors.Is(err, stop) {
		return time.Time{}, err
	}
	if origin.IsZero() || math.Abs(float64(time.Since(origin))) > float64(20*365*24*time.Hour) {
		return time.Time{}, errors.New("no offset origin: meta.json has no offset_origin and the CSV no start-time to derive it from")
	}
	return origin, nil
}
