package main

import (
	"bytes"
	"strings"
	"testing"
)

// An unknown flag is one line naming it and saying how to get help; -h
// still lists every flag.
func TestUnknownFlagOneLine(t *testing.T) {
	for _, args := range [][]string{{"run", "--bogus"}, {"capacity", "-steps.maxconcurrency", "3"}, {"summary", "--nope", "dir"}, {"cleanup", "--frobnicate"}, {"collect", "--bogus", "x.tgz"}} {
		var out, errb bytes.Buffer
		code := Main(args, &out, &errb)
		lines := strings.Split(strings.TrimRight(errb.String(), "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "not defined: -"+strings.TrimLeft(args[1], "-")) || !strings.Contains(lines[0], "credhub-perf "+args[0]+" -h") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"run", "-h"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "  -label string\n") || strings.Count(errb.String(), "\n") < 60 {
		t.Fatalf("run -h: exit %d\n%s", code, errb.String())
	}
}

// A retired key's flag is one line saying what changed, exit status 2,
// before anything else is read or sent.
func TestRetiredFlagOneLine(t *testing.T) {
	for _, args := range [][]string{{"run", "--tester.fast_rsa"}, {"run", "--config", "/nonexistent.yml", "--tester.fast_rsa=false"}, {"capacity", "-tester.fast_rsa", "true"}} {
		var out, errb bytes.Buffer
		code := Main(args, &out, &errb)
		lines := strings.Split(strings.TrimRight(errb.String(), "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], args[0]+": --tester.fast_rsa was removed: Go's crypto/rsa signs") {
			t.Errorf("%v: exit %d, stderr:\n%s", args, code, errb.String())
		}
	}
}
