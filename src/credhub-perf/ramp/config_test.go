package ramp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/credhub-perf/credhub-perf/config"
)

// validBase is a configuration Validate accepts: a target and readable
// client certificate files.
func validBase(t *testing.T) config.Config {
	dir := t.TempDir()
	for _, f := range []string{"ca.crt", "client.crt", "client.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := config.Default()
	c.Target.URL = "https://127.0.0.1:8844"
	c.Target.CACertFile = filepath.Join(dir, "ca.crt")
	c.Target.ClientCertFile = filepath.Join(dir, "client.crt")
	c.Target.ClientKeyFile = filepath.Join(dir, "client.key")
	return c
}

func TestDirLabel(t *testing.T) {
	for in, want := range map[string]string{"2 instances": "2-instances", "prod_eu-1.a": "prod_eu-1.a", "": "", "..": "", "ünï": "--n--"} {
		if got := dirLabel(in); got != want {
			t.Errorf("dirLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
