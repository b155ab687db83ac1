package api

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/credhub-perf/credhub-sim/internal/auth"
	"github.com/credhub-perf/credhub-sim/internal/store"
)

// apiError is a client error with CredHub's status and message.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(msg string) *apiError { return &apiError{http.StatusBadRequest, msg} }

var errNotFound = &apiError{http.StatusNotFound, msgInvalidAccess}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		writeError(w, ae.status, ae.msg)
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, msgInvalidAccess)
		return
	}
	s.internalError(w, r, err)
}

// normaliseName applies CredHub's name rules: leading "/" added, at most
// 1024 characters, a restricted character set, no "//" and no trailing "/".
func normaliseName(name string) (string, error) {
	if name == "" {
		return "", badRequest(msgMissingName)
	}
	if !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	if len(name) > 1024 {
		return "", badRequest(msgNameTooLong)
	}
	if strings.Contains(name, "//") || strings.HasSuffix(name, "/") {
		return "", badRequest(msgInvalidSlashInName)
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("-_/.:,()[]+", c):
		default:
			return "", badRequest(msgInvalidCharInName)
		}
	}
	return name, nil
}

// lookupName is the lenient form used by get and delete: only the leading
// "/" is added.
func lookupName(name string) string {
	if !strings.HasPrefix(name, "/") {
		return "/" + name
	}
	return name
}

func readJSONBody(r *http.Request) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return nil, badRequest(msgInvalidContentType)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, badRequest(msgBadRequest)
	}
	if len(body) > maxBodyBytes {
		return nil, &apiError{http.StatusRequestEntityTooLarge, msgExceedsMaximumSize}
	}
	return body, nil
}

func unmarshalString(raw json.RawMessage) (string, error) {
	if isNull(raw) {
		return "", nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", badRequest(msgBadRequest)
	}
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	case float64, bool:
		// Jackson coerces scalars into String fields.
		return strings.TrimSpace(string(raw)), nil
	}
	return "", badRequest(msgBadRequest)
}

func unmarshalBool(raw json.RawMessage) (bool, error) {
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, badRequest(msgBadRequest)
	}
	return b, nil
}

// metadataOf validates and compacts the optional metadata field.
func metadataOf(raw json.RawMessage) (sql.NullString, error) {
	if isNull(raw) {
		return sql.NullString{}, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return sql.NullString{}, badRequest(msgBadRequest)
	}
	if utf8.RuneCount(buf.Bytes()) > maxMetadataChars {
		return sql.NullString{}, badRequest(msgMetadataTooLong)
	}
	return sql.NullString{String: buf.String(), Valid: true}, nil
}

var setTypes = map[string]string{
	"value": store.TypeValue, "json": store.TypeJSON, "password": store.TypePassword, "user": store.TypeUser,
	"certificate": store.TypeCert, "ssh": store.TypeSSH, "rsa": store.TypeRSA,
}

// handleSet is PUT /api/v1/data: always a new version (CredHub >= 2.0).
func (s *Server) handleSet(w http.ResponseWriter, r *http.Request, actor string) {
	nv, err := s.parseSet(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	auditDetails(r, "SET", setCredentialDetails{Name: nv.Name, Type: nv.Type})
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.requirePermission(r, actor, nv.Name, auth.OpWrite); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.checkType(r, nv.Name, nv.Type); err != nil {
		s.fail(w, r, err)
		return
	}
	v, err := s.store.Write(r.Context(), nv)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	auditSet(r, v)
	s.writeView(w, r, v)
}

func (s *Server) checkType(r *http.Request, name, typ string) error {
	existing, err := s.store.LatestType(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if existing != typ {
		return badRequest(msgTypeMismatch)
	}
	return nil
}

func (s *Server) writeView(w http.ResponseWriter, r *http.Request, v store.Version) {
	view, err := credentialView(v)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

func (s *Server) parseSet(r *http.Request) (store.NewVersion, error) {
	var nv store.NewVersion
	f, err := decodeBody(r, http.StatusUnprocessableEntity, "name", "type", "value", "metadata")
	if err != nil {
		return nv, err
	}
	typeName, err := unmarshalString(f["type"])
	if err != nil {
		return nv, err
	}
	dbType, ok := setTypes[strings.ToLower(typeName)]
	if !ok {
		// Jackson cannot pick the request subtype: CredHub answers 422.
		return nv, &apiError{http.StatusUnprocessableEntity, msgInvalidTypeSet}
	}
	nv.Type = dbType
	name, err := unmarshalString(f["name"])
	if err != nil {
		return nv, err
	}
	if nv.Name, err = normaliseName(name); err != nil {
		return nv, err
	}
	if nv.Metadata, err = metadataOf(f["metadata"]); err != nil {
		return nv, err
	}
	raw := f["value"]
	switch dbType {
	case store.TypeValue, store.TypePassword:
		v, err := unmarshalString(raw)
		if err != nil {
			return nv, err
		}
		if v == "" {
			return nv, badRequest(msgMissingValue)
		}
		nv.Secret = []byte(v)
	case store.TypeJSON:
		if isNull(raw) {
			return nv, badRequest(msgMissingValue)
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nv, badRequest(msgBadRequest)
		}
		if len(obj) == 0 {
			return nv, badRequest(msgMissingValue)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return nv, badRequest(msgBadRequest)
		}
		nv.Secret = buf.Bytes()
	case store.TypeUser:
		v, err := valueStrings(raw, http.StatusUnprocessableEntity, "username", "password")
		if err != nil {
			return nv, err
		}
		if v["password"] == "" {
			return nv, badRequest(msgMissingPassword)
		}
		nv.Username = sql.NullString{String: v["username"], Valid: v["username"] != ""}
		nv.Secret = []byte(v["password"])
		if nv.Salt, err = randomSalt(); err != nil {
			return nv, err
		}
	case store.TypeCert:
		if err := s.parseCertificateValue(r, raw, &nv); err != nil {
			return nv, err
		}
	case store.TypeSSH, store.TypeRSA:
		v, err := valueStrings(raw, http.StatusUnprocessableEntity, "public_key", "private_key")
		if err != nil {
			return nv, err
		}
		pub, priv := v["public_key"], v["private_key"]
		if pub == "" && priv == "" {
			return nv, badRequest(msgMissingRSASSH)
		}
		nv.PublicKey = sql.NullString{String: pub, Valid: pub != ""}
		if priv != "" {
			nv.Secret = []byte(priv)
		}
	}
	return nv, nil
}

// valueStrings decodes an object-valued "value" of string fields: it
// rejects unknown keys with the given status (422 on set, 400 on
// generate, as CredHub answers), then reads the allowed ones in order ("":
// absent).
func valueStrings(raw json.RawMessage, unknownStatus int, allowed ...string) (map[string]string, error) {
	if isNull(raw) {
		return nil, badRequest(msgMissingValue)
	}
	keys, fields, err := objectOf(raw)
	if err != nil {
		return nil, err
	}
	if err := onlyKeys(keys, unknownStatus, allowed...); err != nil {
		return nil, err
	}
	vals := make(map[string]string, len(allowed))
	for _, k := range allowed {
		if vals[k], err = unmarshalString(fields[k]); err != nil {
			return nil, err
		}
	}
	return vals, nil
}

func parseCert(p string) (*x509.Certificate, bool) {
	block, _ := pem.Decode([]byte(p))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, false
	}
	c, err := x509.ParseCertificate(block.Bytes)
	return c, err == nil
}

func (s *Server) parseCertificateValue(r *http.Request, raw json.RawMessage, nv *store.NewVersion) error {
	vals, err := valueStrings(raw, http.StatusUnprocessableEntity, "ca", "ca_name", "certificate", "private_key")
	if err != nil {
		return err
	}
	if vals["ca"] == "" && vals["ca_name"] == "" && vals["certificate"] == "" && vals["private_key"] == "" {
		return badRequest(msgMissingCertCredentials)
	}
	if vals["ca"] != "" && vals["ca_name"] != "" {
		return badRequest(msgMixedCANameAndCA)
	}
	for _, k := range []string{"ca", "certificate"} {
		if utf8.RuneCountInString(vals[k]) >= maxMetadataChars { // the same 7000 as CredHub's PEM columns
			return badRequest(msgCertificateTooLong)
		}
	}
	ca := vals["ca"]
	if vals["ca_name"] != "" {
		caName := lookupName(vals["ca_name"])
		caVersion, err := s.activeVersion(r, caName)
		if err != nil {
			return err
		}
		caCert, ok := parseCert(caVersion.Cert.Certificate.String)
		if caVersion.Type != store.TypeCert || !ok || !caCert.IsCA {
			return badRequest(msgNotACAName)
		}
		ca = caVersion.Cert.Certificate.String
		nv.Cert.CAName = sql.NullString{String: caName, Valid: true}
	}
	if ca != "" {
		if c, ok := parseCert(ca); !ok || !c.IsCA {
			return badRequest(msgInvalidCA)
		}
		nv.Cert.CA = sql.NullString{String: ca, Valid: true}
	}
	var leaf *x509.Certificate
	if vals["certificate"] != "" {
		c, ok := parseCert(vals["certificate"])
		if !ok {
			return badRequest(msgInvalidCertificate)
		}
		leaf = c
		nv.Cert.Certificate = sql.NullString{String: vals["certificate"], Valid: true}
		nv.Cert.ExpiryDate = sql.NullInt64{Int64: c.NotAfter.UnixMilli(), Valid: true}
		nv.Cert.CertificateAuthority = c.IsCA
		nv.Cert.SelfSigned = bytes.Equal(c.RawIssuer, c.RawSubject) && c.CheckSignatureFrom(c) == nil
	}
	// CredHub's set validation: the key parses, matches the certificate,
	// and the certificate is signed by the CA it names.
	if vals["private_key"] != "" {
		key, err := parsePrivateKeyPEM(vals["private_key"])
		if err != nil {
			return badRequest(msgMalformedPrivateKey)
		}
		if leaf != nil && !publicKeyMatches(leaf.PublicKey, key) {
			return badRequest(msgMismatchedCertAndKey)
		}
	}
	if leaf != nil && ca != "" {
		caCert, _ := parseCert(ca)
		if leaf.CheckSignatureFrom(caCert) != nil {
			if vals["ca_name"] != "" {
				return badRequest(msgNotSignedByCAName)
			}
			return badRequest(msgNotSignedByCA)
		}
	}
	nv.Cert.Generated = sql.NullBool{Bool: false, Valid: true}
	if vals["private_key"] != "" {
		nv.Secret = []byte(vals["private_key"])
	}
	return nil
}

// handleGet is GET /api/v1/data: by name (all, current or newest K
// versions), or a find by path or name-like.
func (s *Server) handleGet(w http.ResponseWriter, r *http.Request, actor string) {
	q := r.URL.Query()
	switch {
	case q.Has("name"):
		s.getByName(w, r, actor, q)
	case q.Has("path"):
		p := q.Get("path")
		auditDetails(r, "FIND", findCredentialDetails{Path: &p, ExpiresWithinDays: q.Get("expires-within-days")})
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		if !strings.HasSuffix(p, "/") {
			p += "/"
		}
		s.find(w, r, actor, func() ([]store.Summary, error) { return s.store.FindByPath(r.Context(), p) })
	case q.Has("name-like"):
		like := q.Get("name-like")
		auditDetails(r, "FIND", findCredentialDetails{NameLike: &like, ExpiresWithinDays: q.Get("expires-within-days")})
		s.find(w, r, actor, func() ([]store.Summary, error) { return s.store.FindByNameLike(r.Context(), q.Get("name-like")) })
	default:
		writeError(w, http.StatusBadRequest, fmt.Sprintf(msgMissingQueryParam, "name"))
	}
}

func (s *Server) getByName(w http.ResponseWriter, r *http.Request, actor string, q map[string][]string) {
	name := first(q["name"])
	if name == "" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf(msgMissingQueryParam, "name"))
		return
	}
	_, hasCurrent := q["current"]
	_, hasVersions := q["versions"]
	if hasCurrent && hasVersions {
		writeError(w, http.StatusBadRequest, msgVersionsAndCurrent)
		return
	}
	limit := 0
	current := hasCurrent && strings.EqualFold(first(q["current"]), "true")
	if hasVersions {
		n, err := strconv.Atoi(first(q["versions"]))
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf(msgInvalidQueryParam, "versions"))
			return
		}
		limit = n
	}
	details := getCredentialDetails{Name: name, Current: current}
	if hasVersions {
		details.Versions = &limit
	}
	auditDetails(r, "GET", details)
	name = lookupName(name)
	if err := s.requirePermission(r, actor, name, auth.OpRead); err != nil {
		s.fail(w, r, err)
		return
	}
	if hasVersions && limit == 0 {
		// CredHub finds no versions to return and answers as for a
		// missing credential.
		writeError(w, http.StatusNotFound, msgInvalidAccess)
		return
	}
	var vs []store.Version
	var err error
	if current {
		vs, err = s.currentVersions(r, name)
	} else {
		vs, err = s.store.Versions(r.Context(), name, limit)
	}
	views, ok := s.versionViews(w, r, vs, err)
	if !ok {
		return
	}
	for _, v := range vs {
		auditAdd(r, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": views})
}

// currentVersions is what current=true answers: the newest version, and
// for a certificate CredHub's findActiveWithTransitional, the active
// (newest non-transitional) version followed by the transitional one, each
// when there is one.
func (s *Server) currentVersions(r *http.Request, name string) ([]store.Version, error) {
	vs, err := s.store.Versions(r.Context(), name, 1)
	if err != nil || vs[0].Type != store.TypeCert {
		return vs, err
	}
	newest := vs[0]
	other, err := s.store.LatestCertificate(r.Context(), name, !newest.Cert.Transitional)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return vs, nil
	case err != nil:
		return nil, err
	case newest.Cert.Transitional:
		return []store.Version{other, newest}, nil
	}
	return []store.Version{newest, other}, nil
}

// activeVersion is name's newest version, or for a certificate its newest
// non-transitional one: what CredHub signs with and regenerates from.
func (s *Server) activeVersion(r *http.Request, name string) (store.Version, error) {
	vs, err := s.store.Versions(r.Context(), name, 1)
	if err != nil {
		return store.Version{}, err
	}
	if vs[0].Type == store.TypeCert && vs[0].Cert.Transitional {
		return s.store.LatestCertificate(r.Context(), name, false)
	}
	return vs[0], nil
}

// versionViews renders the versions a query (whose error is err) found as
// API views; false means it answered the request with the error.
func (s *Server) versionViews(w http.ResponseWriter, r *http.Request, vs []store.Version, err error) ([]json.RawMessage, bool) {
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	views := make([]json.RawMessage, 0, len(vs))
	for _, v := range vs {
		view, err := credentialView(v)
		if err != nil {
			s.internalError(w, r, err)
			return nil, false
		}
		views = append(views, view)
	}
	return views, true
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

type findResult struct {
	VersionCreatedAt string `json:"version_created_at"`
	Name             string `json:"name"`
	ExpiryDate       string `json:"expiry_date,omitempty"` // only with expires-within-days
}

func (s *Server) find(w http.ResponseWriter, r *http.Request, actor string, query func() ([]store.Summary, error)) {
	var within *int
	if q := r.URL.Query(); q.Has("expires-within-days") {
		n, err := strconv.Atoi(q.Get("expires-within-days"))
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf(msgInvalidQueryParam, "expires-within-days"))
			return
		}
		within = &n
	}
	found, err := query()
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	out := make([]findResult, 0, len(found))
	for _, f := range found {
		ok, err := s.permitted(r, actor, f.Name, auth.OpRead)
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		if !ok {
			continue
		}
		res := findResult{VersionCreatedAt: formatTime(f.CreatedAt), Name: f.Name}
		if within != nil {
			vs, err := s.store.Versions(r.Context(), f.Name, 1)
			if err != nil || vs[0].Type != store.TypeCert || !vs[0].Cert.ExpiryDate.Valid {
				continue
			}
			if time.UnixMilli(vs[0].Cert.ExpiryDate.Int64).After(time.Now().AddDate(0, 0, *within)) {
				continue
			}
			res.ExpiryDate = formatTime(vs[0].Cert.ExpiryDate.Int64)
		}
		out = append(out, res)
	}
	writeJSON(w, http.StatusOK, map[string]any{"credentials": out})
}

func (s *Server) handleGetByID(w http.ResponseWriter, r *http.Request, id, actor string) {
	auditDetails(r, "GET", byIDDetails{UUID: id})
	v, err := s.store.ByID(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	auditSet(r, v)
	if err := s.requirePermission(r, actor, v.Name, auth.OpRead); err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeView(w, r, v)
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request, actor string) {
	name := r.URL.Query().Get("name")
	if name == "" {
		writeError(w, http.StatusBadRequest, fmt.Sprintf(msgMissingQueryParam, "name"))
		return
	}
	name = lookupName(name)
	auditDetails(r, "DELETE", nameDetails{Name: name})
	if err := s.requirePermission(r, actor, name, auth.OpDelete); err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.store.Delete(r.Context(), name); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleInterpolate replaces every service binding's credentials object
// that holds a credhub-ref with the referenced JSON credential's value.
// Any failing reference fails the whole request.
func (s *Server) handleInterpolate(w http.ResponseWriter, r *http.Request, actor string) {
	auditDetails(r, "INTERPOLATE", noDetails{})
	body, err := readJSONBody(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || doc == nil {
		writeError(w, http.StatusBadRequest, msgBadRequest)
		return
	}
	for _, services := range doc {
		list, ok := services.([]any)
		if !ok {
			continue
		}
		for _, binding := range list {
			b, ok := binding.(map[string]any)
			if !ok {
				continue
			}
			creds, ok := b["credentials"].(map[string]any)
			if !ok {
				continue
			}
			ref, ok := creds["credhub-ref"].(string)
			if !ok {
				if ref, ok = creds["credhub_ref"].(string); !ok {
					continue
				}
			}
			name := strings.TrimSuffix(strings.TrimPrefix(ref, "(("), "))")
			if err := s.requirePermission(r, actor, name, auth.OpRead); err != nil {
				s.fail(w, r, err)
				return
			}
			vs, err := s.store.Versions(r.Context(), name, 1)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			auditAdd(r, vs[0])
			if vs[0].Type != store.TypeJSON {
				writeError(w, http.StatusBadRequest, fmt.Sprintf(msgInterpolationType, name))
				return
			}
			b["credentials"] = json.RawMessage(vs[0].Secret)
		}
	}
	writeJSON(w, http.StatusOK, doc)
}

func parsePrivateKeyPEM(p string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	k, err := parsePrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("not a signing key")
	}
	return signer, nil
}

func publicKeyMatches(pub any, key crypto.Signer) bool {
	eq, ok := pub.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(key.Public())
}
