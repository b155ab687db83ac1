package api

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Conformance tests of the behaviours where a simulator most easily
// departs from CredHub 2.15 (status and body): one subtest per behaviour,
// numbered "row N" as the README's "How far it matches CredHub" cites it.

func TestFidelityRegenerate(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	post := func(path string, body any) response { return h.do(h.client, "POST", path, body) }

	t.Run("row 1: regenerate of an rsa credential", func(t *testing.T) {
		h.t = t
		first := post("/api/v1/data", map[string]any{"name": "/regen/rsa", "type": "rsa"})
		h.expect(first, 200, "")
		for _, r := range []response{
			post("/api/v1/regenerate", map[string]any{"name": "/regen/rsa"}),
			post("/api/v1/data", map[string]any{"name": "/regen/rsa", "regenerate": true}),
		} {
			h.expect(r, 200, "")
			v := r.json(t)["value"].(map[string]any)
			if v["private_key"] == first.json(t)["value"].(map[string]any)["private_key"] || !strings.Contains(v["public_key"].(string), "PUBLIC KEY") {
				t.Fatalf("regenerated rsa has no new key: %s", r.body)
			}
		}
	})

	t.Run("row 2: regenerate keeps key usages", func(t *testing.T) {
		h.t = t
		h.expect(post("/api/v1/data", map[string]any{"name": "/regen/ca", "type": "certificate", "parameters": map[string]any{"common_name": "ca", "is_ca": true}}), 200, "")
		h.expect(post("/api/v1/data", map[string]any{"name": "/regen/leaf", "type": "certificate", "parameters": map[string]any{
			"common_name": "leaf", "ca": "/regen/ca",
			"key_usage": []string{"digital_signature", "key_encipherment"}, "extended_key_usage": []string{"server_auth", "client_auth"}}}), 200, "")
		for _, r := range []response{
			post("/api/v1/regenerate", map[string]any{"name": "/regen/leaf"}),
			post("/api/v1/data", map[string]any{"name": "/regen/leaf", "regenerate": true}),
		} {
			h.expect(r, 200, "")
			c := certOf(t, r)
			if c.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment {
				t.Fatalf("regenerated key usage %v", c.KeyUsage)
			}
			if len(c.ExtKeyUsage) != 2 || c.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth || c.ExtKeyUsage[1] != x509.ExtKeyUsageClientAuth {
				t.Fatalf("regenerated extended key usage %v", c.ExtKeyUsage)
			}
		}
	})

	t.Run("row 3: regenerate takes the request's metadata or none", func(t *testing.T) {
		h.t = t
		h.expect(post("/api/v1/data", map[string]any{"name": "/regen/pw", "type": "password", "metadata": map[string]any{"v": 1}}), 200, "")
		r := post("/api/v1/regenerate", map[string]any{"name": "/regen/pw", "metadata": map[string]any{"v": 2}})
		h.expect(r, 200, "")
		if m := r.json(t)["metadata"]; m == nil || m.(map[string]any)["v"] != float64(2) {
			t.Fatalf("metadata after regenerate with metadata: %v", m)
		}
		r = post("/api/v1/regenerate", map[string]any{"name": "/regen/pw"})
		h.expect(r, 200, "")
		if m := r.json(t)["metadata"]; m != nil {
			t.Fatalf("metadata after regenerate without metadata: %v, want null", m)
		}
		r = post("/api/v1/data", map[string]any{"name": "/regen/pw", "regenerate": true, "metadata": map[string]any{"v": 3}})
		h.expect(r, 200, "")
		if m := r.json(t)["metadata"]; m == nil || m.(map[string]any)["v"] != float64(3) {
			t.Fatalf("metadata after regenerate: true with metadata: %v", m)
		}
	})

	t.Run("row 9: certificate generate and regenerate carry duration and key length", func(t *testing.T) {
		h.t = t
		for _, r := range []response{
			post("/api/v1/data", map[string]any{"name": "/regen/dur", "type": "certificate", "parameters": map[string]any{"common_name": "d", "self_sign": true, "duration": 30, "key_length": 3072}}),
			post("/api/v1/regenerate", map[string]any{"name": "/regen/dur"}),
			post("/api/v1/data", map[string]any{"name": "/regen/dur", "regenerate": true}),
		} {
			h.expect(r, 200, "")
			v := r.json(t)
			if v["duration_overridden"] != false || v["duration_used"] != float64(30) || v["key_length"] != float64(3072) {
				t.Fatalf("certificate generate view lacks duration_overridden/duration_used/key_length: %s", r.body)
			}
		}
		// A plain get does not carry them.
		r := h.do(h.client, "GET", "/api/v1/data?name=/regen/dur&current=true", nil)
		if strings.Contains(string(r.body), "duration_used") {
			t.Fatalf("get carries generate-only fields: %s", r.body)
		}
	})

	t.Run("row 12: regenerate of a user that was set", func(t *testing.T) {
		h.t = t
		h.set("/regen/user", "user", map[string]any{"username": "u", "password": "p"})
		h.expect(post("/api/v1/regenerate", map[string]any{"name": "/regen/user"}), 400, errBody(msgCannotRegenUser))
		h.expect(post("/api/v1/data", map[string]any{"name": "/regen/user", "regenerate": true}), 400, errBody(msgCannotRegenUser))
	})

	t.Run("row 13: regenerate: true accepts type", func(t *testing.T) {
		h.t = t
		before := h.do(h.client, "GET", "/api/v1/data?name=/regen/pw&current=true", nil).json(t)["data"].([]any)[0].(map[string]any)
		r := post("/api/v1/data", map[string]any{"name": "/regen/pw", "type": "password", "regenerate": true})
		h.expect(r, 200, "")
		v := r.json(t)
		if v["type"] != "password" || v["name"] != "/regen/pw" || v["id"] == before["id"] || v["value"] == before["value"] || v["value"] == "" {
			t.Fatalf("regenerate with type: %s, want a new password version of /regen/pw", r.body)
		}
	})
}

func certOf(t *testing.T, r response) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode([]byte(r.json(t)["value"].(map[string]any)["certificate"].(string)))
	if block == nil {
		t.Fatalf("no certificate PEM in %s", r.body)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFidelitySetAndGet(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	put := func(body any) response { return h.do(h.client, "PUT", "/api/v1/data", body) }
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(h.certDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	t.Run("row 4: missing, empty or unknown type on set", func(t *testing.T) {
		h.t = t
		h.expect(put(map[string]any{"name": "/f/x", "value": "v"}), 422, errBody(msgInvalidTypeSet))
		h.expect(put(map[string]any{"name": "/f/x", "type": "", "value": "v"}), 422, errBody(msgInvalidTypeSet))
		h.expect(put(map[string]any{"name": "/f/x", "type": "nope", "value": "v"}), 422, errBody(msgInvalidTypeSet))
	})

	t.Run("row 5: certificates that CredHub refuses", func(t *testing.T) {
		h.t = t
		caPEM, caKey := read("ca.crt"), read("ca.key")
		h.expect(put(map[string]any{"name": "/f/ca", "type": "certificate", "value": map[string]any{"certificate": caPEM, "private_key": caKey}}), 200, "")
		client, serverKey, clientKey := read("client.crt"), read("server.key"), read("client.key")
		other := read(filepath.Join("other", "ca.crt"))
		h.expect(put(map[string]any{"name": "/f/c", "type": "certificate", "value": map[string]any{"certificate": client, "private_key": serverKey}}),
			400, errBody(msgMismatchedCertAndKey))
		h.expect(put(map[string]any{"name": "/f/c", "type": "certificate", "value": map[string]any{"certificate": client, "private_key": "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n"}}),
			400, errBody(msgMalformedPrivateKey))
		h.expect(put(map[string]any{"name": "/f/c", "type": "certificate", "value": map[string]any{"certificate": client, "ca": other}}),
			400, errBody(msgNotSignedByCA))
		otherKey := read(filepath.Join("other", "ca.key"))
		h.expect(put(map[string]any{"name": "/f/other", "type": "certificate", "value": map[string]any{"certificate": other, "private_key": otherKey}}), 200, "")
		h.expect(put(map[string]any{"name": "/f/c", "type": "certificate", "value": map[string]any{"certificate": client, "ca_name": "/f/other"}}),
			400, errBody(msgNotSignedByCAName))
		// The matching pair, signed by the named CA, is stored.
		h.expect(put(map[string]any{"name": "/f/c", "type": "certificate", "value": map[string]any{"certificate": client, "private_key": clientKey, "ca_name": "/f/ca"}}), 200, "")
		h.expect(put(map[string]any{"name": "/f/c", "type": "certificate", "value": map[string]any{"certificate": client, "ca": caPEM}}), 200, "")
	})

	t.Run("row 6: invalid alternative names", func(t *testing.T) {
		h.t = t
		gen := func(names ...string) response {
			return h.do(h.client, "POST", "/api/v1/data", map[string]any{"name": "/f/alt", "type": "certificate",
				"parameters": map[string]any{"common_name": "alt", "self_sign": true, "alternative_names": names}})
		}
		for _, bad := range []string{"a b!", "-lead.example", "ex ample.com", "a..b"} {
			h.expect(gen(bad), 400, errBody(msgInvalidAlternateName))
		}
		h.expect(gen("*.example.com", "10.0.0.1", "::1", "my_host.example", "localhost"), 200, "")
	})

	t.Run("row 7: metadata over 7000 characters", func(t *testing.T) {
		h.t = t
		big := map[string]any{"k": strings.Repeat("m", 7000)}
		h.expect(put(map[string]any{"name": "/f/meta", "type": "value", "value": "v", "metadata": big}), 400, errBody(msgMetadataTooLong))
		h.expect(h.do(h.client, "POST", "/api/v1/data", map[string]any{"name": "/f/meta", "type": "password", "metadata": big}), 400, errBody(msgMetadataTooLong))
		fits := map[string]any{"k": strings.Repeat("m", 7000-len(`{"k":""}`))}
		h.expect(put(map[string]any{"name": "/f/meta", "type": "value", "value": "v", "metadata": fits}), 200, "")
	})

	t.Run("row 10: find with expires-within-days gives expiry_date", func(t *testing.T) {
		h.t = t
		r := h.do(h.client, "GET", "/api/v1/data?path=/f&expires-within-days=3650", nil)
		h.expect(r, 200, "")
		var out struct{ Credentials []map[string]any }
		if err := json.Unmarshal(r.body, &out); err != nil || len(out.Credentials) == 0 {
			t.Fatalf("find: %v %s", err, r.body)
		}
		for _, c := range out.Credentials {
			if s, ok := c["expiry_date"].(string); !ok || !timeRE.MatchString(s) {
				t.Fatalf("find result without expiry_date: %s", r.body)
			}
		}
		// Without expires-within-days, only name and version_created_at.
		r = h.do(h.client, "GET", "/api/v1/data?path=/f", nil)
		if strings.Contains(string(r.body), "expiry_date") {
			t.Fatalf("plain find carries expiry_date: %s", r.body)
		}
	})

	t.Run("row 11: versions=0", func(t *testing.T) {
		h.t = t
		h.set("/f/v0", "value", "v")
		h.expect(h.do(h.client, "GET", "/api/v1/data?name=/f/v0&versions=0", nil), 404, errBody(msgInvalidAccess))
		r := h.do(h.client, "GET", "/api/v1/data?name=/f/v0&versions=1", nil)
		h.expect(r, 200, "")
		if d := r.json(t)["data"].([]any); len(d) != 1 || d[0].(map[string]any)["value"] != "v" {
			t.Fatalf("versions=1: %s", r.body)
		}
	})
}

// Row 8: CredHub stores values over 64 KiB where its column holds them
// (PostgreSQL bytea); the limit is MySQL's BLOB column.
func TestFidelityLargeValueSQLite(t *testing.T) { largeValue(t, "sqlite", 200) }
func TestFidelityLargeValuePostgres(t *testing.T) {
	largeValue(t, "postgres", 200)
}
func TestFidelityLargeValueMariaDB(t *testing.T) { largeValue(t, "mariadb", 413) }

func largeValue(t *testing.T, kind string, want int) {
	h := newHarness(t, dbURL(t, kind), nil)
	v := strings.Repeat("x", 100*1024)
	r := h.do(h.client, "PUT", "/api/v1/data", map[string]any{"name": "/big/v", "type": "value", "value": v})
	if want == 413 {
		h.expect(r, 413, errBody(msgExceedsMaximumSize))
		return
	}
	h.expect(r, 200, "")
	r = h.do(h.client, "GET", "/api/v1/data?name=/big/v&current=true", nil)
	h.expect(r, 200, "")
	if !strings.Contains(string(r.body), v) {
		t.Fatalf("large value not returned whole")
	}
}

// signedToken signs arbitrary claims with the server's token key, so that
// token times can be set without waiting.
func signedToken(t *testing.T, s *Server, claims map[string]any) string {
	t.Helper()
	tok, err := s.tokens.Sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestFidelityBearer(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	claims := func(expOffset time.Duration, scopes ...string) map[string]any {
		now := time.Now()
		return map[string]any{"client_id": "perf", "grant_type": "client_credentials", "scope": scopes,
			"iat": now.Add(-time.Hour).Unix(), "exp": now.Add(expOffset).Unix(), "iss": h.srv.issuer()}
	}
	both := []string{"credhub.read", "credhub.write"}

	t.Run("row 14: 60 s clock skew on expiry", func(t *testing.T) {
		h.t = t
		h.expect(h.do(h.anon, "GET", "/version", nil, bearer(signedToken(t, h.srv, claims(-30*time.Second, both...)))...), 200, `{"version":"`+Version+`"}`)
		h.expect(h.do(h.anon, "GET", "/version", nil, bearer(signedToken(t, h.srv, claims(-90*time.Second, both...)))...), 401,
			`{"error":"access_token_expired","error_description":"Access token expired"}`)
	})

	t.Run("row 15: HTTP Basic is no authentication", func(t *testing.T) {
		h.t = t
		h.expect(h.do(h.anon, "GET", "/version", nil, "Authorization", "Basic cGVyZjpwZXJmLXNlY3JldA=="), 401,
			`{"error":"access_denied","error_description":"Full authentication is required to access this resource"}`)
	})

	t.Run("row 16: malformed and badly signed tokens", func(t *testing.T) {
		h.t = t
		h.expect(h.do(h.anon, "GET", "/version", nil, bearer("not.a.jwt")...), 401,
			`{"error":"invalid_token","error_description":"An error occurred while attempting to decode the Jwt: Malformed token"}`)
		good := signedToken(t, h.srv, claims(time.Hour, both...))
		parts := strings.Split(good, ".")
		forged := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString([]byte("forged signature"))
		h.expect(h.do(h.anon, "GET", "/version", nil, bearer(forged)...), 401,
			`{"error":"invalid_token","error_description":"An error occurred while attempting to decode the Jwt: Signed JWT rejected: Invalid signature"}`)
		c := claims(time.Hour, both...)
		c["iss"] = "https://elsewhere/oauth/token"
		h.expect(h.do(h.anon, "GET", "/version", nil, bearer(signedToken(t, h.srv, c))...), 401,
			`{"error":"invalid_token","error_description":"An error occurred while attempting to decode the Jwt: The iss claim is not valid"}`)
	})

	t.Run("row 17: a token without credhub.write", func(t *testing.T) {
		h.t = t
		r := h.do(h.anon, "GET", "/version", nil, bearer(signedToken(t, h.srv, claims(time.Hour, "credhub.read")))...)
		if r.status != 403 || len(r.body) != 0 {
			t.Fatalf("insufficient scope: %d %q, want 403 with an empty body", r.status, r.body)
		}
		if got := r.header.Get("WWW-Authenticate"); !strings.Contains(got, `error="insufficient_scope"`) {
			t.Fatalf("WWW-Authenticate %q", got)
		}
	})
}

// Row 18: CredHub without OAuth2 (no -uaa-client): mutual TLS only.
func TestFidelityMTLSOnly(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), func(c *Config) { c.UAAClients = nil })
	for _, hdr := range [][]string{nil, {"Authorization", "Bearer x.y.z"}, {"Authorization", "Basic eDp5"}} {
		r := h.do(h.anon, "GET", "/api/v1/data?name=/x", nil, hdr...)
		if r.status != 403 || len(r.body) != 0 {
			t.Fatalf("no client certificate (%v): %d %q, want 403 with an empty body", hdr, r.status, r.body)
		}
	}
	h.expect(h.do(h.clientWith("badou"), "GET", "/version", nil), 401, errBody(msgInvalidMTLSIdentity))
	h.expect(h.do(h.client, "GET", "/version", nil), 200, `{"version":"`+Version+`"}`)
	// /info needs no identity, as in CredHub.
	h.expect(h.do(h.anon, "GET", "/info", nil), 200, `{"auth-server":{"url":"`+h.url+`"},"app":{"name":"CredHub"}}`)
}

// Row 20: POST /api/v1/regenerate is not synchronised in CredHub: it runs
// while a set holds the write lock.
func TestFidelityRegenerateNotSynchronised(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	h.expect(h.do(h.client, "POST", "/api/v1/data", map[string]any{"name": "/sync/pw", "type": "password"}), 200, "")
	h.srv.writeMu.Lock()
	done := make(chan response, 1)
	var once sync.Once
	unlock := func() { once.Do(h.srv.writeMu.Unlock) }
	defer unlock()
	go func() {
		done <- h.do(h.client, "POST", "/api/v1/regenerate", map[string]any{"name": "/sync/pw"})
	}()
	select {
	case r := <-done:
		h.expect(r, 200, "")
		if v := r.json(t); v["name"] != "/sync/pw" || v["type"] != "password" || v["value"] == "" {
			t.Fatalf("regenerate during a held write lock: %s", r.body)
		}
	case <-time.After(20 * time.Second):
		unlock()
		t.Fatal("POST /api/v1/regenerate waited for the write lock")
	}
}

// Row 19: HTTP/1.1 only unless HTTP2 is set.
func TestFidelityHTTP11ByDefault(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	c := h.clientWith("client")
	c.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	resp, err := c.Get(h.url + "/version")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.ProtoMajor != 1 || string(body) != `{"version":"`+Version+`"}` {
		t.Fatalf("default server: %d over %s: %s, want HTTP/1.1 and the version", resp.StatusCode, resp.Proto, body)
	}
}

// The schema's column types are those CredHub's Flyway migrations leave.
func TestFidelitySchemaSQLite(t *testing.T)   { schemaTypes(t, "sqlite") }
func TestFidelitySchemaPostgres(t *testing.T) { schemaTypes(t, "postgres") }
func TestFidelitySchemaMariaDB(t *testing.T)  { schemaTypes(t, "mariadb") }

type column struct {
	typ      string // lowercased, with length
	nullable bool
}

func schemaTypes(t *testing.T, kind string) {
	h := newHarness(t, dbURL(t, kind), nil)
	db := h.store.DB()
	cols := map[string]column{}
	var q string
	switch kind {
	case "postgres":
		q = `SELECT table_name || '.' || column_name, CASE WHEN character_maximum_length IS NULL THEN data_type
			ELSE data_type || '(' || character_maximum_length || ')' END, is_nullable = 'YES'
			FROM information_schema.columns WHERE table_schema = current_schema()`
	case "mariadb":
		q = `SELECT CONCAT(table_name, '.', column_name), column_type, is_nullable = 'YES'
			FROM information_schema.columns WHERE table_schema = DATABASE()`
	default:
		q = `SELECT m.name || '.' || p.name, p.type, p."notnull" = 0 FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'`
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, typ string
		var nullable bool
		if err := rows.Scan(&name, &typ, &nullable); err != nil {
			t.Fatal(err)
		}
		cols[strings.ToLower(name)] = column{strings.ToLower(typ), nullable}
	}
	rows.Close()
	pem := map[string]string{"postgres": "character varying(7000)", "mariadb": "text", "sqlite": "varchar(7000)"}[kind]
	varchar := map[string]string{"postgres": "character varying(N)", "mariadb": "varchar(N)", "sqlite": "varchar(N)"}[kind]
	blob := map[string]string{"postgres": "bytea", "mariadb": "blob", "sqlite": "blob"}[kind]
	want := map[string]string{
		"certificate_credential.ca": pem, "certificate_credential.certificate": pem, "certificate_credential.trusted_ca": pem,
		"ssh_credential.public_key": pem, "rsa_credential.public_key": pem,
		"credential.checksum":             strings.Replace(varchar, "N", "100", 1),
		"user_credential.salt":            strings.Replace(varchar, "N", "16", 1),
		"encrypted_value.encrypted_value": blob, "encrypted_value.nonce": blob, "encryption_key_canary.salt": blob,
	}
	for name, typ := range want {
		if got := cols[name].typ; got != typ {
			t.Errorf("%s is %q, want %q", name, got, typ)
		}
	}
	for _, name := range []string{"certificate_credential.certificate_authority", "certificate_credential.self_signed"} {
		if c, ok := cols[name]; !ok || !c.nullable {
			t.Errorf("%s must be nullable, as in CredHub (%+v)", name, c)
		}
	}
	// UNIQUE (path, actor) on permission exists on MySQL/MariaDB only.
	var unique int
	switch kind {
	case "postgres":
		err = db.QueryRow(`SELECT COUNT(*) FROM information_schema.table_constraints WHERE table_name = 'permission' AND constraint_type = 'UNIQUE'`).Scan(&unique)
	case "mariadb":
		err = db.QueryRow(`SELECT COUNT(*) FROM information_schema.table_constraints WHERE table_schema = DATABASE() AND table_name = 'permission' AND constraint_type = 'UNIQUE'`).Scan(&unique)
	default:
		err = db.QueryRow(`SELECT COUNT(*) FROM pragma_index_list('permission') WHERE "unique" = 1 AND origin = 'u'`).Scan(&unique)
	}
	if err != nil {
		t.Fatal(err)
	}
	if wantUnique := map[string]int{"mariadb": 1}[kind]; unique != wantUnique {
		t.Errorf("permission has %d UNIQUE constraints, want %d", unique, wantUnique)
	}
	// A user credential's salt fits CredHub's column: $6$ and 8 characters.
	h.set("/schema/user", "user", map[string]any{"username": "u", "password": "p"})
	var salt string
	if err := db.QueryRow("SELECT salt FROM user_credential").Scan(&salt); err != nil || len(salt) != 11 || !strings.HasPrefix(salt, "$6$") {
		t.Errorf("salt %q (%v), want $6$ and 8 characters", salt, err)
	}
	// A certificate over 7000 characters is refused as CredHub does.
	long := "-----BEGIN CERTIFICATE-----\n" + strings.Repeat("A", 7000) + "\n-----END CERTIFICATE-----\n"
	h.expect(h.do(h.client, "PUT", "/api/v1/data", map[string]any{"name": "/schema/long", "type": "certificate", "value": map[string]any{"certificate": long}}),
		400, errBody(msgCertificateTooLong))
}

// /api/v1/certificates: list, by name, versions and regenerate, the
// endpoints credhub export and the CLI's certificate commands use.
func TestFidelityCertificatesEndpoints(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	post := func(path string, body any) response { return h.do(h.client, "POST", path, body) }
	h.expect(post("/api/v1/data", map[string]any{"name": "/certs/ca", "type": "certificate", "parameters": map[string]any{"common_name": "ca", "is_ca": true}}), 200, "")
	h.expect(post("/api/v1/data", map[string]any{"name": "/certs/leaf", "type": "certificate", "parameters": map[string]any{"common_name": "leaf", "ca": "/certs/ca"}}), 200, "")
	h.set("/certs/value", "value", "v")
	type list struct {
		Certificates []struct {
			Name     string           `json:"name"`
			ID       string           `json:"id"`
			SignedBy string           `json:"signed_by"`
			Signs    []string         `json:"signs"`
			Versions []map[string]any `json:"versions"`
		} `json:"certificates"`
	}
	get := func(path string) list {
		t.Helper()
		r := h.do(h.client, "GET", path, nil)
		h.expect(r, 200, "")
		var l list
		if err := json.Unmarshal(r.body, &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	all := get("/api/v1/certificates")
	if len(all.Certificates) != 2 {
		t.Fatalf("list: %+v", all)
	}
	ca, leaf := all.Certificates[0], all.Certificates[1]
	if ca.Name != "/certs/ca" || ca.SignedBy != "/certs/ca" || len(ca.Signs) != 1 || ca.Signs[0] != "/certs/leaf" ||
		leaf.SignedBy != "/certs/ca" || len(leaf.Signs) != 0 || !uuidRE.MatchString(leaf.ID) {
		t.Fatalf("list: %+v", all)
	}
	v := leaf.Versions[0]
	if !uuidRE.MatchString(v["id"].(string)) || !timeRE.MatchString(v["expiry_date"].(string)) || v["transitional"] != false ||
		v["certificate_authority"] != false || v["self_signed"] != false || v["generated"] != true {
		t.Fatalf("version view %v", v)
	}
	if one := get("/api/v1/certificates?name=certs/leaf"); len(one.Certificates) != 1 || one.Certificates[0].ID != leaf.ID {
		t.Fatalf("by name: %+v", one)
	}
	h.expect(h.do(h.client, "GET", "/api/v1/certificates?name=/certs/absent", nil), 404, errBody(msgInvalidAccess))
	h.expect(h.do(h.client, "GET", "/api/v1/certificates?name=/certs/value", nil), 404, errBody(msgInvalidAccess))

	r := post("/api/v1/certificates/"+leaf.ID+"/regenerate", map[string]any{})
	h.expect(r, 200, "")
	if reg := r.json(t); reg["name"] != "/certs/leaf" || reg["id"] == v["id"] || reg["duration_used"] != float64(365) {
		t.Fatalf("regenerate by id: %s", r.body)
	}
	r = h.do(h.client, "GET", "/api/v1/certificates/"+leaf.ID+"/versions", nil)
	h.expect(r, 200, "")
	var versions []map[string]any
	if err := json.Unmarshal(r.body, &versions); err != nil || len(versions) != 2 || versions[1]["id"] != v["id"] {
		t.Fatalf("versions: %v %s", err, r.body)
	}
	r = h.do(h.client, "GET", "/api/v1/certificates/"+leaf.ID+"/versions?current=true", nil)
	h.expect(r, 200, "")
	if err := json.Unmarshal(r.body, &versions); err != nil || len(versions) != 1 {
		t.Fatalf("current version: %v %s", err, r.body)
	}
	h.expect(post("/api/v1/certificates/"+leaf.ID+"/regenerate", map[string]any{"bogus": 1}), 400, fmtErr(msgInvalidJSONKey, "bogus"))
	h.expect(h.do(h.client, "GET", "/api/v1/certificates/not-a-uuid/versions", nil), 404, errBody(msgInvalidAccess))
	h.expect(h.do(h.client, "GET", "/api/v1/certificates/00000000-0000-4000-8000-000000000000/versions", nil), 404, errBody(msgInvalidAccess))
	r = h.do(h.client, "DELETE", "/api/v1/certificates", nil)
	if r.status != 404 || len(r.body) != 0 {
		t.Fatalf("DELETE /api/v1/certificates: %d %q", r.status, r.body)
	}
}

// What the README lists as not served answers like any unknown path: 404
// with an empty body.
func TestFidelityNotServed(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/v1/permissions?credential_name=/x"},
		{"POST", "/api/v1/permissions"},
		{"DELETE", "/api/v1/permissions?credential_name=/x&actor=a"},
		{"PUT", "/api/v1/certificates/00000000-0000-4000-8000-000000000000/versions"},
		{"GET", "/api/v1/certificates/00000000-0000-4000-8000-000000000000/update_transitional_version"},
		{"DELETE", "/api/v1/certificates/00000000-0000-4000-8000-000000000000/versions/a/b"},
	} {
		r := h.do(h.client, c.method, c.path, "{}")
		if r.status != 404 || len(r.body) != 0 {
			t.Errorf("%s %s: %d %q, want 404 with an empty body", c.method, c.path, r.status, r.body)
		}
	}
}
