package credhub

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// TokenSource gets UAA client_credentials tokens and renews them before
// they expire, so a long ramp never runs into a wall of 401s.
type TokenSource struct {
	tokenURL     string
	clientID     string
	clientSecret string
	hc           *http.Client
	now          func() time.Time

	mu      sync.Mutex
	token   string
	renewAt time.Time
}

// NewTokenSource builds a token source for the UAA at uaaURL.
func NewTokenSource(uaaURL, clientID, clientSecret string, tlsConf *tls.Config) *TokenSource {
	tr := &http.Transport{TLSClientConfig: tlsConf}
	return &TokenSource{
		tokenURL:     strings.TrimRight(uaaURL, "/") + "/oauth/token",
		clientID:     clientID,
		clientSecret: clientSecret,
		hc:           &http.Client{Transport: tr, Timeout: 30 * time.Second},
		now:          time.Now,
	}
}

// Token returns a valid token, fetching a new one when the current one is
// near its end.
func (t *TokenSource) Token(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && t.now().Before(t.renewAt) {
		return t.token, nil
	}
	tok, life, err := t.fetch(ctx)
	if err != nil {
		return "", err
	}
	// Renew at 80% of the lifetime, and never later than 30 s before the
	// end, so in-flight requests do not carry a token that expires on the way.
	margin := life / 5
	if margin < 30*time.Second {
		margin = 30 * time.Second
	}
	if margin > life/2 {
		margin = life / 2
	}
	t.token, t.renewAt = tok, t.now().Add(life-margin)
	return tok, nil
}

// Authorize sets the Authorization header; it fits load.ClientOptions.Authorize.
func (t *TokenSource) Authorize(req *http.Request) error {
	tok, err := t.Token(req.Context())
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

func (t *TokenSource) fetch(ctx context.Context) (string, time.Duration, error) {
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"response_type": {"token"},
		"client_id":     {t.clientID},
		"client_secret": {t.clientSecret},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("UAA token: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := t.hc.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("UAA token from %s: %w", t.tokenURL, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var body struct {
		AccessToken string  `json:"access_token"`
		ExpiresIn   float64 `json:"expires_in"`
		Error       string  `json:"error"`
		Description string  `json:"error_description"`
	}
	_ = json.Unmarshal(data, &body)
	if resp.StatusCode != http.StatusOK || body.AccessToken == "" {
		msg := body.Error
		if body.Description != "" {
			msg += ": " + body.Description
		}
		if msg == "" {
			msg = fmt.Sprintf("no access_token in the answer (HTTP %d)", resp.StatusCode)
		}
		return "", 0, fmt.Errorf("UAA token for client %q from %s: HTTP %d: %s (check uaa.client_id and uaa.client_secret)", t.clientID, t.tokenURL, resp.StatusCode, msg)
	}
	life := time.Duration(body.ExpiresIn * float64(time.Second))
	if life <= 0 {
		life = 10 * time.Minute // UAA always sends expires_in; be safe if not
	}
	return body.AccessToken, life, nil
}
