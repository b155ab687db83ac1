package api

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

func TestConformanceSQLite(t *testing.T) { runConformance(t, newHarness(t, dbURL(t, "sqlite"), nil)) }
func TestConformancePostgres(t *testing.T) {
	runConformance(t, newHarness(t, dbURL(t, "postgres"), nil))
}
func TestConformanceMariaDB(t *testing.T) { runConformance(t, newHarness(t, dbURL(t, "mariadb"), nil)) }

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
)

const (
	jsonSecret     = "json-secret-9f1c2b"
	valueSecret    = "value-secret-77aa01"
	passwordSecret = "password-secret-c0ffee"
	userSecret     = "user-secret-b16b00b5"
)

// runConformance checks every endpoint, status code and error body this
// server implements, in the order a reader would look for them.
func runConformance(t *testing.T, h *harness) {
	t.Run("info health version", func(t *testing.T) {
		h.t = t
		r := h.do(h.anon, "GET", "/info", nil)
		h.expect(r, 200, `{"auth-server":{"url":"`+h.url+`"},"app":{"name":"CredHub"}}`)
		h.expect(h.do(h.anon, "GET", "/info/", nil), 200, "") // trailing slash tolerated
		h.expect(h.do(h.anon, "GET", "/health", nil), 200, `{"status":"UP"}`)
		h.expect(h.do(h.anon, "GET", "/version", nil), 401,
			`{"error":"access_denied","error_description":"Full authentication is required to access this resource"}`)
		h.expect(h.do(h.client, "GET", "/version", nil), 200, `{"version":"`+Version+`"}`)
		r = h.do(h.anon, "POST", "/info", "{}")
		if r.status != 404 || len(r.body) != 0 {
			t.Fatalf("POST /info: %d %q, want 404 with an empty body", r.status, r.body)
		}
	})

	t.Run("set every type", func(t *testing.T) {
		h.t = t
		check := func(v map[string]any, typ, name string) {
			t.Helper()
			if v["type"] != typ || v["name"] != name || v["metadata"] != nil {
				t.Fatalf("view %v: want type %s name %s metadata null", v, typ, name)
			}
			if !uuidRE.MatchString(v["id"].(string)) || !timeRE.MatchString(v["version_created_at"].(string)) {
				t.Fatalf("view %v: bad id or version_created_at", v)
			}
		}
		v := h.set("/conf/value", "value", valueSecret)
		check(v, "value", "/conf/value")
		if v["value"] != valueSecret {
			t.Fatalf("value %v", v["value"])
		}
		v = h.set("conf/json", "json", map[string]any{"secret": jsonSecret, "n": 1, "html": "<&>"})
		check(v, "json", "/conf/json")
		if v["value"].(map[string]any)["secret"] != jsonSecret {
			t.Fatalf("json value %v", v["value"])
		}
		v = h.set("/conf/password", "password", passwordSecret)
		check(v, "password", "/conf/password")
		if v["value"] != passwordSecret {
			t.Fatalf("password value %v", v["value"])
		}
		v = h.set("/conf/user", "user", map[string]any{"username": "alice", "password": userSecret})
		check(v, "user", "/conf/user")
		uv := v["value"].(map[string]any)
		if uv["username"] != "alice" || uv["password"] != userSecret || !strings.HasPrefix(uv["password_hash"].(string), "$6$") {
			t.Fatalf("user value %v", uv)
		}
		salt := uv["password_hash"].(string)[:strings.LastIndexByte(uv["password_hash"].(string), '$')]
		if sha512Crypt(userSecret, salt) != uv["password_hash"] {
			t.Fatalf("password_hash does not verify against the password")
		}

		caPEM, _ := os.ReadFile(filepath.Join(h.certDir, "ca.crt"))
		keyPEM, _ := os.ReadFile(filepath.Join(h.certDir, "ca.key"))
		v = h.set("/conf/ca", "certificate", map[string]any{"certificate": string(caPEM), "private_key": string(keyPEM)})
		check(v, "certificate", "/conf/ca")
		if v["certificate_authority"] != true || v["self_signed"] != true || v["transitional"] != false || !timeRE.MatchString(v["expiry_date"].(string)) {
			t.Fatalf("certificate view %v", v)
		}
		cv := v["value"].(map[string]any)
		if cv["certificate"] != string(caPEM) || cv["private_key"] != string(keyPEM) || cv["ca"] != nil {
			t.Fatalf("certificate value %v", cv)
		}
		leafPEM, _ := os.ReadFile(filepath.Join(h.certDir, "server.crt"))
		v = h.set("/conf/leaf", "certificate", map[string]any{"ca_name": "/conf/ca", "certificate": string(leafPEM)})
		if v["value"].(map[string]any)["ca"] != string(caPEM) || v["certificate_authority"] != false || v["self_signed"] != false {
			t.Fatalf("leaf certificate view %v", v)
		}

		pub, priv := sshKeyPair(t)
		v = h.set("/conf/ssh", "ssh", map[string]any{"public_key": pub, "private_key": priv})
		check(v, "ssh", "/conf/ssh")
		sv := v["value"].(map[string]any)
		if sv["public_key"] != pub || sv["private_key"] != priv || sv["public_key_fingerprint"] == nil {
			t.Fatalf("ssh value %v", sv)
		}
		v = h.set("/conf/rsa", "rsa", map[string]any{"public_key": "-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----\n"})
		check(v, "rsa", "/conf/rsa")
		if rv := v["value"].(map[string]any); rv["private_key"] != nil {
			t.Fatalf("rsa value %v: private_key should be null", rv)
		}
		r := h.do(h.client, "PUT", "/api/v1/data", map[string]any{"name": "/conf/meta", "type": "value", "value": "x", "metadata": map[string]any{"owner": "perf"}})
		h.expect(r, 200, "")
		if m := r.json(t)["metadata"]; m == nil || m.(map[string]any)["owner"] != "perf" {
			t.Fatalf("metadata %v", m)
		}
	})

	t.Run("set errors", func(t *testing.T) {
		h.t = t
		put := func(body any, hdr ...string) response { return h.do(h.client, "PUT", "/api/v1/data", body, hdr...) }
		h.expect(put(map[string]any{"name": "/conf/x", "type": "json", "value": map[string]any{"a": 1}, "overwrite": true}),
			422, fmtErr(msgInvalidJSONKey, "overwrite"))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "value", "value": "v", "mode": "overwrite"}),
			422, fmtErr(msgInvalidJSONKey, "mode"))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "user", "value": map[string]any{"password": "p", "extra": 1}}),
			422, fmtErr(msgInvalidJSONKey, "extra"))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "nope", "value": "v"}), 422, errBody(msgInvalidTypeSet))
		h.expect(put(map[string]any{"name": "/conf/x", "value": "v"}), 422, errBody(msgInvalidTypeSet))
		h.expect(put(map[string]any{"type": "value", "value": "v"}), 400, errBody(msgMissingName))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "value"}), 400, errBody(msgMissingValue))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "json", "value": map[string]any{}}), 400, errBody(msgMissingValue))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "user", "value": map[string]any{"username": "u"}}), 400, errBody(msgMissingPassword))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "certificate", "value": map[string]any{}}), 400, errBody(msgMissingCertCredentials))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "certificate", "value": map[string]any{"certificate": "junk"}}), 400, errBody(msgInvalidCertificate))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "certificate", "value": map[string]any{"ca": "a", "ca_name": "/b"}}), 400, errBody(msgMixedCANameAndCA))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "certificate", "value": map[string]any{"ca_name": "/conf/nope", "certificate": "x"}}), 404, errBody(msgInvalidAccess))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "rsa", "value": map[string]any{}}), 400, errBody(msgMissingRSASSH))
		h.expect(put(map[string]any{"name": "/conf/value", "type": "password", "value": "p"}), 400, errBody(msgTypeMismatch))
		h.expect(put(map[string]any{"name": "/conf//x", "type": "value", "value": "v"}), 400, errBody(msgInvalidSlashInName))
		h.expect(put(map[string]any{"name": "/conf/x/", "type": "value", "value": "v"}), 400, errBody(msgInvalidSlashInName))
		h.expect(put(map[string]any{"name": "/conf/x y", "type": "value", "value": "v"}), 400, errBody(msgInvalidCharInName))
		h.expect(put(map[string]any{"name": "/" + strings.Repeat("a", 1024), "type": "value", "value": "v"}), 400, errBody(msgNameTooLong))
		h.expect(put(`{"name": "/conf/x", "type": "value", "value": `), 400, errBody(msgBadRequest))
		h.expect(put(`[1,2]`), 400, errBody(msgBadRequest))
		h.expect(put(map[string]any{"name": "/conf/x", "type": "value", "value": "v"}, "Content-Type", "text/plain"), 400, errBody(msgInvalidContentType))
		h.expect(put(map[string]any{"name": "/conf/big", "type": "value", "value": strings.Repeat("x", maxBodyBytes+1)}), 413, errBody(msgExceedsMaximumSize))
		r := h.do(h.client, "PATCH", "/api/v1/data", "{}")
		if r.status != 404 || len(r.body) != 0 {
			t.Fatalf("PATCH: %d %q, want 404 with an empty body", r.status, r.body)
		}
	})

	t.Run("get by name and versions", func(t *testing.T) {
		h.t = t
		var ids []string
		for i := 0; i < 3; i++ {
			ids = append(ids, h.set("/conf/Versioned", "value", "v"+string(rune('0'+i)))["id"].(string))
		}
		data := func(path string) []map[string]any {
			t.Helper()
			r := h.do(h.client, "GET", path, nil)
			h.expect(r, 200, "")
			var out struct{ Data []map[string]any }
			if err := json.Unmarshal(r.body, &out); err != nil {
				t.Fatal(err)
			}
			return out.Data
		}
		all := data("/api/v1/data?name=/conf/Versioned")
		if len(all) != 3 || all[0]["id"] != ids[2] || all[1]["id"] != ids[1] || all[2]["id"] != ids[0] || all[0]["value"] != "v2" {
			t.Fatalf("all versions, newest first: got %v", all)
		}
		if cur := data("/api/v1/data?name=/conf/versioned&current=true"); len(cur) != 1 || cur[0]["id"] != ids[2] || cur[0]["name"] != "/conf/Versioned" {
			t.Fatalf("current (case-insensitive lookup): %v", cur)
		}
		if two := data("/api/v1/data?name=conf/Versioned&versions=2"); len(two) != 2 || two[1]["id"] != ids[1] {
			t.Fatalf("versions=2 (leading slash added): %v", two)
		}
		h.expect(h.do(h.client, "GET", "/api/v1/data?name=/conf/Versioned&versions=-1", nil), 400, fmtErr(msgInvalidQueryParam, "versions"))
		h.expect(h.do(h.client, "GET", "/api/v1/data?name=/conf/Versioned&versions=2&current=true", nil), 400, errBody(msgVersionsAndCurrent))
		h.expect(h.do(h.client, "GET", "/api/v1/data", nil), 400, fmtErr(msgMissingQueryParam, "name"))
		h.expect(h.do(h.client, "GET", "/api/v1/data?name=", nil), 400, fmtErr(msgMissingQueryParam, "name"))
		h.expect(h.do(h.client, "GET", "/api/v1/data?name=/conf/absent", nil), 404, errBody(msgInvalidAccess))

		r := h.do(h.client, "GET", "/api/v1/data/"+ids[1], nil)
		h.expect(r, 200, "")
		if v := r.json(t); v["id"] != ids[1] || v["value"] != "v1" || v["data"] != nil {
			t.Fatalf("get by id: %v", v)
		}
		h.expect(h.do(h.client, "GET", "/api/v1/data/"+strings.Repeat("0", 8)+"-0000-4000-8000-000000000000", nil), 404, errBody(msgInvalidAccess))
		h.expect(h.do(h.client, "GET", "/api/v1/data/not-a-uuid", nil), 404, errBody(msgInvalidAccess))
	})

	t.Run("find", func(t *testing.T) {
		h.t = t
		h.set("/find/a/one", "value", "1")
		time.Sleep(1100 * time.Millisecond) // version_created_at has second resolution on the wire
		h.set("/find/a/two", "value", "2")
		h.set("/find/b/three", "value", "3")
		h.set("/findother", "value", "4")
		names := func(path string) []string {
			t.Helper()
			r := h.do(h.client, "GET", path, nil)
			h.expect(r, 200, "")
			var out struct {
				Credentials []struct {
					Name             string `json:"name"`
					VersionCreatedAt string `json:"version_created_at"`
				}
			}
			if err := json.Unmarshal(r.body, &out); err != nil {
				t.Fatal(err)
			}
			var n []string
			for _, c := range out.Credentials {
				if !timeRE.MatchString(c.VersionCreatedAt) {
					t.Fatalf("find result %v", c)
				}
				n = append(n, c.Name)
			}
			return n
		}
		if got := names("/api/v1/data?path=/find/a"); strings.Join(got, ",") != "/find/a/two,/find/a/one" {
			t.Fatalf("path find, newest first: %v", got)
		}
		got := names("/api/v1/data?path=find")
		sort.Strings(got)
		if strings.Join(got, ",") != "/find/a/one,/find/a/two,/find/b/three" {
			t.Fatalf("path find is a /P/ prefix match: %v", got)
		}
		h.expect(h.do(h.client, "GET", "/api/v1/data?path=/nothing/here", nil), 200, `{"credentials":[]}`)
		got = names("/api/v1/data?name-like=FIND")
		sort.Strings(got)
		if strings.Join(got, ",") != "/find/a/one,/find/a/two,/find/b/three,/findother" {
			t.Fatalf("name-like is a case-insensitive substring match: %v", got)
		}
		if got := names("/api/v1/data?name-like=%25"); len(got) != 0 {
			t.Fatalf("name-like treats %% literally: %v", got)
		}
	})

	t.Run("delete", func(t *testing.T) {
		h.t = t
		h.set("/conf/deleteme", "password", "p1")
		h.set("/conf/deleteme", "password", "p2")
		r := h.do(h.client, "DELETE", "/api/v1/data?name=/conf/DeleteMe", nil)
		if r.status != 204 || len(r.body) != 0 {
			t.Fatalf("delete: %d %q, want 204 with an empty body", r.status, r.body)
		}
		h.expect(h.do(h.client, "GET", "/api/v1/data?name=/conf/deleteme", nil), 404, errBody(msgInvalidAccess))
		h.expect(h.do(h.client, "DELETE", "/api/v1/data?name=/conf/deleteme", nil), 404, errBody(msgInvalidAccess))
		h.expect(h.do(h.client, "DELETE", "/api/v1/data", nil), 400, fmtErr(msgMissingQueryParam, "name"))
	})

	t.Run("interpolate", func(t *testing.T) {
		h.t = t
		h.set("/c/svc/one", "json", map[string]any{"user": "u1", "pw": "p1"})
		h.set("/c/svc/two", "json", map[string]any{"uri": "https://x"})
		body := `{"p-mysql":[{"name":"db","credentials":{"credhub-ref":"((/c/svc/one))","dropped":true},"label":"p-mysql"}],
		  "p-other":[{"credentials":{"credhub_ref":"/c/svc/two"}},{"name":"plain","credentials":{"k":"v"}},{"name":"none"}],
		  "scalar":"kept","num":12345678901234567890}`
		r := h.do(h.client, "POST", "/api/v1/interpolate", body)
		want := `{"p-mysql":[{"name":"db","credentials":{"user":"u1","pw":"p1"},"label":"p-mysql"}],
		  "p-other":[{"credentials":{"uri":"https://x"}},{"name":"plain","credentials":{"k":"v"}},{"name":"none"}],
		  "scalar":"kept","num":12345678901234567890}`
		h.expect(r, 200, want)
		if !bytes.Contains(r.body, []byte("12345678901234567890")) {
			t.Fatalf("large numbers must be echoed exactly: %s", r.body)
		}
		h.expect(h.do(h.client, "POST", "/api/v1/interpolate", `{"s":[{"credentials":{"credhub-ref":"((/c/svc/missing))"}}]}`), 404, errBody(msgInvalidAccess))
		h.expect(h.do(h.client, "POST", "/api/v1/interpolate", `{"s":[{"credentials":{"credhub-ref":"c/svc/one"}}]}`), 404, errBody(msgInvalidAccess))
		h.expect(h.do(h.client, "POST", "/api/v1/interpolate", `{"s":[{"credentials":{"credhub-ref":"/conf/value"}}]}`), 400, fmtErr(msgInterpolationType, "/conf/value"))
		h.expect(h.do(h.client, "POST", "/api/v1/interpolate", `{"s":`), 400, errBody(msgBadRequest))
	})

	t.Run("generate password", func(t *testing.T) {
		h.t = t
		post := func(body any) response { return h.do(h.client, "POST", "/api/v1/data", body) }
		idOf := func(r response) string {
			t.Helper()
			h.expect(r, 200, "")
			return r.json(t)["id"].(string)
		}
		r := post(map[string]any{"name": "/gen/pw", "type": "password", "parameters": map[string]any{"length": 40, "exclude_number": true}})
		first := idOf(r)
		pw := r.json(t)["value"].(string)
		if len(pw) != 40 || strings.ContainsAny(pw, "0123456789") {
			t.Fatalf("generated password %q ignores its parameters", pw)
		}
		same := map[string]any{"name": "/gen/pw", "type": "password", "parameters": map[string]any{"length": 40, "exclude_number": true}}
		if id := idOf(post(same)); id != first {
			t.Fatalf("converge with the same parameters must not regenerate")
		}
		if id := idOf(post(map[string]any{"name": "/gen/pw", "type": "password", "overwrite": false, "parameters": map[string]any{"length": 12}})); id != first {
			t.Fatalf("overwrite:false must keep the existing version")
		}
		if id := idOf(post(map[string]any{"name": "/gen/pw", "type": "password", "mode": "no-overwrite"})); id != first {
			t.Fatalf("mode no-overwrite must keep the existing version")
		}
		second := idOf(post(map[string]any{"name": "/gen/pw", "type": "password", "parameters": map[string]any{"length": 20}}))
		if second == first {
			t.Fatalf("converge with different parameters must regenerate")
		}
		third := idOf(post(map[string]any{"name": "/gen/pw", "type": "password", "overwrite": true, "parameters": map[string]any{"length": 20}}))
		fourth := idOf(post(map[string]any{"name": "/gen/pw", "type": "password", "mode": "overwrite", "parameters": map[string]any{"length": 20}}))
		if third == second || fourth == third {
			t.Fatalf("overwrite must always write a new version")
		}
		fifth := idOf(post(map[string]any{"name": "/gen/pw", "regenerate": true}))
		if fifth == fourth {
			t.Fatalf("regenerate must write a new version")
		}
		sixth := idOf(h.do(h.client, "POST", "/api/v1/regenerate", map[string]any{"name": "/gen/pw"}))
		if sixth == fifth {
			t.Fatalf("POST /api/v1/regenerate must write a new version")
		}
		h.expect(h.do(h.client, "POST", "/api/v1/regenerate", map[string]any{"name": "/gen/absent"}), 404, errBody(msgInvalidAccess))
		r = h.do(h.client, "GET", "/api/v1/data?name=/gen/pw", nil)
		var all struct{ Data []map[string]any }
		json.Unmarshal(r.body, &all) //nolint:errcheck // checked by length
		if len(all.Data) != 6 {
			t.Fatalf("want 6 versions, got %d", len(all.Data))
		}
		h.expect(post(map[string]any{"name": "/gen/pw", "type": "password", "overwrite": true, "mode": "overwrite"}), 400, errBody(msgOverwriteAndMode))
		h.expect(post(map[string]any{"name": "/gen/pw", "type": "password", "mode": "sometimes"}), 400, errBody(msgInvalidMode))
		h.expect(post(map[string]any{"name": "/gen/pw", "type": "password", "parameters": map[string]any{"mode": "overwrite"}}), 400, fmtErr(msgInvalidJSONKey, "mode"))
		h.expect(post(map[string]any{"name": "/gen/pw", "type": "password", "bogus": 1}), 400, fmtErr(msgInvalidJSONKey, "bogus"))
		h.expect(post(map[string]any{"name": "/gen/v", "type": "value"}), 400, errBody(msgCannotGenerateType))
		h.expect(post(map[string]any{"name": "/gen/v", "type": "json"}), 400, errBody(msgCannotGenerateType))
		h.expect(post(map[string]any{"name": "/gen/v", "type": "blob"}), 400, errBody(msgInvalidTypeGenerate))
		h.expect(post(map[string]any{"name": "/conf/value", "type": "password"}), 400, errBody(msgTypeMismatch))
		h.expect(post(map[string]any{"name": "/gen/x", "type": "password", "parameters": map[string]any{"exclude_upper": true, "exclude_lower": true, "exclude_number": true}}), 400, errBody(msgExcludesAllCharsets))
		h.expect(post(map[string]any{"name": "/conf/password", "regenerate": true}), 400, errBody(msgCannotRegenPassword))

		r = post(map[string]any{"name": "/gen/user", "type": "user", "value": map[string]any{"username": "bob"}})
		h.expect(r, 200, "")
		if uv := r.json(t)["value"].(map[string]any); uv["username"] != "bob" || len(uv["password"].(string)) != 30 {
			t.Fatalf("generated user %v", uv)
		}
		r = post(map[string]any{"name": "/gen/rsa", "type": "rsa"})
		h.expect(r, 200, "")
		if !strings.Contains(r.json(t)["value"].(map[string]any)["private_key"].(string), "RSA PRIVATE KEY") {
			t.Fatalf("generated rsa %s", r.body)
		}
		r = post(map[string]any{"name": "/gen/ca", "type": "certificate", "parameters": map[string]any{"common_name": "sim CA", "is_ca": true}})
		h.expect(r, 200, "")
		r = post(map[string]any{"name": "/gen/leaf", "type": "certificate", "parameters": map[string]any{"common_name": "leaf", "ca": "/gen/ca", "alternative_names": []string{"127.0.0.1", "x.example"}}})
		h.expect(r, 200, "")
		leaf := r.json(t)
		block, _ := pem.Decode([]byte(leaf["value"].(map[string]any)["certificate"].(string)))
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil || c.Subject.CommonName != "leaf" || leaf["generated"] != true || leaf["self_signed"] != false {
			t.Fatalf("generated leaf certificate: %v %v", err, leaf)
		}
	})

	t.Run("values are encrypted at rest", func(t *testing.T) {
		h.t = t
		db := h.store.DB()
		var canaries int
		var canaryID string
		if err := db.QueryRow("SELECT COUNT(*) FROM encryption_key_canary").Scan(&canaries); err != nil || canaries != 1 {
			t.Fatalf("want exactly one canary, got %d (%v)", canaries, err)
		}
		if err := db.QueryRow("SELECT uuid FROM encryption_key_canary").Scan(&canaryID); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Query("SELECT encryption_key_uuid, encrypted_value, nonce FROM encrypted_value")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var key string
			var ct, nonce []byte
			if err := rows.Scan(&key, &ct, &nonce); err != nil {
				t.Fatal(err)
			}
			n++
			if key != canaryID || len(nonce) != 12 {
				t.Fatalf("encrypted_value row: key %s (canary %s), nonce %d bytes", key, canaryID, len(nonce))
			}
			for _, secret := range []string{jsonSecret, valueSecret, passwordSecret, userSecret, "BEGIN", "PRIVATE"} {
				if bytes.Contains(ct, []byte(secret)) {
					t.Fatalf("encrypted_value holds plaintext %q", secret)
				}
			}
		}
		if n < 10 {
			t.Fatalf("only %d encrypted_value rows", n)
		}
		var history int
		if err := db.QueryRow("SELECT COUNT(*) FROM flyway_schema_history WHERE success = TRUE").Scan(&history); err != nil || history != 3 {
			t.Fatalf("flyway_schema_history: %d successful rows (%v), want 3", history, err)
		}
		for _, table := range []string{"credential", "credential_version", "encrypted_value", "password_credential", "user_credential",
			"certificate_credential", "ssh_credential", "rsa_credential", "permission"} {
			if _, err := db.Exec("SELECT COUNT(*) FROM " + table); err != nil {
				t.Fatalf("table %s: %v", table, err)
			}
		}
		var typeRows int
		if err := db.QueryRow("SELECT COUNT(*) FROM credential_version WHERE type = 'cert'").Scan(&typeRows); err != nil || typeRows == 0 {
			t.Fatalf("credential_version rows of type cert: %d (%v)", typeRows, err)
		}
	})
}

func sshKeyPair(t *testing.T) (string, string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ssh.NewPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalECPrivateKey(k)
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + " test@sim",
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}
