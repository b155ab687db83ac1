package api

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// auditLine is the shape of every line CredHub 2.15's CEFAuditRecord
// writes (fields in its order; cs6 only with request details).
var auditLine = regexp.MustCompile(`^CEF:0\|cloud_foundry\|credhub\|` + regexp.QuoteMeta(Version) +
	`\|(\S+ \S+)\|(\S+ \S+)\|0\|rt=\d{13} suser=\S+ suid=\S+ cs1Label=userAuthenticationMechanism cs1=(mutual_tls|uaa) ` +
	`request=\S+ requestMethod=[A-Z]+ cs3Label=versionUuid cs3=\S+ cs4Label=httpStatusCode cs4=\d{3} src=\S+ dst=\S+ ` +
	`cs2Label=resourceName cs2=\S+ cs5Label=resourceUuid cs5=\S+ deviceAction=[A-Z_]+ (cs6Label=requestDetails cs6=\S+ )?$`)

func TestAuditLogFollowsCredHubsRules(t *testing.T) {
	var log bytes.Buffer
	h := newHarness(t, "sqlite::memory:", func(c *Config) { c.AuditLog = &syncWriter{w: &log} })
	h.set("/a/json", "json", map[string]int{"x": 1})
	h.set("/a/json", "json", map[string]int{"x": 2})
	h.set("/a/other", "json", map[string]int{"y": 1})
	log.Reset()
	h.do(h.client, "GET", "/api/v1/data?name=/a/json", nil)
	h.do(h.client, "GET", "/api/v1/data?name=/a/json&current=true", nil)
	h.do(h.client, "GET", "/api/v1/data?path=/a", nil)
	h.do(h.client, "POST", "/api/v1/interpolate", `{"s":[{"credentials":{"credhub-ref":"((/a/json))"}},{"credentials":{"credhub-ref":"((/a/other))"}}]}`)
	h.do(h.client, "GET", "/api/v1/data?name=/missing", nil)
	h.do(h.anon, "GET", "/api/v1/data?name=/a/json", nil) // refused: no record
	h.do(h.client, "GET", "/info", nil)                   // unauthenticated endpoint: no record
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	// get: both versions; current: one; find: one; interpolate: one per
	// reference; the 404: one.
	wantActions := []string{"GET", "GET", "GET", "FIND", "INTERPOLATE", "INTERPOLATE", "GET"}
	if len(lines) != len(wantActions) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(wantActions), log.String())
	}
	for i, l := range lines {
		if !auditLine.MatchString(l) || !strings.Contains(l, "deviceAction="+wantActions[i]+" ") {
			t.Errorf("line %d does not read as CredHub's (%s):\n%s", i, wantActions[i], l)
		}
	}
	rt := func(l string) string { return regexp.MustCompile(`rt=\d+`).FindString(l) }
	if rt(lines[0]) != rt(lines[1]) || strings.Contains(lines[0], "cs3=null") || !strings.Contains(lines[0], "cs2=/a/json ") {
		t.Errorf("a get's lines differ but for the version:\n%s\n%s", lines[0], lines[1])
	}
	for _, want := range []string{`cs2=null`, `cs4=404`, `cs6={"name":"/missing","versions":null,"current":false} `} {
		if !strings.Contains(lines[6], want) {
			t.Errorf("the 404's line lacks %s:\n%s", want, lines[6])
		}
	}
	if !strings.Contains(lines[3], `cs6={"nameLike":null,"path":"/a","paths":null,"expiresWithinDays":""} `) {
		t.Errorf("find line:\n%s", lines[3])
	}
}

func TestAuditLogCertificatesOneLinePerCertificate(t *testing.T) {
	var log bytes.Buffer
	h := newHarness(t, "sqlite::memory:", func(c *Config) { c.AuditLog = &syncWriter{w: &log} })
	gen := func(body string) {
		if r := h.do(h.client, "POST", "/api/v1/data", body); r.status != 200 {
			t.Fatalf("generate: %d %s", r.status, r.body)
		}
	}
	gen(`{"name":"/ca","type":"certificate","parameters":{"common_name":"ca","is_ca":true,"self_sign":true}}`)
	gen(`{"name":"/leaf1","type":"certificate","parameters":{"common_name":"l1","ca":"/ca"}}`)
	gen(`{"name":"/leaf2","type":"certificate","parameters":{"common_name":"l2","ca":"/ca"}}`)
	log.Reset()
	h.do(h.client, "GET", "/api/v1/certificates", nil)
	if r := h.do(h.client, "POST", "/api/v1/bulk-regenerate", `{"signed_by":"/ca"}`); r.status != 200 {
		t.Fatalf("bulk: %d %s", r.status, r.body)
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	want := []string{"GET_ALL_CERTIFICATES", "GET_ALL_CERTIFICATES", "GET_ALL_CERTIFICATES", "BULK_REGENERATE", "BULK_REGENERATE"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), log.String())
	}
	for i, l := range lines {
		if !auditLine.MatchString(l) || !strings.Contains(l, "deviceAction="+want[i]+" ") {
			t.Errorf("line %d (%s):\n%s", i, want[i], l)
		}
	}
	if !strings.Contains(lines[3], `cs6={"signedBy":"/ca"} `) || strings.Contains(lines[3], "cs3=null") {
		t.Errorf("bulk line:\n%s", lines[3])
	}
}
