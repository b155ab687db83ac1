// Package auth holds credhub-sim's rules of who may call it: the mutual
// TLS identity rule, the UAA-like token authority (signing key, issuing
// and verifying bearer tokens as CredHub 2.15 checks them) and CredHub's
// ACL rule. The HTTP answers built on these live in package api.
package auth

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/google/uuid"
)

// RequiredScopes are the scopes CredHub demands of every bearer token.
var RequiredScopes = []string{"credhub.read", "credhub.write"}

// DefaultClockSkew is CredHub's CredHubJwtTimeValidator allowance: a
// token is accepted until 60 s after its exp.
const DefaultClockSkew = 60 * time.Second

// Spring Security's resource-server texts (CredHub 2.15 validates bearer
// tokens with NimbusJwtDecoder and answers with its OAuth2Error).
const (
	msgJWTDecode       = "An error occurred while attempting to decode the Jwt: "
	MsgJWTMalformed    = msgJWTDecode + "Malformed token"
	MsgJWTBadSignature = msgJWTDecode + "Signed JWT rejected: Invalid signature"
	MsgJWTBadIssuer    = msgJWTDecode + "The iss claim is not valid"
	MsgTokenExpired    = "Access token expired"
)

// Client is one client the token endpoint accepts.
type Client struct {
	ID, Secret string
	Scopes     []string
}

// TokenError is why a bearer token was refused, as CredHub's OAuth2 error
// code and description.
type TokenError struct{ Code, Description string }

func (e *TokenError) Error() string { return e.Code + ": " + e.Description }

// Claims are the claims of a UAA access token that CredHub reads.
type Claims struct {
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

// HasScopes tells whether the token carries every scope CredHub requires.
func (c Claims) HasScopes() bool {
	for _, need := range RequiredScopes {
		found := false
		for _, have := range c.Scope {
			if have == need {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Actor is the identity CredHub records for the token's bearer: the user
// for a password grant, else the client.
func (c Claims) Actor() string {
	if c.GrantType == "password" && c.UserID != "" {
		return "uaa-user:" + c.UserID
	}
	return "uaa-client:" + c.ClientID
}

// Authority signs and verifies tokens with one RSA key, made fresh at
// start: tokens do not outlive the server that issued them.
type Authority struct {
	key   *rsa.PrivateKey
	keyID string
	// TTL is how long an issued token lives; Skew how long past its exp a
	// token is still accepted.
	TTL, Skew time.Duration
}

var b64 = base64.RawURLEncoding

// NewAuthority makes a 2048-bit signing key.
func NewAuthority(ttl, skew time.Duration) (*Authority, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generating token signing key: %w", err)
	}
	sum := sha256.Sum256(key.PublicKey.N.Bytes())
	return &Authority{key: key, keyID: "credhub-sim-" + b64.EncodeToString(sum[:6]), TTL: ttl, Skew: skew}, nil
}

// Issue makes a client_credentials token for client, issued by issuer at now.
func (a *Authority) Issue(client Client, issuer string, now time.Time) (string, Claims, error) {
	claims := Claims{
		JTI: strings.ReplaceAll(uuid.NewString(), "-", ""), Sub: client.ID,
		Scope: client.Scopes, Authorities: client.Scopes,
		ClientID: client.ID, CID: client.ID, AZP: client.ID, GrantType: "client_credentials",
		RevSig: fmt.Sprintf("%08x", now.UnixNano()&0xffffffff), IAT: now.Unix(),
		EXP: now.Add(a.TTL).Unix(), ISS: issuer, ZID: "uaa",
		AUD: []string{client.ID, "credhub"},
	}
	tok, err := a.Sign(claims)
	return tok, claims, err
}

// Sign makes an RS256 JWT of any claims (tests use it to set token times
// without waiting).
func (a *Authority) Sign(claims any) (string, error) {
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": a.keyID, "typ": "JWT"})
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("encoding token claims: %w", err)
	}
	signingInput := b64.EncodeToString(header) + "." + b64.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signingInput))
	sig, err := rsa.SignPKCS1v15(rand.Reader, a.key, crypto.SHA256, digest[:])
	if err != nil {
		return "", fmt.Errorf("signing token: %w", err)
	}
	return signingInput + "." + b64.EncodeToString(sig), nil
}

// Verify checks what CredHub checks, with the texts of Spring's
// NimbusJwtDecoder and CredHub's time validator: signature (RS256 with the
// advertised key), expiry (Skew allowed) and issuer. Audience is not
// checked. Every refusal is a *TokenError.
func (a *Authority) Verify(tok, issuer string, now time.Time) (Claims, error) {
	var claims Claims
	malformed := &TokenError{"invalid_token", MsgJWTMalformed}
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
	if header.Alg != "RS256" || rsa.VerifyPKCS1v15(&a.key.PublicKey, crypto.SHA256, digest[:], sig) != nil {
		return claims, &TokenError{"invalid_token", MsgJWTBadSignature}
	}
	// CredHub's time validator runs before the issuer validator and throws
	// its own access_token_expired (what the credhub CLI refreshes on).
	if claims.EXP != 0 && now.Add(-a.Skew).After(time.Unix(claims.EXP, 0)) {
		return claims, &TokenError{"access_token_expired", MsgTokenExpired}
	}
	if claims.ISS != issuer {
		return claims, &TokenError{"invalid_token", MsgJWTBadIssuer}
	}
	return claims, nil
}

// PublicKeyPEM is the verification key as UAA's token_key "value" shows it.
func (a *Authority) PublicKeyPEM() string {
	der, _ := x509.MarshalPKIXPublicKey(&a.key.PublicKey)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// JWK is UAA's JSON web key, fields in UAA's order.
type JWK struct {
	Kty   string `json:"kty"`
	E     string `json:"e"`
	Use   string `json:"use"`
	Kid   string `json:"kid"`
	Alg   string `json:"alg"`
	Value string `json:"value"`
	N     string `json:"n"`
}

// JWK describes the verification key.
func (a *Authority) JWK() JWK {
	pub := a.key.PublicKey
	return JWK{
		Kty: "RSA", E: b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes()), Use: "sig",
		Kid: a.keyID, Alg: "RS256", Value: a.PublicKeyPEM(), N: b64.EncodeToString(pub.N.Bytes()),
	}
}
