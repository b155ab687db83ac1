package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/results"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
)

// After a kill -9 the run's credentials stay in CredHub and meta.json says
// running; `credhub-perf cleanup` removes exactly the run's credentials,
// says how many, fixes meta.json, and can be repeated.
func TestCleanupAfterKill9(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	api := s.client(t)
	ctx := context.Background()
	// Neighbours that must survive: another run whose id extends this
	// one's, and an application's credential.
	for _, name := range []string{"/credhub-perf/killed-2/get/seed/cred-0", "/other/app/creds"} {
		if err := api.SetJSON(ctx, name, []byte(`{"keep":true}`)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 1, max_concurrency: 20, step: 1, duration: 500ms}`)
	cmd, out, errb := startPerf(t, "run", "--config", cfg, "--scenario", "set", "--run-id", "killed")
	// Killed in its second step, mid-ramp: set credentials written, most
	// steps still ahead.
	dir := waitForSteps(t, outputDir(t, cfg), 2)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	_, _ = out, errb
	// Requests the killed process had sent may still be finishing in the
	// target: wait until the count holds still between two readings.
	var left []string
	var err error
	stable := false
	for prev, deadline := -1, time.Now().Add(30*time.Second); !stable && time.Now().Before(deadline); prev = len(left) {
		time.Sleep(200 * time.Millisecond)
		if left, err = api.FindPath(ctx, "/credhub-perf/killed"); err != nil {
			t.Fatalf("listing what the killed run left: %v", err)
		}
		stable = len(left) == prev
	}
	if !stable {
		t.Fatalf("the credentials under /credhub-perf/killed kept changing for 30 s after the kill (%d now)", len(left))
	}
	if err != nil || len(left) == 0 {
		t.Fatalf("the killed run left %d credentials (%v): nothing to test", len(left), err)
	}
	if m, _ := results.ReadMeta(dir); m == nil || m.Status != "running" || m.CleanupStatus != "not-run" {
		t.Fatalf("meta after kill -9: %+v", m)
	}

	// Usage errors, before anything is contacted.
	for _, args := range [][]string{
		{"cleanup", "--config", cfg},
		{"cleanup", "--config", cfg, "--run-id", "../etc"},
		{"cleanup", "--config", cfg, "--run-id", "rendezvous"},
		{"cleanup", "--config", cfg, "--run-id", "other", dir},
		{"cleanup", "--config", cfg, t.TempDir()},
	} {
		if r := perf(t, args...); r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, want 2 and one line:\n%s", args[3:], r.code, r.stderr)
		}
	}

	// The run id alone: the run directory is found in output_dir, and the
	// cleanup recorded there.
	r := perf(t, "cleanup", "--config", cfg, "--run-id", "killed")
	want := fmt.Sprintf("cleanup: removed %d credentials under /credhub-perf/killed/", len(left))
	if r.code != 0 || !strings.Contains(r.stdout, want) || !strings.Contains(r.stderr, "found the run directory "+dir) ||
		!strings.Contains(r.stdout, "recorded in "+filepath.Join(dir, "cleanup.json")) {
		t.Fatalf("exit %d, want %q\n%s\n%s", r.code, want, r.stdout, r.stderr)
	}
	rec, err := results.ReadCleanupRecord(dir)
	if err != nil || rec == nil || len(rec.Cleanups) != 1 || rec.Cleanups[0].Removed != int64(len(left)) || rec.Cleanups[0].Status != "ok" ||
		rec.Cleanups[0].Path != "/credhub-perf/killed/set/" {
		t.Fatalf("cleanup.json: %+v (%v)", rec, err)
	}
	if rest, _ := api.FindPath(ctx, "/credhub-perf/killed"); len(rest) != 0 {
		t.Fatalf("%d credentials left", len(rest))
	}
	for _, name := range []string{"/credhub-perf/killed-2/get/seed/cred-0", "/other/app/creds"} {
		if _, err := api.GetJSON(ctx, name); err != nil {
			t.Fatalf("cleanup removed %s: %v", name, err)
		}
	}
	m, err := results.ReadMeta(dir)
	if err != nil || m.Status != "interrupted" || m.CleanupStatus != "ok" || m.CleanupDeleted != int64(len(left)) || m.Error == "" {
		t.Fatalf("meta after cleanup: %+v (%v)", m, err)
	}

	// Again, from the run directory alone: nothing left, nothing changed.
	r = perf(t, "cleanup", "--config", cfg, filepath.Clean(dir))
	if r.code != 0 || !strings.Contains(r.stdout, "cleanup: removed 0 credentials under /credhub-perf/killed/") || strings.Contains(r.stdout, "status") {
		t.Fatalf("second cleanup: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if m2, _ := results.ReadMeta(dir); m2.CleanupDeleted != m.CleanupDeleted || m2.Status != m.Status {
		t.Fatalf("second cleanup changed meta: %+v", m2)
	}

	// The summary says the run stopped short of its plan, and that its
	// credentials were removed later.
	r = perf(t, "summary", dir)
	sum := resultstest.Summary(t, dir)
	wantNote := fmt.Sprintf(" of 20 planned steps (interrupted: the run ended without finishing (killed, or its machine lost); credhub-perf cleanup at ")
	wantClean := fmt.Sprintf("; cleaned up later by `credhub-perf cleanup`: %d credentials removed)", len(left))
	if r.code != 0 || !strings.HasPrefix(sum.Stopped, fmt.Sprintf("stopped after %d of 20", len(sum.Steps))) || !strings.Contains(sum.Stopped, wantNote) ||
		!strings.HasSuffix(sum.Stopped, wantClean) || !strings.Contains(r.stdout, sum.Stopped) {
		t.Fatalf("summary: exit %d, stopped %q\n%s\n%s", r.code, sum.Stopped, r.stdout, r.stderr)
	}
}

// A set ramp writes new versions of a bounded pool of names (set.names,
// 500 by default), so what it leaves, and so its API cleanup, stays at
// most the pool plus the seed however many requests it sent.
func TestSetRampLeavesABoundedPoolOfNames(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	api := s.client(t)
	ctx := context.Background()
	// 2 × 1200 measured requests, plus a short warm-up that writes the
	// same pool; cleanup none, so the names can be counted before the
	// cleanup command removes them.
	cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 2, max_concurrency: 4, step: 2, requests: 1200}
cleanup: {mode: none}`)
	// A database setting without the database cleanup is a warning.
	r := perf(t, "run", "--config", cfg, "--scenario", "set", "--run-id", "pool", "--warmup.run", "1s", "--cleanup.database.host", "db.example")
	if r.code != 0 || !strings.Contains(r.stderr, "warning: cleanup.database.host set but cleanup.mode is none: the database settings are not used") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	dir := onlyRunDir(t, outputDir(t, cfg))
	rows, _ := countRows(t, filepath.Join(dir, "results.csv"))
	meta := resultstest.Meta(t, dir)
	if rows <= 2000 || meta.SetNames != 500 {
		t.Fatalf("%d requests (want > 2000), meta set_names %d (want 500)", rows, meta.SetNames)
	}
	names, err := api.FindPath(ctx, "/credhub-perf/pool")
	if err != nil {
		t.Fatal(err)
	}
	sets := 0
	for _, n := range names {
		if strings.HasPrefix(n, "/credhub-perf/pool/set/set/t0-") {
			sets++
		}
	}
	// The pool is written in turn: all 500 names, and nothing else (a
	// set run seeds nothing).
	if len(names) > 1000 || sets != 500 || len(names) != 500 {
		t.Fatalf("%d requests left %d names under the run's path (%d set names), want the pool's 500", rows, len(names), sets)
	}
	c := perf(t, "cleanup", "--config", cfg, "--run-id", "pool", dir)
	if c.code != 0 || !strings.Contains(c.stdout, fmt.Sprintf("removed %d credentials", len(names))) {
		t.Fatalf("cleanup: exit %d, want %d removed\n%s\n%s", c.code, len(names), c.stdout, c.stderr)
	}
	if left, err := api.FindPath(ctx, "/credhub-perf/pool"); err != nil || len(left) != 0 {
		t.Fatalf("after cleanup: %d left (%v)", len(left), err)
	}
}
