package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
	"github.com/credhub-perf/credhub-perf/targetload"
)

// standInBosh writes a bosh CLI stand-in that prints body (or runs script).
func standInBosh(t *testing.T, script string) string {
	p := filepath.Join(t.TempDir(), "bosh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

const scriptedVitals = `echo '{"Tables":[{"Rows":[{"instance":"credhub/0","cpu_user":"60%","cpu_sys":"5%","memory_usage":"40% (2.0 GB)"},{"instance":"database/0","cpu_user":"90%","cpu_sys":"5%"}]}]}'`

// record runs until SIGTERM, then reads once more; the file holds the
// scripted figures on the Unix epoch's time.
func recordVitals(t *testing.T, bosh string) (string, perfRun) {
	binaries(t)
	out := filepath.Join(t.TempDir(), "vitals.csv")
	began := time.Now()
	cmd, stdout, stderr := startPerf(t, "vitals", "record", "--deployment", "cf", "--bosh", bosh, "--out", out, "--timeout", "5s")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, _ := os.ReadFile(out); strings.Count(string(b), "\n") >= 2 || time.Now().After(deadline) {
			break
		}
		if strings.Contains(stderr.String(), "warning") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	r := waitPerf(t, cmd, stdout, stderr, 30*time.Second)
	if time.Since(began) > 25*time.Second {
		t.Errorf("record took %s to stop", time.Since(began))
	}
	return out, r
}

func TestVitalsRecordAndAttach(t *testing.T) {
	binaries(t)
	file, r := recordVitals(t, standInBosh(t, scriptedVitals))
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("record: exit %d\n%s", r.code, r.stderr)
	}
	samples, _, err := targetload.Read(file)
	if err != nil || len(samples) < 4 {
		t.Fatalf("samples %v %v", samples, err)
	}
	now := time.Duration(time.Now().UnixNano())
	if d := now - samples[0].End; d < 0 || d > time.Minute || samples[0].End-samples[0].Start != targetload.VitalsWindow {
		t.Errorf("first sample %+v: want the 10 s before it was read, on the Unix epoch's time", samples[0])
	}

	// A run whose three steps lie within the samples' windows.
	origin := time.Unix(0, int64(samples[0].Start)).Add(time.Second)
	dir := t.TempDir()
	var rows []string
	for step, conc := range []int{1, 2, 3} {
		for i := 0; i < 40; i++ {
			off := time.Duration(step)*2*time.Second + time.Duration(i)*40*time.Millisecond
			rows = append(rows, fmt.Sprintf("%s,0.010000,0,0,0,0.010000,0,200,%.6f,%d,0,0.000000,,get",
				origin.Add(off).UTC().Format(time.RFC3339Nano), off.Seconds(), conc))
		}
	}
	os.WriteFile(filepath.Join(dir, "results.csv"), []byte(results.CSVHeader+"\n"+strings.Join(rows, "\n")+"\n"), 0o644)
	meta := fmt.Sprintf(`{"scenario":"get","tester":0,"testers":1,"mode":"closed","steps":[],"slo":{"percentile":95,"latency_s":0.1},"offset_origin":%q,"status":"ok"}`,
		origin.UTC().Format(time.RFC3339Nano))
	os.WriteFile(filepath.Join(dir, "meta.json"), []byte(meta), 0o644)

	a := perf(t, "vitals", "attach", file, dir)
	if a.code != 0 {
		t.Fatalf("attach: exit %d\n%s", a.code, a.stderr)
	}
	sum := resultstest.Summary(t, dir)
	if sum.Bottleneck == nil || sum.Steps[0].Target == nil {
		t.Fatalf("summary has no target figures: %+v", sum.Steps[0])
	}
	db := sum.Steps[0].Target.Resources[1]
	if db.Resource != targetload.Database || *db.CPU != 0.95 || *sum.Steps[0].Target.Resources[0].RSSBytes != 2e9 {
		t.Errorf("step 1 target %+v", sum.Steps[0].Target)
	}
	// A second attach leaves the file alone and says so.
	if a := perf(t, "vitals", "attach", file, dir); a.code != 1 || !strings.Contains(a.stderr, "exists already") {
		t.Errorf("second attach: %d %s", a.code, a.stderr)
	}
}

// A director that refuses vitals, or a bosh that hangs: a one-line warning,
// an empty samples file, a clean exit.
func TestVitalsRecordHostileDirector(t *testing.T) {
	for name, script := range map[string]string{
		"refuses": `echo "Director responded with non-successful status code '403' response 'Require one of the scopes: bosh.admin, bosh.read'" >&2; exit 1`,
		"hangs":   `sleep 60`,
		"bogus":   `echo '{"Tables":[{"Rows":[{"instance":"credhub/0","cpu_user":"-4%","cpu_sys":"x"}]}]}'`,
	} {
		file, r := recordVitals(t, standInBosh(t, script))
		if name == "hangs" {
			// The call outlives the test's wait: SIGTERM ends record.
			if r.code != 0 {
				t.Errorf("%s: exit %d\n%s", name, r.code, r.stderr)
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 0 || !strings.Contains(lines[0], "warning: target load: bosh") || (name == "refuses" && len(lines) != 1) {
			t.Errorf("%s: exit %d, stderr %q: want one warning line for each problem", name, r.code, r.stderr)
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "credhub-perf vitals: warning: ") {
				t.Errorf("%s: stray line %q", name, l)
			}
		}
		if s, _, err := targetload.Read(file); err != nil || len(s) != 0 {
			t.Errorf("%s: samples %v %v: want none, never zeros", name, s, err)
		}
	}
}
