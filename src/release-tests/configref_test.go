package releasetests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigReferenceScripts(t *testing.T) {
	root := repoRoot(t)
	gen := filepath.Join(root, "scripts", "gen-config-reference")
	check := filepath.Join(root, "scripts", "check-readme-config")

	table, err := exec.Command(gen).Output()
	if err != nil {
		t.Fatalf("gen-config-reference: %v", err)
	}
	job := loadJob(t, "credhub-perf")
	for name, def := range job.Properties {
		row := "| `" + name + "` |"
		if !strings.Contains(string(table), row) {
			t.Errorf("reference lacks property %s", name)
		}
		if !strings.Contains(string(table), strings.Fields(def.Description)[0]) {
			t.Errorf("reference lacks the description of %s", name)
		}
	}

	readme := filepath.Join(t.TempDir(), "configuration.md")
	stale := "# README\n\n<!-- config-reference:begin -->\n| stale |\n<!-- config-reference:end -->\n\nAfter.\n"
	if err := os.WriteFile(readme, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(check, readme).CombinedOutput()
	if err == nil {
		t.Fatal("check-readme-config passed on a stale reference")
	}
	if !strings.Contains(string(out), "run scripts/gen-config-reference --update") {
		t.Errorf("stale reference message does not say how to fix it: %s", out)
	}
	if out, err := exec.Command(gen, "--update", readme).CombinedOutput(); err != nil {
		t.Fatalf("--update: %v: %s", err, out)
	}
	if out, err := exec.Command(check, readme).CombinedOutput(); err != nil {
		t.Fatalf("check after --update: %v: %s", err, out)
	}
	b, _ := os.ReadFile(readme)
	if !strings.HasPrefix(string(b), "# README\n\n<!-- config-reference:begin -->\n| property |") ||
		!strings.HasSuffix(string(b), "<!-- config-reference:end -->\n\nAfter.\n") ||
		!strings.Contains(string(b), string(table)) {
		t.Errorf("--update did not replace exactly the marked section:\n%s", b)
	}

	if err := os.WriteFile(readme, []byte("# no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(check, readme).CombinedOutput(); err == nil || !strings.Contains(string(out), "config-reference:begin") {
		t.Errorf("README without markers: err=%v out=%s", err, out)
	}
}
