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
