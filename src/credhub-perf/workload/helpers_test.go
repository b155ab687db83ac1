package workload

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cefLine builds one audit line as CredHub 2.15's CEFAuditRecord writes
// it (see the package doc).
type cefLine struct {
	at                   int64
	method, uri, query   string
	status               int
	actor, auth, src     string
	name, version, resID string
	action, details      string
}

func (c cefLine) String() string {
	req := c.uri
	if c.query != "" {
		req += "?" + c.query
	}
	or := func(s string) string {
		if s == "" {
			return "null"
		}
		return s
	}
	if c.actor == "" {
		c.actor = "mtls-app:3c538393-d192-4e23-8c83-" + testActor
	}
	if c.auth == "" {
		c.auth = "mutual_tls"
	}
	if c.src == "" {
		c.src = "10.0.0.1"
	}
	sig := c.method + " " + c.uri
	s := fmt.Sprintf("CEF:0|cloud_foundry|credhub|2.15.20|%s|%s|0|rt=%d suser=%s suid=%s cs1Label=userAuthenticationMechanism cs1=%s request=%s requestMethod=%s cs3Label=versionUuid cs3=%s cs4Label=httpStatusCode cs4=%d src=%s dst=credhub.service.cf.internal cs2Label=resourceName cs2=%s cs5Label=resourceUuid cs5=%s deviceAction=%s ",
		sig, sig, c.at, strings.TrimPrefix(c.actor, "mtls-"), c.actor, c.auth, req, c.method, or(c.version), c.status, c.src, or(c.name), or(c.resID), or(c.action))
	if c.details != "" {
		s += "cs6Label=requestDetails cs6=" + c.details + " "
	}
	return s
}

// testActor ends the actor's id; the bench varies it as production's
// many app identities do.
var testActor = "456654b3fa6c"

func getLines(at int64, name string, versions int) []string {
	var out []string
	for v := 0; v < versions; v++ {
		out = append(out, cefLine{at: at, method: "GET", uri: "/api/v1/data", query: "name=" + name, status: 200,
			name: name, version: fmt.Sprintf("v-%s-%d", name, v), resID: "r-" + name, action: "GET",
			details: `{"name":"` + name + `","versions":null,"current":false}`}.String())
	}
	return out
}

func findLine(at int64, path string) string {
	return cefLine{at: at, method: "GET", uri: "/api/v1/data", query: "path=" + path, status: 200, action: "FIND",
		details: `{"nameLike":null,"path":"` + path + `","paths":null,"expiresWithinDays":""}`}.String()
}

func interpolateLines(at int64, names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, cefLine{at: at, method: "POST", uri: "/api/v1/interpolate", status: 200, name: n,
			version: "v-" + n, resID: "r-" + n, action: "INTERPOLATE", details: "{}"}.String())
	}
	return out
}

func setLine(at int64, name string) string {
	return cefLine{at: at, method: "PUT", uri: "/api/v1/data", status: 200, name: name, version: "v-" + name,
		resID: "r-" + name, action: "SET", details: `{"name":"` + name + `","type":"value"}`}.String()
}

func writeFile(t testing.TB, dir, name string, lines []string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	data := strings.Join(lines, "\n")
	if len(lines) > 0 {
		data += "\n"
	}
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func analyze(t *testing.T, paths ...string) *Workload {
	t.Helper()
	w, err := Analyze(Options{Paths: paths})
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	return w
}

func typeReq(w *Workload, id string) int64 {
	for _, t := range w.Types {
		if t.Type == id {
			return t.Requests
		}
	}
	return 0
}
