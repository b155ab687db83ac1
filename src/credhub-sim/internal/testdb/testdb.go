// Package testdb starts throwaway PostgreSQL and MariaDB servers for tests
// through the repository's scripts/test-db, one per kind per test binary.
//
// A test skips when the server binaries are not installed, unless CI is
// set, where a missing database is a failure (CI installs them).
package testdb

import (
	"bufio"
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/credhub-perf/credhub-sim/internal/store"
)

// Env is what scripts/test-db prints.
type Env map[string]string

// URL is the -db value for credhub-sim.
func (e Env) URL() string { return e["DB_URL"] }

type server struct {
	once sync.Once
	env  Env
	dir  string
	err  error
	miss bool
}

var (
	mu      sync.Mutex
	servers = map[string]*server{}
)

// RepoRoot finds the directory holding scripts/test-db above the working
// directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "test-db")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("scripts/test-db not found above the test directory")
		}
		dir = parent
	}
}

// Shared returns a running server of kind ("postgres" or "mariadb"),
// starting it on first use. Call StopAll from TestMain.
func Shared(t testing.TB, kind string) Env {
	t.Helper()
	mu.Lock()
	s, ok := servers[kind]
	if !ok {
		s = &server{}
		servers[kind] = s
	}
	mu.Unlock()
	s.once.Do(func() { s.env, s.dir, s.miss, s.err = start(kind) })
	if s.miss {
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("%s server binaries are missing and CI=%s requires this test: %v", kind, ci, s.err)
		}
		t.Skipf("skipping: %v (install them with: apt-get install -y postgresql mariadb-server)", s.err)
	}
	if s.err != nil {
		t.Fatalf("starting %s with scripts/test-db: %v", kind, s.err)
	}
	return s.env
}

// script is scripts/test-db, or $TEST_DB_SCRIPT (for testing this package).
func script() (string, error) {
	if s := os.Getenv("TEST_DB_SCRIPT"); s != "" {
		return s, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "scripts", "test-db"), nil
}

func start(kind string) (Env, string, bool, error) {
	path, err := script()
	if err != nil {
		return nil, "", false, err
	}
	dir, err := os.MkdirTemp("", "credhub-sim-"+kind+"-")
	if err != nil {
		return nil, "", false, fmt.Errorf("creating data dir: %w", err)
	}
	cmd := exec.Command(path, "start", kind, dir)
	// The watchdog stops the server if this test binary dies without
	// reaching StopAll (a timeout, ^C).
	cmd.Env = append(os.Environ(), fmt.Sprintf("TEST_DB_OWNER_PID=%d", os.Getpid()))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		missing := errors.As(err, &ee) && ee.ExitCode() == 2
		if !missing {
			// Keep the logs for a post-mortem; they hold no secrets that
			// outlive the throwaway server.
			return nil, dir, false, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
		}
		os.RemoveAll(dir)
		return nil, "", true, errors.New(strings.TrimSpace(stderr.String()))
	}
	env := Env{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	if env.URL() == "" {
		return nil, dir, false, fmt.Errorf("scripts/test-db printed no DB_URL: %q", out)
	}
	return env, dir, false, nil
}

// StopAll stops every server Shared started.
func StopAll() {
	mu.Lock()
	defer mu.Unlock()
	path, err := script()
	if err != nil {
		return
	}
	for _, s := range servers {
		if s.dir == "" || s.env == nil {
			continue
		}
		cmd := exec.Command(path, "stop", s.dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "testdb: stopping %s: %v: %s\n", s.dir, err, out)
			continue
		}
		os.RemoveAll(s.dir)
	}
}

// credhubTables in an order that drops children before parents.
var credhubTables = []string{
	"permission", "password_credential", "user_credential", "certificate_credential", "ssh_credential",
	"rsa_credential", "credential_version", "encrypted_value", "encryption_key_canary", "credential",
	"flyway_schema_history",
}

// EmptyURL is the -db URL of the shared server of kind with credhub-sim's
// tables dropped: a server started on it begins from an empty database.
func EmptyURL(t testing.TB, kind string) string {
	t.Helper()
	env := Shared(t, kind)
	driver, dsn, _, err := store.ParseDSN(env.URL())
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	DropSchema(t, db)
	return env.URL()
}

// DropSchema removes every table credhub-sim creates, so the next server
// starts from an empty database (a fresh canary, fresh migrations).
func DropSchema(t testing.TB, db *sql.DB) {
	t.Helper()
	for _, table := range credhubTables {
		if _, err := db.Exec("DROP TABLE IF EXISTS " + table); err != nil {
			t.Fatalf("dropping %s: %v", table, err)
		}
	}
}
