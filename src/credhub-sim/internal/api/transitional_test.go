package api

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"sync"
	"testing"
	"time"
)

// Transitional certificate versions, the CA rotation flow of CredHub's
// runbook (regenerate the CA with set_as_transitional, deploy,
// update_transitional_version to the old version, bulk-regenerate the
// leaves, clear the flag), conformance with CredHub 2.15 on every backend.
// What the assertions rely on, from CredHub's source (cloudfoundry/credhub):
//   - CertificatesController: the routes, 200 on each, the request bodies
//     (CertificateRegenerateRequest "set_as_transitional",
//     CreateVersionRequest "value" (@NotNull: MISSING_VALUE) and
//     "transitional", UpdateTransitionalVersionRequest "version").
//   - DefaultCertificatesHandler: update answers the certificate views of
//     findActiveWithTransitional; "latest" names the newest valid version;
//     delete answers the deleted version's view.
//   - DefaultCertificateService: a second transitional version is 400
//     TOO_MANY_TRANSITIONAL_VERSIONS (save and set); a version of another
//     credential is 400 MISMATCHED_CREDENTIAL_AND_VERSION on update and
//     404 INVALID_ACCESS on delete; deleting the only version is 400
//     CANNOT_DELETE_LAST_VERSION (also CertificateVersionDeleteTest).
//   - DefaultCertificateVersionDataService.findActiveWithTransitional:
//     current=true is [newest non-transitional, transitional], which
//     DefaultCredentialVersionDataService.findActiveByName uses for
//     GET /api/v1/data too (CertificateUpdateTransitionalVersionTest checks
//     the order after an update).
//   - CertificateAuthorityService.findActiveVersion: a CA signs with its
//     newest non-transitional version, and the signed certificate stores
//     that CA's certificate as its "ca" (and a converge generate reissues
//     a certificate whose "ca" is no longer its CA's active certificate:
//     DefaultCredentialService.shouldWriteNewCredential); with
//     certificates.concatenate_cas
//     off (the default, ConcatenateCasDisabledEndToEndTest) a get returns
//     that one CA, not the transitional one.
func TestFidelityTransitionalSQLite(t *testing.T) { transitionalConformance(t, "sqlite") }
func TestFidelityTransitionalPostgres(t *testing.T) {
	transitionalConformance(t, "postgres")
}
func TestFidelityTransitionalMariaDB(t *testing.T) { transitionalConformance(t, "mariadb") }

func transitionalConformance(t *testing.T, kind string) {
	h := newHarness(t, dbURL(t, kind), nil)
	post := func(path string, body any) response { return h.do(h.client, "POST", path, body) }
	put := func(path string, body any) response { return h.do(h.client, "PUT", path, body) }
	views := func(r response) []map[string]any {
		t.Helper()
		var vs []map[string]any
		if err := json.Unmarshal(r.body, &vs); err != nil {
			t.Fatalf("not a JSON array: %v: %s", err, r.body)
		}
		return vs
	}
	// ids and transitional flags of a list of views, to compare in one line.
	flags := func(vs []map[string]any) [][2]any {
		out := [][2]any{}
		for _, v := range vs {
			out = append(out, [2]any{v["id"], v["transitional"]})
		}
		return out
	}
	same := func(what string, got, want [][2]any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Fatalf("%s: %s, want %s", what, g, w)
		}
	}
	current := func(name string) []map[string]any {
		t.Helper()
		r := h.do(h.client, "GET", "/api/v1/data?name="+name+"&current=true", nil)
		h.expect(r, 200, "")
		var d struct{ Data []map[string]any }
		if err := json.Unmarshal(r.body, &d); err != nil {
			t.Fatal(err)
		}
		return d.Data
	}
	certID := func(name string) string {
		t.Helper()
		r := h.do(h.client, "GET", "/api/v1/certificates?name="+name, nil)
		h.expect(r, 200, "")
		var l struct{ Certificates []struct{ ID string } }
		if err := json.Unmarshal(r.body, &l); err != nil || len(l.Certificates) != 1 {
			t.Fatalf("certificate %s: %v %s", name, err, r.body)
		}
		return l.Certificates[0].ID
	}
	pemOf := func(v map[string]any, field string) string {
		return v["value"].(map[string]any)[field].(string)
	}
	signedBy := func(leaf map[string]any, ca map[string]any) {
		t.Helper()
		if pemOf(leaf, "ca") != pemOf(ca, "certificate") {
			t.Fatalf("leaf's ca is not version %v of the CA", ca["id"])
		}
		parse := func(p string) *x509.Certificate {
			block, _ := pem.Decode([]byte(p))
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		if err := parse(pemOf(leaf, "certificate")).CheckSignatureFrom(parse(pemOf(ca, "certificate"))); err != nil {
			t.Fatalf("leaf not signed by CA version %v: %v", ca["id"], err)
		}
	}

	h.expect(post("/api/v1/data", map[string]any{"name": "/rot/ca", "type": "certificate", "parameters": map[string]any{"common_name": "rot-ca", "is_ca": true}}), 200, "")
	h.expect(post("/api/v1/data", map[string]any{"name": "/rot/leaf", "type": "certificate", "parameters": map[string]any{"common_name": "leaf", "ca": "/rot/ca"}}), 200, "")
	caID := certID("/rot/ca")
	ca1 := current("/rot/ca")[0]

	// 1. Regenerate the CA as transitional: the new version is not used yet.
	r := post("/api/v1/certificates/"+caID+"/regenerate", map[string]any{"set_as_transitional": true})
	h.expect(r, 200, "")
	ca2 := r.json(t)
	if ca2["transitional"] != true || ca2["name"] != "/rot/ca" || ca2["duration_used"] != float64(365) {
		t.Fatalf("transitional regenerate: %s", r.body)
	}
	h.expect(post("/api/v1/certificates/"+caID+"/regenerate", map[string]any{"set_as_transitional": true}), 400, errBody(msgTooManyTransitional))
	same("current after transitional regenerate", flags(current("/rot/ca")), [][2]any{{ca1["id"], false}, {ca2["id"], true}})
	r = h.do(h.client, "GET", "/api/v1/certificates/"+caID+"/versions?current=true", nil)
	h.expect(r, 200, "")
	same("certificates current", flags(views(r)), [][2]any{{ca1["id"], false}, {ca2["id"], true}})
	r = h.do(h.client, "GET", "/api/v1/certificates/"+caID+"/versions", nil)
	h.expect(r, 200, "")
	same("all versions", flags(views(r)), [][2]any{{ca2["id"], true}, {ca1["id"], false}})
	r = h.do(h.client, "GET", "/api/v1/certificates?name=/rot/ca", nil)
	h.expect(r, 200, "")
	var list struct {
		Certificates []struct{ Versions []map[string]any }
	}
	if err := json.Unmarshal(r.body, &list); err != nil || len(list.Certificates) != 1 {
		t.Fatalf("list: %v %s", err, r.body)
	}
	same("listed versions", flags(list.Certificates[0].Versions), [][2]any{{ca2["id"], true}, {ca1["id"], false}})

	// The active CA still signs: a regenerated leaf carries the old CA, and
	// a deploy's converge generate leaves the leaf as it is.
	leafParams := map[string]any{"name": "/rot/leaf", "type": "certificate", "parameters": map[string]any{"common_name": "leaf", "ca": "/rot/ca"}}
	h.expect(post("/api/v1/regenerate", map[string]any{"name": "/rot/leaf"}), 200, "")
	signedBy(current("/rot/leaf")[0], ca1)
	leafBefore := current("/rot/leaf")[0]["id"]
	r = post("/api/v1/data", leafParams)
	h.expect(r, 200, "")
	if r.json(t)["id"] != leafBefore {
		t.Fatalf("converge generate reissued the leaf (version %v) while its CA's active version is unchanged", r.json(t)["id"])
	}

	// 2. Make the old version the transitional one: the new CA is active.
	r = put("/api/v1/certificates/"+caID+"/update_transitional_version", map[string]any{"version": ca1["id"]})
	h.expect(r, 200, "")
	same("update answer", flags(views(r)), [][2]any{{ca2["id"], false}, {ca1["id"], true}})
	if v := views(r)[0]; v["type"] != "certificate" || v["name"] != "/rot/ca" || pemOf(v, "certificate") != pemOf(ca2, "certificate") {
		t.Fatalf("update answer is not the certificate's view: %s", r.body)
	}
	same("current after update", flags(current("/rot/ca")), [][2]any{{ca2["id"], false}, {ca1["id"], true}})
	// The leaf keeps the CA that signed it until it is regenerated; then
	// it is signed by the new active version, by a converge generate
	// (CredHub's shouldWriteNewCredential: its stored ca is no longer the
	// CA's active certificate) as by a bulk regenerate.
	signedBy(current("/rot/leaf")[0], ca1)
	r = post("/api/v1/data", leafParams)
	h.expect(r, 200, "")
	if r.json(t)["id"] == leafBefore {
		t.Fatalf("converge generate kept the leaf (version %v) signed by the CA's old version", leafBefore)
	}
	signedBy(current("/rot/leaf")[0], ca2)
	leafBefore = current("/rot/leaf")[0]["id"]
	h.expect(post("/api/v1/data", leafParams), 200, "")
	if current("/rot/leaf")[0]["id"] != leafBefore {
		t.Fatal("a second converge generate reissued the leaf")
	}
	r = post("/api/v1/bulk-regenerate", map[string]any{"signed_by": "/rot/ca"})
	h.expect(r, 200, `{"regenerated_credentials":["/rot/leaf"]}`)
	signedBy(current("/rot/leaf")[0], ca2)

	// 3. Clear the flag ({} and an explicit null alike).
	for _, body := range []string{`{}`, `{"version":null}`} {
		r = put("/api/v1/certificates/"+caID+"/update_transitional_version", body)
		h.expect(r, 200, "")
		same("update to none "+body, flags(views(r)), [][2]any{{ca2["id"], false}})
	}
	same("current with none transitional", flags(current("/rot/ca")), [][2]any{{ca2["id"], false}})
	// "latest": the newest version.
	r = put("/api/v1/certificates/"+caID+"/update_transitional_version", map[string]any{"version": "latest"})
	h.expect(r, 200, "")
	same("update to latest", flags(views(r)), [][2]any{{ca1["id"], false}, {ca2["id"], true}})
	h.expect(put("/api/v1/certificates/"+caID+"/update_transitional_version", `{}`), 200, "")

	// Update errors.
	leafVersion := current("/rot/leaf")[0]["id"]
	for _, v := range []any{leafVersion, "00000000-0000-4000-8000-000000000000", "not-a-uuid"} {
		h.expect(put("/api/v1/certificates/"+caID+"/update_transitional_version", map[string]any{"version": v}), 400, errBody(msgMismatchedVersion))
	}
	same("current after refused updates", flags(current("/rot/ca")), [][2]any{{ca2["id"], false}})
	h.expect(put("/api/v1/certificates/"+caID+"/update_transitional_version", map[string]any{"bogus": 1}), 422, fmtErr(msgInvalidJSONKey, "bogus"))
	h.expect(put("/api/v1/certificates/"+caID+"/update_transitional_version", `{"version":`), 400, errBody(msgBadRequest))
	h.expect(put("/api/v1/certificates/00000000-0000-4000-8000-000000000000/update_transitional_version", `{}`), 404, errBody(msgInvalidAccess))
	h.expect(post("/api/v1/data", map[string]any{"name": "/rot/self", "type": "certificate", "parameters": map[string]any{"common_name": "self", "self_sign": true}}), 200, "")

	// 4. Create a version from a value, transitional.
	self := current("/rot/self")[0]
	value := map[string]any{"certificate": pemOf(self, "certificate"), "private_key": pemOf(self, "private_key")}
	r = post("/api/v1/certificates/"+caID+"/versions", map[string]any{"value": value, "transitional": true})
	h.expect(r, 200, "")
	created := r.json(t)
	if created["transitional"] != true || created["name"] != "/rot/ca" || created["type"] != "certificate" ||
		pemOf(created, "certificate") != pemOf(self, "certificate") || created["metadata"] != nil {
		t.Fatalf("created version: %s", r.body)
	}
	same("current after create", flags(current("/rot/ca")), [][2]any{{ca2["id"], false}, {created["id"], true}})
	h.expect(post("/api/v1/certificates/"+caID+"/versions", map[string]any{"value": value, "transitional": true}), 400, errBody(msgTooManyTransitional))
	h.expect(post("/api/v1/certificates/"+caID+"/versions", map[string]any{"transitional": true}), 400, errBody(msgMissingValue))
	h.expect(post("/api/v1/certificates/"+caID+"/versions", map[string]any{"value": value, "bogus": 1}), 422, fmtErr(msgInvalidJSONKey, "bogus"))
	h.expect(post("/api/v1/certificates/"+caID+"/versions", map[string]any{"value": map[string]any{"certificate": pemOf(self, "certificate"), "private_key": pemOf(ca2, "private_key")}}),
		400, errBody(msgMismatchedCertAndKey))
	h.expect(post("/api/v1/certificates/00000000-0000-4000-8000-000000000000/versions", map[string]any{"value": value}), 404, errBody(msgInvalidAccess))

	// 5. Delete versions.
	r = h.do(h.client, "DELETE", "/api/v1/certificates/"+caID+"/versions/"+created["id"].(string), nil)
	h.expect(r, 200, "")
	if d := r.json(t); d["id"] != created["id"] || d["transitional"] != true || pemOf(d, "certificate") != pemOf(self, "certificate") {
		t.Fatalf("delete answer: %s", r.body)
	}
	same("current after delete", flags(current("/rot/ca")), [][2]any{{ca2["id"], false}})
	h.expect(h.do(h.client, "DELETE", "/api/v1/certificates/"+caID+"/versions/"+created["id"].(string), nil), 404, errBody(msgInvalidAccess))
	h.expect(h.do(h.client, "DELETE", "/api/v1/certificates/"+caID+"/versions/"+leafVersion.(string), nil), 404, errBody(msgInvalidAccess))
	h.expect(h.do(h.client, "DELETE", "/api/v1/certificates/"+caID+"/versions/"+ca1["id"].(string), nil), 200, "")
	r = h.do(h.client, "GET", "/api/v1/certificates/"+caID+"/versions", nil)
	h.expect(r, 200, "")
	same("versions after deletes", flags(views(r)), [][2]any{{ca2["id"], false}})
	h.expect(h.do(h.client, "DELETE", "/api/v1/certificates/"+caID+"/versions/"+ca2["id"].(string), nil), 400, errBody(msgCannotDeleteLastVersion))
	// A deleted version's encrypted value goes with it: only the live
	// versions' values remain (a certificate version has one each).
	var n int
	if err := h.store.DB().QueryRow("SELECT COUNT(*) FROM encrypted_value").Scan(&n); err != nil {
		t.Fatal(err)
	}
	var live int
	if err := h.store.DB().QueryRow("SELECT COUNT(*) FROM credential_version").Scan(&live); err != nil {
		t.Fatal(err)
	}
	if n != live {
		t.Fatalf("%d encrypted values for %d versions after deleting versions", n, live)
	}
	r = h.do(h.client, "DELETE", "/api/v1/certificates/"+caID+"/versions", nil)
	if r.status != 404 || len(r.body) != 0 {
		t.Fatalf("DELETE .../versions: %d %q", r.status, r.body)
	}
}

// With ACLs on, DefaultCertificatesHandler.checkPermissionsByUuid: write
// for regenerate, create version and update (403 when missing), delete for
// deleting a version and read for listing them (404 when missing).
func TestFidelityTransitionalACLs(t *testing.T) {
	h, admin, userA := aclHarness(t, "sqlite-memory")
	as := func(who []string, method, path string, body any) response {
		return h.do(h.anon, method, path, body, who...)
	}
	h.expect(as(admin, "POST", "/api/v1/data", map[string]any{"name": "/perm/rca", "type": "certificate", "parameters": map[string]any{"common_name": "rca", "is_ca": true}}), 200, "")
	r := as(admin, "POST", "/api/v1/data", map[string]any{"name": "/perm/rca", "type": "certificate", "mode": "overwrite", "parameters": map[string]any{"common_name": "rca", "is_ca": true}})
	h.expect(r, 200, "")
	second := r.json(t)
	r = as(admin, "GET", "/api/v1/certificates?name=/perm/rca", nil)
	h.expect(r, 200, "")
	id := r.json(t)["certificates"].([]any)[0].(map[string]any)["id"].(string)
	value := map[string]any{"certificate": second["value"].(map[string]any)["certificate"], "private_key": second["value"].(map[string]any)["private_key"]}
	for _, c := range []struct {
		method, path string
		body         any
		status       int
	}{
		{"POST", "/api/v1/certificates/" + id + "/regenerate", map[string]any{"set_as_transitional": true}, 403},
		{"POST", "/api/v1/certificates/" + id + "/versions", map[string]any{"value": value, "transitional": true}, 403},
		{"PUT", "/api/v1/certificates/" + id + "/update_transitional_version", map[string]any{"version": second["id"]}, 403},
		{"DELETE", "/api/v1/certificates/" + id + "/versions/" + second["id"].(string), nil, 404},
		{"GET", "/api/v1/certificates/" + id + "/versions?current=true", nil, 404},
	} {
		h.expect(as(userA, c.method, c.path, c.body), c.status, errBody(msgInvalidAccess))
	}
	// Nothing changed; the administrator may.
	h.expect(as(admin, "PUT", "/api/v1/certificates/"+id+"/update_transitional_version", map[string]any{"version": second["id"]}), 200, "")
	h.expect(as(admin, "DELETE", "/api/v1/certificates/"+id+"/versions/"+second["id"].(string), nil), 200, "")
}

// CredHub's CertificatesController is not @Synchronized: the certificate
// version endpoints run while a set holds the write lock.
func TestFidelityTransitionalNotSynchronised(t *testing.T) {
	h := newHarness(t, dbURL(t, "sqlite-memory"), nil)
	h.expect(h.do(h.client, "POST", "/api/v1/data", map[string]any{"name": "/sync/ca", "type": "certificate", "parameters": map[string]any{"common_name": "ca", "is_ca": true}}), 200, "")
	r := h.do(h.client, "GET", "/api/v1/certificates?name=/sync/ca", nil)
	h.expect(r, 200, "")
	id := r.json(t)["certificates"].([]any)[0].(map[string]any)["id"].(string)
	h.srv.writeMu.Lock()
	var once sync.Once
	unlock := func() { once.Do(h.srv.writeMu.Unlock) }
	defer unlock()
	done := make(chan []response, 1)
	go func() {
		var rs []response
		reg := h.do(h.client, "POST", "/api/v1/certificates/"+id+"/regenerate", map[string]any{"set_as_transitional": true})
		rs = append(rs, reg)
		if reg.status == 200 {
			version := reg.json(t)["id"].(string)
			rs = append(rs,
				h.do(h.client, "PUT", "/api/v1/certificates/"+id+"/update_transitional_version", `{}`),
				h.do(h.client, "DELETE", "/api/v1/certificates/"+id+"/versions/"+version, nil))
		}
		done <- rs
	}()
	select {
	case rs := <-done:
		if len(rs) != 3 {
			t.Fatalf("regenerate during a held write lock: %d %s", rs[0].status, rs[0].body)
		}
		for _, r := range rs[1:] {
			if r.status != 200 {
				t.Fatalf("certificate version request during a held write lock: %d %s", r.status, r.body)
			}
		}
	case <-time.After(20 * time.Second):
		unlock()
		t.Fatal("the certificate version endpoints waited for the write lock")
	}
}
