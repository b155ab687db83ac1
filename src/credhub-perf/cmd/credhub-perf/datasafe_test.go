package main

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/results"
)

// A capacity search against a target failing half its requests: whatever
// the search and the cleanup meet (a delete that fails all its retries
// among them), nothing stays under /credhub-perf.
func TestCapacityAgainstHalfFailingTargetLeavesNothing(t *testing.T) {
	binaries(t)
	s := startSim(t, "", "-error-rate", "0.5")
	api := s.client(t)
	cfg := writeConfig(t, s.URL, `seed: {credentials: 6, bytes: 100}
steps: {min_concurrency: 1, max_concurrency: 8, step: 1, requests: 40}
capacity: {max_probes: 3}`)
	r := perf(t, "capacity", "--config", cfg, "--scenario", "get", "--run-id", "halffail")
	// The search may end either way (the SLO is missed, or seeding gave
	// up); the point is what is left.
	if r.code == 0 {
		t.Fatalf("a search against a target failing half its requests succeeded:\n%s", r.stderr)
	}
	if left, err := api.FindPath(context.Background(), "/credhub-perf"); err != nil || len(left) != 0 {
		t.Fatalf("left in CredHub: %v (%v)\n%s", left, err, r.stderr)
	}
}

// SIGHUP (the ssh session running the tool dropped) stops the run and
// cleans up like SIGTERM, instead of killing it with its credentials left.
func TestSIGHUPCleansUpLikeSIGTERM(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	api := s.client(t)
	cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 1, max_concurrency: 20, step: 1, duration: 500ms}`)
	cmd, out, errb := startPerf(t, "run", "--config", cfg, "--scenario", "set", "--run-id", "sighup")
	dir := waitForRows(t, outputDir(t, cfg), 10)
	_ = cmd.Process.Signal(syscall.SIGHUP)
	r := waitPerf(t, cmd, out, errb, time.Minute)
	if r.code != 1 || !strings.Contains(r.stderr, "interrupted: stopping the ramp and cleaning up") {
		t.Fatalf("exit %d, want 1 after a clean stop\n%s", r.code, r.stderr)
	}
	meta, err := results.ReadMeta(dir)
	if err != nil || meta.Status != "interrupted" || meta.CleanupStatus != "ok" {
		t.Fatalf("meta %+v (%v)\n%s", meta, err, r.stderr)
	}
	if want := "if this is cut short, remove what is left with: credhub-perf cleanup --config " + cfg + " --run-id sighup " + dir; !strings.Contains(r.stderr, want) {
		t.Fatalf("no recovery command %q in\n%s", want, r.stderr)
	}
	if left, err := api.FindPath(context.Background(), "/credhub-perf/sighup"); err != nil || len(left) != 0 {
		t.Fatalf("%d credentials left after SIGHUP (%v)", len(left), err)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.tmp*")); len(matches) != 0 {
		t.Fatalf("temporary files left: %v", matches)
	}
}
