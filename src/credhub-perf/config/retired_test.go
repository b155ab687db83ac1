package config

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// A retired key in a file, in any shape or value, is refused with what
// changed, naming the key and its line, not as an unknown key.
func TestRetiredKeyInFile(t *testing.T) {
	for _, doc := range []string{
		"tester:\n  fast_rsa: true\n",
		"tester:\n  fast_rsa: false\n",
		"label: x\ntester: {fast_rsa: yes}\n",
		`{"tester": {"fast_rsa": true}}`,
		"tester:\n  fast_rsa:\n",
	} {
		c := Default()
		err := LoadBytes(&c, []byte(doc), "c.yml")
		var r *RetiredError
		if !errors.As(err, &r) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "unknown key") ||
			!strings.Contains(err.Error(), "config file c.yml: tester.fast_rsa (line ") ||
			!strings.Contains(err.Error(), "was removed: Go's crypto/rsa signs every TLS handshake") {
			t.Errorf("%q: %v", doc, err)
		}
	}
}

// The same as a flag, whatever its form; other flags are unaffected, and
// a value that merely looks like the flag is a value.
func TestRetiredKeyAsFlag(t *testing.T) {
	for _, args := range [][]string{
		{"--tester.fast_rsa"}, {"-tester.fast_rsa"}, {"--tester.fast_rsa=false"}, {"--label", "x", "--tester.fast_rsa", "true"},
	} {
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		BindFlags(fs)
		err := ParseFlags(fs, args)
		var r *RetiredError
		if !errors.As(err, &r) || err.Error() != "--tester.fast_rsa "+Retired[0].Msg {
			t.Errorf("%v: %v", args, err)
		}
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	over := BindFlags(fs)
	if err := ParseFlags(fs, []string{"--label", "--tester.fast_rsa"}); err != nil {
		t.Fatalf("a label that looks like the flag: %v", err)
	}
	c := Default()
	if errs := over.Apply(&c); len(errs) > 0 || c.Label != "--tester.fast_rsa" {
		t.Fatalf("label %q, %v", c.Label, errs)
	}
}

// Every retired key is gone from the keys, and its property is in the
// spec only to be refused (no default, so an unset one is nil).
func TestRetiredKeysAreGone(t *testing.T) {
	for _, r := range Retired {
		if keyByName(r.Name) != nil || !strings.HasPrefix(r.Msg, "was removed: ") {
			t.Errorf("%s: still a key, or a message not starting 'was removed: '", r.Name)
		}
		found := false
		for _, p := range BOSHOnly {
			if p.Name == r.Prop {
				found = p.Default == nil && len(p.Rules) == 0
			}
		}
		if r.Prop != "" && !found {
			t.Errorf("%s: property %s not in BOSHOnly without a default", r.Name, r.Prop)
		}
		// CheckProperty answers as the template does: any value is refused.
		for _, v := range []string{"true", "false", `"yes"`} {
			if msgs, err := CheckProperty(r.Prop, []byte(v)); err != nil || len(msgs) != 1 || msgs[0] != r.Msg {
				t.Errorf("CheckProperty(%s, %s) = %v, %v; want the retired message", r.Prop, v, msgs, err)
			}
		}
	}
}
