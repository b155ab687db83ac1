package ramp

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-perf/cleanup"
	"github.com/credhub-perf/credhub-perf/config"
)

// checkBeforeTarget checks, before CredHub is contacted, what would otherwise fail
// only after the ramp: the output directory must take files, and a
// database cleanup must be able to connect to a CredHub schema it can
// empty safely. It also announces insecure modes.
func (r *runner) checkBeforeTarget(ctx context.Context) error {
	if err := checkWritable(r.c.OutputDir); err != nil {
		return &SetupError{err}
	}
	if err := checkFreeSpace(r.c.OutputDir); err != nil {
		return &SetupError{err}
	}
	if modes := insecureModes(r.c); len(modes) > 0 {
		r.log.Printf("warning: insecure mode %s (recorded in meta.json's insecure); use it against test systems only", strings.Join(modes, ", "))
	}
	if err := r.workloadNote(); err != nil {
		return &SetupError{err}
	}
	if w := setPoolWarning(r.c); w != "" {
		r.log.Printf("warning: %s", w)
	}
	if keys := r.c.UnusedDatabaseKeys(); len(keys) > 0 && r.tester0() {
		r.log.Printf("warning: %s", UnusedDatabaseWarning(r.c.Cleanup.Mode, keys))
	}
	if r.c.Cleanup.Mode == "database" && r.tester0() {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := cleanupDatabase(r.c).Check(cctx); err != nil {
			return &SetupError{fmt.Errorf("cleanup.database: %w", err)}
		}
		r.log.Printf("cleanup database %q on %s: CredHub's schema, user %q holds the privileges the cleanup needs, nothing else references its credential tables", r.c.Cleanup.Database.Name, r.c.Cleanup.Database.Host, r.c.Cleanup.Database.User)
	}
	return nil
}

// workloadNote says, before any load, what part of the workload the run
// replays and what it cannot send.
func (r *runner) workloadNote() error {
	w := r.o.Workload
	if r.c.Workload == "" {
		return nil
	}
	if w == nil {
		return fmt.Errorf("workload: %s was not read: give it to credhub-perf run --workload", r.c.Workload)
	}
	var b strings.Builder
	w.WriteNote(&b)
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		r.log.Printf("%s", line)
	}
	return nil
}

// checkWritable creates dir if needed and writes (then removes) a file in
// it, so a read-only or mistyped output_dir is found before any load.
func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output_dir %q cannot be created: %w (choose a writable directory with --output_dir)", dir, err)
	}
	f, err := os.CreateTemp(dir, ".credhub-perf-write-check-*")
	if err != nil {
		return fmt.Errorf("output_dir %q is not writable: %w (choose a writable directory with --output_dir)", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// MinFreeBytes is the free space output_dir must have before a run sends
// load: a full disk would take the whole ramp's load and record none of it.
// 64 MiB holds about 300,000 rows, more than most ramps write, and is far
// below what any working disk has.
const MinFreeBytes = 64 << 20

// freeSpace reports the space left in a directory's filesystem; tests
// replace it to play a full disk.
var freeSpace = diskFree

func checkFreeSpace(dir string) error {
	free, ok := freeSpace(dir)
	if !ok || free >= MinFreeBytes {
		return nil
	}
	return fmt.Errorf("output_dir %q has %.1f MiB free, under the %d MiB a run needs to record its results: free some space or choose another directory with --output_dir", dir, float64(free)/(1<<20), MinFreeBytes>>20)
}

// insecureModes lists the configuration keys in force that weaken
// transport security, for the warning and meta.json. Never nil, so that
// meta.json says [] rather than null.
func insecureModes(c config.Config) []string {
	modes := []string{}
	if c.Target.InsecureSkipVerify {
		modes = append(modes, "target.insecure_skip_verify")
	}
	if u, err := url.Parse(c.UAA.URL); err == nil && c.UAA.URL != "" && u.Scheme == "http" && c.UAA.AllowPlaintextSecret {
		modes = append(modes, "uaa.allow_plaintext_secret")
	}
	return modes
}

func cleanupDatabase(c config.Config) cleanup.Database {
	d := c.Cleanup.Database
	return cleanup.Database{Type: d.Type, Host: d.Host, Port: d.Port, User: d.User, Password: d.Password, Name: d.Name, TLS: d.TLS, CACertFile: d.CACertFile}
}

// UnusedDatabaseWarning says that database settings were given without
// the database cleanup that uses them.
func UnusedDatabaseWarning(mode string, keys []string) string {
	what := "the run deletes its own credentials through the API"
	if mode == "none" {
		what = "the run leaves its credentials in CredHub"
	}
	return fmt.Sprintf("%s set but cleanup.mode is %s: the database settings are not used and %s; set cleanup.mode: database to empty CredHub's credential tables instead (all of them: a dedicated test CredHub only)", strings.Join(keys, ", "), mode, what)
}

// setPoolWarning says when the set requests' pool of names is smaller
// than the requests that may be in flight at once: names are written in
// turn, so requests that far apart write one name together, which CredHub
// serialises (a new name's first two writes may even conflict).
func setPoolWarning(c config.Config) string {
	writes := false
	for _, s := range c.Scenarios {
		writes = writes || s == "set" || (s == "mix" && c.Mix.Set > 0)
	}
	if !writes || c.Set.Names >= c.Steps.MaxConcurrency {
		return ""
	}
	return fmt.Sprintf("set.names %d is below steps.max_concurrency %d: requests in flight together may write one name at once; raise set.names", c.Set.Names, c.Steps.MaxConcurrency)
}
