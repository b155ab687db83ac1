// Package testdb starts a throwaway database server for a test with the
// repository's scripts/test-db (PostgreSQL or MariaDB on loopback), so the
// tests that need a real database start it one way. The server is stopped
// when the test ends, and by test-db's watchdog if the test binary is
// killed first.
package testdb

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Start starts a server of kind (postgres, mariadb) and returns the lines
// test-db printed as a map (DB_HOST, DB_PORT, DB_USER, DB_PASSWORD,
// DB_NAME, DB_URL, ...). It skips the test when the server is not
// installed (test-db's exit 2) and fails it on any other error.
func Start(t testing.TB, kind string) map[string]string {
	t.Helper()
	script := scriptPath(t)
	dir := t.TempDir()
	cmd := exec.Command(script, "start", kind, dir)
	cmd.Env = append(os.Environ(), fmt.Sprintf("TEST_DB_OWNER_PID=%d", os.Getpid()))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 2 {
			t.Skipf("%s is not installed: %s", kind, errb.String())
		}
		t.Fatalf("test-db start %s: %v\n%s", kind, err, errb.String())
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop", dir).Run() })
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		for _, f := range strings.Fields(sc.Text()) {
			if k, v, ok := strings.Cut(f, "="); ok {
				env[k] = v
			}
		}
	}
	return env
}

// scriptPath finds scripts/test-db above the test's directory (a package
// of src/credhub-perf at any depth).
func scriptPath(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "scripts", "test-db")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("scripts/test-db not found above the test's directory")
		}
		dir = up
	}
}
