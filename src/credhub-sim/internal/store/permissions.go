package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// PermissionRow is one row of the permission table.
type PermissionRow struct {
	UUID, Actor         string
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

// ErrPermissionExists means a row for the (path, actor) already exists.
var ErrPermissionExists = errors.New("a permission for this path and actor exists")

const permissionColumns = "uuid, path, actor, read_permission, write_permission, delete_permission, read_acl_permission, write_acl_permission"

func scanPermission(row interface{ Scan(...any) error }) (PermissionRow, error) {
	var p PermissionRow
	err := row.Scan(&p.UUID, &p.Path, &p.Actor, &p.Read, &p.Write, &p.Delete, &p.ReadACL, &p.WriteACL)
	p.UUID = strings.ToLower(p.UUID)
	return p, err
}

// Permission returns the row with uuid id; ErrNotFound when there is none
// or id is not a UUID.
func (s *Store) Permission(ctx context.Context, id string) (PermissionRow, error) {
	if _, err := uuid.Parse(id); err != nil {
		return PermissionRow{}, ErrNotFound
	}
	p, err := scanPermission(s.db.QueryRowContext(ctx, s.rebind("SELECT "+permissionColumns+" FROM permission WHERE uuid = ?"), strings.ToLower(id)))
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("reading permission %s: %w", id, err)
	}
	return p, nil
}

// PermissionByPathActor returns the row for (path, actor); ErrNotFound
// when there is none.
func (s *Store) PermissionByPathActor(ctx context.Context, path, actor string) (PermissionRow, error) {
	p, err := scanPermission(s.db.QueryRowContext(ctx, s.rebind("SELECT "+permissionColumns+" FROM permission WHERE path = ? AND actor = ?"), path, actor))
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("reading permission for %s on %s: %w", actor, path, err)
	}
	return p, nil
}

// CreatePermission inserts p with a new uuid, which it returns in the
// row; ErrPermissionExists when (path, actor) has a row already.
func (s *Store) CreatePermission(ctx context.Context, p PermissionRow) (PermissionRow, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return p, fmt.Errorf("starting transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	var n int
	if err := tx.QueryRowContext(ctx, s.rebind("SELECT COUNT(*) FROM permission WHERE path = ? AND actor = ?"), p.Path, p.Actor).Scan(&n); err != nil {
		return p, fmt.Errorf("checking permission for %s on %s: %w", p.Actor, p.Path, err)
	}
	if n > 0 {
		return p, ErrPermissionExists
	}
	p.UUID = uuid.NewString()
	if _, err := s.exec(ctx, tx, "INSERT INTO permission ("+permissionColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		p.UUID, p.Path, p.Actor, p.Read, p.Write, p.Delete, p.ReadACL, p.WriteACL); err != nil {
		return p, fmt.Errorf("writing permission for %s on %s: %w", p.Actor, p.Path, s.classify(err))
	}
	if err := tx.Commit(); err != nil {
		if _, e := s.PermissionByPathActor(ctx, p.Path, p.Actor); e == nil {
			return p, ErrPermissionExists // inserted meanwhile by another request
		}
		return p, fmt.Errorf("committing permission: %w", s.classify(err))
	}
	return p, nil
}

// SetPermissionOperations replaces the operations of the row p.UUID.
func (s *Store) SetPermissionOperations(ctx context.Context, p PermissionRow) error {
	res, err := s.exec(ctx, s.db, `UPDATE permission SET read_permission = ?, write_permission = ?, delete_permission = ?,
		read_acl_permission = ?, write_acl_permission = ? WHERE uuid = ?`, p.Read, p.Write, p.Delete, p.ReadACL, p.WriteACL, p.UUID)
	if err != nil {
		return fmt.Errorf("updating permission %s: %w", p.UUID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	return nil
}

// DeletePermission removes the row with uuid id.
func (s *Store) DeletePermission(ctx context.Context, id string) error {
	res, err := s.exec(ctx, s.db, "DELETE FROM permission WHERE uuid = ?", strings.ToLower(id))
	if err != nil {
		return fmt.Errorf("deleting permission %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	return nil
}
