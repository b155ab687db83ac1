// Command virtual-ramp runs a closed-loop ramp of reads against credhub-sim's
// capacity model on a virtual clock and writes the run directory credhub-perf
// would (results.csv in its format, meta.json), for tests of what reads runs:
// headroom-plot compare's verdict on two set-ups of known capacity.
//
//	virtual-ramp -out DIR -workers 2 -cores 2 -service-time 8ms [-seed 1] [-db-capacity R]
//	virtual-ramp -out DIR ... -rates 400,500,600 [-pause-every 2s -pause 50ms]
//
// With -rates the steps are open loop instead (openloop.go): requests
// arrive at fixed intervals, as credhub-perf's open loop sends them,
// whatever the answers; -pause-every and -pause add the target's pauses
// (capacity.Model.SetPauses). Long steps of it are what open arrivals
// hold on a set-up, the truth a real run's figure to size with is held to.
//
// With -db-capacity the instances share a database of that many requests/s
// (capacity.Model.SetDatabase), and the run directory also gets
// target-samples.csv: per step, the model's utilisation of each instance
// and of the database over the step, as credhub-perf's target_load.credhub_sim
// records it, so credhub-perf names the bottleneck of the run. With
// -shared-cores C (and -neighbour F) the instances and the database share
// one machine of C cores (capacity.Model.SetMachine), and each sample also
// names that machine, "host", with its busy and other-work shares (the
// samples' 13-column form, docs/csv-format.md).
//
// The clock moves only when every client waits on the model (see
// capacity.VirtualClock), so the throughput and latencies written are the
// model's queueing exactly, however busy the machine that computes them: the
// same set-up measured in real time needs a quiet machine. The same seed
// writes the same file: requests that arrive together are interchangeable,
// and later ones draw their service times in virtual-time order. No HTTP, TLS
// or database is involved; latency is the time a request spends in the model.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/credhub-perf/credhub-sim/internal/capacity"
)

// header is credhub-perf's results CSV header (docs/csv-format.md).
const header = "start-time,response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read," +
	"status-code,offset,concurrency,rate,sched-lag,error,request\n"

type options struct {
	out            string
	workers, cores int
	service        time.Duration
	dist           string
	seed           uint64
	concurrency    []int
	step           time.Duration
	label          string
	sloPercentile  float64
	sloLatency     time.Duration
	start          time.Time
	dbCapacity     float64
	dbCores        int
	sharedCores    int
	neighbour      float64
	rates          []float64 // open loop: one step per rate (openloop.go)
	pauseEvery     time.Duration
	pause          time.Duration
}

// row is one request: when it started after the run's start, and how long it took.
type row struct {
	offset, latency time.Duration
}

func main() {
	o, err := parse(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "virtual-ramp: error: %v\n", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "virtual-ramp: error: %v\n", err)
		os.Exit(1)
	}
}

func parse(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("virtual-ramp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := options{start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	fs.StringVar(&o.out, "out", "", "run directory to write (created; must not exist)")
	fs.IntVar(&o.workers, "workers", 2, "capacity model: instances")
	fs.IntVar(&o.cores, "cores", 2, "capacity model: cores per instance")
	fs.DurationVar(&o.service, "service-time", 8*time.Millisecond, "capacity model: mean service time of a read")
	fs.StringVar(&o.dist, "service-dist", "exponential", "capacity model: fixed or exponential")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the service times")
	conc := fs.String("concurrency", "1,4,8,12,16,20,24,28,32", "the steps' client counts, in order")
	fs.DurationVar(&o.step, "step-duration", 3*time.Second, "virtual time each step's clients keep sending")
	fs.StringVar(&o.label, "label", "virtual", "meta.json's label")
	fs.Float64Var(&o.sloPercentile, "slo-percentile", 95, "meta.json's slo.percentile")
	fs.DurationVar(&o.sloLatency, "slo-latency", 60*time.Millisecond, "meta.json's slo.latency_s")
	fs.Float64Var(&o.dbCapacity, "db-capacity", 0, "capacity model: a database all instances share, requests/s (0 = none); adds target-samples.csv")
	fs.IntVar(&o.dbCores, "db-cores", 1, "capacity model: the database's servers")
	fs.IntVar(&o.sharedCores, "shared-cores", 0, "capacity model: the instances and the database share one machine of this many cores (0 = none; with -db-capacity)")
	fs.Float64Var(&o.neighbour, "neighbour", 0, "capacity model: the share 0..1 of the shared machine a neighbour process takes")
	rates := fs.String("rates", "", "open loop: the steps' offered rates, requests/s, comma-separated, in order (replaces -concurrency)")
	fs.DurationVar(&o.pauseEvery, "pause-every", 0, "capacity model: the target stops every this long (with -pause)")
	fs.DurationVar(&o.pause, "pause", 0, "capacity model: for this long each time (with -pause-every)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if err := parseRates(&o, *rates); err != nil {
		return o, err
	}
	if o.out == "" {
		return o, errors.New("-out DIR is required")
	}
	if o.step <= 0 || o.step > time.Hour {
		return o, fmt.Errorf("-step-duration %v: use a duration in (0, 1h]", o.step)
	}
	for _, f := range strings.Split(*conc, ",") {
		if len(o.rates) > 0 {
			break
		}
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 10000 {
			return o, fmt.Errorf("-concurrency %q: use client counts from 1 to 10000, comma-separated", *conc)
		}
		o.concurrency = append(o.concurrency, n)
	}
	return o, nil
}

func run(o options) error {
	m, err := capacity.New(o.workers, o.cores, o.service, 0, o.dist)
	if err != nil {
		return err
	}
	clk := capacity.NewVirtualClock(o.start)
	m.SetClock(clk)
	m.SetSeed(o.seed)
	if err := m.SetDatabase(o.dbCapacity, o.dbCores); err != nil {
		return err
	}
	if o.sharedCores > 0 && o.dbCapacity == 0 {
		return errors.New("-shared-cores needs -db-capacity R: the samples file is written for runs with a database")
	}
	if err := m.SetMachine(o.sharedCores, o.neighbour, 0); err != nil {
		return err
	}
	if err := m.SetPauses(o.start, o.pauseEvery, o.pause); err != nil {
		return err
	}
	if err := os.Mkdir(o.out, 0o755); err != nil {
		return err
	}
	var steps [][]row
	var util []capacity.Utilisation
	for k, c := range o.concurrency {
		util = append(util, m.Utilisation())
		if len(o.rates) > 0 {
			steps = append(steps, openStep(m, clk, o.rates[k], o.start, clk.Now().Add(o.step)))
			continue
		}
		steps = append(steps, step(m, clk, c, o.start, clk.Now().Add(o.step)))
	}
	util = append(util, m.Utilisation())
	if err := writeCSV(filepath.Join(o.out, "results.csv"), o, steps); err != nil {
		return err
	}
	if o.dbCapacity > 0 {
		if err := writeSamples(filepath.Join(o.out, "target-samples.csv"), o, util); err != nil {
			return err
		}
	}
	return writeMeta(filepath.Join(o.out, "meta.json"), o, steps, clk.Now())
}

// step runs c closed-loop clients until end; every client joins before any
// sends, as the virtual clock requires, and the step ends when the last
// request started before end is served.
func step(m *capacity.Model, clk *capacity.VirtualClock, c int, start, end time.Time) []row {
	var mu sync.Mutex
	var rows []row
	var wg sync.WaitGroup
	for range c {
		clk.Join()
	}
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer clk.Leave()
			for {
				t0 := clk.Now()
				if !t0.Before(end) {
					return
				}
				m.Serve(context.Background(), false, func() {})
				t1 := clk.Now()
				mu.Lock()
				rows = append(rows, row{t0.Sub(start), t1.Sub(t0)})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	byCompletion(rows)
	return rows
}

// byCompletion sorts rows in completion order, as credhub-perf writes them.
func byCompletion(rows []row) {
	sort.Slice(rows, func(i, j int) bool {
		ei, ej := rows[i].offset+rows[i].latency, rows[j].offset+rows[j].latency
		return ei < ej || ei == ej && rows[i].offset < rows[j].offset
	})
}

func writeCSV(path string, o options, steps [][]row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(header)
	for k, rows := range steps {
		for _, r := range rows {
			lat := r.latency.Seconds()
			fmt.Fprintf(&b, "%s,%.6f,0.000000,0.000000,0.000000,%.6f,0.000000,200,%.6f,%d,%s,0.000000,,get\n",
				o.start.Add(r.offset).Format(time.RFC3339Nano), lat, lat, r.offset.Seconds(), o.concurrency[k], o.rateOf(k))
		}
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeSamples writes each step's utilisation (between the model's reports
// before and after it) in credhub-perf's samples format, on the CSV's
// origin; with a shared machine in the 13-column form that names it.
func writeSamples(path string, o options, util []capacity.Utilisation) error {
	var b strings.Builder
	b.WriteString("source,resource,instance,start,end,cpu,rss_bytes")
	if o.sharedCores > 0 {
		b.WriteString(",cpus,machine,machine_busy,machine_steal,machine_iowait,machine_other")
	}
	b.WriteString("\n")
	start0 := util[0].NowS
	for k := 1; k < len(util); k++ {
		a, z := util[k-1], util[k]
		dt := z.NowS - a.NowS
		if dt <= 0 {
			continue
		}
		from, to := a.NowS-start0, z.NowS-start0
		mach := machineColumns(a, z, dt)
		for i, in := range z.Instances {
			fmt.Fprintf(&b, "credhub-sim,credhub,%s,%.3f,%.3f,%.4f,%s\n", in.Name, from, to, (in.BusyS-a.Instances[i].BusyS)/dt/in.Cores, mach)
		}
		if z.Database != nil {
			fmt.Fprintf(&b, "credhub-sim,database,database,%.3f,%.3f,%.4f,%s\n", from, to, (z.Database.BusyS-a.Database.BusyS)/dt/z.Database.Cores, mach)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// machineColumns is the rss_bytes column (empty) and, with a shared
// machine, the machine's columns over the step, as credhub-perf's sim
// source writes them: its cores, name, busy, steal, no iowait (not
// modelled) and other work, shares of its cores.
func machineColumns(a, z capacity.Utilisation, dt float64) string {
	if len(z.Machines) == 0 || len(a.Machines) == 0 {
		return ""
	}
	m0, m1 := a.Machines[0], z.Machines[0]
	share := func(x0, x1 float64) float64 { return (x1 - x0) / dt / m1.Cores }
	cpus := "0" // Linux list format, as /proc's Cpus_allowed_list
	if n := int(m1.Cores); n > 1 {
		cpus = fmt.Sprintf("0-%d", n-1)
	}
	return fmt.Sprintf(",%s,%s,%.4f,%.4f,,%.4f", cpus, m1.Name,
		share(m0.BusyS, m1.BusyS), share(m0.StealS, m1.StealS), share(m0.OtherBusyS, m1.OtherBusyS))
}

func writeMeta(path string, o options, steps [][]row, end time.Time) error {
	type step struct {
		Concurrency int     `json:"concurrency"`
		Rate        float64 `json:"rate"`
		Requests    int     `json:"requests"`
		DurationS   float64 `json:"duration_s"`
	}
	var ss []step
	for k, rows := range steps {
		rate, _ := strconv.ParseFloat(o.rateOf(k), 64)
		ss = append(ss, step{o.concurrency[k], rate, len(rows), o.step.Seconds()})
	}
	meta := map[string]any{
		"tool_version": "virtual-ramp", "scenario": "get", "label": o.label, "instances": o.workers,
		"mode": o.mode(), "steps": ss, "tester": 0, "testers": 1,
		"slo":        map[string]float64{"percentile": o.sloPercentile, "latency_s": o.sloLatency.Seconds()},
		"started_at": o.start.Format(time.RFC3339), "ended_at": end.Format(time.RFC3339),
		"target_url": fmt.Sprintf("virtual://credhub-sim?workers=%d&cores=%d&service-time=%s&seed=%d",
			o.workers, o.cores, o.service, o.seed),
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
