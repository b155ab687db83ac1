package api

import (
	"context"
	"net/http"

	"github.com/credhub-perf/credhub-sim/internal/auth"
)

func (s *Server) seedPermissions(ctx context.Context) error {
	for _, perm := range s.cfg.Permissions {
		row, err := auth.ParseOperations(perm.Operations)
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

// permitted applies CredHub's ACL rule (auth.Allows) when ACLs are on.
func (s *Server) permitted(r *http.Request, actor, name string, op auth.Operation) (bool, error) {
	if !s.cfg.ACLs {
		return true, nil
	}
	rows, err := s.store.PermissionsFor(r.Context(), actor)
	if err != nil {
		return false, err
	}
	return auth.Allows(rows, name, op), nil
}

// requirePermission answers like CredHub: a missing write permission is
// 403, a missing read or delete permission is 404 (existence is hidden).
func (s *Server) requirePermission(r *http.Request, actor, name string, op auth.Operation) error {
	ok, err := s.permitted(r, actor, name, op)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	if op == auth.OpWrite {
		return &apiError{http.StatusForbidden, msgInvalidAccess}
	}
	return errNotFound
}
