package ramp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/credhub"
	"github.com/credhub-perf/credhub-perf/load"
	"github.com/credhub-perf/credhub-perf/results"
)

// CleanupOptions are the inputs of `credhub-perf cleanup`: the target
// (Config.Target, Config.UAA), the run id (Config.Tester.RunID) and run
// directories whose meta.json is fixed up.
type CleanupOptions struct {
	Config  config.Config
	RunDirs []string
	Stdout  io.Writer
	Log     io.Writer
	Clock   load.Clock // stamps the cleanup in meta.json; nil = the system clock
}

// metaFile is one meta.json (or a tester's meta-<i>.json) of a run directory.
type metaFile struct {
	path string
	meta *results.Meta
}

// Cleanup removes every credential a run wrote, everything under
// /credhub-perf/<run id>/, for a run that could not clean up after itself
// (killed with -9, its VM lost, cleanup failed). Deleting what is already
// gone is not an error, so it can be repeated. With run directories it also
// marks a run left `running` as interrupted and records the cleanup.
func Cleanup(ctx context.Context, o CleanupOptions) int {
	if o.Clock == nil {
		o.Clock = load.System
	}
	log := &logger{w: o.Log}
	fail := func(code int, format string, a ...any) int {
		log.Printf("error: "+format, a...)
		return code
	}
	c := o.Config
	runID := c.Tester.RunID
	var metas []metaFile
	for _, dir := range o.RunDirs {
		ms, err := readMetas(dir)
		if err != nil {
			return fail(ExitUsage, "%v", err)
		}
		for _, m := range ms {
			if runID == "" {
				runID = m.meta.RunID
			}
			if m.meta.RunID != runID {
				return fail(ExitUsage, "%s belongs to run %q, not %q: give the run directories of one run", m.path, m.meta.RunID, runID)
			}
		}
		metas = append(metas, ms...)
	}
	switch {
	case runID == "":
		return fail(ExitUsage, "give the run id (--run-id ID, the run_id of meta.json) or a run directory")
	case !config.RunIDPattern.MatchString(runID):
		return fail(ExitUsage, "run id %q may only hold letters, digits, '.', '_' and '-' (at most 64, not starting with a symbol)", runID)
	case strings.EqualFold(runID, config.RendezvousDir), strings.EqualFold(runID, preflightDir):
		return fail(ExitUsage, "run id %q is reserved for the %s credentials of runs, not a run", runID, strings.ToLower(runID))
	}
	if len(o.RunDirs) == 0 {
		// No directory given: look for the run's directories in
		// output_dir, so the cleanup is recorded where the run's results
		// are whenever they are on this machine.
		found := findRunDirs(c.OutputDir, runID)
		for _, dir := range found {
			ms, err := readMetas(dir)
			if err != nil {
				continue
			}
			log.Printf("cleanup: found the run directory %s", dir)
			o.RunDirs = append(o.RunDirs, dir)
			metas = append(metas, ms...)
		}
		if len(found) == 0 {
			log.Printf("cleanup: no run directory of run %s in output_dir %s: nothing records this cleanup (give the run directory as an argument to record it there)", runID, c.OutputDir)
		}
	}
	var errs []error
	for _, err := range c.Validate(false) {
		// Only the target matters here: the rest of a run's configuration
		// (several testers, a start time) need not hold any more.
		if s := err.Error(); strings.HasPrefix(s, "target.") || strings.HasPrefix(s, "uaa.") {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		for _, err := range errs {
			log.Printf("config: %v", err)
		}
		return ExitUsage
	}
	if modes := insecureModes(c); len(modes) > 0 {
		log.Printf("warning: insecure mode %s; use it against test systems only", strings.Join(modes, ", "))
	}

	api, token, err := apiClient(c, log.Printf)
	if err != nil {
		return fail(ExitUsage, "%v", err)
	}
	defer api.Close()
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := api.Info(pctx); err != nil {
		return fail(ExitUsage, "target %s unreachable: %v", c.Target.URL, err)
	}
	if token != nil {
		if _, err := token.Token(pctx); err != nil {
			return fail(ExitUsage, "%v", err)
		}
	}

	// Scenario by scenario first, so each run directory records what was
	// removed for it; then whatever else is left under the run's path.
	run := credhub.Names{RunID: runID}
	deleted := map[string]int{}
	var total int
	status := ExitOK
	seen := map[string]bool{}
	var order []string
	for _, m := range metas {
		if sc := m.meta.Scenario; config.RunIDPattern.MatchString(sc) && !seen[sc] {
			seen[sc] = true
			order = append(order, sc)
		}
	}
	sort.Strings(order)
	for _, s := range append(order, "") {
		n := run
		if s != "" {
			n = credhub.Names{RunID: runID + "/" + s}
		}
		k, err := credhub.DeleteAll(ctx, api, n, 8)
		deleted[s] += k
		total += k
		if err != nil {
			log.Printf("error: %v", err)
			status = ExitFailed
			break
		}
	}
	fmt.Fprintf(o.Stdout, "cleanup: removed %d credentials under %s/\n", total, run.Prefix())

	now := o.Clock.Now().UTC().Format(time.RFC3339)
	for _, dir := range o.RunDirs {
		ms, _ := readMetas(dir)
		scenario := ""
		if len(ms) > 0 {
			scenario = ms[0].meta.Scenario
		}
		e := results.CleanupEntry{At: now, RunID: runID, Command: "credhub-perf cleanup", Path: run.Prefix() + "/",
			Removed: int64(deleted[scenario]), RemovedTotal: int64(total), Status: "ok"}
		if scenario != "" {
			e.Path = run.Prefix() + "/" + scenario + "/"
		}
		if status != ExitOK {
			e.Status, e.Error = "failed", "did not finish: see its log"
		}
		if err := results.AppendCleanupRecord(dir, e); err != nil {
			log.Printf("error: recording the cleanup in %s: %v", dir, err)
			status = max(status, ExitFailed)
			continue
		}
		fmt.Fprintf(o.Stdout, "cleanup: recorded in %s\n", filepath.Join(dir, results.CleanupRecordFile))
	}
	for _, m := range metas {
		changed := false
		if m.meta.Status == "running" {
			m.meta.Status = "interrupted"
			m.meta.Error = "the run ended without finishing (killed, or its machine lost); credhub-perf cleanup at " + now + " found it running"
			changed = true
		}
		owner := m.meta.Tester == 0 && m.meta.Cleanup != "none"
		if owner && status == ExitOK && m.meta.CleanupStatus != "ok" {
			m.meta.CleanupStatus = "ok"
			m.meta.CleanupError = ""
			m.meta.CleanupDeleted += int64(deleted[m.meta.Scenario])
			changed = true
		}
		if owner && status != ExitOK {
			m.meta.CleanupStatus = "failed"
			m.meta.CleanupError = "credhub-perf cleanup at " + now + " did not finish"
			changed = true
		}
		if changed {
			if err := results.WriteMetaFile(m.path, m.meta); err != nil {
				log.Printf("error: %v", err)
				status = max(status, ExitFailed)
				continue
			}
			fmt.Fprintf(o.Stdout, "cleanup: %s: status %s, cleanup_status %s\n", m.path, m.meta.Status, m.meta.CleanupStatus)
		}
	}
	return status
}

// readMetas reads meta.json and the testers' meta-<i>.json of a run directory.
func readMetas(dir string) ([]metaFile, error) {
	paths, _ := filepath.Glob(filepath.Join(dir, "meta-*.json"))
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); err == nil {
		paths = append([]string{filepath.Join(dir, "meta.json")}, paths...)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s is not a run directory (no meta.json)", dir)
	}
	var out []metaFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var m results.Meta
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if m.RunID == "" {
			return nil, fmt.Errorf("%s has no run_id", p)
		}
		out = append(out, metaFile{p, &m})
	}
	return out, nil
}

// ForeignNote says that a database cleanup removed k credentials outside
// the run's path (names: a few of them).
func ForeignNote(k int64, names []string, prefix string) string {
	s := fmt.Sprintf("the database cleanup removed %d credentials not written by this run (outside %s/)", k, prefix)
	if len(names) > 0 {
		s += ", e.g. " + strings.Join(names, ", ")
		if int64(len(names)) < k {
			s += ", …"
		}
	}
	return s + ": cleanup.mode database empties all of CredHub; use it on a dedicated test CredHub only"
}

// findRunDirs lists the directories in outputDir whose meta.json (or a
// tester's meta-<i>.json) is of run runID; a capped scan, since
// output_dir may hold many runs.
func findRunDirs(outputDir, runID string) []string {
	entries, err := os.ReadDir(outputDir)
	if err != nil {
		return nil
	}
	var out []string
	for i, e := range entries {
		if i >= 10000 {
			break
		}
		// Run directories are named <run id>-<scenario>[-<label>] when
		// the run id is the start stamp, but a chosen run id need not be
		// in the name: read each directory's meta.
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(outputDir, e.Name())
		ms, err := readMetas(dir)
		if err != nil || len(ms) == 0 || ms[0].meta.RunID != runID {
			continue
		}
		out = append(out, dir)
	}
	return out
}
