package config

import (
	"os"
	"strings"
	"testing"
)

// The BOSH job's generated parts: the spec's properties and the rule table
// validation_properties.yml.erb embeds; and docs/configuration.md's table
// of upper bounds. -update rewrites them; otherwise they must be what Keys
// makes.
func TestGeneratedJobFiles(t *testing.T) {
	for _, g := range []struct {
		path, begin, end, want string
	}{
		{"../../../jobs/credhub-perf/spec", SpecBegin, SpecEnd, SpecProperties()},
		{"../../../jobs/credhub-perf/templates/config/config.yml.erb", CopiesBegin, CopiesEnd, ERBCopies()},
		{"../../../jobs/credhub-perf/templates/config/validation_properties.yml.erb", RulesBegin, RulesEnd, ERBRuleTable()},
		{docPath, "<!-- BEGIN GENERATED LIMITS TABLE (go test ./config -update) -->\n", "<!-- END GENERATED LIMITS TABLE -->", LimitsTable()},
	} {
		data, err := os.ReadFile(g.path)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(data)
		i, j := strings.Index(doc, g.begin), strings.Index(doc, g.end)
		if i < 0 || j < i {
			t.Fatalf("%s lacks the markers %q ... %q", g.path, g.begin, g.end)
		}
		want := doc[:i+len(g.begin)] + g.want + doc[j:]
		if want == doc {
			continue
		}
		if *update {
			if err := os.WriteFile(g.path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is out of date: run `go test ./config -update`", g.path)
	}
}
