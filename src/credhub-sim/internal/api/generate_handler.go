package api

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // subject key identifiers are SHA-1 by RFC 5280
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-sim/internal/auth"
	"github.com/credhub-perf/credhub-sim/internal/store"
)

var generateTypes = map[string]string{
	"password": store.TypePassword, "user": store.TypeUser, "certificate": store.TypeCert,
	"ssh": store.TypeSSH, "rsa": store.TypeRSA,
}

const (
	modeOverwrite   = "overwrite"
	modeNoOverwrite = "no-overwrite"
	modeConverge    = "converge"
)

type generateRequest struct {
	name     string
	dbType   string
	mode     string
	metadata sql.NullString
	params   json.RawMessage
	value    json.RawMessage
	// transitional marks the new certificate version transitional
	// (set_as_transitional on the certificates endpoint's regenerate).
	transitional bool
}

// handleGenerate is POST /api/v1/data: generate (or regenerate) with
// CredHub's overwrite/mode semantics; default mode is converge.
func (s *Server) handleGenerate(w http.ResponseWriter, r *http.Request, actor string) {
	f, err := decodeBody(r, http.StatusBadRequest, "name", "type", "parameters", "overwrite", "mode", "metadata", "value", "regenerate")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !isNull(f["regenerate"]) {
		regen, err := unmarshalBool(f["regenerate"])
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if regen {
			// The generate handler is @Synchronized in CredHub, whatever
			// its body asks for.
			s.regenerate(w, r, actor, f, true)
			return
		}
	}
	req, err := parseGenerate(f)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	auditDetails(r, "GENERATE", setCredentialDetails{Name: req.name, Type: req.dbType})
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if err := s.requirePermission(r, actor, req.name, auth.OpWrite); err != nil {
		s.fail(w, r, err)
		return
	}
	v, used, err := s.generate(r, req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	auditSet(r, v)
	s.writeGenerateView(w, r, v, used)
}

// writeGenerateView is the view of a generate or regenerate: certificates
// also carry duration_overridden, duration_used and key_length, as
// CredHub's generate responses do (a get does not).
func (s *Server) writeGenerateView(w http.ResponseWriter, r *http.Request, v store.Version, used *certParams) {
	view, err := credentialView(v)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	if used != nil && v.Type == store.TypeCert && len(view) > 1 {
		extra := fmt.Sprintf(`,"duration_overridden":false,"duration_used":%d,"key_length":%d}`, used.Duration, used.KeyLength)
		view = append(view[:len(view)-1:len(view)-1], extra...)
	}
	writeJSON(w, http.StatusOK, view)
}

func parseGenerate(f map[string]json.RawMessage) (generateRequest, error) {
	var req generateRequest
	typeName, err := unmarshalString(f["type"])
	if err != nil {
		return req, err
	}
	switch strings.ToLower(typeName) {
	case "value", "json":
		return req, badRequest(msgCannotGenerateType)
	}
	var ok bool
	if req.dbType, ok = generateTypes[strings.ToLower(typeName)]; !ok {
		return req, badRequest(msgInvalidTypeGenerate)
	}
	name, err := unmarshalString(f["name"])
	if err != nil {
		return req, err
	}
	if req.name, err = normaliseName(name); err != nil {
		return req, err
	}
	hasOverwrite, hasMode := !isNull(f["overwrite"]), !isNull(f["mode"])
	if hasOverwrite && hasMode {
		return req, badRequest(msgOverwriteAndMode)
	}
	req.mode = modeConverge
	switch {
	case hasOverwrite:
		ow, err := unmarshalBool(f["overwrite"])
		if err != nil {
			return req, err
		}
		req.mode = modeNoOverwrite
		if ow {
			req.mode = modeOverwrite
		}
	case hasMode:
		m, err := unmarshalString(f["mode"])
		if err != nil {
			return req, err
		}
		switch strings.ToLower(m) {
		case modeOverwrite, modeNoOverwrite, modeConverge:
			req.mode = strings.ToLower(m)
		default:
			return req, badRequest(msgInvalidMode)
		}
	}
	if req.metadata, err = metadataOf(f["metadata"]); err != nil {
		return req, err
	}
	req.params = f["parameters"]
	req.value = f["value"]
	return req, nil
}

// decodeParams fills dst from a parameters object, rejecting unknown keys
// with 400 as CredHub does for generate.
func decodeParams(raw json.RawMessage, dst any, allowed ...string) error {
	if isNull(raw) {
		return nil
	}
	keys, _, err := objectOf(raw)
	if err != nil {
		return err
	}
	if err := onlyKeys(keys, http.StatusBadRequest, allowed...); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return badRequest(msgBadRequest)
	}
	return nil
}

var passwordParamKeys = []string{"length", "exclude_upper", "exclude_lower", "exclude_number", "include_special", "only_hex"}

// generate decides, under the write lock, whether to write a new version.
// For certificates it also returns the parameters used.
func (s *Server) generate(r *http.Request, req generateRequest) (store.Version, *certParams, error) {
	var used *certParams
	v, err := s.generateVersion(r, req, &used)
	return v, used, err
}

func (s *Server) generateVersion(r *http.Request, req generateRequest, used **certParams) (store.Version, error) {
	var existing *store.Version
	vs, err := s.store.Versions(r.Context(), req.name, 1)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return store.Version{}, err
	default:
		existing = &vs[0]
		if existing.Type != req.dbType {
			return store.Version{}, badRequest(msgTypeMismatch)
		}
	}
	nv := store.NewVersion{Name: req.name, Type: req.dbType, Metadata: req.metadata}
	var same bool // converge: would the request produce what is stored?
	switch req.dbType {
	case store.TypePassword, store.TypeUser:
		var p passwordParams
		if err := decodeParams(req.params, &p, passwordParamKeys...); err != nil {
			return store.Version{}, err
		}
		p.normalise()
		if !p.OnlyHex && p.ExcludeUpper && p.ExcludeLower && p.ExcludeNumber && !p.IncludeSpecial {
			return store.Version{}, badRequest(msgExcludesAllCharsets)
		}
		nv.Params = canonicalJSON(p)
		username := ""
		if req.dbType == store.TypeUser && !isNull(req.value) {
			v, err := valueStrings(req.value, http.StatusBadRequest, "username")
			if err != nil {
				return store.Version{}, err
			}
			username = v["username"]
		}
		same = existing != nil && existing.Params != nil && bytes.Equal(existing.Params, nv.Params) &&
			(username == "" || existing.Username.String == username)
		if existing == nil || req.mode == modeOverwrite || (req.mode == modeConverge && !same) {
			pw, err := generatePassword(p)
			if err != nil {
				return store.Version{}, badRequest(msgExcludesAllCharsets)
			}
			nv.Secret = []byte(pw)
			if req.dbType == store.TypeUser {
				if username == "" {
					if username, err = randomUsername(); err != nil {
						return store.Version{}, err
					}
				}
				nv.Username = sql.NullString{String: username, Valid: true}
				if nv.Salt, err = randomSalt(); err != nil {
					return store.Version{}, err
				}
			}
		}
	case store.TypeRSA, store.TypeSSH:
		var p keyParams
		allowed := []string{"key_length"}
		if req.dbType == store.TypeSSH {
			allowed = append(allowed, "ssh_comment")
		}
		if err := decodeParams(req.params, &p, allowed...); err != nil {
			return store.Version{}, err
		}
		if err := p.validate(); err != nil {
			return store.Version{}, badRequest(err.Error())
		}
		same = existing != nil && storedKeyLength(existing.Secret) == p.KeyLength &&
			(req.dbType == store.TypeRSA || sshComment(existing.PublicKey.String) == p.SSHComment)
		if existing == nil || req.mode == modeOverwrite || (req.mode == modeConverge && !same) {
			var priv, pub string
			if req.dbType == store.TypeRSA {
				priv, pub, _, err = generateRSA(p.KeyLength)
			} else {
				priv, pub, err = generateSSH(p)
			}
			if err != nil {
				return store.Version{}, err
			}
			nv.Secret, nv.PublicKey = []byte(priv), sql.NullString{String: pub, Valid: true}
		}
	case store.TypeCert:
		p, err := parseCertParams(req.params)
		if err != nil {
			return store.Version{}, err
		}
		*used = &p
		same = existing != nil && p.matches(existing)
		if same && req.mode == modeConverge {
			if same, err = s.signerUnchanged(r, existing); err != nil {
				return store.Version{}, err
			}
		}
		if existing == nil || req.mode == modeOverwrite || (req.mode == modeConverge && !same) {
			if err := s.generateCertificate(r, p, &nv); err != nil {
				return store.Version{}, err
			}
		}
	}
	if nv.Secret == nil && existing != nil {
		return *existing, nil // no-overwrite, or converge with nothing to change
	}
	nv.Cert.Transitional = req.transitional && req.dbType == store.TypeCert
	return s.writeCertificateVersion(r, nv)
}

// writeCertificateVersion writes nv; a transitional certificate version
// only while the credential has none, as CredHub's certificate service
// checks when it saves one (after generating it, so a regenerate that
// cannot be done fails with that error first).
func (s *Server) writeCertificateVersion(r *http.Request, nv store.NewVersion) (store.Version, error) {
	if !nv.Cert.Transitional {
		return s.store.Write(r.Context(), nv)
	}
	// transitionalMu keeps the check and the write together within this
	// instance; it is not CredHub's @Synchronized (the certificates
	// endpoints have none), so it is not writeMu.
	s.transitionalMu.Lock()
	defer s.transitionalMu.Unlock()
	if _, err := s.store.LatestCertificate(r.Context(), nv.Name, true); err == nil {
		return store.Version{}, badRequest(msgTooManyTransitional)
	} else if !errors.Is(err, store.ErrNotFound) {
		return store.Version{}, err
	}
	return s.store.Write(r.Context(), nv)
}

// signerUnchanged is converge's check of a signed certificate (CredHub's
// shouldWriteNewCredential): it is current only while its stored CA is
// its CA's active version, so once a rotation makes a new CA version
// active, the next converge generate (a deploy) reissues it.
func (s *Server) signerUnchanged(r *http.Request, existing *store.Version) (bool, error) {
	caName := existing.Cert.CAName
	if !caName.Valid || strings.EqualFold(caName.String, existing.Name) {
		return true, nil
	}
	ca, err := s.activeVersion(r, caName.String)
	if err != nil {
		return false, err
	}
	return existing.Cert.CA.String == ca.Cert.Certificate.String, nil
}

// handleRegenerate is POST /api/v1/regenerate {"name"}.
func (s *Server) handleRegenerate(w http.ResponseWriter, r *http.Request, actor string) {
	f, err := decodeBody(r, http.StatusBadRequest, "name", "metadata")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// CredHub's regenerate controller is not @Synchronized (only set and
	// generate are), so this one does not take the write lock.
	s.regenerate(w, r, actor, f, false)
}

// regenerate is {"name", "regenerate": true} or POST /api/v1/regenerate: a
// new version with the stored generation parameters and the request's
// metadata (none when it has none, as in CredHub).
func (s *Server) regenerate(w http.ResponseWriter, r *http.Request, actor string, f map[string]json.RawMessage, synchronised bool) {
	// "type" is accepted (the credhub CLI's regenerate may send it) and,
	// like CredHub, not used: the stored type decides.
	for _, k := range []string{"parameters", "overwrite", "mode", "value"} {
		if !isNull(f[k]) {
			writeError(w, http.StatusBadRequest, fmt.Sprintf(msgInvalidJSONKey, k))
			return
		}
	}
	name, err := unmarshalString(f["name"])
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if name, err = normaliseName(name); err != nil {
		s.fail(w, r, err)
		return
	}
	auditDetails(r, "REGENERATE", nameDetails{Name: name})
	metadata, err := metadataOf(f["metadata"])
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if synchronised {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
	}
	if err := s.requirePermission(r, actor, name, auth.OpWrite); err != nil {
		s.fail(w, r, err)
		return
	}
	v, used, err := s.regenerateName(r, name, metadata)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	auditSet(r, v)
	s.writeGenerateView(w, r, v, used)
}

// regenerateName writes a new version of name from its stored generation
// parameters.
func (s *Server) regenerateName(r *http.Request, name string, metadata sql.NullString) (store.Version, *certParams, error) {
	vs, err := s.store.Versions(r.Context(), name, 1)
	if err != nil {
		return store.Version{}, nil, err
	}
	return s.regenerateVersion(r, vs[0], metadata, false)
}

// regenerateVersion writes a new version from old's generation parameters,
// transitional (a certificate only) when asked.
func (s *Server) regenerateVersion(r *http.Request, old store.Version, metadata sql.NullString, transitional bool) (store.Version, *certParams, error) {
	req := generateRequest{name: old.Name, dbType: old.Type, mode: modeOverwrite, metadata: metadata, transitional: transitional}
	switch old.Type {
	case store.TypePassword, store.TypeUser:
		if old.Params == nil {
			msg := msgCannotRegenPassword
			if old.Type == store.TypeUser {
				msg = msgCannotRegenUser
			}
			return store.Version{}, nil, badRequest(msg)
		}
		req.params = old.Params
		if old.Type == store.TypeUser && old.Username.Valid {
			req.value, _ = json.Marshal(map[string]string{"username": old.Username.String})
		}
	case store.TypeRSA:
		req.params, _ = json.Marshal(keyParams{KeyLength: storedKeyLength(old.Secret)})
	case store.TypeSSH:
		req.params, _ = json.Marshal(keyParams{KeyLength: storedKeyLength(old.Secret), SSHComment: sshComment(old.PublicKey.String)})
	case store.TypeCert:
		c, ok := parseCert(old.Cert.Certificate.String)
		if !ok {
			return store.Version{}, nil, badRequest(msgCannotRegenCertificate)
		}
		req.params, _ = json.Marshal(certParamsFrom(c, old.Cert.CAName.String))
	default:
		return store.Version{}, nil, badRequest(msgCannotGenerateType)
	}
	return s.generate(r, req)
}

func storedKeyLength(privPEM []byte) int {
	block, _ := pem.Decode(privPEM)
	if block == nil {
		return 0
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k.N.BitLen()
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if rk, ok := k.(*rsa.PrivateKey); ok {
			return rk.N.BitLen()
		}
	}
	return 0
}

func sshComment(authorized string) string {
	parts := strings.SplitN(authorized, " ", 3)
	if len(parts) == 3 {
		return parts[2]
	}
	return ""
}

type certParams struct {
	CommonName       string   `json:"common_name,omitempty"`
	Organization     string   `json:"organization,omitempty"`
	OrganizationUnit string   `json:"organization_unit,omitempty"`
	Locality         string   `json:"locality,omitempty"`
	State            string   `json:"state,omitempty"`
	Country          string   `json:"country,omitempty"`
	AlternativeNames []string `json:"alternative_names,omitempty"`
	KeyUsage         []string `json:"key_usage,omitempty"`
	ExtendedKeyUsage []string `json:"extended_key_usage,omitempty"`
	KeyLength        int      `json:"key_length,omitempty"`
	Duration         int      `json:"duration,omitempty"`
	CA               string   `json:"ca,omitempty"`
	IsCA             bool     `json:"is_ca,omitempty"`
	SelfSign         bool     `json:"self_sign,omitempty"`
}

var keyUsages = map[string]x509.KeyUsage{
	"digital_signature": x509.KeyUsageDigitalSignature, "non_repudiation": x509.KeyUsageContentCommitment,
	"key_encipherment": x509.KeyUsageKeyEncipherment, "data_encipherment": x509.KeyUsageDataEncipherment,
	"key_agreement": x509.KeyUsageKeyAgreement, "key_cert_sign": x509.KeyUsageCertSign,
	"crl_sign": x509.KeyUsageCRLSign, "encipher_only": x509.KeyUsageEncipherOnly, "decipher_only": x509.KeyUsageDecipherOnly,
}

var keyUsageOrder = []string{"digital_signature", "non_repudiation", "key_encipherment", "data_encipherment",
	"key_agreement", "key_cert_sign", "crl_sign", "encipher_only", "decipher_only"}

var extKeyUsages = map[string]x509.ExtKeyUsage{
	"client_auth": x509.ExtKeyUsageClientAuth, "server_auth": x509.ExtKeyUsageServerAuth,
	"code_signing": x509.ExtKeyUsageCodeSigning, "email_protection": x509.ExtKeyUsageEmailProtection,
	"timestamping": x509.ExtKeyUsageTimeStamping,
}

func parseCertParams(raw json.RawMessage) (certParams, error) {
	var p certParams
	if isNull(raw) {
		return p, badRequest("This request must include a value for 'parameters'.")
	}
	if err := decodeParams(raw, &p, "common_name", "organization", "organization_unit", "locality", "state", "country",
		"alternative_names", "key_usage", "extended_key_usage", "key_length", "duration", "ca", "is_ca", "self_sign"); err != nil {
		return p, err
	}
	if p.CommonName == "" && p.Organization == "" && p.OrganizationUnit == "" && p.Locality == "" && p.State == "" && p.Country == "" {
		return p, badRequest(msgMissingCertParams)
	}
	if p.CA != "" && p.SelfSign {
		return p, badRequest(msgCAAndSelfSign)
	}
	for _, n := range p.AlternativeNames {
		if !validAlternativeName(n) {
			return p, badRequest(msgInvalidAlternateName)
		}
	}
	if p.CA == "" && !p.SelfSign && !p.IsCA {
		return p, badRequest(msgMissingSigningCA)
	}
	switch p.KeyLength {
	case 0:
		p.KeyLength = 2048
	case 2048, 3072, 4096:
	default:
		return p, badRequest(msgInvalidKeyLength)
	}
	if p.Duration == 0 {
		p.Duration = 365
	}
	if p.Duration < 1 || p.Duration > 3650 {
		return p, badRequest("Invalid duration specified. The supported duration values are whole numbers between 1-3650.")
	}
	for _, k := range p.KeyUsage {
		if _, ok := keyUsages[k]; !ok {
			return p, badRequest(fmt.Sprintf("The provided key usage '%s' is not supported. Valid values include 'digital_signature', 'non_repudiation', 'key_encipherment', 'data_encipherment', 'key_agreement', 'key_cert_sign', 'crl_sign', 'encipher_only' and 'decipher_only'.", k))
		}
	}
	for _, k := range p.ExtendedKeyUsage {
		if _, ok := extKeyUsages[k]; !ok {
			return p, badRequest(fmt.Sprintf("The provided extended key usage '%s' is not supported. Valid values include 'client_auth', 'server_auth', 'code_signing', 'email_protection' and 'timestamping'.", k))
		}
	}
	if p.CA != "" {
		p.CA = lookupName(p.CA)
	}
	return p, nil
}

func certParamsFrom(c *x509.Certificate, caName string) certParams {
	one := func(v []string) string {
		if len(v) == 0 {
			return ""
		}
		return v[0]
	}
	p := certParams{
		CommonName: c.Subject.CommonName, Organization: one(c.Subject.Organization),
		OrganizationUnit: one(c.Subject.OrganizationalUnit), Locality: one(c.Subject.Locality),
		State: one(c.Subject.Province), Country: one(c.Subject.Country), IsCA: c.IsCA, CA: caName,
		SelfSign: caName == "",
	}
	p.AlternativeNames = append(p.AlternativeNames, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		p.AlternativeNames = append(p.AlternativeNames, ip.String())
	}
	if k, ok := c.PublicKey.(*rsa.PublicKey); ok {
		p.KeyLength = k.N.BitLen()
	}
	for _, name := range keyUsageOrder {
		if c.KeyUsage&keyUsages[name] != 0 {
			p.KeyUsage = append(p.KeyUsage, name)
		}
	}
	for _, u := range c.ExtKeyUsage {
		for name, v := range extKeyUsages {
			if v == u {
				p.ExtendedKeyUsage = append(p.ExtendedKeyUsage, name)
			}
		}
	}
	p.Duration = int(c.NotAfter.Sub(c.NotBefore).Hours()/24 + 0.5)
	return p
}

// matches is converge's comparison: subject, names, CA-ness, key length and
// signer; duration alone does not regenerate (CredHub >= 2.10).
func (p certParams) matches(v *store.Version) bool {
	c, ok := parseCert(v.Cert.Certificate.String)
	if !ok {
		return false
	}
	have := certParamsFrom(c, v.Cert.CAName.String)
	want := p
	sort.Strings(have.AlternativeNames)
	want.AlternativeNames = append([]string(nil), p.AlternativeNames...)
	sort.Strings(want.AlternativeNames)
	return have.CommonName == want.CommonName && have.Organization == want.Organization &&
		have.OrganizationUnit == want.OrganizationUnit && have.Locality == want.Locality &&
		have.State == want.State && have.Country == want.Country && have.IsCA == want.IsCA &&
		have.KeyLength == want.KeyLength && have.CA == want.CA &&
		strings.Join(have.AlternativeNames, ",") == strings.Join(want.AlternativeNames, ",")
}

func (s *Server) generateCertificate(r *http.Request, p certParams, nv *store.NewVersion) error {
	key, err := rsa.GenerateKey(rand.Reader, p.KeyLength)
	if err != nil {
		return fmt.Errorf("generating certificate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return fmt.Errorf("generating serial: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("encoding public key: %w", err)
	}
	ski := sha1.Sum(pubDER) //nolint:gosec // RFC 5280 method 1
	now := time.Now().UTC()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			CommonName: p.CommonName, Organization: nonEmpty(p.Organization), OrganizationalUnit: nonEmpty(p.OrganizationUnit),
			Locality: nonEmpty(p.Locality), Province: nonEmpty(p.State), Country: nonEmpty(p.Country),
		},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.AddDate(0, 0, p.Duration),
		SubjectKeyId:          ski[:],
		BasicConstraintsValid: true,
		IsCA:                  p.IsCA,
	}
	for _, n := range p.AlternativeNames {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	for _, k := range p.KeyUsage {
		tmpl.KeyUsage |= keyUsages[k]
	}
	if p.IsCA {
		tmpl.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	}
	for _, k := range p.ExtendedKeyUsage {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, extKeyUsages[k])
	}
	parent, signer := tmpl, any(key)
	var caPEM string
	if p.CA != "" {
		// CredHub signs with the CA's active version (its newest
		// non-transitional one, CertificateAuthorityService.findActiveVersion),
		// so a transitional CA signs nothing until it is made active.
		ca, err := s.activeVersion(r, p.CA)
		if err != nil {
			return err
		}
		caCert, ok := parseCert(ca.Cert.Certificate.String)
		if ca.Type != store.TypeCert || !ok || !caCert.IsCA {
			return badRequest("The requested certificate cannot be signed by the given CA because the given CA is not a certificate authority. A certificate must contain the extension 'Certificate Authority: YES' to be used to sign other certificates.")
		}
		block, _ := pem.Decode(ca.Secret)
		if block == nil {
			return badRequest("The specified CA object does not have an associated private key.")
		}
		caKey, err := parsePrivateKey(block.Bytes)
		if err != nil {
			return badRequest("Private key is malformed.")
		}
		parent, signer, caPEM = caCert, caKey, ca.Cert.Certificate.String
		tmpl.AuthorityKeyId = caCert.SubjectKeyId
		nv.Cert.CAName = sql.NullString{String: ca.Name, Valid: true}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return fmt.Errorf("signing certificate: %w", err)
	}
	certPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	if caPEM == "" {
		caPEM = certPEM // self-signed: CredHub returns the certificate as its own CA
	}
	nv.Secret = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	nv.Cert.Certificate = sql.NullString{String: certPEM, Valid: true}
	nv.Cert.CA = sql.NullString{String: caPEM, Valid: true}
	nv.Cert.ExpiryDate = sql.NullInt64{Int64: tmpl.NotAfter.UnixMilli(), Valid: true}
	nv.Cert.CertificateAuthority = p.IsCA
	nv.Cert.SelfSigned = p.CA == ""
	nv.Cert.Generated = sql.NullBool{Bool: true, Valid: true}
	return nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

func parsePrivateKey(der []byte) (any, error) {
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return k, nil
	}
	return x509.ParseECPrivateKey(der)
}

var (
	dnsLabel    = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$`)
	dnsWildcard = regexp.MustCompile(`^\*?(\.[a-zA-Z0-9-]+)*$`)
)

// validAlternativeName is CredHub's rule: an IP address, a domain name as
// Guava's InternetDomainName accepts it, or a "*.domain" wildcard.
func validAlternativeName(n string) bool {
	if net.ParseIP(n) != nil || (n != "" && dnsWildcard.MatchString(n) && strings.HasPrefix(n, "*")) {
		return true
	}
	name := strings.TrimSuffix(n, ".")
	if name == "" || len(name) > 253 {
		return false
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if !dnsLabel.MatchString(l) {
			return false
		}
	}
	last := labels[len(labels)-1]
	return last[0] < '0' || last[0] > '9' // a public suffix never starts with a digit
}
