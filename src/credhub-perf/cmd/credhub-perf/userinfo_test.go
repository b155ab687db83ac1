package main

import (
	"bytes"
	"strings"
	"testing"
)

// user:password@ in target.url or uaa.url: the run is refused before
// anything is contacted, exit 2, and the password is nowhere in the output
// (an error quoting the URL would print it on stderr).
func TestURLUserinfoRefusedWithoutPrintingIt(t *testing.T) {
	const secret = "url-pw-s3cret"
	for _, args := range [][]string{
		{"--target.url", "https://alice:" + secret + "@127.0.0.1:1"},
		{"--target.url", "alice:" + secret + "@127.0.0.1:1"},
		{"--target.url", "https://127.0.0.1:1", "--uaa.url", "https://bob:" + secret + "@127.0.0.1:2", "--uaa.client_id", "c", "--uaa.client_secret", "s"},
	} {
		var out, errb bytes.Buffer
		code := Main(append([]string{"run", "--output_dir", t.TempDir()}, args...), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), "holds a user name or password (user:password@ before the host)") {
			t.Fatalf("%v: exit %d\n%s", args, code, errb.String())
		}
		if strings.Contains(out.String()+errb.String(), secret) {
			t.Fatalf("%v: the password was printed:\n%s%s", args, out.String(), errb.String())
		}
	}
}
