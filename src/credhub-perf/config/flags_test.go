package config

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
)

func parseTest(t *testing.T, args ...string) (Config, []string, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := BindFlags(fs)
	if err := ParseFlags(fs, args); err != nil {
		return Config{}, nil, err
	}
	c := Default()
	if errs := o.Apply(&c); len(errs) > 0 {
		return c, fs.Args(), errs[0]
	}
	return c, fs.Args(), nil
}

// A bare --keepalive means true and must not take the next argument.
func TestBareBoolFlag(t *testing.T) {
	c, rest, err := parseTest(t, "--keepalive", "--scenarios", "set", "--target.insecure_skip_verify", "--label", "x")
	if err != nil || !c.Keepalive || strings.Join(c.Scenarios, ",") != "set" || !c.Target.InsecureSkipVerify || c.Label != "x" || len(rest) != 0 {
		t.Fatalf("err %v, keepalive %v scenarios %v insecure %v label %q rest %v", err, c.Keepalive, c.Scenarios, c.Target.InsecureSkipVerify, c.Label, rest)
	}
	for _, args := range [][]string{{"--keepalive", "false"}, {"--keepalive=false"}, {"-keepalive", "FALSE"}, {"--keepalive", "0"}} {
		c, rest, err := parseTest(t, args...)
		if err != nil || c.Keepalive || len(rest) != 0 {
			t.Fatalf("%v: err %v keepalive %v rest %v", args, err, c.Keepalive, rest)
		}
	}
	// A value that looks like a flag still belongs to the flag before it.
	if c, _, err := parseTest(t, "--label", "--keepalive"); err != nil || c.Label != "--keepalive" {
		t.Fatalf("label %q err %v", c.Label, err)
	}
	if _, rest, _ := parseTest(t, "--keepalive", "maybe"); strings.Join(rest, ",") != "maybe" {
		t.Fatalf("rest %v", rest)
	}
}

// -h shows each flag's type as its placeholder, never a word from its help.
func TestHelpPlaceholders(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	var b strings.Builder
	fs.SetOutput(&b)
	BindFlags(fs)
	fs.PrintDefaults()
	out := b.String()
	allowed := map[string]bool{"string": true, "int": true, "number": true, "duration": true, "list": true}
	re := regexp.MustCompile(`(?m)^  -(\S+)(?: (.*))?$`)
	n := 0
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		n++
		if k := keyByName(m[1]); k != nil && k.Type == "bool" {
			if m[2] != "" {
				t.Errorf("-%s is a switch, shown as -%s %s", m[1], m[1], m[2])
			}
			continue
		}
		if !allowed[m[2]] {
			t.Errorf("-%s shown with placeholder %q", m[1], m[2])
		}
	}
	if n < len(Keys) || strings.Contains(out, "-label 2 instances") || strings.Contains(out, "`") {
		t.Fatalf("%d flags in\n%s", n, out)
	}
}

// Every list flag given twice accumulates (ListFlagRule): none is dropped,
// and the flags' items replace the file's (here the defaults').
func TestListFlagsAccumulate(t *testing.T) {
	c, _, err := parseTest(t, "--target_load.processes", "a=1", "--target_load.processes", "b=x",
		"--scenarios", "get", "--scenario", "set", "--steps.rates", "10,20", "--steps.rates", "30",
		"--confirm.fractions", "0.5", "--confirm.fractions", "0.9",
		"--target_load.bosh_groups", "credhub=credhub", "--target_load.bosh_groups", "credhub=database",
		"--custom.headers", "A: 1, 2", "--custom.headers", "B: 3")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{
		"processes": strings.Join(c.TargetLoad.Processes, " "), "scenarios": strings.Join(c.Scenarios, " "),
		"rates": fmt.Sprint(c.Steps.Rates), "fractions": fmt.Sprint(c.Confirm.Fractions),
		"groups": strings.Join(c.TargetLoad.BoshGroups, " "), "headers": strings.Join(c.Custom.Headers, "|"),
	}
	want := map[string]string{
		"processes": "a=1 b=x", "scenarios": "get set", "rates": "[10 20 30]", "fractions": "[0.5 0.9]",
		"groups": "credhub=credhub credhub=database", "headers": "A: 1, 2|B: 3",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	for _, k := range Keys {
		if strings.HasPrefix(k.Type, "list") && k.set(&c, "x") == nil && !strings.Contains(fmt.Sprint(k.field(&c)), "x") {
			t.Errorf("%s: a flag did not add its item", k.Name)
		}
	}
}
