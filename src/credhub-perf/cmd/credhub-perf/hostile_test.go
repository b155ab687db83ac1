package main

// Hostile inputs: values without a sane bound, files that are not a small
// YAML document, and flags far out of range, given to the real binaries.
// Each must end in one-line errors and exit status 2, before any run
// directory (or output directory) exists, within 10 s and 500 MB: every
// case runs under a context deadline and prlimit --data. make bench runs
// the longer variant (CREDHUB_PERF_HOSTILE=long): every bounded key.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/config"
)

type hostileCase struct {
	name string
	// args after `credhub-perf run` (or hey's, with hey set); CONFIG is
	// replaced by a valid config file's path, FILE by the case's file,
	// TARGET by flags naming a valid target.
	args []string
	file string // contents of FILE, when the case needs one
	want string // in stderr
	hey  bool
	// summary: the args are credhub-perf summary's, not run's.
	summary bool
	// more: other lines may follow, each an error of its own (a value of
	// tester.count above 1 brings the checks of several testers).
	more bool
}

// aliasBomb is the billion-laughs document: depth levels of 9 aliases
// each, 9^depth values once expanded, under the given keys.
func aliasBomb(depth int, indent string) string {
	var b strings.Builder
	b.WriteString(indent + `a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i < depth; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "%sa%d: &a%d [%s]\n", indent, i, i, strings.TrimSuffix(strings.Repeat(p+",", 9), ","))
	}
	return b.String()
}

func hostileCases(long bool) []hostileCase {
	cases := []hostileCase{
		// No upper bound: each hung, or took memory without limit.
		{name: "concurrency 1e6", args: []string{"--config", "CONFIG", "--steps.max_concurrency", "1000000"}, want: "steps.max_concurrency: must be at most 100000 workers per tester"},
		{name: "duration 1e9 s", args: []string{"--config", "CONFIG", "--steps.duration", "1e9"}, want: "steps.duration: must be at most 24h"},
		{name: "duration 2540400h", args: []string{"--config", "CONFIG", "--steps.duration", "2540400h"}, want: "steps.duration: must be at most 24h"},
		{name: "warmup 1e9 s", args: []string{"--config", "CONFIG", "--steps.warmup", "1e9"}, want: "steps.warmup: must be at most 24h"},
		{name: "rates 1e12", args: []string{"--config", "CONFIG", "--steps.rates", "1e12"}, want: "steps.rates: rate #1 must be at most 1000000 requests/s"},
		{name: "start_at 9999", args: []string{"--config", "CONFIG", "--start-at", "9999-01-01T00:00:00Z"}, want: "tester.start_at: 9999-01-01T00:00:00Z is more than 7 days (168h) ahead"},
		{name: "run warm-up 1e6 h", args: []string{"--config", "CONFIG", "--warmup.run", "1000000h"}, want: "warmup.run: must be at most 24h (or auto)"},
		{name: "100000 steps", args: []string{"--config", "CONFIG", "--steps.max_concurrency", "100000", "--steps.step", "1"}, want: "steps.step: makes 100000 steps from 1 to 100000; a ramp has at most 10000"},
		{name: "a 9-day ramp", args: []string{"--config", "CONFIG", "--steps.max_concurrency", "10", "--steps.duration", "24h"}, want: "a ramp takes at most 168h"},
		// Files that are not a small YAML document.
		{name: "config /dev/zero", args: []string{"--config", "/dev/zero"}, want: "config file /dev/zero: larger than 1024 KiB"},
		{name: "config 2 MB", args: []string{"--config", "FILE"}, file: "label: x\n" + strings.Repeat("# padding\n", 210000), want: "larger than 1024 KiB"},
		{name: "alias bomb, unknown key", args: []string{"--config", "FILE"}, file: aliasBomb(9, ""), want: "YAML aliases expand to more than 10000 values"},
		{name: "alias bomb, known section", args: []string{"--config", "FILE"}, file: "steps:\n" + aliasBomb(9, "  "), want: "YAML aliases expand to more than 10000 values"},
		{name: "alias bomb, known key", args: []string{"--config", "FILE"}, file: aliasBomb(9, "") + "scenarios: *a8\n", want: "YAML aliases expand to more than 10000 values"},
		{name: "two documents", args: []string{"--config", "FILE"}, file: "label: a\n---\nsteps: {duration: 1e9}\n", want: "holds more than one YAML document"},
		{name: "misspelt key", args: []string{"--config", "FILE"}, file: "steps:\n  max_concurency: 5\n", want: "steps.max_concurency: unknown key (line 2); did you mean steps.max_concurrency?"},
		{name: "nesting 100000 deep", args: []string{"--config", "FILE"}, file: "label: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n", want: "config file"},
		// A workload.json that is not one: one line, before any load.
		{name: "workload /dev/zero", args: []string{"--config", "CONFIG", "--workload", "/dev/zero"}, want: "workload /dev/zero: larger than 16 MiB"},
		{name: "workload missing", args: []string{"--config", "CONFIG", "--workload", "/nonexistent/workload.json"}, want: "workload /nonexistent/workload.json: no such file"},
		{name: "workload binary", args: []string{"--config", "CONFIG", "--workload", "FILE"}, file: "\x1f\x8b\x08\x00junk", want: "not valid JSON"},
		{name: "workload of a config", args: []string{"--config", "CONFIG", "--workload", "FILE"}, file: "{\"label\": \"x\"}", want: "format is none, want \"credhub-perf-workload/1\""},
		{name: "workload with scenarios", args: []string{"--config", "CONFIG", "--workload", "FILE", "--scenarios", "get,set"}, file: "{}", want: "workload: a workload is replayed as the mix scenario alone"},
		{name: "workload, nothing to send", args: []string{"--config", "CONFIG", "--workload", "FILE"},
			file: `{"format": "credhub-perf-workload/1", "requests": 5, "types": [{"type": "generate", "requests": 5, "share": 1, "scenario": "", "replayable": false}]}`,
			want: "no request type the run can send (get, set, interpolate) has a share; the log holds only generate"},
		// summary's SLO flags: NaN compares false with every bound.
		{name: "summary percentile NaN", summary: true, args: []string{"--slo.percentile", "NaN", "OUT"}, want: "credhub-perf summary: bad SLO (--slo.percentile NaN"},
		{name: "summary error rate NaN", summary: true, args: []string{"--slo.max_error_rate", "NaN", "OUT"}, want: "--slo.max_error_rate NaN): give a percentile"},
		{name: "summary latency 2540400h", summary: true, args: []string{"--slo.latency", "2540400h", "OUT"}, want: `--slo.latency "2540400h"`},
		// hey: a million workers took 2.8 GB before the first request.
		{name: "hey -c 1e6", hey: true, args: []string{"-c", "1000000", "-n", "1000000", "https://127.0.0.1:1/"}, want: "-c must be at most 100000 workers"},
		{name: "hey -z 2540400h", hey: true, args: []string{"-z", "2540400h", "https://127.0.0.1:1/"}, want: "-z must be at most 24h"},
		{name: "hey -rate 1e12", hey: true, args: []string{"-rate", "1e12", "-z", "1s", "https://127.0.0.1:1/"}, want: "-rate must be at most 1000000"},
		{name: "hey -D /dev/zero", hey: true, args: []string{"-D", "/dev/zero", "https://127.0.0.1:1/"}, want: "-D: /dev/zero is larger than 16 MiB"},
	}
	if !long {
		return cases
	}
	// Deeper bombs: 9^12 values expanded.
	cases = append(cases, hostileCase{name: "alias bomb 9^12", args: []string{"--config", "FILE"}, file: "steps:\n" + aliasBomb(12, "  "), want: "YAML aliases expand to more than 10000 values"})
	// Every key's upper bound, exceeded tenfold and a millionfold, as a
	// flag and in the file.
	for _, k := range config.Keys {
		for _, r := range k.Rules {
			if r.Check != "range" || r.Max == nil || len(r.When) > 0 {
				continue
			}
			for _, f := range []float64{10, 1e6} {
				v := *r.Max * f
				text := fmt.Sprintf("%.0f", v)
				if k.Type == "duration" {
					text = fmt.Sprintf("%.0fs", v/1e9)
				}
				if k.Type == "number" && *r.Max <= 1 {
					text = fmt.Sprintf("%g", v+1)
				}
				cases = append(cases,
					hostileCase{name: k.Name + " flag " + text, args: []string{"--config", "CONFIG", "--" + k.Name, text}, want: k.Name + ": ", more: true},
					hostileCase{name: k.Name + " file " + text, args: []string{"--config", "FILE", "TARGET"}, file: nested(k.Name, text), want: k.Name + ": ", more: true})
			}
			break
		}
	}
	return cases
}

// nested writes key a.b.c with value v as YAML.
func nested(key, v string) string {
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i == len(parts)-1 {
			b.WriteString(" " + v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestHostileInputs(t *testing.T) {
	binaries(t)
	heyBin := filepath.Join(binDir, "hey")
	if _, err := os.Stat(heyBin); err != nil {
		if out, err := exec.Command("go", "build", "-o", heyBin, "../hey").CombinedOutput(); err != nil {
			t.Fatalf("building hey: %v\n%s", err, out)
		}
	}
	long := os.Getenv("CREDHUB_PERF_HOSTILE") == "long"
	for _, tc := range hostileCases(long) {
		t.Run(tc.name, func(t *testing.T) {
			// output_dir does not exist yet: a refused run must not create
			// it, nor a run directory in it.
			out := filepath.Join(t.TempDir(), "out")
			good := writeConfig(t, "https://127.0.0.1:1", "steps: {duration: 1s, max_concurrency: 2}")
			args := make([]string, 0, len(tc.args)+3)
			switch {
			case tc.summary:
				args = append(args, "summary")
			case !tc.hey:
				args = append(args, "run", "--output_dir", out)
			}
			for _, a := range tc.args {
				switch a {
				case "OUT":
					a = out
				case "TARGET":
					// A file that holds one key: the target from flags.
					args = append(args, "--target.url", "https://127.0.0.1:1", "--target.ca_cert_file", filepath.Join(certDir, "ca.crt"),
						"--target.client_cert_file", filepath.Join(certDir, "client.crt"), "--target.client_key_file", filepath.Join(certDir, "client.key"))
					continue
				case "CONFIG":
					a = good
				case "FILE":
					a = filepath.Join(t.TempDir(), "config.yml")
					if err := os.WriteFile(a, []byte(tc.file), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				args = append(args, a)
			}
			bin := perfBin
			if tc.hey {
				bin = heyBin
			}
			code, stderr := runLimited(t, bin, args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want 2 and %q in stderr:\n%s", code, tc.want, stderr)
			}
			prefix := "credhub-perf"
			if tc.hey {
				prefix = "hey"
			}
			// Everything else in the case is valid: the one problem is one line.
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 && !tc.more {
				t.Errorf("want one line, got:\n%s", stderr)
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, prefix+": ") && !strings.HasPrefix(l, prefix+" run: ") && !strings.HasPrefix(l, prefix+" summary: ") {
					t.Errorf("a line that is not one of %s's errors: %q", prefix, l)
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused run left %s behind (%v)", out, err)
			}
		})
	}
}

// runLimited runs a binary under a 10 s deadline and a 500 MB limit on its
// writable memory (prlimit --data; --as would refuse the address space the
// Go runtime reserves at start) and returns its exit status and stderr.
func runLimited(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	name, full := bin, args
	if p, err := exec.LookPath("prlimit"); err == nil {
		name, full = p, append([]string{"--data=500000000", "--", bin}, args...)
	}
	cmd := exec.CommandContext(ctx, name, full...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("still running after 10 s:\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}
