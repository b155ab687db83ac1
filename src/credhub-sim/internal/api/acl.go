package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/credhub-perf/credhub-sim/internal/store"
)

type operation string

const (
	opRead   operation = "read"
	opWrite  operation = "write"
	opDelete operation = "delete"
)

// ParseOperations checks a permission's operation list.
func ParseOperations(ops []string) (store.PermissionRow, error) {
	var p store.PermissionRow
	for _, op := range ops {
		switch strings.TrimSpace(op) {
		case "read":
			p.Read = true
		case "write":
			p.Write = true
		case "delete":
			p.Delete = true
		case "read_acl":
			p.ReadACL = true
		case "write_acl":
			p.WriteACL = true
		default:
			return p, fmt.Errorf("operation %q is not one of read, write, delete, read_acl, write_acl", op)
		}
	}
	return p, nil
}

func (s *Server) seedPermissions(ctx context.Context) error {
	for _, perm := range s.cfg.Permissions {
		row, err := ParseOperations(perm.Operations)
		if err != nil {
			return err
		}
		for _, actor := range perm.Actors {
			if err := s.store.SeedPermission(ctx, perm.Path, actor, row); err != nil {
				return err
			}
		}
	}
	return nil
}

// permitted applies CredHub's ACL rule when ACLs are on: a row for the
// actor whose path is the credential name or a "/prefix/*" wildcard
// covering it, with the operation allowed. Permissions are additive.
func (s *Server) permitted(r *http.Request, actor, name string, op operation) (bool, error) {
	if !s.cfg.ACLs {
		return true, nil
	}
	rows, err := s.store.PermissionsFor(r.Context(), actor)
	if err != nil {
		return false, err
	}
	for _, p := range rows {
		match := p.Path == name
		if strings.HasSuffix(p.Path, "*") {
			match = strings.HasPrefix(name, strings.TrimSuffix(p.Path, "*"))
		}
		if !match {
			continue
		}
		switch op {
		case opRead:
			if p.Read {
				return true, nil
			}
		case opWrite:
			if p.Write {
				return true, nil
			}
		case opDelete:
			if p.Delete {
				return true, nil
			}
		}
	}
	return false, nil
}

// requirePermission answers like CredHub: a missing write permission is
// 403, a missing read or delete permission is 404 (existence is hidden).
func (s *Server) requirePermission(r *http.Request, actor, name string, op operation) error {
	ok, err := s.permitted(r, actor, name, op)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	if op == opWrite {
		return &apiError{http.StatusForbidden, msgInvalidAccess}
	}
	return errNotFound
}
