package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// PermissionRow is one row of the permission table.
type PermissionRow struct {
	Path                string
	Read, Write, Delete bool
	ReadACL, WriteACL   bool
}

// SeedPermission writes (path, actor) with the given operations, replacing
// an existing row, as CredHub does for manifest permissions at start.
func (s *Store) SeedPermission(ctx context.Context, path, actor string, p PermissionRow) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := s.exec(ctx, tx, "DELETE FROM permission WHERE path = ? AND actor = ?", path, actor); err != nil {
		return fmt.Errorf("replacing permission for %s on %s: %w", actor, path, err)
	}
	if _, err := s.exec(ctx, tx, `INSERT INTO permission (uuid, path, actor, read_permission, write_permission, delete_permission, read_acl_permission, write_acl_permission)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, uuid.NewString(), path, actor, p.Read, p.Write, p.Delete, p.ReadACL, p.WriteACL); err != nil {
		return fmt.Errorf("writing permission for %s on %s: %w", actor, path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing permission: %w", err)
	}
	return nil
}

// PermissionsFor lists an actor's permission rows.
func (s *Store) PermissionsFor(ctx context.Context, actor string) ([]PermissionRow, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT path, read_permission, write_permission, delete_permission, read_acl_permission, write_acl_permission
		FROM permission WHERE actor = ?`), actor)
	if err != nil {
		return nil, fmt.Errorf("reading permissions: %w", err)
	}
	defer rows.Close()
	var out []PermissionRow
	for rows.Next() {
		var p PermissionRow
		if err := rows.Scan(&p.Path, &p.Read, &p.Write, &p.Delete, &p.ReadACL, &p.WriteACL); err != nil {
			return nil, fmt.Errorf("reading permissions: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading permissions: %w", err)
	}
	return out, nil
}

// Has tells whether the row allows the operation named op (read, write,
// delete, read_acl, write_acl).
func (p PermissionRow) Has(op string) bool {
	switch op {
	case "read":
		return p.Read
	case "write":
		return p.Write
	case "delete":
		return p.Delete
	case "read_acl":
		return p.ReadACL
	case "write_acl":
		return p.WriteACL
	}
	return false
}
