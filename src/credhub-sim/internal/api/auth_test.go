package api

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

func TestMTLSIdentityRules(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	for _, tc := range []struct {
		client string
		status int
		body   string
	}{
		{"client", 200, ""},
		{"second", 200, ""},
		{"noeku", 401, errBody(msgMTLSNotClientAuth)},
		{"badou", 401, errBody(msgInvalidMTLSIdentity)},
		{"v1ou", 401, errBody(msgInvalidMTLSIdentity)},
		{"upperou", 401, errBody(msgInvalidMTLSIdentity)},
		{"noou", 401, errBody(msgInvalidMTLSIdentity)},
	} {
		t.Run(tc.client, func(t *testing.T) {
			h.t = t
			h.expect(h.do(h.clientWith(tc.client), "GET", "/version", nil), tc.status, tc.body)
			// The identity rule guards the API as well, not just /version.
			r := h.do(h.clientWith(tc.client), "GET", "/api/v1/data?name=/x", nil)
			if tc.status == 200 && r.status != 404 || tc.status != 200 && r.status != tc.status {
				t.Fatalf("GET data: %d %s", r.status, r.body)
			}
		})
	}
	t.Run("untrusted CA fails the handshake", func(t *testing.T) {
		other := filepath.Join(h.certDir, "other")
		c := tlsClient(t, other, "client", filepath.Join(h.certDir, "ca.crt"))
		resp, err := c.Get(h.url + "/version")
		if err == nil {
			resp.Body.Close()
			t.Fatalf("a client certificate from an untrusted CA got status %d", resp.StatusCode)
		}
	})
	t.Run("open endpoints need no identity", func(t *testing.T) {
		h.t = t
		h.expect(h.do(h.clientWith("noou"), "GET", "/info", nil), 200, "")
		h.expect(h.do(h.anon, "GET", "/health", nil), 200, "")
	})
}

// tokenFor does what the credhub CLI does: read auth-server.url from
// /info, then POST client_credentials to <url>/oauth/token.
func tokenFor(h *harness, id, secret string) (int, map[string]any) {
	h.t.Helper()
	info := h.do(h.anon, "GET", "/info", nil).json(h.t)
	authURL := info["auth-server"].(map[string]any)["url"].(string)
	form := url.Values{"grant_type": {"client_credentials"}, "response_type": {"token"}, "client_id": {id}, "client_secret": {secret}}
	resp, err := h.anon.Post(authURL+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, m
}

func bearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

func TestTokenEndpointAndBearerAuth(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	status, tok := tokenFor(h, "perf", "perf-secret")
	if status != 200 || tok["token_type"] != "bearer" || tok["scope"] != "credhub.read credhub.write" || tok["access_token"] == "" {
		t.Fatalf("token response %d %v", status, tok)
	}
	access := tok["access_token"].(string)

	t.Run("credhub CLI flow", func(t *testing.T) {
		h.t = t
		// Version discovery: no app.version in /info, so GET /version.
		if app := h.do(h.anon, "GET", "/info", nil).json(t)["app"].(map[string]any); app["version"] != nil {
			t.Fatalf("/info must not carry app.version: %v", app)
		}
		h.expect(h.do(h.anon, "GET", "/version", nil, bearer(access)...), 200, `{"version":"`+Version+`"}`)
		r := h.do(h.anon, "PUT", "/api/v1/data", map[string]any{"name": "/cli/secret", "type": "value", "value": "v"}, bearer(access)...)
		h.expect(r, 200, "")
		// credhub generate sends "overwrite": false by default.
		h.expect(h.do(h.anon, "POST", "/api/v1/data", map[string]any{"name": "/cli/pw", "type": "password", "overwrite": false, "parameters": map[string]any{}}, bearer(access)...), 200, "")
		h.expect(h.do(h.anon, "GET", "/api/v1/data?name=/cli/secret&current=true", nil, bearer(access)...), 200, "")
		h.expect(h.do(h.anon, "GET", "/api/v1/data?path=/cli", nil, bearer(access)...), 200, "")
		h.expect(h.do(h.anon, "DELETE", "/api/v1/data?name=/cli/secret", nil, bearer(access)...), 204, "")
		// 404 bodies are read as {"error"}.
		r = h.do(h.anon, "GET", "/api/v1/data?name=/cli/secret", nil, bearer(access)...)
		h.expect(r, 404, errBody(msgInvalidAccess))
	})

	t.Run("token endpoint errors", func(t *testing.T) {
		h.t = t
		if status, body := tokenFor(h, "perf", "wrong"); status != 401 || body["error"] != "unauthorized" {
			t.Fatalf("bad secret: %d %v", status, body)
		}
		form := url.Values{"grant_type": {"password"}, "client_id": {"perf"}, "client_secret": {"perf-secret"}}
		resp, err := h.anon.Post(h.url+"/oauth/token", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("password grant: %d, want 400 unsupported_grant_type", resp.StatusCode)
		}
		req, _ := http.NewRequest("POST", h.url+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("perf", "perf-secret")
		resp, err = h.anon.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("HTTP Basic client authentication: %d", resp.StatusCode)
		}
	})

	t.Run("bearer rejections", func(t *testing.T) {
		h.t = t
		_, readerTok := tokenFor(h, "reader", "reader-secret")
		r := h.do(h.anon, "GET", "/api/v1/data?name=/x", nil, bearer(readerTok["access_token"].(string))...)
		if r.status != 403 || len(r.body) != 0 {
			t.Fatalf("token with only credhub.read: %d %s, want Spring's bare 403", r.status, r.body)
		}
		h.expect(h.do(h.anon, "GET", "/version", nil, bearer("not.a.jwt")...), 401,
			`{"error":"invalid_token","error_description":"`+msgJWTMalformed+`"}`)
		parts := strings.Split(access, ".")
		forged := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString([]byte("forged signature"))
		h.expect(h.do(h.anon, "GET", "/version", nil, bearer(forged)...), 401,
			`{"error":"invalid_token","error_description":"`+msgJWTBadSignature+`"}`)
		other := newHarness(t, dbURL(t, "sqlite-memory"), nil)
		_, otherTok := tokenFor(other, "perf", "perf-secret")
		r = h.do(h.anon, "GET", "/version", nil, bearer(otherTok["access_token"].(string))...)
		if r.status != 401 || r.json(t)["error"] != "invalid_token" {
			t.Fatalf("token from another server: %d %s", r.status, r.body)
		}
	})

	t.Run("token keys verify the token", func(t *testing.T) {
		h.t = t
		keys := h.do(h.anon, "GET", "/token_keys", nil).json(t)["keys"].([]any)
		k := keys[0].(map[string]any)
		if k["alg"] != "RS256" || k["kty"] != "RSA" || !strings.Contains(k["value"].(string), "PUBLIC KEY") {
			t.Fatalf("token key %v", k)
		}
		n, _ := base64.RawURLEncoding.DecodeString(k["n"].(string))
		e, _ := base64.RawURLEncoding.DecodeString(k["e"].(string))
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		parts := strings.Split(access, ".")
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig); err != nil {
			t.Fatalf("the advertised key does not verify the issued token: %v", err)
		}
		payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
		var claims map[string]any
		json.Unmarshal(payload, &claims) //nolint:errcheck // checked below
		oidc := h.do(h.anon, "GET", "/.well-known/openid-configuration", nil).json(t)
		if claims["iss"] != oidc["issuer"] || claims["client_id"] != "perf" || claims["grant_type"] != "client_credentials" {
			t.Fatalf("claims %v, issuer %v", claims, oidc["issuer"])
		}
	})
}

func TestACLs(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), func(c *Config) {
		c.ACLs = true
		c.Permissions = []Permission{
			{Path: "/acl/*", Actors: []string{"uaa-client:perf"}, Operations: []string{"read", "write", "delete"}},
			{Path: "/acl/ro", Actors: []string{"uaa-client:reader"}, Operations: []string{"read"}},
		}
		c.UAAClients = append(c.UAAClients, UAAClient{ID: "ro", Secret: "s", Scopes: []string{"credhub.read", "credhub.write"}})
	})
	_, tok := tokenFor(h, "perf", "perf-secret")
	perf := bearer(tok["access_token"].(string))
	h.expect(h.do(h.anon, "PUT", "/api/v1/data", map[string]any{"name": "/acl/ro", "type": "value", "value": "v"}, perf...), 200, "")
	h.expect(h.do(h.anon, "PUT", "/api/v1/data", map[string]any{"name": "/other", "type": "value", "value": "v"}, perf...), 403, errBody(msgInvalidAccess))
	// The mTLS client has no permission at all: reads look like absence.
	h.expect(h.do(h.client, "GET", "/api/v1/data?name=/acl/ro", nil), 404, errBody(msgInvalidAccess))
	h.expect(h.do(h.client, "DELETE", "/api/v1/data?name=/acl/ro", nil), 404, errBody(msgInvalidAccess))
	h.expect(h.do(h.client, "GET", "/api/v1/data?path=/acl", nil), 200, `{"credentials":[]}`)
	h.expect(h.do(h.anon, "GET", "/api/v1/data?name=/acl/ro", nil, perf...), 200, "")
	h.expect(h.do(h.anon, "DELETE", "/api/v1/data?name=/acl/ro", nil, perf...), 204, "")
}

func TestHTTP2WithClientCertificate(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), func(c *Config) { c.HTTP2 = true })
	c := h.clientWith("client")
	c.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	resp, err := c.Get(h.url + "/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		t.Fatalf("HTTP/2 with mTLS: %d over %s", resp.StatusCode, resp.Proto)
	}
}
