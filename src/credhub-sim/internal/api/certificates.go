package api

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/credhub-perf/credhub-sim/internal/auth"
	"github.com/credhub-perf/credhub-sim/internal/store"
)

// CredHub's ErrorMessages for certificate versions, verbatim.
const (
	msgTooManyTransitional     = "The maximum number of transitional versions for a given CA is 1."
	msgMismatchedVersion       = "The request could not be completed because the specified version does not exist or does not belong to the specified credential."
	msgCannotDeleteLastVersion = "The minimum number of versions for a Certificate is 1."
)

type certificateVersionView struct {
	ID                   string `json:"id"`
	ExpiryDate           string `json:"expiry_date"`
	Transitional         bool   `json:"transitional"`
	CertificateAuthority bool   `json:"certificate_authority"`
	SelfSigned           bool   `json:"self_signed"`
	Generated            *bool  `json:"generated,omitempty"`
}

type certificateCredentialView struct {
	Name     string                   `json:"name"`
	ID       string                   `json:"id"`
	Versions []certificateVersionView `json:"versions"`
	SignedBy string                   `json:"signed_by"`
	Signs    []string                 `json:"signs"`
}

// handleCertificates is GET /api/v1/certificates[?name=N]: every
// certificate credential with its versions, its signer and what it signs
// (what credhub export and credhub get-certificates read).
func (s *Server) handleCertificates(w http.ResponseWriter, r *http.Request, actor string) {
	q := r.URL.Query()
	filter := ""
	if q.Has("name") {
		if filter = q.Get("name"); filter == "" {
			writeError(w, http.StatusBadRequest, fmt.Sprintf(msgMissingQueryParam, "name"))
			return
		}
		filter = lookupName(filter)
		auditDetails(r, "GET_CERTIFICATE", nameDetails{Name: filter})
	} else {
		auditDetails(r, "GET_ALL_CERTIFICATES", noDetails{})
	}
	all, err := s.store.CertificateCredentials(r.Context(), "")
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	latest := map[string]store.Version{}
	signs := map[string][]string{}
	var views []*certificateCredentialView
	byName := map[string]*certificateCredentialView{}
	for _, c := range all {
		vs, err := s.store.Versions(r.Context(), c.Name, 0)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		latest[c.Name] = vs[0]
		if ca := vs[0].Cert.CAName; ca.Valid && !strings.EqualFold(ca.String, c.Name) {
			signs[strings.ToLower(ca.String)] = append(signs[strings.ToLower(ca.String)], c.Name)
		}
		if filter != "" && !strings.EqualFold(c.Name, filter) {
			continue
		}
		ok, err := s.permitted(r, actor, c.Name, auth.OpRead)
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		if !ok {
			continue
		}
		if filter == "" {
			auditCredential(r, c.Name, c.UUID)
		}
		v := &certificateCredentialView{Name: c.Name, ID: c.UUID, Versions: []certificateVersionView{}, Signs: []string{}}
		for _, ver := range vs {
			cv := certificateVersionView{ID: ver.ID, Transitional: ver.Cert.Transitional,
				CertificateAuthority: ver.Cert.CertificateAuthority, SelfSigned: ver.Cert.SelfSigned}
			if ver.Cert.ExpiryDate.Valid {
				cv.ExpiryDate = formatTime(ver.Cert.ExpiryDate.Int64)
			}
			if ver.Cert.Generated.Valid {
				g := ver.Cert.Generated.Bool
				cv.Generated = &g
			}
			v.Versions = append(v.Versions, cv)
		}
		switch {
		case vs[0].Cert.CAName.Valid:
			v.SignedBy = vs[0].Cert.CAName.String
		case vs[0].Cert.SelfSigned:
			v.SignedBy = c.Name
		}
		views = append(views, v)
		byName[strings.ToLower(c.Name)] = v
	}
	for ca, names := range signs {
		if v, ok := byName[ca]; ok {
			v.Signs = names
		}
	}
	if filter != "" && len(views) == 0 {
		writeError(w, http.StatusNotFound, msgInvalidAccess)
		return
	}
	if views == nil {
		views = []*certificateCredentialView{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"certificates": views})
}

// certificateByID resolves /api/v1/certificates/{id} (the credential's
// uuid) to a certificate credential the actor may use for op.
func (s *Server) certificateByID(r *http.Request, id, actor string, op auth.Operation) (store.CredentialRef, error) {
	c, err := s.store.CredentialByUUID(r.Context(), id)
	if err != nil {
		return c, err
	}
	if err := s.requirePermission(r, actor, c.Name, op); err != nil {
		return c, err
	}
	typ, err := s.store.LatestType(r.Context(), c.Name)
	if err != nil {
		return c, err
	}
	if typ != store.TypeCert {
		return c, errNotFound
	}
	return c, nil
}

// handleCertificateVersions is GET /api/v1/certificates/{id}/versions: a
// JSON array of certificate views, newest first; with current=true the
// active version and the transitional one, as GET /api/v1/data does.
func (s *Server) handleCertificateVersions(w http.ResponseWriter, r *http.Request, id, actor string) {
	c, err := s.certificateByID(r, id, actor, auth.OpRead)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var vs []store.Version
	if strings.EqualFold(r.URL.Query().Get("current"), "true") {
		vs, err = s.currentVersions(r, c.Name)
	} else {
		vs, err = s.store.Versions(r.Context(), c.Name, 0)
	}
	views, ok := s.versionViews(w, r, vs, err)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, views)
}

// handleCertificateRegenerate is POST /api/v1/certificates/{id}/regenerate
// with an optional {"set_as_transitional": bool, "metadata": ...}: a new
// version from the active one's parameters, transitional if asked (then
// 400 when the certificate has a transitional version already).
func (s *Server) handleCertificateRegenerate(w http.ResponseWriter, r *http.Request, id, actor string) {
	v, used, err := s.regenerateCertificate(r, id, actor)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeGenerateView(w, r, v, used)
}

func (s *Server) regenerateCertificate(r *http.Request, id, actor string) (store.Version, *certParams, error) {
	// The body is optional (@RequestBody(required = false)).
	f := map[string]json.RawMessage{}
	var err error
	if r.ContentLength != 0 {
		var body []byte
		var keys []string
		body, err = readJSONBody(r)
		if err == nil && len(strings.TrimSpace(string(body))) > 0 {
			if keys, f, err = objectOf(body); err == nil {
				err = onlyKeys(keys, http.StatusBadRequest, "set_as_transitional", "metadata")
			}
		}
	}
	var transitional bool
	var metadata sql.NullString
	var c store.CredentialRef
	if err == nil {
		transitional, err = optionalBool(f["set_as_transitional"])
	}
	if err == nil {
		metadata, err = metadataOf(f["metadata"])
	}
	if err == nil {
		c, err = s.certificateByID(r, id, actor, auth.OpWrite)
	}
	if err != nil {
		return store.Version{}, nil, err
	}
	// CredHub regenerates from findByCredentialUuid: the active version.
	active, err := s.activeVersion(r, c.Name)
	if err != nil {
		return store.Version{}, nil, err
	}
	return s.regenerateVersion(r, active, metadata, transitional)
}

// optionalBool reads a boolean field that defaults to false.
func optionalBool(raw json.RawMessage) (bool, error) {
	if isNull(raw) {
		return false, nil
	}
	return unmarshalBool(raw)
}

// handleCertificateCreateVersion is POST /api/v1/certificates/{id}/versions
// {"value": {certificate value}, "transitional": bool}: a new version set
// from the value, validated as a set's (CredHub's CreateVersionRequest
// validates its value with the same bean constraints), 200 with the
// version's view.
func (s *Server) handleCertificateCreateVersion(w http.ResponseWriter, r *http.Request, id, actor string) {
	v, err := s.createCertificateVersion(r, id, actor)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeView(w, r, v)
}

func (s *Server) createCertificateVersion(r *http.Request, id, actor string) (store.Version, error) {
	f, err := decodeBody(r, http.StatusUnprocessableEntity, "value", "transitional")
	if err == nil && isNull(f["value"]) {
		err = badRequest(msgMissingValue)
	}
	var nv store.NewVersion
	if err == nil {
		nv.Cert.Transitional, err = optionalBool(f["transitional"])
	}
	if err == nil {
		err = s.parseCertificateValue(r, f["value"], &nv)
	}
	var c store.CredentialRef
	if err == nil {
		c, err = s.certificateByID(r, id, actor, auth.OpWrite)
	}
	if err != nil {
		return store.Version{}, err
	}
	nv.Name, nv.Type = c.Name, store.TypeCert
	return s.writeCertificateVersion(r, nv)
}

// handleUpdateTransitionalVersion is PUT
// /api/v1/certificates/{id}/update_transitional_version {"version": uuid}:
// the named version becomes the only transitional one ("latest": the
// newest version; null or absent: none), and the answer is the active and
// transitional versions, as current=true lists them.
func (s *Server) handleUpdateTransitionalVersion(w http.ResponseWriter, r *http.Request, id, actor string) {
	vs, err := s.updateTransitionalVersion(r, id, actor)
	views, ok := s.versionViews(w, r, vs, err)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, views)
}

func (s *Server) updateTransitionalVersion(r *http.Request, id, actor string) ([]store.Version, error) {
	f, err := decodeBody(r, http.StatusUnprocessableEntity, "version")
	var want string
	if err == nil {
		want, err = unmarshalString(f["version"])
	}
	var c store.CredentialRef
	if err == nil {
		c, err = s.certificateByID(r, id, actor, auth.OpWrite)
	}
	if err != nil {
		return nil, err
	}
	s.transitionalMu.Lock()
	defer s.transitionalMu.Unlock()
	versionID := ""
	switch {
	case isNull(f["version"]):
	case want == "latest":
		// CredHub's handler: the newest version whose certificate parses.
		vs, err := s.store.Versions(r.Context(), c.Name, 0)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if _, ok := parseCert(v.Cert.Certificate.String); ok {
				versionID = v.ID
				break
			}
		}
	default:
		v, err := s.store.ByID(r.Context(), want)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (v.Type != store.TypeCert || !strings.EqualFold(v.Name, c.Name))) {
			err = badRequest(msgMismatchedVersion)
		}
		if err != nil {
			return nil, err
		}
		versionID = v.ID
	}
	if err := s.store.SetTransitional(r.Context(), c.UUID, versionID); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = badRequest(msgMismatchedVersion) // deleted meanwhile
		}
		return nil, err
	}
	return s.currentVersions(r, c.Name)
}

// handleDeleteCertificateVersion is DELETE
// /api/v1/certificates/{id}/versions/{version}: 200 with the deleted
// version's view; a version that is not the certificate's is 404, the
// certificate's only version 400.
func (s *Server) handleDeleteCertificateVersion(w http.ResponseWriter, r *http.Request, id, versionID, actor string) {
	c, err := s.certificateByID(r, id, actor, auth.OpDelete)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.store.ByID(r.Context(), versionID)
	if err == nil && !strings.EqualFold(v.Name, c.Name) {
		err = errNotFound
	}
	if err == nil {
		err = s.store.DeleteVersion(r.Context(), c.UUID, v.ID)
		if errors.Is(err, store.ErrLastVersion) {
			err = badRequest(msgCannotDeleteLastVersion)
		}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeView(w, r, v)
}
