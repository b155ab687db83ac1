package testdb

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingServer checks the rule every database test relies on: absent
// server binaries skip the test, except under CI, where they fail it.
func TestMissingServer(t *testing.T) {
	if os.Getenv("TESTDB_INNER") == "1" {
		Shared(t, "postgres")
		t.Log("server available")
		return
	}
	fake := filepath.Join(t.TempDir(), "test-db")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'test-db: PostgreSQL server binaries not found' >&2\nexit 2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ci       string
		wantFail bool
		wantOut  string
	}{
		{"", false, "--- SKIP"},
		{"true", true, "CI=true requires this test"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingServer$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTDB_INNER=1", "TEST_DB_SCRIPT="+fake, "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.wantFail || !strings.Contains(string(out), tc.wantOut) {
			t.Errorf("CI=%q: err %v, output:\n%s\nwant failure=%v and %q", tc.ci, err, out, tc.wantFail, tc.wantOut)
		}
	}
}
