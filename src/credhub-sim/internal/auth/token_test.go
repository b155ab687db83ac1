package auth

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

const testIssuer = "https://sim.example:8844/oauth/token"

func newAuthority(t testing.TB) *Authority {
	t.Helper()
	a, err := NewAuthority(time.Second, DefaultClockSkew)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// An issued token verifies until 60 s past its exp and is refused with
// CredHub's access_token_expired after that, on a clock the test sets.
func TestVerifyExpiryClockSkew(t *testing.T) {
	a := newAuthority(t)
	issued := time.Unix(1_800_000_000, 0)
	tok, claims, err := a.Issue(Client{ID: "perf", Scopes: RequiredScopes}, testIssuer, issued)
	if err != nil {
		t.Fatal(err)
	}
	if claims.EXP != issued.Add(time.Second).Unix() || claims.Actor() != "uaa-client:perf" || !claims.HasScopes() {
		t.Fatalf("claims %+v", claims)
	}
	if _, err := a.Verify(tok, testIssuer, issued.Add(time.Second+DefaultClockSkew)); err != nil {
		t.Fatalf("at exp + skew: %v", err)
	}
	_, err = a.Verify(tok, testIssuer, issued.Add(time.Second+DefaultClockSkew+time.Second))
	if te, ok := err.(*TokenError); !ok || te.Code != "access_token_expired" || te.Description != MsgTokenExpired {
		t.Fatalf("past the clock skew: %v", err)
	}
	a.Skew = 0
	if _, err := a.Verify(tok, testIssuer, issued.Add(2*time.Second)); err == nil {
		t.Fatal("no skew: an expired token was accepted")
	}
}

func TestVerifyRefusals(t *testing.T) {
	a := newAuthority(t)
	now := time.Unix(1_800_000_000, 0)
	good, _, err := a.Issue(Client{ID: "perf", Scopes: []string{"credhub.read"}}, testIssuer, now)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	other := newAuthority(t)
	foreign, _, _ := other.Issue(Client{ID: "perf"}, testIssuer, now)
	for _, tc := range []struct {
		name, tok, issuer, want string
	}{
		{"two parts", "a.b", testIssuer, MsgJWTMalformed},
		{"not base64", "!.!.!", testIssuer, MsgJWTMalformed},
		{"forged signature", parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString([]byte("x")), testIssuer, MsgJWTBadSignature},
		{"alg none", base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." + parts[1] + "." + parts[2], testIssuer, MsgJWTBadSignature},
		{"another key", foreign, testIssuer, MsgJWTBadSignature},
		{"another issuer", good, "https://elsewhere/oauth/token", MsgJWTBadIssuer},
	} {
		_, err := a.Verify(tc.tok, tc.issuer, now)
		if te, ok := err.(*TokenError); !ok || te.Code != "invalid_token" || te.Description != tc.want {
			t.Errorf("%s: %v, want invalid_token %q", tc.name, err, tc.want)
		}
	}
	c, err := a.Verify(good, testIssuer, now)
	if err != nil || c.HasScopes() {
		t.Fatalf("a credhub.read-only token: %v, HasScopes %v; want verified but lacking scope", err, c.HasScopes())
	}
}

func TestJWKDescribesTheSigningKey(t *testing.T) {
	a := newAuthority(t)
	k := a.JWK()
	if k.Kty != "RSA" || k.Alg != "RS256" || k.E != "AQAB" || !strings.HasPrefix(k.Kid, "credhub-sim-") ||
		!strings.Contains(k.Value, "BEGIN PUBLIC KEY") || len(k.N) < 340 {
		t.Fatalf("JWK %+v", k)
	}
}

// FuzzVerify: hostile tokens are refused with a *TokenError, never a panic.
func FuzzVerify(f *testing.F) {
	for _, seed := range []string{"a.b.c", "e30.e30.", "..", "eyJhbGciOiJub25lIn0.eyJleHAiOjF9.", "", "....", "e30.bnVsbA.e30"} {
		f.Add(seed)
	}
	a := newAuthority(f)
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := a.Verify(tok, testIssuer, time.Now()); err != nil {
			if _, ok := err.(*TokenError); !ok {
				t.Fatalf("error %v is not a *TokenError", err)
			}
		}
	})
}
