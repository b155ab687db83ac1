package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// hey refuses user:password@ in its URL, and the refusal must not repeat
// the password.
func TestURLUserinfoRefusedWithoutEcho(t *testing.T) {
	const secret = "hey-url-s3cret"
	for _, u := range []string{"https://alice:" + secret + "@127.0.0.1:1/x", "alice:" + secret + "@127.0.0.1:1/x", "ftp://alice:" + secret + "@h/x"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"-n", "1", "-c", "1", u}, func(string) string { return "" }, &out, &errb, nil)
		if code == 0 || strings.Contains(out.String()+errb.String(), secret) || !strings.Contains(errb.String(), "REDACTED@") {
			t.Fatalf("%s: exit %d\n%s%s", u, code, out.String(), errb.String())
		}
	}
}
