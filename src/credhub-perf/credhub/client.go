// Package credhub is a small CredHub API client: just what a load test
// needs around the load itself (reachability, seeding, verification, finding
// and deleting what the run wrote), with mutual TLS or a UAA bearer token.
package credhub

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/credhub-perf/credhub-perf/tlsclient"
)

// UserAgent is sent with every API call (not with the load itself).
const UserAgent = "credhub-perf-api"

// Options configures a Client.
type Options struct {
	URL string
	// TLS is the same configuration the load engine is built from
	// (tlsclient).
	TLS     tlsclient.Options
	Timeout time.Duration
	// Token, when set, supplies a bearer token for every request.
	Token *TokenSource
	// Retrying, when set, hears of every failed call about to be tried
	// again (a 5xx, a timeout, a dropped connection), before the wait. A
	// retry that then succeeds would otherwise leave no trace, and a
	// CredHub failing now and then (or a model of it with a bug) would
	// look healthy.
	Retrying func(err error, attempt int, wait time.Duration)
}

// Client talks to one CredHub.
type Client struct {
	base     string
	hc       *http.Client
	token    *TokenSource
	subject  string // the client certificate's subject, for error messages
	retrying func(err error, attempt int, wait time.Duration)
}

// New builds a Client.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.URL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("CredHub URL %q is not a URL with a host", o.URL)
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 32,
	}
	c := &Client{base: strings.TrimRight(o.URL, "/"), token: o.Token, retrying: o.Retrying}
	if u.Scheme == "https" {
		built, err := tlsclient.Build(o.TLS)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = built.TLS
		c.subject = built.Subject
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	c.hc = &http.Client{Transport: tr, Timeout: timeout}
	return c, nil
}

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// APIError is a non-2xx answer from CredHub.
type APIError struct {
	Method, Path string
	Status       int
	Message      string // CredHub's "error" (and "error_description") text
	Subject      string // our client certificate subject, when mTLS
	UAA          bool
}

func (e *APIError) Error() string {
	where := e.Method + " " + e.Path
	switch e.Status {
	case http.StatusUnauthorized:
		who := "no client certificate or token was accepted"
		if e.UAA {
			who = "CredHub rejected the UAA token"
		} else if e.Subject != "" {
			who = fmt.Sprintf("CredHub rejected the client certificate (subject %q): it must chain to one of CredHub's trusted mTLS CAs, carry an OU `app:<v4 uuid>` and the clientAuth extended key usage", e.Subject)
		}
		return fmt.Sprintf("%s: 401 Unauthorized: %s; server said: %s", where, who, e.msg())
	case http.StatusForbidden:
		who := "the client lacks permission"
		if e.UAA {
			who = "the UAA token lacks the credhub.read and credhub.write scopes, or the client lacks an ACL permission"
		} else if e.Subject != "" {
			who = fmt.Sprintf("the client certificate (subject %q) is authenticated but lacks a CredHub permission for this path (add one to credhub.authorization.permissions or turn ACLs off)", e.Subject)
		}
		return fmt.Sprintf("%s: 403 Forbidden: %s; server said: %s", where, who, e.msg())
	}
	return fmt.Sprintf("%s: HTTP %d: %s", where, e.Status, e.msg())
}

func (e *APIError) msg() string {
	if e.Message == "" {
		return "(no message)"
	}
	return e.Message
}

// IsAuth reports whether err is a 401 or 403 from CredHub.
func IsAuth(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.Status == 401 || ae.Status == 403)
}

// IsNotFound reports whether err is a 404 from CredHub.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == 404
}

// do sends one API call. Setup and cleanup calls are retried a few times
// on 5xx answers and broken connections: a CredHub under load may shed a
// request, and a seed or a cleanup should not fail for one of them.
func (c *Client) do(ctx context.Context, method, path string, body any, auth bool, out any) error {
	var payload []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		payload = b
	}
	var err error
	for attempt := 0; attempt < 6; attempt++ {
		if attempt > 0 {
			wait := time.Duration(attempt*attempt) * 100 * time.Millisecond
			if c.retrying != nil {
				c.retrying(err, attempt, wait)
			}
			select {
			case <-ctx.Done():
				return err
			case <-time.After(wait):
			}
		}
		var retry bool
		retry, err = c.once(ctx, method, path, payload, auth, out)
		if err == nil || !retry || ctx.Err() != nil {
			return err
		}
	}
	return err
}

func (c *Client) once(ctx context.Context, method, path string, payload []byte, auth bool, out any) (retry bool, err error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	// Distinguishes setup and cleanup calls from load in CredHub's logs.
	req.Header.Set("User-Agent", UserAgent)
	if auth && c.token != nil {
		if err := c.token.Authorize(req); err != nil {
			return false, err
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// A refused connection at the first call means the target is not
		// there: no point in waiting for it.
		retry := !isRefused(err)
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is already in the message
		}
		return retry, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return true, fmt.Errorf("%s %s: reading the response: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		ae := &APIError{Method: method, Path: path, Status: resp.StatusCode, Subject: c.subject, UAA: c.token != nil}
		var eb struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
			ae.Message = eb.Error
			if eb.Description != "" {
				ae.Message += ": " + eb.Description
			}
		} else {
			ae.Message = strings.TrimSpace(string(bytes.ToValidUTF8(data[:min(len(data), 200)], nil)))
		}
		return resp.StatusCode >= 500, ae
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return false, fmt.Errorf("%s %s: decoding the response: %w", method, path, err)
		}
	}
	return false, nil
}

func isRefused(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) {
		var x509err x509.UnknownAuthorityError
		var hn x509.HostnameError
		if errors.As(err, &x509err) || errors.As(err, &hn) {
			return true // a TLS verification failure will not heal either
		}
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// Info calls the unauthenticated GET /info: it proves the target is
// reachable and speaks TLS with the configured CA before anything is sent.
func (c *Client) Info(ctx context.Context) (authServer string, err error) {
	var info struct {
		AuthServer struct {
			URL string `json:"url"`
		} `json:"auth-server"`
	}
	if err := c.do(ctx, http.MethodGet, "/info", nil, false, &info); err != nil {
		return "", err
	}
	return info.AuthServer.URL, nil
}

// SetJSON writes a JSON credential (a new version when it exists).
func (c *Client) SetJSON(ctx context.Context, name string, value json.RawMessage) error {
	body := map[string]any{"name": name, "type": "json", "value": value}
	return c.do(ctx, http.MethodPut, "/api/v1/data", body, true, nil)
}

// GetJSON returns the current value of a credential.
func (c *Client) GetJSON(ctx context.Context, name string) (json.RawMessage, error) {
	var out struct {
		Data []struct {
			Name  string          `json:"name"`
			Value json.RawMessage `json:"value"`
		} `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/v1/data?current=true&name="+url.QueryEscape(name), nil, true, &out); err != nil {
		return nil, err
	}
	if len(out.Data) == 0 {
		return nil, fmt.Errorf("GET %s: CredHub returned no version", name)
	}
	return out.Data[0].Value, nil
}

// GetJSONVersions returns the newest k versions of a credential's value,
// newest first (CredHub keeps every version a PUT wrote).
func (c *Client) GetJSONVersions(ctx context.Context, name string, k int) ([]json.RawMessage, error) {
	var out struct {
		Data []struct {
			Value json.RawMessage `json:"value"`
		} `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, fmt.Sprintf("/api/v1/data?name=%s&versions=%d", url.QueryEscape(name), k), nil, true, &out); err != nil {
		return nil, err
	}
	values := make([]json.RawMessage, 0, len(out.Data))
	for _, d := range out.Data {
		values = append(values, d.Value)
	}
	return values, nil
}

// Delete removes every version of a credential.
func (c *Client) Delete(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/data?name="+url.QueryEscape(name), nil, true, nil)
}

// FindPath lists the names of every credential under path.
func (c *Client) FindPath(ctx context.Context, path string) ([]string, error) {
	var out struct {
		Credentials []struct {
			Name string `json:"name"`
		} `json:"credentials"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/v1/data?path="+url.QueryEscape(path), nil, true, &out); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(out.Credentials))
	for _, c := range out.Credentials {
		names = append(names, c.Name)
	}
	return names, nil
}

// Interpolate posts a VCAP_SERVICES body and returns the answer.
func (c *Client) Interpolate(ctx context.Context, body json.RawMessage) (json.RawMessage, error) {
	var out json.RawMessage
	if err := c.do(ctx, http.MethodPost, "/api/v1/interpolate", body, true, &out); err != nil {
		return nil, err
	}
	return out, nil
}
