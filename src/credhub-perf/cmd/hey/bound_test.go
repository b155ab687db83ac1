package main

import (
	"encoding/csv"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/cpuload"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results"
)

// fakeCPU returns readings that cpuload.Between reads, from the first to
// any later one, as the given shares over ten seconds, whatever the wall
// clock did (nil share: unknown on this system).
func fakeCPU(tester, host, steal *float64, cores int) func(time.Time) cpuload.Sample {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	calls := 0
	return func(time.Time) cpuload.Sample {
		s := cpuload.Sample{Wall: t0, Cores: cores, ProcessOK: tester != nil, HostOK: host != nil}
		if calls > 0 {
			const wall, ticks = 10 * time.Second, 1000
			s.Wall = t0.Add(wall)
			if tester != nil {
				s.Process = time.Duration(*tester * float64(wall) * float64(cores))
			}
			if host != nil {
				s.Host = cpuload.Ticks{Busy: uint64(*host * ticks), Total: ticks}
				if steal != nil {
					s.Host.Steal = uint64(*steal * ticks)
				}
			}
		}
		calls++
		return s
	}
}

func share(v float64) *float64 { return &v }

func quietCPU() func(time.Time) cpuload.Sample {
	return fakeCPU(share(0.2), share(0.3), share(0), 2)
}

const (
	testerAdvice = "add testers or use a bigger VM"
	hostAdvice   = "other work kept the tester's CPUs busy: run on a quiet machine (a target on the same machine counts too: lower the load, or move the target or the tester to another host)"
)

// hey's verdicts with the figures injected: the words are
// cpuload.Usage.Bound's and summary.json's tester_bound_advice (held to
// results/testdata/tester_bound_advice.json).
func TestTesterBoundWarning(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }), true, false)
	args := []string{"-n", "20", "-c", "2", "-cert", p.ClientCert, "-key", p.ClientKey, "-cacert", p.CAFile, srv.URL}
	for _, c := range []struct {
		name string
		cpu  func(time.Time) cpuload.Sample
		want []string // the warning's lines; none: no warning
	}{
		{"tester CPU", fakeCPU(share(0.95), share(0.97), share(0), 1), []string{
			"WARNING: tester-bound: tester CPU 95 % of 1 core(s)",
			"  This run's figures describe this tester, not the server (tester CPU 95 % of 1 core(s), host CPU 97 % busy, steal 0 %).",
			"  To do: " + testerAdvice}},
		{"host CPU", fakeCPU(share(0.40), share(0.97), share(0.01), 2), []string{
			"WARNING: tester-bound: host CPU 97 % busy on the tester's core(s)",
			"  This run's figures describe this tester, not the server (tester CPU 40 % of 2 core(s), host CPU 97 % busy, steal 1 %).",
			"  To do: " + hostAdvice}},
		{"steal", fakeCPU(share(0.40), share(0.5), share(0.25), 2), []string{
			"WARNING: tester-bound: CPU steal 25 % on the tester's core(s)",
			"  This run's figures describe this tester, not the server (tester CPU 40 % of 2 core(s), host CPU 50 % busy, steal 25 %).",
			"  To do: the hypervisor gave the tester's CPUs to other guests: use a VM with dedicated CPUs, or run again later"}},
		{"host unknown", fakeCPU(share(0.9), nil, nil, 2), []string{
			"WARNING: tester-bound: tester CPU 90 % of 2 core(s)",
			"  This run's figures describe this tester, not the server (tester CPU 90 % of 2 core(s), host CPU unknown busy, steal unknown).",
			"  To do: " + testerAdvice}},
		{"quiet", quietCPU(), nil},
		{"at the bounds", fakeCPU(share(0.8), share(0.9), share(0.1), 2), nil},
		{"unknown (not Linux)", fakeCPU(nil, nil, nil, 2), nil},
		{"no readings at all", func(time.Time) cpuload.Sample { return cpuload.Sample{} }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := heyRunOn(t, c.cpu, nil, args...)
			if code != 0 || !strings.Contains(out, "[200]\t20 responses") {
				t.Fatalf("exit %d, stderr %q\n%s", code, errs, out)
			}
			if c.want == nil {
				if errs != "" || strings.Contains(out, "WARNING") {
					t.Fatalf("warned without cause: stderr %q\n%s", errs, out)
				}
				return
			}
			block := strings.Join(c.want, "\n")
			if errs != block+"\n" {
				t.Errorf("stderr %q, want %q", errs, block+"\n")
			}
			// In the summary after Summary:'s figures, before the histogram.
			figures, rest, _ := strings.Cut(out, "Response time histogram:")
			if !strings.HasSuffix(figures, "bytes\n\n"+block+"\n\n") || strings.Contains(rest, "WARNING") || !strings.Contains(figures, "Requests/sec:") {
				t.Errorf("summary does not end its figures with the warning:\n%s", out)
			}
		})
	}
}

// CSV on stdout stays the CSV, header and one row a request, whatever the
// verdict: the warning goes to stderr only.
func TestTesterBoundCSV(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), true, false)
	args := []string{"-n", "12", "-c", "3", "-o", "csv", "-cert", p.ClientCert, "-key", p.ClientKey, "-cacert", p.CAFile, srv.URL}
	var shape [2][]int
	for i, cpu := range []func(time.Time) cpuload.Sample{quietCPU(), fakeCPU(share(1), share(1), share(0), 1)} {
		code, out, errs := heyRunOn(t, cpu, nil, args...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if code != 0 || len(lines) != 13 || lines[0] != results.CSVHeader || strings.Contains(out, "WARNING") {
			t.Fatalf("exit %d, stdout %q", code, out)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) != 13 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
		for _, r := range recs {
			shape[i] = append(shape[i], len(r))
		}
		if bound := i == 1; bound != strings.HasPrefix(errs, "WARNING: tester-bound: tester CPU 100 % of 1 core(s)\n") || !bound && errs != "" {
			t.Fatalf("bound %v: stderr %q", bound, errs)
		}
	}
	if len(shape[0]) != len(shape[1]) {
		t.Fatal("CSV shape differs")
	}
	for i := range shape[0] {
		if shape[0][i] != shape[1][i] {
			t.Fatalf("row %d has %d fields when bound, %d when not", i, shape[1][i], shape[0][i])
		}
	}

	// -output FILE: the file holds the CSV alone, the summary on stdout
	// the warning.
	file := filepath.Join(t.TempDir(), "out.csv")
	code, out, errs := heyRunOn(t, fakeCPU(share(1), share(1), share(0), 1), nil,
		"-n", "12", "-c", "3", "-output", file, "-cert", p.ClientCert, "-key", p.ClientKey, "-cacert", p.CAFile, srv.URL)
	data, err := os.ReadFile(file)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if code != 0 || err != nil || len(lines) != 13 || lines[0] != results.CSVHeader || strings.Contains(string(data), "WARNING") {
		t.Fatalf("exit %d, %v, CSV %q", code, err, data)
	}
	if !strings.Contains(out, "\nWARNING: tester-bound: tester CPU 100 % of 1 core(s)\n") || !strings.HasPrefix(errs, "WARNING: tester-bound: ") {
		t.Fatalf("stderr %q\n%s", errs, out)
	}
}

// The lead's run: 10,000 req/s from one core, requests 67 ms late; and the
// late-schedule rule on its own (summary.json's step warning), for the
// open loop only.
func TestBoundWarningSchedLag(t *testing.T) {
	saturated := cpuload.Usage{TesterCPU: share(0.99), HostCPU: share(1), HostSteal: share(0), Cores: 1}
	quiet := cpuload.Usage{TesterCPU: share(0.3), HostCPU: share(0.4), HostSteal: share(0), Cores: 2}
	late := results.Snapshot{Mean: 15 * time.Millisecond, SchedLagMean: 66700 * time.Microsecond, SchedLagMax: 262400 * time.Microsecond}
	onTime := results.Snapshot{Mean: 15 * time.Millisecond, SchedLagMean: 40 * time.Microsecond, SchedLagMax: 2 * time.Millisecond}
	lag := "requests left 66.7 ms late on average (max 262.4 ms): the tester or its worker cap (-c) could not keep the schedule"
	for _, c := range []struct {
		name string
		u    cpuload.Usage
		s    results.Snapshot
		open bool
		want []string
	}{
		{"saturated and late", saturated, late, true, []string{
			"WARNING: tester-bound: tester CPU 99 % of 1 core(s)",
			"  This run's figures describe this tester, not the server (tester CPU 99 % of 1 core(s), host CPU 100 % busy, steal 0 %).",
			"  To do: " + testerAdvice,
			"  Also: " + lag}},
		{"saturated, on time", saturated, onTime, true, []string{
			"WARNING: tester-bound: tester CPU 99 % of 1 core(s)",
			"  This run's figures describe this tester, not the server (tester CPU 99 % of 1 core(s), host CPU 100 % busy, steal 0 %).",
			"  To do: " + testerAdvice}},
		{"CPU to spare, late", quiet, late, true, []string{"WARNING: late schedule: " + lag}},
		{"unknown CPU, late", cpuload.Usage{}, late, true, []string{"WARNING: late schedule: " + lag}},
		{"CPU to spare, on time", quiet, onTime, true, nil},
		{"closed loop", quiet, late, false, nil},
		{"no requests", cpuload.Usage{}, results.Snapshot{}, true, nil},
	} {
		got := boundWarning(c.u, c.s, c.open)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") || (got == nil) != (c.want == nil) {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}
