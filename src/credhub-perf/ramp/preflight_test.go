package ramp

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/load/loadtest"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
)

// An output directory that cannot take files is found before CredHub is
// contacted, not after the ramp.
func TestOutputDirCheckedBeforeTarget(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	fake := newFake()
	srv := loadtest.NewMTLSServer(t, p, fake, true, false)
	c := fakeConfig(t, p, srv.URL)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.OutputDir = filepath.Join(file, "out")
	code, _, log := execute(t, c, false)
	if code != ExitUsage || !strings.Contains(log, `output_dir "`+c.OutputDir+`" cannot be created`) || !strings.Contains(log, "nothing was sent") {
		t.Fatalf("exit %d\n%s", code, log)
	}
	if n := fake.requests.Load(); n != 0 {
		t.Fatalf("the target was contacted %d times before the output directory was checked", n)
	}
}

func TestUAAOverHTTPNeedsExplicitKey(t *testing.T) {
	c := validBase(t)
	c.UAA = config.UAAConfig{URL: "http://uaa.example.com:8080", ClientID: "perf", ClientSecret: "s"}
	errs := c.Validate(false)
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "uaa.url: ") || !strings.Contains(errs[0].Error(), "uaa.allow_plaintext_secret") {
		t.Fatalf("want one error on uaa.url naming uaa.allow_plaintext_secret, got %v", errs)
	}
	if got := insecureModes(c); len(got) != 0 {
		t.Fatalf("insecure modes %v", got)
	}
	c.UAA.AllowPlaintextSecret = true
	if errs := c.Validate(false); len(errs) != 0 {
		t.Fatalf("allowed, still refused: %v", errs)
	}
	c.Target.InsecureSkipVerify = true
	if got := strings.Join(insecureModes(c), ","); got != "target.insecure_skip_verify,uaa.allow_plaintext_secret" {
		t.Fatalf("insecure modes %q", got)
	}
	// The key changes nothing for an https UAA: nothing insecure to record.
	c.UAA.URL = "https://uaa.example.com"
	if got := strings.Join(insecureModes(c), ","); got != "target.insecure_skip_verify" {
		t.Fatalf("insecure modes %q", got)
	}
}

// Insecure modes get one warning line and are recorded in meta.json; a
// secure run records an empty list.
func TestInsecureModeWarnedAndRecorded(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	srv := loadtest.NewMTLSServer(t, p, newFake(), true, false)
	for _, insecure := range []bool{false, true} {
		c := fakeConfig(t, p, srv.URL)
		c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 1, Step: 1, Requests: 20}
		c.Target.InsecureSkipVerify = insecure
		code, out, log := execute(t, c, false)
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, log)
		}
		warnings := strings.Count(log, "warning: insecure mode")
		dir := runDirs(t, c.OutputDir)[0]
		meta := resultstest.Meta(t, dir)
		raw, _ := os.ReadFile(filepath.Join(dir, "meta.json"))
		if insecure {
			if warnings != 1 || !strings.Contains(log, "warning: insecure mode target.insecure_skip_verify") ||
				strings.Join(meta.Insecure, ",") != "target.insecure_skip_verify" {
				t.Fatalf("warnings %d, meta.insecure %v\n%s", warnings, meta.Insecure, log)
			}
		} else if warnings != 0 || !strings.Contains(string(raw), `"insecure": []`) {
			t.Fatalf("secure run: warnings %d, meta.json:\n%s", warnings, raw)
		}
	}
}

// A run against a UAA over plain http, allowed by the key: the token is
// fetched, the run warns once and records the mode.
func TestUAAOverHTTPAllowedRunRecordsIt(t *testing.T) {
	p := loadtest.NewPKI(t, loadtest.ECDSA)
	var tokens atomic.Int64
	uaa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.URL.Path != "/oauth/token" || r.PostForm.Get("client_secret") != "plain-secret" {
			writeJSON(w, 401, map[string]string{"error": "unauthorized"})
			return
		}
		tokens.Add(1)
		writeJSON(w, 200, map[string]any{"access_token": "tok", "expires_in": 3600})
	}))
	defer uaa.Close()
	srv := loadtest.NewMTLSServer(t, p, newFake(), false, false)
	c := fakeConfig(t, p, srv.URL)
	c.Target.ClientCertFile, c.Target.ClientKeyFile = "", ""
	c.Steps = config.StepsConfig{MinConcurrency: 1, MaxConcurrency: 1, Step: 1, Requests: 20}
	c.UAA = config.UAAConfig{URL: uaa.URL, ClientID: "perf", ClientSecret: "plain-secret", AllowPlaintextSecret: true}
	code, out, log := execute(t, c, false)
	if code != 0 || tokens.Load() == 0 {
		t.Fatalf("exit %d, %d tokens\n%s\n%s", code, tokens.Load(), out, log)
	}
	meta := resultstest.Meta(t, runDirs(t, c.OutputDir)[0])
	if strings.Count(log, "warning: insecure mode uaa.allow_plaintext_secret") != 1 || strings.Join(meta.Insecure, ",") != "uaa.allow_plaintext_secret" || meta.Auth != "uaa" {
		t.Fatalf("meta.insecure %v auth %s\n%s", meta.Insecure, meta.Auth, log)
	}
	if strings.Contains(log+out, "plain-secret") {
		t.Fatal("the secret reached the log")
	}
}
