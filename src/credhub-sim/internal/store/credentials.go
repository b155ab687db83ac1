package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	sqlite "modernc.org/sqlite"
)

// ErrNotFound means no credential (or version) matches.
var ErrNotFound = errors.New("credential not found")

// ErrIntegrity is a constraint violation while saving, which CredHub reports
// as 413 "Value exceeds the maximum size." (e.g. a vanished canary row, or
// two servers racing to create the same name).
var ErrIntegrity = errors.New("database integrity violation while saving the credential")

// Type discriminators stored in credential_version.type (CredHub's values;
// note "cert" where the API says "certificate").
const (
	TypeValue    = "value"
	TypeJSON     = "json"
	TypePassword = "password"
	TypeUser     = "user"
	TypeCert     = "cert"
	TypeSSH      = "ssh"
	TypeRSA      = "rsa"
)

// CertFields are certificate_credential's columns.
type CertFields struct {
	CA, Certificate, CAName sql.NullString
	Transitional            bool
	ExpiryDate              sql.NullInt64 // epoch ms
	CertificateAuthority    bool
	SelfSigned              bool
	Generated               sql.NullBool
}

// Version is one decrypted credential version with its type-table fields.
type Version struct {
	ID        string
	Name      string
	Type      string
	CreatedAt int64 // epoch ms
	Metadata  sql.NullString
	Secret    []byte // decrypted encrypted_value
	Params    []byte // decrypted generation parameters, nil when not generated
	Username  sql.NullString
	Salt      string
	Cert      CertFields
	PublicKey sql.NullString
}

// NewVersion is what Write stores.
type NewVersion struct {
	Name      string
	Type      string
	Metadata  sql.NullString
	Secret    []byte
	Params    []byte
	Username  sql.NullString
	Salt      string
	Cert      CertFields
	PublicKey sql.NullString
}

// Summary is one row of a find result.
type Summary struct {
	Name      string
	CreatedAt int64
}

// versionColumns reads the common part of a version. The type tables are
// read by a second query only for the types that have one: a single
// nine-way join costs PostgreSQL milliseconds of planning per request.
const versionColumns = `cv.uuid, c.name, cv.type, cv.version_created_at, cv.metadata, ev.encrypted_value, ev.nonce
FROM credential_version cv
JOIN credential c ON c.uuid = cv.credential_uuid
LEFT JOIN encrypted_value ev ON ev.uuid = cv.encrypted_value_uuid`

func (s *Store) scanVersions(ctx context.Context, rows *sql.Rows) ([]Version, error) {
	var out []Version
	for rows.Next() {
		var v Version
		var ev, evNonce []byte
		if err := rows.Scan(&v.ID, &v.Name, &v.Type, &v.CreatedAt, &v.Metadata, &ev, &evNonce); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading credential_version: %w", err)
		}
		if ev != nil {
			plain, err := s.key.Decrypt(ev, evNonce)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("credential version %s: %w", v.ID, err)
			}
			v.Secret = plain
		}
		out = append(out, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading credential_version: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	// One credential has one type, but a version looked up by id is alone
	// anyway; group by type to stay general.
	byType := map[string][]int{}
	for i, v := range out {
		byType[v.Type] = append(byType[v.Type], i)
	}
	for typ, idx := range byType {
		for len(idx) > 0 {
			n := min(len(idx), 500)
			if err := s.loadTypeFields(ctx, typ, out, idx[:n]); err != nil {
				return nil, err
			}
			idx = idx[n:]
		}
	}
	return out, nil
}

// loadTypeFields fills the type-table fields of out[idx...], all of typ.
func (s *Store) loadTypeFields(ctx context.Context, typ string, out []Version, idx []int) error {
	var q string
	switch typ {
	case TypePassword:
		q = `SELECT t.uuid, pev.encrypted_value, pev.nonce FROM password_credential t
			LEFT JOIN encrypted_value pev ON pev.uuid = t.password_parameters_uuid WHERE t.uuid IN `
	case TypeUser:
		q = `SELECT t.uuid, pev.encrypted_value, pev.nonce, t.username, t.salt FROM user_credential t
			LEFT JOIN encrypted_value pev ON pev.uuid = t.password_parameters_uuid WHERE t.uuid IN `
	case TypeCert:
		q = `SELECT t.uuid, t.ca, t.certificate, t.ca_name, t.transitional, t.expiry_date, t.certificate_authority,
			t.self_signed, t.certificate_generated FROM certificate_credential t WHERE t.uuid IN `
	case TypeSSH:
		q = `SELECT t.uuid, t.public_key FROM ssh_credential t WHERE t.uuid IN `
	case TypeRSA:
		q = `SELECT t.uuid, t.public_key FROM rsa_credential t WHERE t.uuid IN `
	default:
		return nil
	}
	pos := make(map[string]int, len(idx))
	args := make([]any, 0, len(idx))
	for _, i := range idx {
		pos[strings.ToLower(out[i].ID)] = i
		args = append(args, out[i].ID)
	}
	q += "(?" + strings.Repeat(", ?", len(args)-1) + ")"
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return fmt.Errorf("reading %s type fields: %w", typ, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var pev, pevNonce []byte
		var salt sql.NullString
		var transitional, ca, selfSigned sql.NullBool
		var v Version
		switch typ {
		case TypePassword:
			err = rows.Scan(&id, &pev, &pevNonce)
		case TypeUser:
			err = rows.Scan(&id, &pev, &pevNonce, &v.Username, &salt)
		case TypeCert:
			err = rows.Scan(&id, &v.Cert.CA, &v.Cert.Certificate, &v.Cert.CAName, &transitional, &v.Cert.ExpiryDate, &ca, &selfSigned, &v.Cert.Generated)
		default:
			err = rows.Scan(&id, &v.PublicKey)
		}
		if err != nil {
			return fmt.Errorf("reading %s type fields: %w", typ, err)
		}
		i, ok := pos[strings.ToLower(id)]
		if !ok {
			continue
		}
		o := &out[i]
		o.Username, o.Salt, o.PublicKey = v.Username, salt.String, v.PublicKey
		if typ == TypeCert {
			o.Cert = v.Cert
			o.Cert.Transitional, o.Cert.CertificateAuthority, o.Cert.SelfSigned = transitional.Bool, ca.Bool, selfSigned.Bool
		}
		if pev != nil {
			plain, err := s.key.Decrypt(pev, pevNonce)
			if err != nil {
				return fmt.Errorf("credential version %s parameters: %w", id, err)
			}
			o.Params = plain
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading %s type fields: %w", typ, err)
	}
	return nil
}

// Versions returns a credential's versions, newest first; limit 0 means all.
// Name matching is case-insensitive, like CredHub since 2024.
func (s *Store) Versions(ctx context.Context, name string, limit int) ([]Version, error) {
	q := "SELECT " + versionColumns + " WHERE c.name_lowercase = ? ORDER BY cv.version_created_at DESC"
	args := []any{strings.ToLower(name)}
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("querying credential %q: %w", name, err)
	}
	vs, err := s.scanVersions(ctx, rows)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		return nil, ErrNotFound
	}
	return vs, nil
}

// LatestType returns the type of a credential's newest version, without
// decrypting anything (set checks it on every write).
func (s *Store) LatestType(ctx context.Context, name string) (string, error) {
	var typ string
	err := s.db.QueryRowContext(ctx, s.rebind(`SELECT cv.type FROM credential_version cv
		JOIN credential c ON c.uuid = cv.credential_uuid
		WHERE c.name_lowercase = ? ORDER BY cv.version_created_at DESC LIMIT 1`), strings.ToLower(name)).Scan(&typ)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("querying credential %q: %w", name, err)
	}
	return typ, nil
}

// ByID returns one version by its uuid.
func (s *Store) ByID(ctx context.Context, id string) (Version, error) {
	if _, err := uuid.Parse(id); err != nil {
		return Version{}, ErrNotFound
	}
	rows, err := s.db.QueryContext(ctx, s.rebind("SELECT "+versionColumns+" WHERE cv.uuid = ?"), strings.ToLower(id))
	if err != nil {
		return Version{}, fmt.Errorf("querying credential version: %w", err)
	}
	return s.firstVersion(ctx, rows)
}

// firstVersion reads the first version rows hold; ErrNotFound when none.
func (s *Store) firstVersion(ctx context.Context, rows *sql.Rows) (Version, error) {
	vs, err := s.scanVersions(ctx, rows)
	if err != nil {
		return Version{}, err
	}
	if len(vs) == 0 {
		return Version{}, ErrNotFound
	}
	return vs[0], nil
}

func checksum(nameLower string) string {
	sum := sha256.Sum256([]byte(nameLower))
	return hex.EncodeToString(sum[:])
}

// Write stores a new version of a credential, creating the credential row on
// first use. Callers serialise writes (CredHub's @Synchronized handlers);
// version_created_at is kept strictly increasing per credential so that
// "newest first" is well defined even within one millisecond.
func (s *Store) Write(ctx context.Context, nv NewVersion) (Version, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Version{}, fmt.Errorf("starting transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	v, err := s.write(ctx, tx, nv)
	if err != nil {
		return Version{}, s.classify(err)
	}
	if err := tx.Commit(); err != nil {
		return Version{}, s.classify(fmt.Errorf("committing credential version: %w", err))
	}
	return v, nil
}

func (s *Store) write(ctx context.Context, tx txn, nv NewVersion) (Version, error) {
	lower := strings.ToLower(nv.Name)
	var credUUID, storedName string
	err := tx.QueryRowContext(ctx, s.rebind("SELECT uuid, name FROM credential WHERE name_lowercase = ?"), lower).Scan(&credUUID, &storedName)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		credUUID, storedName = uuid.NewString(), nv.Name
		if _, err := s.exec(ctx, tx, "INSERT INTO credential (uuid, name, checksum) VALUES (?, ?, ?)", credUUID, nv.Name, checksum(lower)); err != nil {
			return Version{}, fmt.Errorf("inserting credential: %w", err)
		}
	case err != nil:
		return Version{}, fmt.Errorf("looking up credential: %w", err)
	}
	now := time.Now().UnixMilli()
	var last sql.NullInt64
	if err := tx.QueryRowContext(ctx, s.rebind("SELECT MAX(version_created_at) FROM credential_version WHERE credential_uuid = ?"), credUUID).Scan(&last); err != nil {
		return Version{}, fmt.Errorf("reading latest version time: %w", err)
	}
	if last.Valid && last.Int64 >= now {
		now = last.Int64 + 1
	}
	secretUUID, err := s.insertEncrypted(ctx, tx, nv.Secret, now)
	if err != nil {
		return Version{}, err
	}
	paramsUUID, err := s.insertEncrypted(ctx, tx, nv.Params, now)
	if err != nil {
		return Version{}, err
	}
	versionUUID := uuid.NewString()
	if _, err := s.exec(ctx, tx, `INSERT INTO credential_version (uuid, type, version_created_at, credential_uuid, encrypted_value_uuid, metadata)
		VALUES (?, ?, ?, ?, ?, ?)`, versionUUID, nv.Type, now, credUUID, secretUUID, nv.Metadata); err != nil {
		return Version{}, fmt.Errorf("inserting credential_version: %w", err)
	}
	err = nil
	switch nv.Type {
	case TypePassword:
		_, err = s.exec(ctx, tx, "INSERT INTO password_credential (uuid, password_parameters_uuid) VALUES (?, ?)", versionUUID, paramsUUID)
	case TypeUser:
		_, err = s.exec(ctx, tx, "INSERT INTO user_credential (uuid, username, salt, password_parameters_uuid) VALUES (?, ?, ?, ?)", versionUUID, nv.Username, nv.Salt, paramsUUID)
	case TypeCert:
		c := nv.Cert
		_, err = s.exec(ctx, tx, `INSERT INTO certificate_credential (uuid, ca, certificate, ca_name, transitional, expiry_date, certificate_authority, self_signed, certificate_generated)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, versionUUID, c.CA, c.Certificate, c.CAName, c.Transitional, c.ExpiryDate, c.CertificateAuthority, c.SelfSigned, c.Generated)
	case TypeSSH:
		_, err = s.exec(ctx, tx, "INSERT INTO ssh_credential (uuid, public_key) VALUES (?, ?)", versionUUID, nv.PublicKey)
	case TypeRSA:
		_, err = s.exec(ctx, tx, "INSERT INTO rsa_credential (uuid, public_key) VALUES (?, ?)", versionUUID, nv.PublicKey)
	}
	if err != nil {
		return Version{}, fmt.Errorf("inserting %s type row: %w", nv.Type, err)
	}
	return Version{
		ID: versionUUID, Name: storedName, Type: nv.Type, CreatedAt: now, Metadata: nv.Metadata,
		Secret: nv.Secret, Params: nv.Params, Username: nv.Username, Salt: nv.Salt, Cert: nv.Cert, PublicKey: nv.PublicKey,
	}, nil
}

// insertEncrypted stores plain as an encrypted_value row and returns its
// uuid; nil plain (a credential without that part) stores nothing: NULL.
func (s *Store) insertEncrypted(ctx context.Context, tx txn, plain []byte, now int64) (sql.NullString, error) {
	if plain == nil {
		return sql.NullString{}, nil
	}
	ct, nonce, err := s.key.Encrypt(plain)
	if err != nil {
		return sql.NullString{}, err
	}
	id := uuid.NewString()
	if _, err := s.exec(ctx, tx, "INSERT INTO encrypted_value (uuid, encryption_key_uuid, encrypted_value, nonce, updated_at) VALUES (?, ?, ?, ?, ?)",
		id, s.key.UUID, ct, nonce, now); err != nil {
		return sql.NullString{}, fmt.Errorf("inserting encrypted_value: %w", err)
	}
	return sql.NullString{String: id, Valid: true}, nil
}

// Delete removes a credential with all its versions and their encrypted
// values (credential_version cascades from credential; encrypted_value does
// not, so it is deleted explicitly, as CredHub's JPA cascade does).
func (s *Store) Delete(ctx context.Context, name string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	var credUUID string
	err = tx.QueryRowContext(ctx, s.rebind("SELECT uuid FROM credential WHERE name_lowercase = ?"), strings.ToLower(name)).Scan(&credUUID)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("looking up credential: %w", err)
	}
	rows, err := tx.QueryContext(ctx, s.rebind(`SELECT cv.encrypted_value_uuid, pc.password_parameters_uuid, uc.password_parameters_uuid
		FROM credential_version cv
		LEFT JOIN password_credential pc ON pc.uuid = cv.uuid
		LEFT JOIN user_credential uc ON uc.uuid = cv.uuid
		WHERE cv.credential_uuid = ?`), credUUID)
	if err != nil {
		return fmt.Errorf("listing encrypted values: %w", err)
	}
	var evs []string
	for rows.Next() {
		var a, b, c sql.NullString
		if err := rows.Scan(&a, &b, &c); err != nil {
			rows.Close()
			return fmt.Errorf("listing encrypted values: %w", err)
		}
		for _, x := range []sql.NullString{a, b, c} {
			if x.Valid {
				evs = append(evs, x.String)
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("listing encrypted values: %w", err)
	}
	if _, err := s.exec(ctx, tx, "DELETE FROM credential WHERE uuid = ?", credUUID); err != nil {
		return fmt.Errorf("deleting credential: %w", err)
	}
	for len(evs) > 0 {
		n := min(len(evs), 500)
		batch := evs[:n]
		evs = evs[n:]
		args := make([]any, len(batch))
		for i, id := range batch {
			args[i] = id
		}
		q := "DELETE FROM encrypted_value WHERE uuid IN (?" + strings.Repeat(", ?", len(batch)-1) + ")"
		if _, err := s.exec(ctx, tx, q, args...); err != nil {
			return fmt.Errorf("deleting encrypted values: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing delete: %w", err)
	}
	return nil
}

func likeEscape(s string) string {
	r := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")
	return r.Replace(s)
}

// FindByPath lists credentials whose lowercased name starts with prefix,
// newest first.
func (s *Store) FindByPath(ctx context.Context, prefix string) ([]Summary, error) {
	return s.find(ctx, likeEscape(strings.ToLower(prefix))+"%")
}

// FindByNameLike lists credentials whose name contains part
// (case-insensitive), newest first.
func (s *Store) FindByNameLike(ctx context.Context, part string) ([]Summary, error) {
	return s.find(ctx, "%"+likeEscape(strings.ToLower(part))+"%")
}

func (s *Store) find(ctx context.Context, pattern string) ([]Summary, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT c.name, MAX(cv.version_created_at) AS latest
		FROM credential c JOIN credential_version cv ON cv.credential_uuid = c.uuid
		WHERE c.name_lowercase LIKE ? ESCAPE '!'
		GROUP BY c.uuid, c.name ORDER BY latest DESC, c.name`), pattern)
	if err != nil {
		return nil, fmt.Errorf("finding credentials: %w", err)
	}
	defer rows.Close()
	out := []Summary{}
	for rows.Next() {
		var sm Summary
		if err := rows.Scan(&sm.Name, &sm.CreatedAt); err != nil {
			return nil, fmt.Errorf("finding credentials: %w", err)
		}
		out = append(out, sm)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("finding credentials: %w", err)
	}
	return out, nil
}

// classify maps driver constraint violations to ErrIntegrity.
func (s *Store) classify(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (strings.HasPrefix(pgErr.Code, "23") || strings.HasPrefix(pgErr.Code, "22")) { // Spring maps both classes to DataIntegrityViolationException
		return fmt.Errorf("%w: %v", ErrIntegrity, err)
	}
	var myErr *mysql.MySQLError
	if errors.As(err, &myErr) {
		switch myErr.Number {
		case 1062, 1216, 1217, 1451, 1452, 1406, 1048:
			return fmt.Errorf("%w: %v", ErrIntegrity, err)
		}
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) && liteErr.Code()&0xff == 19 { // SQLITE_CONSTRAINT
		return fmt.Errorf("%w: %v", ErrIntegrity, err)
	}
	return err
}
