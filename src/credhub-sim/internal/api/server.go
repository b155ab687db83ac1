// Package api serves CredHub's HTTP API (what a load test and the credhub
// CLI use) over mutual TLS, with a UAA-like token endpoint and fault
// injection. Who may call is decided by package auth, how long a request
// takes under load by package capacity; this package writes CredHub's
// answers.
package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/credhub-perf/credhub-sim/internal/auth"
	"github.com/credhub-perf/credhub-sim/internal/capacity"
	"github.com/credhub-perf/credhub-sim/internal/store"
)

// Version is what GET /version reports: a 2.x server, so the credhub CLI
// uses current request shapes (no "mode" on set).
const Version = "2.15.2"

// CredHub's error messages (messages.properties), verbatim.
const (
	msgInvalidAccess          = "The request could not be completed because the credential does not exist or you do not have sufficient authorization."
	msgBadRequest             = "The request could not be fulfilled because the request path or body did not meet expectation. Please check the documentation for required formatting and retry your request."
	msgMissingName            = "A credential name must be provided. Please validate your input and retry your request."
	msgMissingValue           = "A non-empty value must be specified for the credential. Please validate and retry your request."
	msgMissingPassword        = "A password value must be specified for the credential. Please validate and retry your request."
	msgInvalidTypeSet         = "The request does not include a valid type. Valid values include 'value', 'json', 'password', 'user', 'certificate', 'ssh' and 'rsa'."
	msgInvalidTypeGenerate    = "The request does not include a valid type. Valid values for generate include 'password', 'user', 'certificate', 'ssh' and 'rsa'."
	msgCannotGenerateType     = "Credentials of this type cannot be generated. Please adjust the credential type and retry your request."
	msgTypeMismatch           = "The credential type cannot be modified. Please delete the credential if you wish to create it with a different type."
	msgInvalidJSONKey         = "The request includes an unrecognized parameter '%s'. Please update or remove this parameter and retry your request."
	msgInvalidQueryParam      = "The query parameter %s was not valid for this request."
	msgMissingQueryParam      = "The query parameter %s is required for this request."
	msgVersionsAndCurrent     = "The query parameters current and versions cannot be provided in the same request."
	msgInvalidCharInName      = "Credential names may only include alpha, numeric, hyphen, underscore, and forward-slash characters. Please update and retry your request."
	msgInvalidSlashInName     = "A credential name cannot end with a '/' character or contain '//'. Credential names should be in the form of /[path]/[name] or [path]/[name]. Please update and retry your request."
	msgNameTooLong            = "The request could not be completed. The credential name cannot exceed 1024 characters"
	msgExceedsMaximumSize     = "Value exceeds the maximum size."
	msgExcludesAllCharsets    = "The combination of parameters in the request is not allowed. Please validate your input and retry your request."
	msgInvalidMode            = "The request does not include a valid mode. Valid values for generate include 'overwrite', 'no-overwrite' and 'converge'."
	msgOverwriteAndMode       = "The parameters overwrite and mode cannot be combined. Please update and retry your request."
	msgInterpolationType      = "The credential '%s' is not the expected type. A credhub-ref credential must be of type 'JSON'."
	msgInternal               = "An application error occurred. Please contact your CredHub administrator."
	msgInvalidContentType     = "The provided content type is not supported"
	msgMissingCertCredentials = "At least one certificate attribute must be set. Please validate your input and retry your request."
	msgMixedCANameAndCA       = "Only one of the values 'ca_name' and 'ca' may be provided. Please update and retry your request."
	msgInvalidCertificate     = "The provided certificate value is not a valid X509 certificate."
	msgInvalidCA              = "The provided CA value is not a valid X509 certificate authority."
	msgNotACAName             = "The name given for the CA does not reference a CA type credential."
	msgMissingRSASSH          = "At least one key value must be set. Please validate your input and retry your request."
	msgInvalidKeyLength       = "The provided key length is not supported. Valid values include '2048', '3072' and '4096'."
	msgCannotRegenPassword    = "The password could not be regenerated because the value was statically set. Only generated passwords may be regenerated."
	msgMissingCertParams      = "At least one subject value, such as common name or organization, must be defined to generate the certificate. Please update and retry your request."
	msgMissingSigningCA       = "You must specify a signing CA or indicate self-signing when generating a certificate. Please update and retry your request."
	msgCAAndSelfSign          = "The parameters 'ca' and 'self-sign' cannot be used in combination. Please update and retry your request."
	msgCannotRegenCertificate = "The credential could not be regenerated because the certificate was statically set and is not self-signed or is invalid."
	msgCannotRegenUser        = "The user could not be regenerated because the value was statically set. Only generated users may be regenerated."
	msgMismatchedCertAndKey   = "The provided certificate does not match the private key."
	msgMalformedPrivateKey    = "Private key is malformed."
	msgNotSignedByCA          = "The provided certificate was not signed by the CA specified in the 'ca' property."
	msgNotSignedByCAName      = "The provided certificate was not signed by the CA specified in the 'ca_name' property."
	msgInvalidAlternateName   = "A provided alternative name is not a valid hostname or IP address. Please update this value and retry your request."
	msgMetadataTooLong        = "metadata cannot exceed 7000 characters"
	msgCertificateTooLong     = "The provided certificate value is too long. Certificate lengths must be less than 7000 characters."
)

// Texts shared with package auth, under the names the handlers use.
const (
	msgInvalidMTLSIdentity = auth.MsgInvalidMTLSIdentity
	msgMTLSNotClientAuth   = auth.MsgMTLSNotClientAuth
	msgJWTMalformed        = auth.MsgJWTMalformed
	msgJWTBadSignature     = auth.MsgJWTBadSignature
	msgJWTBadIssuer        = auth.MsgJWTBadIssuer
)

// DefaultClockSkew is CredHub's 60 s allowance past a token's exp.
const DefaultClockSkew = auth.DefaultClockSkew

// CredHub has no size limit of its own on a value: the database column sets
// it (MySQL's BLOB holds 64 KiB, PostgreSQL's bytea far more), and a value
// the column refuses comes back as 413. The sim caps request bodies at
// maxBodyBytes only to bound its memory; CredHub's Tomcat has no such cap.
const (
	maxBodyBytes     = 16 << 20
	maxMetadataChars = 7000
)

// UAAClient is one client the token endpoint accepts.
type UAAClient = auth.Client

// Permission seeds one permission row, like credhub.authorization.permissions.
type Permission struct {
	Path       string
	Actors     []string
	Operations []string
}

// Config sets up a Server.
type Config struct {
	Store     *store.Store
	ClientCAs *x509.CertPool

	// Capacity model (see package capacity): Workers instances of Cores cores
	// each; a request holds a core for ServiceTime (fixed, or exponential
	// with that mean), a write (set, generate, regenerate) holds a core
	// and its instance's write lock for WriteServiceTime (0: ServiceTime).
	// Cores 0 means 1, the plain M/M/K queue.
	Workers          int
	Cores            int
	ServiceTime      time.Duration
	WriteServiceTime time.Duration
	ServiceDist      string
	// DBCapacity: a database all instances share, serving at most this many
	// requests/s on DBCores servers (see capacity.Model.SetDatabase); 0:
	// the database is never the limit.
	DBCapacity float64
	DBCores    int
	// SharedCores: every instance and the database draw CPU from one
	// machine of this many cores, of which a neighbour process takes the
	// share Neighbour and the hypervisor the share Steal (see
	// capacity.Model.SetMachine); 0: each has cores of its own.
	SharedCores      int
	Neighbour, Steal float64
	// A freshly started JVM: service times start WarmupFactor times longer
	// and fall to normal over WarmupTime (see capacity.Model). Factor <= 1: none.
	WarmupTime   time.Duration
	WarmupFactor float64
	// A JVM's stop-the-world pauses: every PauseEvery the whole target
	// stops serving for Pause (see capacity.Model.SetPauses). 0: none.
	PauseEvery, Pause time.Duration
	// Clock keeps the capacity model's time (nil: the system clock; the
	// plateau tests give a capacity.VirtualClock).
	Clock capacity.Clock
	// Fault injection.
	ErrorRate    float64
	ErrorStatus  int
	AddedLatency time.Duration

	// UAAClients enables OAuth2: the token endpoint and bearer tokens.
	// Without any, the server is CredHub without OAuth2 (mutual TLS only:
	// a request without a client certificate gets a bare 403).
	UAAClients []UAAClient
	TokenTTL   time.Duration
	// TokenClockSkew: how long past its exp a token is still accepted
	// (CredHub: 60 s, DefaultClockSkew; negative = none).
	TokenClockSkew time.Duration
	// HTTP2 offers h2 by ALPN; CredHub 2.15 (Tomcat as configured by
	// credhub-release) serves HTTP/1.1 only, so it is off by default.
	HTTP2       bool
	ACLs        bool
	Permissions []Permission

	// AuditLog receives CredHub's CEF audit records (see audit.go); nil:
	// none are written.
	AuditLog io.Writer

	Logger *log.Logger
}

// Server is one simulated CredHub instance.
type Server struct {
	cfg      Config
	store    *store.Store
	log      *log.Logger
	capacity *capacity.Model

	// writeMu serialises set and generate: CredHub's controller methods are
	// @Synchronized on a singleton, so one instance writes one at a time.
	writeMu sync.Mutex
	// transitionalMu serialises the sim's own check-then-write of a
	// certificate's transitional flag (at most one per credential).
	transitionalMu sync.Mutex

	urlMu     sync.RWMutex
	publicURL string

	tokens *auth.Authority
	audit  *auditLog
}

// New validates cfg and builds a Server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("api: a store is required")
	}
	if cfg.ClientCAs == nil {
		return nil, errors.New("api: client CAs are required (mutual TLS is always on)")
	}
	if cfg.Logger == nil {
		cfg.Logger = log.Default()
	}
	if cfg.ErrorStatus == 0 {
		cfg.ErrorStatus = http.StatusInternalServerError
	}
	if cfg.ErrorRate < 0 || cfg.ErrorRate > 1 {
		return nil, fmt.Errorf("error rate %v is outside 0..1", cfg.ErrorRate)
	}
	if cfg.ErrorStatus < 100 || cfg.ErrorStatus > 599 {
		return nil, fmt.Errorf("error status %d is not an HTTP status", cfg.ErrorStatus)
	}
	switch {
	case cfg.TokenClockSkew == 0:
		cfg.TokenClockSkew = DefaultClockSkew
	case cfg.TokenClockSkew < 0:
		cfg.TokenClockSkew = 0
	}
	if cfg.TokenTTL == 0 {
		cfg.TokenTTL = 12 * time.Hour
	}
	if cfg.Cores == 0 {
		cfg.Cores = 1
	}
	capa, err := capacity.New(cfg.Workers, cfg.Cores, cfg.ServiceTime, cfg.WriteServiceTime, cfg.ServiceDist)
	if err != nil {
		return nil, err
	}
	capa.SetClock(cfg.Clock)
	if cfg.DBCores == 0 {
		cfg.DBCores = 1
	}
	if err := capa.SetDatabase(cfg.DBCapacity, cfg.DBCores); err != nil {
		return nil, err
	}
	if err := capa.SetMachine(cfg.SharedCores, cfg.Neighbour, cfg.Steal); err != nil {
		return nil, err
	}
	if err := capa.SetWarmup(capa.Now(), cfg.WarmupTime, cfg.WarmupFactor); err != nil {
		return nil, err
	}
	if err := capa.SetPauses(capa.Now(), cfg.PauseEvery, cfg.Pause); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, store: cfg.Store, log: cfg.Logger, capacity: capa}
	if cfg.AuditLog != nil {
		s.audit = &auditLog{w: cfg.AuditLog}
	}
	if s.tokens, err = auth.NewAuthority(cfg.TokenTTL, cfg.TokenClockSkew); err != nil {
		return nil, err
	}
	if cfg.ACLs {
		if err := s.seedPermissions(context.Background()); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// SetURL tells the server its own base URL (https://host:port), which /info
// advertises as the auth server and tokens carry as issuer.
func (s *Server) SetURL(u string) {
	s.urlMu.Lock()
	s.publicURL = strings.TrimRight(u, "/")
	s.urlMu.Unlock()
}

func (s *Server) baseURL() string {
	s.urlMu.RLock()
	defer s.urlMu.RUnlock()
	return s.publicURL
}

func (s *Server) issuer() string { return s.baseURL() + "/oauth/token" }

// oauth tells whether OAuth2 is on (some -uaa-client configured).
func (s *Server) oauth() bool { return len(s.cfg.UAAClients) > 0 }

// HTTPServer is an http.Server for this Server on cert: the handler, the
// TLS configuration, and HTTP/2 only when Config.HTTP2 asks for it.
func (s *Server) HTTPServer(cert tls.Certificate) *http.Server {
	hs := &http.Server{Handler: s.Handler(), TLSConfig: s.TLSConfig(cert)}
	if !s.cfg.HTTP2 {
		// A non-nil empty map keeps net/http from adding h2.
		hs.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	return hs
}

// TLSConfig is CredHub's "client auth: want": a presented client certificate
// must chain to a trusted CA and be within its dates (else the handshake
// fails), but its usage and identity are judged per request so that the
// client gets CredHub's 401 bodies.
func (s *Server) TLSConfig(cert tls.Certificate) *tls.Config {
	protos := []string{"http/1.1"}
	if s.cfg.HTTP2 {
		protos = []string{"h2", "http/1.1"}
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		NextProtos:   protos,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequestClientCert,
		// Advertised in the CertificateRequest so that a client holding
		// several certificates picks one of ours; verification is below.
		ClientCAs: s.cfg.ClientCAs,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return nil
			}
			certs := make([]*x509.Certificate, 0, len(raw))
			for _, r := range raw {
				c, err := x509.ParseCertificate(r)
				if err != nil {
					return fmt.Errorf("parsing client certificate: %w", err)
				}
				certs = append(certs, c)
			}
			inter := x509.NewCertPool()
			for _, c := range certs[1:] {
				inter.AddCert(c)
			}
			_, err := certs[0].Verify(x509.VerifyOptions{
				Roots:         s.cfg.ClientCAs,
				Intermediates: inter,
				KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
			})
			if err != nil {
				return fmt.Errorf("client certificate not trusted: %w", err)
			}
			return nil
		},
	}
}

// Handler routes every request.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if len(path) > 1 {
		path = strings.TrimRight(path, "/")
	}
	switch path {
	case "/info":
		s.only(w, r, http.MethodGet, s.handleInfo)
		return
	case "/health":
		s.only(w, r, http.MethodGet, s.handleHealth)
		return
	case "/management":
		s.only(w, r, http.MethodGet, func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]bool{"read_only_mode": false})
		})
		return
	case "/oauth/token":
		s.only(w, r, http.MethodPost, s.handleToken)
		return
	case "/token_keys":
		s.only(w, r, http.MethodGet, s.handleTokenKeys)
		return
	case "/token_key":
		s.only(w, r, http.MethodGet, s.handleTokenKey)
		return
	case "/.well-known/openid-configuration", "/oauth/token/.well-known/openid-configuration":
		s.only(w, r, http.MethodGet, s.handleOpenIDConfig)
		return
	}

	actor, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	// Like CredHub's AuditInterceptor: authenticated requests only.
	if rec, ar := s.beginAudit(r, actor); rec != nil {
		sw := &statusWriter{ResponseWriter: w}
		w, r = sw, ar
		defer func() { s.audit.write(rec, sw.code()) }()
	}
	switch {
	case path == "/version":
		s.only(w, r, http.MethodGet, func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"version": Version})
		})
	case path == "/utilisation":
		// The sim's own: what its capacity model kept busy (credhub-perf's
		// target_load.credhub_sim); no CredHub serves it.
		s.only(w, r, http.MethodGet, func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusOK, s.capacity.Utilisation())
		})
	case path == "/api/v1/data":
		switch r.Method {
		case http.MethodGet:
			s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleGet(w, r, actor) })
		case http.MethodPut:
			s.served(w, r, true, func(w http.ResponseWriter, r *http.Request) { s.handleSet(w, r, actor) })
		case http.MethodPost:
			s.served(w, r, true, func(w http.ResponseWriter, r *http.Request) { s.handleGenerate(w, r, actor) })
		case http.MethodDelete:
			s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleDelete(w, r, actor) })
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	case strings.HasPrefix(path, "/api/v1/data/") && !strings.Contains(path[len("/api/v1/data/"):], "/"):
		id := path[len("/api/v1/data/"):]
		s.only(w, r, http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleGetByID(w, r, id, actor) })
		})
	case path == "/api/v1/regenerate":
		s.only(w, r, http.MethodPost, func(w http.ResponseWriter, r *http.Request) {
			s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleRegenerate(w, r, actor) })
		})
	case path == "/api/v1/certificates":
		s.only(w, r, http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
			s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleCertificates(w, r, actor) })
		})
	case strings.HasPrefix(path, "/api/v1/certificates/"):
		// None of CredHub's certificates endpoints is @Synchronized: each
		// takes a core like a read.
		id, sub, _ := strings.Cut(path[len("/api/v1/certificates/"):], "/")
		version, hasVersion := strings.CutPrefix(sub, "versions/")
		switch {
		case sub == "versions" && r.Method == http.MethodPost:
			s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleCertificateCreateVersion(w, r, id, actor) })
		case sub == "versions":
			s.only(w, r, http.MethodGet, func(w http.ResponseWriter, r *http.Request) {
				s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleCertificateVersions(w, r, id, actor) })
			})
		case hasVersion && version != "" && !strings.Contains(version, "/"):
			s.only(w, r, http.MethodDelete, func(w http.ResponseWriter, r *http.Request) {
				s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) {
					s.handleDeleteCertificateVersion(w, r, id, version, actor)
				})
			})
		case sub == "regenerate":
			s.only(w, r, http.MethodPost, func(w http.ResponseWriter, r *http.Request) {
				s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleCertificateRegenerate(w, r, id, actor) })
			})
		case sub == "update_transitional_version":
			s.only(w, r, http.MethodPut, func(w http.ResponseWriter, r *http.Request) {
				s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleUpdateTransitionalVersion(w, r, id, actor) })
			})
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	case path == "/api/v1/bulk-regenerate":
		s.only(w, r, http.MethodPost, func(w http.ResponseWriter, r *http.Request) {
			s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleBulkRegenerate(w, r, actor) })
		})
	case path == "/api/v2/permissions":
		s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handlePermissions(w, r, actor) })
	case strings.HasPrefix(path, "/api/v2/permissions/") && !strings.Contains(path[len("/api/v2/permissions/"):], "/"):
		id := path[len("/api/v2/permissions/"):]
		s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handlePermission(w, r, id, actor) })
	case path == "/api/v1/interpolate":
		s.only(w, r, http.MethodPost, func(w http.ResponseWriter, r *http.Request) {
			s.served(w, r, false, func(w http.ResponseWriter, r *http.Request) { s.handleInterpolate(w, r, actor) })
		})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// only answers 404 with an empty body for other methods, as CredHub does.
func (s *Server) only(w http.ResponseWriter, r *http.Request, method string, h http.HandlerFunc) {
	if r.Method != method && !(method == http.MethodGet && r.Method == http.MethodHead) {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	h(w, r)
}

// served runs an API handler through the capacity model and fault
// injection. The handler writes into a buffer so that nothing reaches the
// client before the request's service time is over. write marks what
// CredHub serialises per instance: set and generate (@Synchronized in its
// controller) and regenerate, which is a generate. Delete is not
// synchronized in CredHub, so it competes for cores like a read.
func (s *Server) served(w http.ResponseWriter, r *http.Request, write bool, h http.HandlerFunc) {
	if d := s.cfg.AddedLatency; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	// Injected faults fail fast, without queueing or service time, like an
	// overloaded or broken instance: the case where throughput looks good
	// and only the error accounting can tell.
	if s.cfg.ErrorRate > 0 && rand.Float64() < s.cfg.ErrorRate {
		writeError(w, s.cfg.ErrorStatus, "injected fault (credhub-sim -error-rate)")
		return
	}
	rec := &bufferedResponse{header: http.Header{}}
	ok := s.capacity.Serve(r.Context(), write, func() { h(rec, r) })
	if !ok {
		return
	}
	rec.copyTo(w)
}

type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }
func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedResponse) copyTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	w.Write(b.body.Bytes()) //nolint:errcheck // client went away; nothing to do
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := marshalNoEscape(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"`+msgInternal+`"}`)
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck // client went away; nothing to do
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// internalError logs the cause (never a credential value: store errors
// carry names and driver messages only) and answers CredHub's 500.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, store.ErrIntegrity) {
		s.log.Printf("error: %s %s: %v (answered 413 as CredHub does)", r.Method, r.URL.Path, err)
		writeError(w, http.StatusRequestEntityTooLarge, msgExceedsMaximumSize)
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	s.log.Printf("error: %s %s: %v", r.Method, r.URL.Path, err)
	writeError(w, http.StatusInternalServerError, msgInternal)
}

func (s *Server) handleInfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, orderedFields{
		{"auth-server", map[string]string{"url": s.baseURL()}},
		{"app", map[string]string{"name": "CredHub"}},
	})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.log.Printf("error: health check: database unreachable: %v", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "DOWN"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "UP"})
}

// readObject reads a request's JSON object body (keys in document order);
// a wrong content type or a body that is not a JSON object is 400.
func readObject(r *http.Request) (keys []string, fields map[string]json.RawMessage, err error) {
	body, err := readJSONBody(r)
	if err != nil {
		return nil, nil, err
	}
	return objectOf(body)
}

func objectOf(body []byte) (keys []string, fields map[string]json.RawMessage, err error) {
	keys, fields, err = decodeObject(body)
	if err != nil {
		return nil, nil, badRequest(msgBadRequest)
	}
	return keys, fields, nil
}

// decodeBody is readObject for a body whose keys must be among allowed:
// the first other key is unknownStatus (422 where CredHub binds the body
// to a typed request, 400 where it reads a map or checks keys itself).
func decodeBody(r *http.Request, unknownStatus int, allowed ...string) (map[string]json.RawMessage, error) {
	keys, fields, err := readObject(r)
	if err != nil {
		return nil, err
	}
	return fields, onlyKeys(keys, unknownStatus, allowed...)
}

func onlyKeys(keys []string, unknownStatus int, allowed ...string) error {
	if k := firstUnknown(keys, allowed...); k != "" {
		return &apiError{unknownStatus, fmt.Sprintf(msgInvalidJSONKey, k)}
	}
	return nil
}

// decodeObject parses a JSON object keeping its keys in document order, so
// the first unknown key can be reported as Jackson does.
func decodeObject(data []byte) (keys []string, fields map[string]json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	fields = map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, errors.New("object key is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		fields[k] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if dec.More() {
		return nil, nil, errors.New("trailing data after JSON object")
	}
	if _, err := dec.Token(); err == nil {
		return nil, nil, errors.New("trailing data after JSON object")
	}
	return keys, fields, nil
}

func firstUnknown(keys []string, allowed ...string) string {
	for _, k := range keys {
		known := false
		for _, a := range allowed {
			if k == a {
				known = true
				break
			}
		}
		if !known {
			return k
		}
	}
	return ""
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null"
}
