package credhub

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSeedValueSizeAndShape(t *testing.T) {
	for _, size := range []int{64, 512, 1024, 8000} {
		v := SeedValue(7, size)
		var m map[string]any
		if err := json.Unmarshal(v, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"hostname", "port", "username", "password", "uri", "jdbcUrl", "name"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("seed value lacks %q: %s", k, v)
			}
		}
		if size >= 400 && (len(v) < size-8 || len(v) > size+8) {
			t.Fatalf("size %d: got %d bytes", size, len(v))
		}
	}
}

func TestBodiesAreJSONOnceFilled(t *testing.T) {
	n := Names{RunID: "r1"}
	fill := strings.NewReplacer("{{uuid}}", "0b7e1c1e-1f6d-4c9e-8f0e-3d7e8e0f9a1b", "{{rand 50}}", "42", "{{cycle 500}}", "17")
	var set struct {
		Name  string         `json:"name"`
		Type  string         `json:"type"`
		Value map[string]any `json:"value"`
	}
	body := fill.Replace(SetBodyTemplate(n, 3, 1024, 500))
	if err := json.Unmarshal([]byte(body), &set); err != nil {
		t.Fatalf("set body: %v\n%s", err, body)
	}
	if set.Type != "json" || set.Name != "/credhub-perf/r1/set/t3-17" || set.Value["password"] != "0b7e1c1e-1f6d-4c9e-8f0e-3d7e8e0f9a1b" {
		t.Fatalf("set body: %+v", set)
	}
	var vcap map[string][]map[string]any
	body = fill.Replace(InterpolateBodyTemplate(n, 50, 0))
	if err := json.Unmarshal([]byte(body), &vcap); err != nil {
		t.Fatalf("interpolate body: %v\n%s", err, body)
	}
	if len(vcap) != 3 {
		t.Fatalf("want 3 services, got %d", len(vcap))
	}
	if got := InterpolateBodyTemplate(n, 50, 0.9); strings.Count(got, "{{zipf 50 0.9}}") != 3 || strings.Contains(got, "{{rand") {
		t.Fatalf("a skewed interpolate body draws every ref with {{zipf 50 0.9}}: %s", got)
	}
	for _, b := range vcap {
		ref := b[0]["credentials"].(map[string]any)["credhub-ref"]
		if ref != "((/credhub-perf/r1/seed/cred-42))" {
			t.Fatalf("ref %v", ref)
		}
	}
}
