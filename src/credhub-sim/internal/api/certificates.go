package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/credhub-perf/credhub-sim/internal/auth"
	"github.com/credhub-perf/credhub-sim/internal/store"
)

// msgTransitionalUnsupported is the sim's own answer: it keeps no
// transitional certificate versions (CredHub's rotation flow).
const msgTransitionalUnsupported = "credhub-sim does not implement transitional certificate versions (set_as_transitional)."

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
func (s *Server) certificateByID(r *http.Request, id, actor string, op auth.Operation) (string, error) {
	c, err := s.store.CredentialByUUID(r.Context(), id)
	if err != nil {
		return "", err
	}
	if err := s.requirePermission(r, actor, c.Name, op); err != nil {
		return "", err
	}
	typ, err := s.store.LatestType(r.Context(), c.Name)
	if err != nil {
		return "", err
	}
	if typ != store.TypeCert {
		return "", errNotFound
	}
	return c.Name, nil
}

// handleCertificateVersions is GET /api/v1/certificates/{id}/versions: a
// JSON array of certificate views, newest first (current=true: the newest).
func (s *Server) handleCertificateVersions(w http.ResponseWriter, r *http.Request, id, actor string) {
	name, err := s.certificateByID(r, id, actor, auth.OpRead)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	limit := 0
	if strings.EqualFold(r.URL.Query().Get("current"), "true") {
		limit = 1
	}
	views, ok := s.versionViews(w, r, name, limit)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, views)
}

// handleCertificateRegenerate is POST /api/v1/certificates/{id}/regenerate
// with an optional {"set_as_transitional": false, "metadata": ...}.
func (s *Server) handleCertificateRegenerate(w http.ResponseWriter, r *http.Request, id, actor string) {
	f := map[string]json.RawMessage{}
	if r.ContentLength != 0 {
		body, err := readJSONBody(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			keys, fields, err := decodeObject(body)
			if err != nil {
				writeError(w, http.StatusBadRequest, msgBadRequest)
				return
			}
			if k := firstUnknown(keys, "set_as_transitional", "metadata"); k != "" {
				writeError(w, http.StatusBadRequest, fmt.Sprintf(msgInvalidJSONKey, k))
				return
			}
			f = fields
		}
	}
	if !isNull(f["set_as_transitional"]) {
		t, err := unmarshalBool(f["set_as_transitional"])
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if t {
			writeError(w, http.StatusBadRequest, msgTransitionalUnsupported)
			return
		}
	}
	metadata, err := metadataOf(f["metadata"])
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name, err := s.certificateByID(r, id, actor, auth.OpWrite)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v, used, err := s.regenerateName(r, name, metadata)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeGenerateView(w, r, v, used)
}
