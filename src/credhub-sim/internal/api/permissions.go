package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/credhub-perf/credhub-sim/internal/auth"
	"github.com/credhub-perf/credhub-sim/internal/store"
)

// CredHub's ErrorMessages.Permissions, verbatim (after MessageFormat).
const (
	msgPermAlreadyExists    = "A permission entry for this actor and path already exists. Please use PUT to update the permission entry."
	msgPermDoesNotExist     = "The request includes a permission that does not exist."
	msgPermInvalidAccess    = "The request could not be completed because the permission does not exist or you do not have sufficient authorization."
	msgPermInvalidOperation = "The provided operation is not supported. Valid values include read, write, delete, read_acl, and write_acl."
	msgPermUpdateSelf       = "Modification of access control for the authenticated user is not allowed. Please contact an administrator."
	msgPermMissingActor     = "You must specify an actor. Please validate your input and retry your request."
	msgPermMissingOps       = "At least one operation must be provided. Please validate your input and retry your request."
	msgPermMissingPath      = "You must specify a path. Please validate your input and retry your request."
	msgPermWrongPathActor   = "The permission guid does not match the provided actor and path."
	msgPermInvalidCharPath  = "Credential paths may only include alpha, numeric, hyphen, underscore, and forward-slash characters. Please update and retry your request."
	msgPermInvalidSlashPath = "A credential path cannot end with a '/' character or contain '//'. Credential paths should be in the form of /[path]/[name] or [path]/[name]. Please update and retry your request."
)

// permissionView is CredHub's PermissionsV2View, fields in its order.
type permissionView struct {
	Path       string   `json:"path"`
	Operations []string `json:"operations"`
	Actor      string   `json:"actor"`
	UUID       string   `json:"uuid"`
}

// operationOrder is the order CredHub lists a row's operations in
// (PermissionData.generateAccessControlOperations), whatever the request's.
var operationOrder = []auth.Operation{auth.OpRead, auth.OpWrite, auth.OpDelete, auth.OpReadACL, auth.OpWriteACL}

func viewOf(p store.PermissionRow) permissionView {
	ops := []string{}
	for _, op := range operationOrder {
		if p.Has(string(op)) {
			ops = append(ops, string(op))
		}
	}
	return permissionView{Path: p.Path, Operations: ops, Actor: p.Actor, UUID: p.UUID}
}

// permissionRequest is a decoded PermissionsV2Request (or, with only
// operations, a PermissionsV2PatchRequest).
type permissionRequest struct {
	path, actor        string
	hasPath, hasActor  bool
	ops                store.PermissionRow
	hasOps, opsMissing bool
}

// decodePermissionRequest reads the body as CredHub's Jackson does: keys
// in document order, an unknown key or an operation outside the enum is
// 422 (HttpMessageNotReadableException), malformed JSON 400. allowed are
// the keys the request type has.
func decodePermissionRequest(r *http.Request, allowed ...string) (permissionRequest, error) {
	var req permissionRequest
	keys, fields, err := readObject(r)
	if err != nil {
		return req, err
	}
	req.opsMissing = true
	for _, k := range keys {
		if firstUnknown([]string{k}, allowed...) != "" {
			return req, &apiError{http.StatusUnprocessableEntity, fmt.Sprintf(msgInvalidJSONKey, k)}
		}
		raw := fields[k]
		switch k {
		case "operations":
			if isNull(raw) {
				continue
			}
			var ops []*string
			if json.Unmarshal(raw, &ops) != nil {
				return req, &apiError{http.StatusUnprocessableEntity, msgPermInvalidOperation}
			}
			var names []string
			for _, op := range ops {
				if op == nil {
					return req, &apiError{http.StatusUnprocessableEntity, msgPermInvalidOperation}
				}
				names = append(names, *op)
			}
			row, err := auth.ParseOperations(names)
			// The enum is exact: ParseOperations trims, Jackson does not.
			for _, n := range names {
				if strings.TrimSpace(n) != n {
					err = errors.New("operation with spaces")
				}
			}
			if err != nil {
				return req, &apiError{http.StatusUnprocessableEntity, msgPermInvalidOperation}
			}
			req.ops, req.hasOps, req.opsMissing = row, true, len(names) == 0
		case "path", "actor":
			if isNull(raw) {
				continue
			}
			s, err := jacksonString(raw)
			if err != nil {
				return req, badRequest(msgBadRequest)
			}
			if k == "path" {
				req.path, req.hasPath = lookupName(s), true // CredHub's setter prepends "/"
			} else {
				req.actor, req.hasActor = s, true
			}
		}
	}
	return req, nil
}

// jacksonString reads a JSON scalar into a String field as Jackson does:
// strings as they are, numbers and booleans as their text.
func jacksonString(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch v.(type) {
	case string:
		return v.(string), nil
	case float64, bool:
		return strings.TrimSpace(string(raw)), nil
	}
	return "", errors.New("not a scalar")
}

// validate applies PermissionsV2Request's bean validation (400 with the
// constraint's message). CredHub reports the first of its violations in
// no defined order; the sim checks path, actor, operations.
func (req permissionRequest) validate() error {
	if !req.hasPath {
		return badRequest(msgPermMissingPath)
	}
	p := req.path
	if p != "/" && (strings.Contains(p, "//") || strings.HasSuffix(p, "/")) {
		return badRequest(msgPermInvalidSlashPath)
	}
	if !validPermissionPath(p) {
		return badRequest(msgPermInvalidCharPath)
	}
	if len([]rune(p)) < 2 {
		return badRequest(msgPermMissingPath)
	}
	if req.actor == "" {
		return badRequest(msgPermMissingActor)
	}
	if req.opsMissing {
		return badRequest(msgPermMissingOps)
	}
	return nil
}

// validPermissionPath is CredHub's ONLY_VALID_CHARACTERS_IN_PATH: name
// characters, optionally ending in "/*".
func validPermissionPath(p string) bool {
	p = strings.TrimSuffix(p, "/*")
	for _, c := range p {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("-_/.:,()[]+", c):
		default:
			return false
		}
	}
	return true
}

// requireACL is CredHub's permission check on the permissions endpoints
// (always passed with ACLs off): a caller without op on path gets 404 with
// msg, the text each endpoint answers a missing row with.
func (s *Server) requireACL(r *http.Request, actor, path string, op auth.Operation, msg string) error {
	ok, err := s.permitted(r, actor, lookupName(path), op)
	if err != nil {
		return err
	}
	if !ok {
		return &apiError{http.StatusNotFound, msg}
	}
	return nil
}

// permissionFor looks up row id for a caller who must hold op on its
// path: an unknown row and one the caller may not use are both 404 with
// msg, so a row's existence is not given away.
func (s *Server) permissionFor(r *http.Request, id, actor string, op auth.Operation, msg string) (store.PermissionRow, error) {
	p, err := s.store.Permission(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return p, &apiError{http.StatusNotFound, msg}
	}
	if err != nil {
		return p, err
	}
	return p, s.requireACL(r, actor, p.Path, op, msg)
}

// handlePermissions serves /api/v2/permissions: GET ?path=&actor= and POST.
func (s *Server) handlePermissions(w http.ResponseWriter, r *http.Request, actor string) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.findPermission(w, r, actor)
	case http.MethodPost:
		s.createPermission(w, r, actor)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (s *Server) findPermission(w http.ResponseWriter, r *http.Request, actor string) {
	q := r.URL.Query()
	for _, p := range []string{"path", "actor"} {
		if !q.Has(p) {
			writeError(w, http.StatusBadRequest, fmt.Sprintf(msgMissingQueryParam, p))
			return
		}
	}
	path := lookupName(q.Get("path"))
	err := s.requireACL(r, actor, path, auth.OpReadACL, msgPermInvalidAccess)
	var p store.PermissionRow
	if err == nil {
		p, err = s.store.PermissionByPathActor(r.Context(), path, q.Get("actor"))
		if errors.Is(err, store.ErrNotFound) {
			err = &apiError{http.StatusNotFound, msgPermInvalidAccess}
		}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewOf(p))
}

func (s *Server) createPermission(w http.ResponseWriter, r *http.Request, actor string) {
	req, err := decodePermissionRequest(r, "path", "actor", "operations")
	if err == nil {
		err = req.validate()
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if err := s.requireACL(r, actor, req.path, auth.OpWriteACL, msgInvalidAccess); err != nil {
		s.fail(w, r, err)
		return
	}
	if s.cfg.ACLs && req.actor == actor {
		writeError(w, http.StatusBadRequest, msgPermUpdateSelf)
		return
	}
	row := req.ops
	row.Path, row.Actor = req.path, req.actor
	p, err := s.store.CreatePermission(r.Context(), row)
	if errors.Is(err, store.ErrPermissionExists) {
		writeError(w, http.StatusConflict, msgPermAlreadyExists)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, viewOf(p))
}

// handlePermission serves /api/v2/permissions/{uuid}.
func (s *Server) handlePermission(w http.ResponseWriter, r *http.Request, id, actor string) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.getPermission(w, r, id, actor)
	case http.MethodPut:
		s.updatePermission(w, r, id, actor, false)
	case http.MethodPatch:
		s.updatePermission(w, r, id, actor, true)
	case http.MethodDelete:
		s.deletePermission(w, r, id, actor)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// getPermission is GET /{uuid}: CredHub checks read_acl on the row's path
// and answers an unknown uuid, or one the caller may not read, with the
// credential 404 text. (CredHub's own parse of a malformed uuid is not
// handled there; the sim answers it as unknown.)
func (s *Server) getPermission(w http.ResponseWriter, r *http.Request, id, actor string) {
	p, err := s.permissionFor(r, id, actor, auth.OpReadACL, msgInvalidAccess)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewOf(p))
}

// modifiable applies CredHub's checkActorPermissions for PUT, PATCH and
// DELETE: the row must exist and the caller hold write_acl on its path
// (else 404 does-not-exist), and, with ACLs on, no one changes their own
// access (400).
func (s *Server) modifiable(r *http.Request, id, actor string) (store.PermissionRow, error) {
	p, err := s.permissionFor(r, id, actor, auth.OpWriteACL, msgPermDoesNotExist)
	if err != nil {
		return p, err
	}
	if s.cfg.ACLs && p.Actor == actor {
		return p, badRequest(msgPermUpdateSelf)
	}
	return p, nil
}

// updatePermission is PUT (path, actor and operations, which must name
// the row's own path and actor) or PATCH (operations only; none clears
// them all, as CredHub does). Both replace the row's operations.
func (s *Server) updatePermission(w http.ResponseWriter, r *http.Request, id, actor string, patch bool) {
	var req permissionRequest
	var err error
	if patch {
		req, err = decodePermissionRequest(r, "operations")
	} else if req, err = decodePermissionRequest(r, "path", "actor", "operations"); err == nil {
		err = req.validate()
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.modifiable(r, id, actor)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !patch && (req.path != p.Path || req.actor != p.Actor) {
		writeError(w, http.StatusBadRequest, msgPermWrongPathActor)
		return
	}
	row := req.ops
	row.UUID, row.Path, row.Actor = p.UUID, p.Path, p.Actor
	if err := s.store.SetPermissionOperations(r.Context(), row); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = &apiError{http.StatusNotFound, msgPermDoesNotExist}
		}
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewOf(row))
}

// deletePermission is DELETE /{uuid}: 200 with the deleted row's view.
func (s *Server) deletePermission(w http.ResponseWriter, r *http.Request, id, actor string) {
	p, err := s.modifiable(r, id, actor)
	if err == nil {
		err = s.store.DeletePermission(r.Context(), p.UUID)
		if errors.Is(err, store.ErrNotFound) {
			err = &apiError{http.StatusNotFound, msgPermDoesNotExist}
		}
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewOf(p))
}
