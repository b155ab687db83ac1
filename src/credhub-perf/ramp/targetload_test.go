package ramp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
	"github.com/credhub-perf/credhub-perf/targetload"
)

// The run samples this test process as "CredHub" (it serves the fake),
// a PID that does not exist as the database, and a credhub-sim endpoint
// the fake does not have: the run completes, each problem is one warning
// line, and the steps carry the figures it could read, the same ones a
// recomputation from the run directory gives.
func TestTargetLoadSampledWithBrokenSources(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, newFake(), true, false)
	c := fakeConfig(t, p, srv.URL)
	c.TargetLoad.Processes = []string{"credhub=" + itoa(os.Getpid()), "database=1073741823"}
	c.TargetLoad.CredHubSim = true
	c.TargetLoad.Interval = config.Duration(200 * time.Millisecond)
	// Steps longer than the interval: /proc counts CPU time in ticks of
	// 10 ms, so a step of a few milliseconds may hold no reading long
	// enough for a share (the sampler leaves such a share out, warned).
	c.Steps.Requests, c.Steps.Duration = 0, config.Duration(500*time.Millisecond)
	code, out, log := execute(t, c, false)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, log)
	}
	for _, w := range []string{"pid 1073741823: no such process", "credhub-sim utilisation: GET"} {
		if n := strings.Count(log, w); n != 1 {
			t.Errorf("warning %q printed %d times, want once:\n%s", w, n, log)
		}
	}
	dir := runDirs(t, c.OutputDir)[0]
	sum := resultstest.Summary(t, dir)
	if sum.Bottleneck == nil || strings.Join(sum.TargetSources, ",") != "proc,credhub-sim" {
		t.Fatalf("bottleneck %+v sources %v", sum.Bottleneck, sum.TargetSources)
	}
	for _, st := range sum.Steps {
		if st.Target == nil || len(st.Target.Resources) != 1 || st.Target.Resources[0].Resource != targetload.CredHub || st.Target.Resources[0].CPU == nil {
			t.Fatalf("step %d target %+v: want this process's figures alone (no zero for the missing database)", st.Step, st.Target)
		}
	}
	// meta.json says what was sampled: the sources, the resources, the PID
	// and CPUs the process source found, and the problems.
	var meta results.Meta
	if b, err := os.ReadFile(filepath.Join(dir, "meta.json")); err != nil || json.Unmarshal(b, &meta) != nil || meta.TargetLoad == nil {
		t.Fatalf("meta.json target_load: %v", err)
	}
	tl := meta.TargetLoad
	if strings.Join(tl.Sources, ",") != "proc,credhub-sim" || strings.Join(tl.Resources, ",") != "credhub,database" ||
		len(tl.PIDs[targetload.CredHub]) != 1 || tl.PIDs[targetload.CredHub][0] != os.Getpid() || tl.CPUs[targetload.CredHub] == "" ||
		!strings.Contains(strings.Join(tl.ProblemList(), "|"), "pid 1073741823: no such process") {
		t.Errorf("meta.json target_load %+v", tl)
	}
	if !strings.Contains(log, "step 1/4 target: CredHub instances ") || !strings.Contains(out, "bottleneck: ") {
		t.Errorf("live output or summary table lacks the target figures:\n%s\n%s", log, out)
	}
	re, err := results.SummarizeDirAt(dir, sum.SLO, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sum.Steps {
		a, _ := json.Marshal(sum.Steps[i].Target)
		b, _ := json.Marshal(re.Steps[i].Target)
		if !bytes.Equal(a, b) {
			t.Errorf("step %d: live %s, from the directory %s", i+1, a, b)
		}
	}
}

// Without a source the run says so once, and summary.json has no verdict.
func TestTargetLoadNotConfiguredSaidOnce(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, newFake(), true, false)
	c := fakeConfig(t, p, srv.URL)
	code, out, log := execute(t, c, false)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, log)
	}
	if n := strings.Count(log, "target load: not sampled"); n != 1 || strings.Contains(log, "target:") {
		t.Errorf("said %d times:\n%s", n, log)
	}
	if !strings.Contains(out, "bottleneck: not measured: no target source configured") {
		t.Errorf("summary table:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(runDirs(t, c.OutputDir)[0], targetload.FileName)); !os.IsNotExist(err) {
		t.Errorf("samples file written without a source: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
