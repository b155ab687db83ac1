package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/credhub-perf/credhub-sim/internal/store"
)

// The audit log is CredHub's CEF security-event log
// (credhub_security_events.log), written as CredHub 2.15's CEFAuditRecord
// and AuditInterceptor write it: one record per authenticated request,
// begun when the request arrives (rt) and logged when it has been
// answered; one line per resource the handler added (a get by name: per
// version returned; an interpolate: per reference resolved), else one
// line. The credhub-perf workload package's doc has the source's rules.

// auditLog serialises records onto one writer, each event in one Write
// (as log4j's appender does), so an event's lines stay adjacent.
type auditLog struct {
	mu sync.Mutex
	w  io.Writer
}

type auditResource struct{ name, uuid, version string }

// auditRecord is one request's record (CredHub's request-scoped bean).
type auditRecord struct {
	mu        sync.Mutex
	rt        int64
	method    string
	uri       string // path, escaped as sent
	query     string
	src, dst  string
	actor     string
	action    string // deviceAction; "null" until a handler sets details
	details   string // cs6, JSON; "" writes no cs6
	single    auditResource
	resources []auditResource
}

type auditKey struct{}

// beginAudit starts the record of an authenticated request and returns
// the request carrying it; nil without an audit log.
func (s *Server) beginAudit(r *http.Request, actor string) (*auditRecord, *http.Request) {
	if s.audit == nil {
		return nil, r
	}
	src := r.Header.Get("X-Forwarded-For")
	if src == "" {
		src, _, _ = net.SplitHostPort(r.RemoteAddr)
	}
	dst := r.Host
	if h, _, err := net.SplitHostPort(dst); err == nil {
		dst = h
	}
	rec := &auditRecord{
		rt: time.Now().UnixMilli(), method: r.Method, uri: r.URL.EscapedPath(), query: r.URL.RawQuery,
		src: src, dst: dst, actor: actor, action: "null",
	}
	return rec, r.WithContext(context.WithValue(r.Context(), auditKey{}, rec))
}

func auditOf(r *http.Request) *auditRecord {
	rec, _ := r.Context().Value(auditKey{}).(*auditRecord)
	return rec
}

// auditDetails sets deviceAction and cs6 (Jackson's default rendering of
// CredHub's request-details class: fields in declaration order, nulls
// written, no HTML escaping).
func auditDetails(r *http.Request, action string, details any) {
	rec := auditOf(r)
	if rec == nil {
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(details); err != nil {
		return
	}
	rec.mu.Lock()
	rec.action, rec.details = action, strings.TrimRight(b.String(), "\n")
	rec.mu.Unlock()
}

// auditAdd adds a version to the resource list (a line of its own).
func auditAdd(r *http.Request, v store.Version) {
	if rec := auditOf(r); rec != nil {
		rec.mu.Lock()
		rec.resources = append(rec.resources, auditResource{v.Name, credentialUUID(v.Name), v.ID})
		rec.mu.Unlock()
	}
}

// auditCredential adds a credential without a version (CredHub's
// addAllCredentials: the certificates list, one line per certificate).
func auditCredential(r *http.Request, name, id string) {
	if rec := auditOf(r); rec != nil {
		rec.mu.Lock()
		rec.resources = append(rec.resources, auditResource{name: name, uuid: id})
		rec.mu.Unlock()
	}
}

// auditSet names the record's one resource (CredHub's setResource and
// setVersion: set, generate, get by id).
func auditSet(r *http.Request, v store.Version) {
	if rec := auditOf(r); rec != nil {
		rec.mu.Lock()
		rec.single = auditResource{v.Name, credentialUUID(v.Name), v.ID}
		rec.mu.Unlock()
	}
}

// credentialUUID stands for the credential's UUID (cs5), which the sim's
// store does not keep apart from its versions': stable per name.
func credentialUUID(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("credhub-sim:"+strings.ToLower(name))).String()
}

// write logs the record with the answer's status.
func (l *auditLog) write(rec *auditRecord, status int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var b bytes.Buffer
	if len(rec.resources) == 0 {
		rec.line(&b, rec.single, status)
	}
	for _, res := range rec.resources {
		rec.line(&b, res, status)
	}
	l.mu.Lock()
	l.w.Write(b.Bytes())
	l.mu.Unlock()
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func (rec *auditRecord) line(b *bytes.Buffer, res auditResource, status int) {
	sig := rec.method + " " + rec.uri
	req := rec.uri
	if rec.query != "" {
		req += "?" + rec.query
	}
	suser, mech := rec.actor, "uaa"
	if id, ok := strings.CutPrefix(rec.actor, "mtls-"); ok {
		suser, mech = id, "mutual_tls"
	} else if _, id, ok := strings.Cut(rec.actor, ":"); ok {
		suser = id
	}
	b.WriteString("CEF:0|cloud_foundry|credhub|" + Version + "|" + sig + "|" + sig + "|0|rt=")
	b.WriteString(strconv.FormatInt(rec.rt, 10))
	b.WriteString(" suser=" + suser + " suid=" + rec.actor + " cs1Label=userAuthenticationMechanism cs1=" + mech)
	b.WriteString(" request=" + req + " requestMethod=" + rec.method + " cs3Label=versionUuid cs3=" + orNull(res.version))
	b.WriteString(" cs4Label=httpStatusCode cs4=" + strconv.Itoa(status) + " src=" + rec.src + " dst=" + rec.dst)
	b.WriteString(" cs2Label=resourceName cs2=" + orNull(res.name) + " cs5Label=resourceUuid cs5=" + orNull(res.uuid))
	b.WriteString(" deviceAction=" + rec.action + " ")
	if rec.details != "" {
		b.WriteString("cs6Label=requestDetails cs6=" + rec.details + " ")
	}
	b.WriteByte('\n')
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// The request-details classes CredHub logs in cs6 (their fields, in order).
type (
	getCredentialDetails struct {
		Name     string `json:"name"`
		Versions *int   `json:"versions"`
		Current  bool   `json:"current"`
	}
	findCredentialDetails struct {
		NameLike          *string `json:"nameLike"`
		Path              *string `json:"path"`
		Paths             *bool   `json:"paths"`
		ExpiresWithinDays string  `json:"expiresWithinDays"`
	}
	setCredentialDetails struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	nameDetails struct {
		Name string `json:"name"`
	}
	byIDDetails struct {
		UUID string `json:"uuid"`
	}
	bulkDetails struct {
		SignedBy string `json:"signedBy"`
	}
	noDetails struct{}
)
