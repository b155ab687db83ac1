package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// CredentialRef is a credential's row: its uuid (what CredHub's
// /api/v1/certificates calls the certificate id) and name.
type CredentialRef struct {
	UUID, Name string
}

// CertificateCredentials lists the credentials whose versions are
// certificates, by name; nameLower "" lists all.
func (s *Store) CertificateCredentials(ctx context.Context, nameLower string) ([]CredentialRef, error) {
	q := `SELECT DISTINCT c.uuid, c.name FROM credential c JOIN credential_version cv ON cv.credential_uuid = c.uuid
		WHERE cv.type = ?`
	args := []any{TypeCert}
	if nameLower != "" {
		q += " AND c.name_lowercase = ?"
		args = append(args, strings.ToLower(nameLower))
	}
	q += " ORDER BY c.name"
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("listing certificates: %w", err)
	}
	defer rows.Close()
	var out []CredentialRef
	for rows.Next() {
		var c CredentialRef
		if err := rows.Scan(&c.UUID, &c.Name); err != nil {
			return nil, fmt.Errorf("listing certificates: %w", err)
		}
		c.UUID = strings.ToLower(c.UUID)
		out = append(out, c)
	}
	return out, rows.Err()
}

// CredentialByUUID returns a credential's name from its uuid.
func (s *Store) CredentialByUUID(ctx context.Context, id string) (CredentialRef, error) {
	if _, err := uuid.Parse(id); err != nil {
		return CredentialRef{}, ErrNotFound
	}
	c := CredentialRef{UUID: strings.ToLower(id)}
	err := s.db.QueryRowContext(ctx, s.rebind("SELECT name FROM credential WHERE uuid = ?"), c.UUID).Scan(&c.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("looking up credential %s: %w", id, err)
	}
	return c, nil
}

// CertificatesSignedBy lists the names of the certificate credentials any
// of whose versions names caName as its CA, as CredHub's bulk regenerate
// finds them: ca_name compared with LIKE, case-insensitively.
func (s *Store) CertificatesSignedBy(ctx context.Context, caName string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT DISTINCT c.name FROM credential c
		JOIN credential_version cv ON cv.credential_uuid = c.uuid
		JOIN certificate_credential cc ON cc.uuid = cv.uuid
		WHERE LOWER(cc.ca_name) LIKE LOWER(?)`), caName)
	if err != nil {
		return nil, fmt.Errorf("listing certificates signed by %s: %w", caName, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("listing certificates signed by %s: %w", caName, err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// LatestCertificate returns name's newest certificate version whose
// transitional flag is transitional: false gives CredHub's active version
// (findLatestNonTransitionalCertificateVersion, what signs and what
// regenerate starts from), true its transitional one. ErrNotFound when
// there is none.
func (s *Store) LatestCertificate(ctx context.Context, name string, transitional bool) (Version, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind("SELECT "+versionColumns+`
		JOIN certificate_credential cc ON cc.uuid = cv.uuid
		WHERE c.name_lowercase = ? AND cc.transitional = ?
		ORDER BY cv.version_created_at DESC LIMIT 1`), strings.ToLower(name), transitional)
	if err != nil {
		return Version{}, fmt.Errorf("querying certificate %q: %w", name, err)
	}
	return s.firstVersion(ctx, rows)
}

// SetTransitional clears the transitional flag on every version of the
// credential credUUID and, unless versionID is "", sets it on that
// version, in one transaction (CredHub's updateTransitionalVersion is
// @Transactional). The caller has checked that versionID is one of the
// credential's certificate versions.
func (s *Store) SetTransitional(ctx context.Context, credUUID, versionID string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := s.exec(ctx, tx, `UPDATE certificate_credential SET transitional = ?
		WHERE transitional = ? AND uuid IN (SELECT uuid FROM credential_version WHERE credential_uuid = ?)`,
		false, true, strings.ToLower(credUUID)); err != nil {
		return fmt.Errorf("clearing transitional versions: %w", err)
	}
	if versionID != "" {
		res, err := s.exec(ctx, tx, "UPDATE certificate_credential SET transitional = ? WHERE uuid = ?", true, strings.ToLower(versionID))
		if err != nil {
			return fmt.Errorf("setting transitional version: %w", err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return ErrNotFound
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing transitional version: %w", err)
	}
	return nil
}

// ErrLastVersion means a delete would leave a certificate without versions.
var ErrLastVersion = errors.New("the credential's only version")

// DeleteVersion removes one version of the credential credUUID with its
// encrypted value (credential_version does not cascade to encrypted_value).
// ErrNotFound when the version is not the credential's, ErrLastVersion
// when it is its only one.
func (s *Store) DeleteVersion(ctx context.Context, credUUID, versionID string) error {
	if _, err := uuid.Parse(versionID); err != nil {
		return ErrNotFound
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	credUUID, versionID = strings.ToLower(credUUID), strings.ToLower(versionID)
	var ev sql.NullString
	err = tx.QueryRowContext(ctx, s.rebind("SELECT encrypted_value_uuid FROM credential_version WHERE uuid = ? AND credential_uuid = ?"),
		versionID, credUUID).Scan(&ev)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("looking up version: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, s.rebind("SELECT COUNT(*) FROM credential_version WHERE credential_uuid = ?"), credUUID).Scan(&n); err != nil {
		return fmt.Errorf("counting versions: %w", err)
	}
	if n <= 1 {
		return ErrLastVersion
	}
	if _, err := s.exec(ctx, tx, "DELETE FROM credential_version WHERE uuid = ?", versionID); err != nil {
		return fmt.Errorf("deleting version: %w", err)
	}
	if ev.Valid {
		if _, err := s.exec(ctx, tx, "DELETE FROM encrypted_value WHERE uuid = ?", ev.String); err != nil {
			return fmt.Errorf("deleting encrypted value: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing version delete: %w", err)
	}
	return nil
}
