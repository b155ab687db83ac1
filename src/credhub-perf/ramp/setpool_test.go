package ramp

import (
	"strings"
	"testing"

	"github.com/credhub-perf/credhub-perf/config"
)

// A pool of set names smaller than the requests in flight is a warning
// for runs that write; a run that does not write says nothing.
func TestSetPoolWarning(t *testing.T) {
	c := config.Default()
	c.Steps.MaxConcurrency = 800
	if w := setPoolWarning(c); w != "" {
		t.Fatalf("get run: %q", w)
	}
	c.Scenarios = []string{"get", "set"}
	if w := setPoolWarning(c); !strings.HasPrefix(w, "set.names 500 is below steps.max_concurrency 800") {
		t.Fatalf("set run: %q", w)
	}
	c.Set.Names = 800
	if w := setPoolWarning(c); w != "" {
		t.Fatalf("pool as large as the concurrency: %q", w)
	}
}
