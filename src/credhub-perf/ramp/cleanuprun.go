package ramp

import (
	"context"
	"encoding/json"
	"errors"
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
	cr := &cleanupRun{o: o, log: &logger{w: o.Log}}
	if err := cr.findRun(); err != nil {
		cr.log.Printf("error: %v", err)
		return ExitUsage
	}
	c := o.Config
	if errs := targetErrors(c); len(errs) > 0 {
		for _, err := range errs {
			cr.log.Printf("config: %v", err)
		}
		return ExitUsage
	}
	if modes := insecureModes(c); len(modes) > 0 {
		cr.log.Printf("warning: insecure mode %s; use it against test systems only", strings.Join(modes, ", "))
	}
	api, err := cr.connect(ctx)
	if err != nil {
		cr.log.Printf("error: %v", err)
		return ExitUsage
	}
	defer api.Close()
	cr.deleteRun(ctx, api)
	now := o.Clock.Now().UTC().Format(time.RFC3339)
	cr.record(now)
	cr.fixMetas(now)
	return cr.status
}

// cleanupRun is one `credhub-perf cleanup`: the run, its run directories
// and what was deleted for each scenario.
type cleanupRun struct {
	o       CleanupOptions
	log     *logger
	runID   string
	metas   []metaFile
	deleted map[string]int // by scenario; "" = outside any scenario's path
	total   int
	// status is the exit status so far: a failed deletion or record makes
	// it ExitFailed, and the records that follow say the cleanup failed.
	status int
}

// findRun fixes the run id (given, or read from the run directories, which
// must all be of that run) and the run directories to record the cleanup
// in: those given, or those of the run found in output_dir.
func (cr *cleanupRun) findRun() error {
	runID := cr.o.Config.Tester.RunID
	for _, dir := range cr.o.RunDirs {
		ms, err := readMetas(dir)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if runID == "" {
				runID = m.meta.RunID
			}
			if m.meta.RunID != runID {
				return fmt.Errorf("%s belongs to run %q, not %q: give the run directories of one run", m.path, m.meta.RunID, runID)
			}
		}
		cr.metas = append(cr.metas, ms...)
	}
	switch {
	case runID == "":
		return errors.New("give the run id (--run-id ID, the run_id of meta.json) or a run directory")
	case !config.RunIDPattern.MatchString(runID):
		return fmt.Errorf("run id %q may only hold letters, digits, '.', '_' and '-' (at most 64, not starting with a symbol)", runID)
	case strings.EqualFold(runID, config.RendezvousDir), strings.EqualFold(runID, preflightDir):
		return fmt.Errorf("run id %q is reserved for the %s credentials of runs, not a run", runID, strings.ToLower(runID))
	}
	cr.runID = runID
	if len(cr.o.RunDirs) == 0 {
		cr.findRunDirs()
	}
	return nil
}

// findRunDirs looks for the run's directories in output_dir, so that the
// cleanup is recorded where the run's results are whenever they are on
// this machine.
func (cr *cleanupRun) findRunDirs() {
	found := findRunDirs(cr.o.Config.OutputDir, cr.runID)
	for _, dir := range found {
		ms, err := readMetas(dir)
		if err != nil {
			continue
		}
		cr.log.Printf("cleanup: found the run directory %s", dir)
		cr.o.RunDirs = append(cr.o.RunDirs, dir)
		cr.metas = append(cr.metas, ms...)
	}
	if len(found) == 0 {
		cr.log.Printf("cleanup: no run directory of run %s in output_dir %s: nothing records this cleanup (give the run directory as an argument to record it there)", cr.runID, cr.o.Config.OutputDir)
	}
}

// targetErrors are the configuration's errors that matter to a cleanup:
// those of the target. The rest of a run's configuration (several testers,
// a start time) need not hold any more.
func targetErrors(c config.Config) []error {
	var errs []error
	for _, err := range c.Validate(false) {
		if s := err.Error(); strings.HasPrefix(s, "target.") || strings.HasPrefix(s, "uaa.") {
			errs = append(errs, err)
		}
	}
	return errs
}

// connect builds the API client and checks that the target answers and
// (with UAA) that a token is granted.
func (cr *cleanupRun) connect(ctx context.Context) (*credhub.Client, error) {
	c := cr.o.Config
	api, token, err := apiClient(c, cr.log.Printf)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := api.Info(pctx); err != nil {
		api.Close()
		return nil, fmt.Errorf("target %s unreachable: %v", c.Target.URL, err)
	}
	if token != nil {
		if _, err := token.Token(pctx); err != nil {
			api.Close()
			return nil, err
		}
	}
	return api, nil
}

// deleteRun deletes scenario by scenario first, so each run directory
// records what was removed for it; then whatever else is left under the
// run's path.
func (cr *cleanupRun) deleteRun(ctx context.Context, api *credhub.Client) {
	run := credhub.Names{RunID: cr.runID}
	cr.deleted = map[string]int{}
	seen := map[string]bool{}
	var order []string
	for _, m := range cr.metas {
		if sc := m.meta.Scenario; config.RunIDPattern.MatchString(sc) && !seen[sc] {
			seen[sc] = true
			order = append(order, sc)
		}
	}
	sort.Strings(order)
	for _, s := range append(order, "") {
		n := run
		if s != "" {
			n = credhub.Names{RunID: cr.runID + "/" + s}
		}
		k, err := credhub.DeleteAll(ctx, api, n, 8)
		cr.deleted[s] += k
		cr.total += k
		if err != nil {
			cr.log.Printf("error: %v", err)
			cr.status = ExitFailed
			break
		}
	}
	fmt.Fprintf(cr.o.Stdout, "cleanup: removed %d credentials under %s/\n", cr.total, run.Prefix())
}

// record appends the cleanup (at now) to each run directory's cleanup
// record.
func (cr *cleanupRun) record(now string) {
	run := credhub.Names{RunID: cr.runID}
	for _, dir := range cr.o.RunDirs {
		ms, _ := readMetas(dir)
		scenario := ""
		if len(ms) > 0 {
			scenario = ms[0].meta.Scenario
		}
		e := results.CleanupEntry{At: now, RunID: cr.runID, Command: "credhub-perf cleanup", Path: run.Prefix() + "/",
			Removed: int64(cr.deleted[scenario]), RemovedTotal: int64(cr.total), Status: "ok"}
		if scenario != "" {
			e.Path = run.Prefix() + "/" + scenario + "/"
		}
		if cr.status != ExitOK {
			e.Status, e.Error = "failed", "did not finish: see its log"
		}
		if err := results.AppendCleanupRecord(dir, e); err != nil {
			cr.log.Printf("error: recording the cleanup in %s: %v", dir, err)
			cr.status = max(cr.status, ExitFailed)
			continue
		}
		fmt.Fprintf(cr.o.Stdout, "cleanup: recorded in %s\n", filepath.Join(dir, results.CleanupRecordFile))
	}
}

// fixMetas marks a run left running as interrupted and records the
// cleanup's outcome in the meta.json of the testers that own the cleanup.
func (cr *cleanupRun) fixMetas(now string) {
	for _, m := range cr.metas {
		changed := false
		if m.meta.Status == "running" {
			m.meta.Status = "interrupted"
			m.meta.Error = "the run ended without finishing (killed, or its machine lost); credhub-perf cleanup at " + now + " found it running"
			changed = true
		}
		owner := m.meta.Tester == 0 && m.meta.Cleanup != "none"
		if owner && cr.status == ExitOK && m.meta.CleanupStatus != "ok" {
			m.meta.CleanupStatus = "ok"
			m.meta.CleanupError = ""
			m.meta.CleanupDeleted += int64(cr.deleted[m.meta.Scenario])
			changed = true
		}
		if owner && cr.status != ExitOK {
			m.meta.CleanupStatus = "failed"
			m.meta.CleanupError = "credhub-perf cleanup at " + now + " did not finish"
			changed = true
		}
		if !changed {
			continue
		}
		if err := results.WriteMetaFile(m.path, m.meta); err != nil {
			cr.log.Printf("error: %v", err)
			cr.status = max(cr.status, ExitFailed)
			continue
		}
		fmt.Fprintf(cr.o.Stdout, "cleanup: %s: status %s, cleanup_status %s\n", m.path, m.meta.Status, m.meta.CleanupStatus)
	}
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
