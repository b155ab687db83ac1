package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Three real testers against credhub-sim: testers 1 and 2 wait at the
// rendezvous when tester 0 starts and stops at once (its output_dir cannot
// be created). Both stop on tester 0's report, well before their 5 min
// tester.rendezvous_timeout, naming its reason; each marks the report read
// in a version of its own, and the second deletes it: nothing is left
// under /credhub-perf.
func TestRendezvousTesterZeroFailsThreeTesters(t *testing.T) {
	binaries(t)
	s := startSim(t, "")
	api := s.client(t)
	// The readers' marks are versions of the report; the sim keeps them
	// and lists them newest first, as CredHub does.
	ctx := context.Background()
	const scratch = "/credhub-perf/rendezvous/it-versions"
	for _, v := range []string{`{"v":1}`, `{"v":2}`, `{"v":3}`} {
		if err := api.SetJSON(ctx, scratch, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if vs, err := api.GetJSONVersions(ctx, scratch, 2); err != nil || len(vs) != 2 || string(vs[0]) != `{"v":3}` || string(vs[1]) != `{"v":2}` {
		t.Fatalf("GetJSONVersions(2) = %s, %v; want the newest two, newest first", vs, err)
	}
	if err := api.Delete(ctx, scratch); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, s.URL, `steps: {min_concurrency: 1, max_concurrency: 2, step: 1, duration: 1s}`)
	args := func(i int) []string {
		return []string{"run", "--config", cfg, "--scenario", "get", "--testers", "3", "--tester-index", fmt.Sprint(i),
			"--tester.rendezvous", "it-failing", "--tester.rendezvous_timeout", "5m", "--target.timeout", "1s"}
	}
	type started struct {
		cmd       *exec.Cmd
		out, errb *bytes.Buffer
	}
	var waiting []started
	for i := 1; i <= 2; i++ {
		c, o, e := startPerf(t, args(i)...)
		waiting = append(waiting, started{c, o, e})
	}
	// Tester 0 starts once both others wait (they log it), as on a VM that
	// came up last.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if strings.Contains(waiting[0].errb.String(), "rendezvous: waiting") && strings.Contains(waiting[1].errb.String(), "rendezvous: waiting") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("testers 1 and 2 did not start waiting:\n%s\n%s", waiting[0].errb, waiting[1].errb)
		}
	}
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r0 := perf(t, append(args(0), "--output_dir", filepath.Join(blocker, "out"))...)
	if r0.code != 2 || !strings.Contains(r0.stderr, "that tester 0 stopped during setup") {
		t.Fatalf("tester 0: exit %d, want 2 after telling the others\n%s", r0.code, r0.stderr)
	}
	for i, w := range waiting {
		// Far below the 5 min timeout: the wait is for tester 0's report.
		r := waitPerf(t, w.cmd, w.out, w.errb, time.Minute)
		if r.code != 2 {
			t.Errorf("tester %d: exit %d, want 2\n%s", i+1, r.code, r.stderr)
		}
		for _, want := range []string{"error: tester 0 stopped during setup (at ", "output_dir", "credhub-perf-0.stderr.log", "/credhub-perf/rendezvous/it-failing"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("tester %d's log lacks %q:\n%s", i+1, want, r.stderr)
			}
		}
	}
	left, err := api.FindPath(ctx, "/credhub-perf")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("left in CredHub: %v", left)
	}
}
