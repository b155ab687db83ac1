package api

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
)

// mtlsOU is CredHub's identity rule: OU "app:" + a lowercase v4 UUID.
var mtlsOU = regexp.MustCompile(`^app:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$`)

var requiredScopes = []string{"credhub.read", "credhub.write"}

// authenticate applies CredHub's access rule: a client certificate (the
// X.509 filter runs first) or a UAA bearer token carrying both scopes. It
// writes the failure response itself and returns the actor on success.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cert := r.TLS.PeerCertificates[0]
		clientAuth := false
		for _, u := range cert.ExtKeyUsage {
			if u == x509.ExtKeyUsageClientAuth {
				clientAuth = true
			}
		}
		if !clientAuth {
			writeError(w, http.StatusUnauthorized, msgMTLSNotClientAuth)
			return "", false
		}
		for _, ou := range cert.Subject.OrganizationalUnit {
			if mtlsOU.MatchString(ou) {
				return "mtls-" + ou, true
			}
		}
		writeError(w, http.StatusUnauthorized, msgInvalidMTLSIdentity)
		return "", false
	}
	if !s.oauth() {
		// CredHub without OAuth2 (AuthWithoutOAuthConfiguration): only
		// client certificates; Spring's Http403ForbiddenEntryPoint answers
		// anything else with a bare 403.
		w.WriteHeader(http.StatusForbidden)
		return "", false
	}
	// Spring's bearer token resolver only takes "Bearer <token>"; any other
	// Authorization header (Basic included) is no authentication at all.
	authz := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(authz) < len(prefix) || !strings.EqualFold(authz[:len(prefix)], prefix) {
		writeOAuthError(w, http.StatusUnauthorized, "access_denied", msgFullAuthentication)
		return "", false
	}
	claims, err := s.verifyToken(strings.TrimSpace(authz[len(prefix):]), time.Now())
	if err != nil {
		var te *tokenError
		if errors.As(err, &te) {
			writeOAuthError(w, http.StatusUnauthorized, te.code, te.description)
		} else {
			writeOAuthError(w, http.StatusUnauthorized, "invalid_token", msgJWTMalformed)
		}
		return "", false
	}
	for _, need := range requiredScopes {
		found := false
		for _, have := range claims.Scope {
			if have == need {
				found = true
			}
		}
		if !found {
			// Spring's BearerTokenAccessDeniedHandler: 403, no body, the
			// reason in WWW-Authenticate.
			w.Header().Set("WWW-Authenticate", insufficientScopeAuth)
			w.WriteHeader(http.StatusForbidden)
			return "", false
		}
	}
	if claims.GrantType == "password" && claims.UserID != "" {
		return "uaa-user:" + claims.UserID, true
	}
	return "uaa-client:" + claims.ClientID, true
}

func writeOAuthError(w http.ResponseWriter, status int, code, description string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error=%q, error_description=%q`, code, description))
	}
	writeJSON(w, status, orderedFields{{"error", code}, {"error_description", description}})
}

type tokenError struct{ code, description string }

func (e *tokenError) Error() string { return e.code + ": " + e.description }

type tokenClaims struct {
	JTI         string   `json:"jti"`
	Sub         string   `json:"sub"`
	Scope       []string `json:"scope"`
	Authorities []string `json:"authorities"`
	ClientID    string   `json:"client_id"`
	CID         string   `json:"cid"`
	AZP         string   `json:"azp"`
	GrantType   string   `json:"grant_type"`
	UserID      string   `json:"user_id,omitempty"`
	RevSig      string   `json:"rev_sig"`
	IAT         int64    `json:"iat"`
	EXP         int64    `json:"exp"`
	ISS         string   `json:"iss"`
	ZID         string   `json:"zid"`
	AUD         []string `json:"aud"`
}

func (s *Server) initSigningKey() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating token signing key: %w", err)
	}
	s.signingKey = key
	sum := sha256.Sum256(key.PublicKey.N.Bytes())
	s.keyID = "credhub-sim-" + base64.RawURLEncoding.EncodeToString(sum[:6])
	return nil
}

var b64 = base64.RawURLEncoding

func (s *Server) issueToken(client UAAClient) (string, tokenClaims, error) {
	now := time.Now()
	claims := tokenClaims{
		JTI: strings.ReplaceAll(uuid.NewString(), "-", ""), Sub: client.ID,
		Scope: client.Scopes, Authorities: client.Scopes,
		ClientID: client.ID, CID: client.ID, AZP: client.ID, GrantType: "client_credentials",
		RevSig: fmt.Sprintf("%08x", now.UnixNano()&0xffffffff), IAT: now.Unix(),
		EXP: now.Add(s.cfg.TokenTTL).Unix(), ISS: s.issuer(), ZID: "uaa",
		AUD: []string{client.ID, "credhub"},
	}
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": s.keyID, "typ": "JWT"})
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", claims, fmt.Errorf("encoding token claims: %w", err)
	}
	signingInput := b64.EncodeToString(header) + "." + b64.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signingInput))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.signingKey, crypto.SHA256, digest[:])
	if err != nil {
		return "", claims, fmt.Errorf("signing token: %w", err)
	}
	return signingInput + "." + b64.EncodeToString(sig), claims, nil
}

// DefaultClockSkew is CredHub's CredHubJwtTimeValidator allowance: a
// token is accepted until 60 s after its exp.
const DefaultClockSkew = 60 * time.Second

// verifyToken checks what CredHub checks, with the texts of Spring's
// NimbusJwtDecoder and CredHub's time validator: signature (RS256 with the
// advertised key), expiry (60 s skew) and issuer. Audience is not checked.
func (s *Server) verifyToken(tok string, now time.Time) (tokenClaims, error) {
	var claims tokenClaims
	malformed := &tokenError{"invalid_token", msgJWTMalformed}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return claims, malformed
	}
	headerJSON, err := b64.DecodeString(parts[0])
	if err != nil {
		return claims, malformed
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := json.Unmarshal(headerJSON, &header); err != nil {
		return claims, malformed
	}
	payload, err := b64.DecodeString(parts[1])
	if err != nil {
		return claims, malformed
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return claims, malformed
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil {
		return claims, malformed
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if header.Alg != "RS256" || rsa.VerifyPKCS1v15(&s.signingKey.PublicKey, crypto.SHA256, digest[:], sig) != nil {
		return claims, &tokenError{"invalid_token", msgJWTBadSignature}
	}
	// CredHub's time validator runs before the issuer validator and throws
	// its own access_token_expired (what the credhub CLI refreshes on).
	if claims.EXP != 0 && now.Add(-s.cfg.TokenClockSkew).After(time.Unix(claims.EXP, 0)) {
		return claims, &tokenError{"access_token_expired", "Access token expired"}
	}
	if claims.ISS != s.issuer() {
		return claims, &tokenError{"invalid_token", msgJWTBadIssuer}
	}
	return claims, nil
}

// handleToken is a minimal UAA /oauth/token: client_credentials only, client
// authenticated by form fields (what the credhub CLI sends) or HTTP Basic.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	if len(s.cfg.UAAClients) == 0 {
		writeOAuthError(w, http.StatusNotFound, "not_found", "the token endpoint is disabled; start credhub-sim with -uaa-client ID:SECRET")
		return
	}
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the request body is not form-encoded")
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	var client *UAAClient
	for i := range s.cfg.UAAClients {
		c := &s.cfg.UAAClients[i]
		if c.ID == id && subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) == 1 {
			client = c
		}
	}
	if client == nil {
		writeOAuthError(w, http.StatusUnauthorized, "unauthorized", "Bad credentials")
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "client_credentials" {
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type", "Unsupported grant type: "+gt)
		return
	}
	tok, claims, err := s.issueToken(*client)
	if err != nil {
		s.log.Printf("error: issuing token: %v", err)
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "could not issue a token")
		return
	}
	writeJSON(w, http.StatusOK, orderedFields{
		{"access_token", tok},
		{"token_type", "bearer"},
		{"expires_in", int(s.cfg.TokenTTL.Seconds()) - 1},
		{"scope", strings.Join(client.Scopes, " ")},
		{"jti", claims.JTI},
	})
}

func (s *Server) publicKeyPEM() string {
	der, _ := x509.MarshalPKIXPublicKey(&s.signingKey.PublicKey)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func (s *Server) jwk() orderedFields {
	pub := s.signingKey.PublicKey
	return orderedFields{
		{"kty", "RSA"},
		{"e", b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes())},
		{"use", "sig"},
		{"kid", s.keyID},
		{"alg", "RS256"},
		{"value", s.publicKeyPEM()},
		{"n", b64.EncodeToString(pub.N.Bytes())},
	}
}

func (s *Server) handleTokenKeys(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"keys": []any{s.jwk()}})
}

func (s *Server) handleTokenKey(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.jwk())
}

func (s *Server) handleOpenIDConfig(w http.ResponseWriter, _ *http.Request) {
	base := s.baseURL()
	writeJSON(w, http.StatusOK, orderedFields{
		{"issuer", s.issuer()},
		{"authorization_endpoint", base + "/oauth/authorize"},
		{"token_endpoint", base + "/oauth/token"},
		{"token_endpoint_auth_methods_supported", []string{"client_secret_basic", "client_secret_post"}},
		{"jwks_uri", base + "/token_keys"},
		{"scopes_supported", requiredScopes},
		{"response_types_supported", []string{"token"}},
		{"grant_types_supported", []string{"client_credentials"}},
		{"id_token_signing_alg_values_supported", []string{"RS256"}},
	})
}
