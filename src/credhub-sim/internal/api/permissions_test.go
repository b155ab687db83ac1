package api

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Conformance of /api/v2/permissions and /api/v1/bulk-regenerate with
// CredHub 2.15 (its PermissionsV2Controller, DefaultPermissionService,
// PermissionDataService, RegenerateController, DefaultRegenerateHandler
// and ExceptionHandlers), on every backend: the endpoints' SQL differs per
// dialect.

func TestPermissionsConformanceSQLite(t *testing.T) { permissionsConformance(t, "sqlite") }
func TestPermissionsConformancePostgres(t *testing.T) {
	permissionsConformance(t, "postgres")
}
func TestPermissionsConformanceMariaDB(t *testing.T) { permissionsConformance(t, "mariadb") }

// aclHarness: ACLs on; uaa-client:perf administers /perm/* and /bulk/*,
// uaa-client:user-a has nothing until granted, and the mTLS client
// (h.client) has no permission at all.
func aclHarness(t *testing.T, kind string) (h *harness, admin, userA []string) {
	h = newHarness(t, dbURL(t, kind), func(c *Config) {
		c.ACLs = true
		all := []string{"read", "write", "delete", "read_acl", "write_acl"}
		c.Permissions = []Permission{
			{Path: "/perm/*", Actors: []string{"uaa-client:perf"}, Operations: all},
			{Path: "/bulk/*", Actors: []string{"uaa-client:perf"}, Operations: all},
		}
		c.UAAClients = append(c.UAAClients, UAAClient{ID: "user-a", Secret: "user-a-secret", Scopes: []string{"credhub.read", "credhub.write"}})
	})
	_, tok := tokenFor(h, "perf", "perf-secret")
	_, tokA := tokenFor(h, "user-a", "user-a-secret")
	return h, bearer(tok["access_token"].(string)), bearer(tokA["access_token"].(string))
}

func permView(path, actor, id string, ops ...string) string {
	if ops == nil {
		ops = []string{}
	}
	b, _ := json.Marshal(map[string]any{"path": path, "operations": ops, "actor": actor, "uuid": id})
	return string(b)
}

func permissionsConformance(t *testing.T, kind string) {
	h, admin, userA := aclHarness(t, kind)
	const actorA = "uaa-client:user-a"
	as := func(who []string, method, path string, body any) response {
		return h.do(h.anon, method, path, body, who...)
	}
	setAs := func(who []string, name string) response {
		return as(who, "PUT", "/api/v1/data", map[string]any{"name": name, "type": "value", "value": "v"})
	}
	var id string

	t.Run("POST creates a permission", func(t *testing.T) {
		h.t = t
		h.expect(setAs(userA, "/perm/cred"), 403, errBody(msgInvalidAccess))
		r := as(admin, "POST", "/api/v2/permissions", map[string]any{"path": "/perm/cred", "actor": actorA, "operations": []string{"write", "read"}})
		if r.status != 201 {
			t.Fatalf("POST: %d %s", r.status, r.body)
		}
		id, _ = r.json(t)["uuid"].(string)
		if !uuidRE.MatchString(id) {
			t.Fatalf("uuid %q", id)
		}
		// Operations in CredHub's order, whatever the request's.
		h.expect(r, 201, permView("/perm/cred", actorA, id, "read", "write"))
		h.expect(setAs(userA, "/perm/cred"), 200, "")
		h.expect(as(userA, "GET", "/api/v1/data?name=/perm/cred", nil), 200, "")
		// The path gets its leading slash, as CredHub's setter adds it.
		r = as(admin, "POST", "/api/v2/permissions", map[string]any{"path": "perm/other", "actor": actorA, "operations": []string{"delete"}})
		h.expect(r, 201, permView("/perm/other", actorA, r.json(t)["uuid"].(string), "delete"))
	})

	t.Run("POST errors", func(t *testing.T) {
		h.t = t
		post := func(who []string, body any) response { return as(who, "POST", "/api/v2/permissions", body) }
		ok := map[string]any{"path": "/perm/x", "actor": actorA, "operations": []string{"read"}}
		with := func(k string, v any) map[string]any {
			m := map[string]any{}
			for kk, vv := range ok {
				m[kk] = vv
			}
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
			return m
		}
		h.expect(post(admin, map[string]any{"path": "/perm/cred", "actor": actorA, "operations": []string{"delete"}}), 409, errBody(msgPermAlreadyExists))
		h.expect(post(admin, with("actor", "uaa-client:perf")), 400, errBody(msgPermUpdateSelf))
		h.expect(post(userA, ok), 404, errBody(msgInvalidAccess)) // no write_acl on the path
		h.expect(h.do(h.client, "POST", "/api/v2/permissions", ok), 404, errBody(msgInvalidAccess))
		for _, ops := range []any{[]string{"bad_operation"}, []string{"READ"}, "read"} {
			h.expect(post(admin, with("operations", ops)), 422, errBody(msgPermInvalidOperation))
		}
		// The sim's choice where CredHub's answer is not established (README).
		for _, ops := range []any{[]any{nil}, []any{1}} {
			h.expect(post(admin, with("operations", ops)), 422, errBody(msgPermInvalidOperation))
		}
		h.expect(post(admin, with("bogus", 1)), 422, fmtErr(msgInvalidJSONKey, "bogus"))
		for _, tc := range []struct {
			key  string
			val  any
			want string
		}{
			{"path", nil, msgPermMissingPath},
			{"path", "", msgPermMissingPath},
			{"path", "/perm//x", msgPermInvalidSlashPath},
			{"path", "/perm/x/", msgPermInvalidSlashPath},
			{"path", "/perm/a b", msgPermInvalidCharPath},
			{"path", "/perm/*/x", msgPermInvalidCharPath},
			{"actor", nil, msgPermMissingActor},
			{"actor", "", msgPermMissingActor},
			{"operations", nil, msgPermMissingOps},
			{"operations", []string{}, msgPermMissingOps},
		} {
			h.expect(post(admin, with(tc.key, tc.val)), 400, errBody(tc.want))
		}
		h.expect(post(admin, `{"path":`), 400, errBody(msgBadRequest))
		h.expect(as(append(admin, "Content-Type", "text/plain"), "POST", "/api/v2/permissions", ok), 400, errBody(msgInvalidContentType))
	})

	t.Run("GET by path and actor", func(t *testing.T) {
		h.t = t
		h.expect(as(admin, "GET", "/api/v2/permissions?path=/perm/cred&actor="+actorA, nil), 200, permView("/perm/cred", actorA, id, "read", "write"))
		h.expect(as(admin, "GET", "/api/v2/permissions?path=perm/cred&actor="+actorA, nil), 200, permView("/perm/cred", actorA, id, "read", "write"))
		h.expect(as(admin, "GET", "/api/v2/permissions?path=/perm/cred&actor=uaa-client:nobody", nil), 404, errBody(msgPermInvalidAccess))
		h.expect(as(userA, "GET", "/api/v2/permissions?path=/perm/cred&actor="+actorA, nil), 404, errBody(msgPermInvalidAccess)) // no read_acl
		h.expect(as(admin, "GET", "/api/v2/permissions?actor="+actorA, nil), 400, fmtErr(msgMissingQueryParam, "path"))
		h.expect(as(admin, "GET", "/api/v2/permissions?path=/perm/cred", nil), 400, fmtErr(msgMissingQueryParam, "actor"))
	})

	t.Run("GET by uuid", func(t *testing.T) {
		h.t = t
		h.expect(as(admin, "GET", "/api/v2/permissions/"+id, nil), 200, permView("/perm/cred", actorA, id, "read", "write"))
		h.expect(as(userA, "GET", "/api/v2/permissions/"+id, nil), 404, errBody(msgInvalidAccess))
		h.expect(as(admin, "GET", "/api/v2/permissions/1550919c-b7e1-4288-85fd-c73220e6ac5f", nil), 404, errBody(msgInvalidAccess))
		h.expect(as(admin, "GET", "/api/v2/permissions/not-a-uuid", nil), 404, errBody(msgInvalidAccess))
	})

	// The seeded row of the administrator itself, for the self rules.
	self := as(admin, "GET", "/api/v2/permissions?path=/perm/*&actor=uaa-client:perf", nil).json(t)["uuid"].(string)

	t.Run("PUT replaces the operations", func(t *testing.T) {
		h.t = t
		put := func(who []string, uuid string, body any) response {
			return as(who, "PUT", "/api/v2/permissions/"+uuid, body)
		}
		body := map[string]any{"path": "/perm/cred", "actor": actorA, "operations": []string{"read"}}
		h.expect(put(admin, id, body), 200, permView("/perm/cred", actorA, id, "read"))
		h.expect(setAs(userA, "/perm/cred"), 403, errBody(msgInvalidAccess))
		h.expect(put(admin, id, map[string]any{"path": "/perm/wrong", "actor": actorA, "operations": []string{"read"}}), 400, errBody(msgPermWrongPathActor))
		h.expect(put(admin, id, map[string]any{"path": "/perm/cred", "actor": "uaa-client:other", "operations": []string{"read"}}), 400, errBody(msgPermWrongPathActor))
		h.expect(put(admin, "1550919c-b7e1-4288-85fd-c73220e6ac5f", body), 404, errBody(msgPermDoesNotExist))
		h.expect(put(admin, "not-a-uuid", body), 404, errBody(msgPermDoesNotExist))
		h.expect(put(userA, id, body), 404, errBody(msgPermDoesNotExist)) // no write_acl
		h.expect(put(admin, self, map[string]any{"path": "/perm/*", "actor": "uaa-client:perf", "operations": []string{"read"}}), 400, errBody(msgPermUpdateSelf))
		// The body is validated before the uuid is looked at.
		h.expect(put(admin, "not-a-uuid", map[string]any{}), 400, errBody(msgPermMissingPath))
		h.expect(put(admin, id, map[string]any{"path": "/perm/cred", "actor": actorA, "operations": []string{"nope"}}), 422, errBody(msgPermInvalidOperation))
	})

	t.Run("PATCH replaces the operations", func(t *testing.T) {
		h.t = t
		patch := func(who []string, uuid string, body any) response {
			return as(who, "PATCH", "/api/v2/permissions/"+uuid, body)
		}
		h.expect(patch(admin, id, map[string]any{"operations": []string{"write_acl", "write", "read"}}), 200, permView("/perm/cred", actorA, id, "read", "write", "write_acl"))
		h.expect(setAs(userA, "/perm/cred"), 200, "")
		// No operations clears them, as CredHub's unvalidated patch request does.
		h.expect(patch(admin, id, map[string]any{}), 200, permView("/perm/cred", actorA, id))
		h.expect(patch(admin, id, map[string]any{"operations": []string{"read", "write"}}), 200, permView("/perm/cred", actorA, id, "read", "write"))
		h.expect(patch(admin, "invalid", map[string]any{"operations": []string{"write"}}), 404, errBody(msgPermDoesNotExist))
		h.expect(patch(admin, "1550919c-b7e1-4288-85fd-c73220e6ac5f", map[string]any{"operations": []string{"write"}}), 404, errBody(msgPermDoesNotExist))
		h.expect(patch(userA, id, map[string]any{"operations": []string{"write"}}), 404, errBody(msgPermDoesNotExist))
		h.expect(patch(admin, self, map[string]any{"operations": []string{"read"}}), 400, errBody(msgPermUpdateSelf))
		h.expect(patch(admin, id, map[string]any{"operations": []string{"admin"}}), 422, errBody(msgPermInvalidOperation))
		h.expect(patch(admin, id, map[string]any{"path": "/perm/cred"}), 422, fmtErr(msgInvalidJSONKey, "path"))
	})

	t.Run("DELETE", func(t *testing.T) {
		h.t = t
		del := func(who []string, uuid string) response { return as(who, "DELETE", "/api/v2/permissions/"+uuid, nil) }
		h.expect(del(userA, id), 404, errBody(msgPermDoesNotExist))
		h.expect(del(admin, self), 400, errBody(msgPermUpdateSelf))
		h.expect(del(admin, id), 200, permView("/perm/cred", actorA, id, "read", "write"))
		h.expect(setAs(userA, "/perm/cred"), 403, errBody(msgInvalidAccess))
		h.expect(as(admin, "GET", "/api/v2/permissions/"+id, nil), 404, errBody(msgInvalidAccess))
		h.expect(del(admin, id), 404, errBody(msgPermDoesNotExist))
		h.expect(del(admin, "invalid"), 404, errBody(msgPermDoesNotExist))
	})

	t.Run("other methods", func(t *testing.T) {
		h.t = t
		for _, c := range []struct{ method, path string }{
			{"PUT", "/api/v2/permissions"}, {"DELETE", "/api/v2/permissions"},
			{"POST", "/api/v2/permissions/" + self}, {"GET", "/api/v2/permissions/" + self + "/x"},
		} {
			r := as(admin, c.method, c.path, "{}")
			if r.status != 404 || len(r.body) != 0 {
				t.Errorf("%s %s: %d %q, want 404 with an empty body", c.method, c.path, r.status, r.body)
			}
		}
	})

	t.Run("bulk-regenerate", func(t *testing.T) { bulkRegenerateConformance(t, h, admin, userA) })
}

// Without ACLs (CredHub's security.authorization.acls.enabled: false)
// every caller may administer permissions, its own included.
func TestPermissionsWithoutACLs(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	me := clientActor(t, h)
	body := map[string]any{"path": "/open/x", "actor": "uaa-client:anyone", "operations": []string{"read"}}
	r := h.do(h.client, "POST", "/api/v2/permissions", body)
	h.expect(r, 201, permView("/open/x", "uaa-client:anyone", r.json(t)["uuid"].(string), "read"))
	h.expect(h.do(h.client, "POST", "/api/v2/permissions", body), 409, errBody(msgPermAlreadyExists))
	self := map[string]any{"path": "/open/x", "actor": me, "operations": []string{"read"}}
	h.expect(h.do(h.client, "POST", "/api/v2/permissions", self), 201, "")
	// Jackson reads a number or boolean into a String field as its text.
	r = h.do(h.client, "POST", "/api/v2/permissions", `{"path":"/open/n","actor":5,"operations":["read"]}`)
	h.expect(r, 201, permView("/open/n", "5", r.json(t)["uuid"].(string), "read"))
	h.expect(h.do(h.client, "GET", "/api/v2/permissions?path=/open/y&actor=uaa-client:anyone", nil), 404, errBody(msgPermInvalidAccess))
	h.expect(h.do(h.client, "PUT", "/api/v2/permissions/1550919c-b7e1-4288-85fd-c73220e6ac5f", body), 404, errBody(msgPermDoesNotExist))
	// Where CredHub without ACLs fails with a server error (README), the
	// sim answers as with ACLs on.
	h.expect(h.do(h.client, "DELETE", "/api/v2/permissions/1550919c-b7e1-4288-85fd-c73220e6ac5f", nil), 404, errBody(msgPermDoesNotExist))
	h.expect(h.do(h.client, "GET", "/api/v2/permissions/1550919c-b7e1-4288-85fd-c73220e6ac5f", nil), 404, errBody(msgInvalidAccess))
	h.expect(h.do(h.client, "GET", "/api/v2/permissions/not-a-uuid", nil), 404, errBody(msgInvalidAccess))
}

// bulkRegenerateConformance: /bulk/root signs /bulk/inter (a CA) and
// /bulk/Leaf-a; /bulk/inter signs /bulk/leaf-b; /bulk/other is apart.
func bulkRegenerateConformance(t *testing.T, h *harness, admin, userA []string) {
	h.t = t
	bulk := func(who []string, body any) response {
		return h.do(h.anon, "POST", "/api/v1/bulk-regenerate", body, who...)
	}
	gen := func(name string, params map[string]any) {
		t.Helper()
		h.expect(h.do(h.anon, "POST", "/api/v1/data", map[string]any{"name": name, "type": "certificate", "parameters": params}, admin...), 200, "")
	}
	gen("/bulk/root", map[string]any{"common_name": "root", "is_ca": true})
	gen("/bulk/inter", map[string]any{"common_name": "inter", "is_ca": true, "ca": "/bulk/root"})
	gen("/bulk/Leaf-a", map[string]any{"common_name": "a", "ca": "/bulk/root"})
	gen("/bulk/leaf-b", map[string]any{"common_name": "b", "ca": "/bulk/inter"})
	gen("/bulk/other", map[string]any{"common_name": "other", "self_sign": true})
	versions := func(name string) []map[string]any {
		t.Helper()
		r := h.do(h.anon, "GET", "/api/v1/data?name="+name, nil, admin...)
		h.expect(r, 200, "")
		var out struct{ Data []map[string]any }
		if err := json.Unmarshal(r.body, &out); err != nil {
			t.Fatal(err)
		}
		return out.Data
	}
	counts := func() string {
		var s []string
		for _, n := range []string{"/bulk/root", "/bulk/inter", "/bulk/Leaf-a", "/bulk/leaf-b", "/bulk/other"} {
			s = append(s, fmt.Sprint(len(versions(n))))
		}
		return strings.Join(s, " ")
	}

	t.Run("permission errors write nothing", func(t *testing.T) {
		h.t = t
		h.expect(bulk(userA, map[string]any{"signed_by": "/bulk/root"}), 404, errBody(msgInvalidAccess)) // no read on the CA
		grant := h.do(h.anon, "POST", "/api/v2/permissions", map[string]any{"path": "/bulk/root", "actor": "uaa-client:user-a", "operations": []string{"read"}}, admin...)
		h.expect(grant, 201, "")
		h.expect(bulk(userA, map[string]any{"signed_by": "/bulk/root"}), 403, errBody(msgInvalidAccess)) // no write on what it signs
		if c := counts(); c != "1 1 1 1 1" {
			t.Fatalf("versions after refused bulk regenerates: %s, want 1 each", c)
		}
	})

	t.Run("regenerates what the CA signs, recursively", func(t *testing.T) {
		h.t = t
		h.expect(bulk(admin, map[string]any{"signed_by": "bulk/root"}), 200, `{"regenerated_credentials":["/bulk/inter","/bulk/Leaf-a","/bulk/leaf-b"]}`)
		if c := counts(); c != "1 2 2 2 1" {
			t.Fatalf("versions: %s, want root and other untouched, the rest regenerated once", c)
		}
		// The leaf is signed by the intermediate's new key, which the root signs.
		parse := func(name string) *x509.Certificate {
			t.Helper()
			return certOf(t, response{200, mustJSON(t, versions(name)[0]), nil})
		}
		root, inter, leafB := parse("/bulk/root"), parse("/bulk/inter"), parse("/bulk/leaf-b")
		if err := inter.CheckSignatureFrom(root); err != nil {
			t.Fatalf("new intermediate not signed by the root: %v", err)
		}
		if err := leafB.CheckSignatureFrom(inter); err != nil {
			t.Fatalf("new leaf not signed by the new intermediate: %v", err)
		}
		// ca_name is compared case-insensitively.
		h.expect(bulk(admin, map[string]any{"signed_by": "/bulk/INTER"}), 200, `{"regenerated_credentials":["/bulk/leaf-b"]}`)
		h.expect(bulk(admin, map[string]any{"signed_by": "/bulk/nothing"}), 200, `{"regenerated_credentials":[]}`)
	})

	t.Run("errors", func(t *testing.T) {
		h.t = t
		h.expect(bulk(admin, map[string]any{}), 400, errBody(msgMissingSignedBy))
		h.expect(bulk(admin, map[string]any{"signed_by": nil}), 400, errBody(msgMissingSignedBy))
		h.expect(bulk(admin, map[string]any{"signed_by": "/bulk/root", "duration": 30}), 422, fmtErr(msgInvalidJSONKey, "duration"))
		h.expect(bulk(admin, `{"signed_by":`), 400, errBody(msgBadRequest))
		r := h.do(h.anon, "GET", "/api/v1/bulk-regenerate", nil, admin...)
		if r.status != 404 || len(r.body) != 0 {
			t.Fatalf("GET bulk-regenerate: %d %q", r.status, r.body)
		}
	})
}

func mustJSON(t *testing.T, v map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"value": v["value"]})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// clientActor is the actor CredHub derives from the harness's client
// certificate: "mtls-" and its app: OU.
func clientActor(t *testing.T, h *harness) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.certDir, "client.crt"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, ou := range c.Subject.OrganizationalUnit {
		if strings.HasPrefix(ou, "app:") {
			return "mtls-" + ou
		}
	}
	t.Fatal("client certificate has no app: OU")
	return ""
}
