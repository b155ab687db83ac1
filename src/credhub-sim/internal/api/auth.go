package api

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/credhub-perf/credhub-sim/internal/auth"
)

// Spring Security's texts for requests that carry no usable bearer token.
const (
	msgFullAuthentication = "Full authentication is required to access this resource"
	insufficientScopeAuth = `Bearer error="insufficient_scope", error_description="The request requires higher privileges than provided by the access token.", error_uri="https://tools.ietf.org/html/rfc6750#section-3.1"`
)

// authenticate applies CredHub's access rule: a client certificate (the
// X.509 filter runs first) or a UAA bearer token carrying both scopes. It
// writes the failure response itself and returns the actor on success.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		actor, err := auth.CertActor(r.TLS.PeerCertificates[0])
		if err != nil {
			writeError(w, http.StatusUnauthorized, err.Error())
			return "", false
		}
		return actor, true
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
	claims, err := s.tokens.Verify(strings.TrimSpace(authz[len(prefix):]), s.issuer(), time.Now())
	if err != nil {
		var te *auth.TokenError
		if errors.As(err, &te) {
			writeOAuthError(w, http.StatusUnauthorized, te.Code, te.Description)
		} else {
			writeOAuthError(w, http.StatusUnauthorized, "invalid_token", msgJWTMalformed)
		}
		return "", false
	}
	if !claims.HasScopes() {
		// Spring's BearerTokenAccessDeniedHandler: 403, no body, the
		// reason in WWW-Authenticate.
		w.Header().Set("WWW-Authenticate", insufficientScopeAuth)
		w.WriteHeader(http.StatusForbidden)
		return "", false
	}
	return claims.Actor(), true
}

func writeOAuthError(w http.ResponseWriter, status int, code, description string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error=%q, error_description=%q`, code, description))
	}
	writeJSON(w, status, orderedFields{{"error", code}, {"error_description", description}})
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
	tok, claims, err := s.tokens.Issue(*client, s.issuer(), time.Now())
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

func (s *Server) handleTokenKeys(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"keys": []any{s.tokens.JWK()}})
}

func (s *Server) handleTokenKey(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.tokens.JWK())
}

func (s *Server) handleOpenIDConfig(w http.ResponseWriter, _ *http.Request) {
	base := s.baseURL()
	writeJSON(w, http.StatusOK, orderedFields{
		{"issuer", s.issuer()},
		{"authorization_endpoint", base + "/oauth/authorize"},
		{"token_endpoint", base + "/oauth/token"},
		{"token_endpoint_auth_methods_supported", []string{"client_secret_basic", "client_secret_post"}},
		{"jwks_uri", base + "/token_keys"},
		{"scopes_supported", auth.RequiredScopes},
		{"response_types_supported", []string{"token"}},
		{"grant_types_supported", []string{"client_credentials"}},
		{"id_token_signing_alg_values_supported", []string{"RS256"}},
	})
}
