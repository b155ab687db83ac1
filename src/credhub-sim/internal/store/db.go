// Package store keeps credentials in a relational database with CredHub's
// schema (table names, key columns and foreign keys as CredHub's Flyway
// migrations leave them), so database-level tooling such as credhub-perf's
// cleanup meets the same shape it will meet in production.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Dialect names the SQL flavour behind a Store.
type Dialect string

// The supported databases.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
	MySQL    Dialect = "mysql"
)

// Store is the credential database plus the encryption key matched to it.
type Store struct {
	db      pool
	dialect Dialect
	key     *Key
}

// ParseDSN turns a -db value into a driver name, driver DSN and dialect.
// Accepted: sqlite:PATH, sqlite::memory:, postgres://..., postgresql://...,
// mysql://user:pass@host:port/db, mariadb://...
func ParseDSN(dsn string) (driver, driverDSN string, dialect Dialect, err error) {
	switch {
	case dsn == "sqlite::memory:" || dsn == "sqlite:memory" || dsn == ":memory:":
		// Open limits the pool to one connection for this DSN: every
		// connection to :memory: is a database of its own.
		return "sqlite", "file::memory:?_pragma=foreign_keys(1)&_txlock=immediate", SQLite, nil
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return "", "", "", fmt.Errorf("-db %q has no file path; use sqlite:PATH or sqlite::memory:", dsn)
		}
		// WAL with synchronous=NORMAL: no corruption on a crash, and a set
		// does not wait for an fsync, which would dominate write latency.
		return "sqlite", "file:" + path + "?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate", SQLite, nil
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		return "pgx", dsn, Postgres, nil
	case strings.HasPrefix(dsn, "mysql://") || strings.HasPrefix(dsn, "mariadb://"):
		u, perr := url.Parse(dsn)
		if perr != nil {
			return "", "", "", fmt.Errorf("parsing -db URL: %w", perr)
		}
		cfg := mysql.NewConfig()
		cfg.Net = "tcp"
		cfg.Addr = u.Host
		if u.Port() == "" {
			cfg.Addr = u.Host + ":3306"
		}
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		if cfg.DBName == "" {
			return "", "", "", fmt.Errorf("-db %s names no database; use mysql://user:pass@host:port/DBNAME", redactURL(dsn))
		}
		// Client-side interpolation: one round trip per statement instead
		// of prepare, execute and close (three), which tripled get latency.
		cfg.InterpolateParams = true
		cfg.Params = map[string]string{}
		for k, v := range u.Query() {
			if k == "tls" {
				cfg.TLSConfig = v[0]
				continue
			}
			cfg.Params[k] = v[0]
		}
		return "mysql", cfg.FormatDSN(), MySQL, nil
	default:
		return "", "", "", fmt.Errorf("-db %q is not a supported database URL; use sqlite:PATH, sqlite::memory:, postgres://user:pass@host:port/db?sslmode=disable or mysql://user:pass@host:port/db", redactURL(dsn))
	}
}

// redactURL hides a password in a URL so it can go into an error message.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
	}
	return u.String()
}

// Open connects, migrates the schema and checks the encryption password
// against the canary (creating the canary in an empty database).
func Open(ctx context.Context, dsn, encryptionPassword string) (*Store, error) {
	if encryptionPassword == "" {
		return nil, errors.New("an encryption password is required")
	}
	driver, driverDSN, dialect, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(driver, driverDSN)
	if err != nil {
		return nil, fmt.Errorf("opening %s database: %w", dialect, err)
	}
	switch {
	case dialect == SQLite && strings.Contains(driverDSN, ":memory:"):
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxIdleTime(0)
		db.SetConnMaxLifetime(0)
	case dialect == SQLite:
		// Reads run concurrently on up to 8 connections (WAL); writes
		// begin IMMEDIATE, so they queue in SQLite's busy handler for
		// the one write lock (across sim instances on one file too) and
		// never upgrade a read snapshot, which SQLite refuses at once
		// with SQLITE_BUSY_SNAPSHOT. That holds only while no pooled
		// connection keeps a read snapshot between requests, which is
		// why the pool detaches contexts (pool.go). No in-process write
		// lock and no retry: they would only hide such a leak.
		db.SetMaxOpenConns(8)
		db.SetMaxIdleConns(8)
	default:
		db.SetMaxOpenConns(64)
		db.SetMaxIdleConns(64)
		db.SetConnMaxLifetime(30 * time.Minute)
	}
	s := &Store{db: pool{DB: db, detach: dialect == SQLite}, dialect: dialect}
	pingCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connecting to %s database %s: %w", dialect, redactURL(dsn), err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	key, err := s.matchCanary(ctx, encryptionPassword)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.key = key
	return s, nil
}

// Close releases the connection pool.
func (s *Store) Close() error { return s.db.Close() }

// Dialect reports the database flavour.
func (s *Store) Dialect() Dialect { return s.dialect }

// DB exposes the pool, for tests that inspect rows directly.
func (s *Store) DB() *sql.DB { return s.db.DB }

// Ping reports whether the database answers, for /health.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// rebind turns ? placeholders into $n for PostgreSQL.
func (s *Store) rebind(q string) string {
	if s.dialect != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (s *Store) exec(ctx context.Context, q execer, query string, args ...any) (sql.Result, error) {
	return q.ExecContext(ctx, s.rebind(query), args...)
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// migration is one versioned schema change, recorded in
// flyway_schema_history like a Flyway SQL migration.
type migration struct {
	version     string
	description string
	sql         map[Dialect][]string
}

func (m migration) script() string {
	return "V" + m.version + "__" + strings.ReplaceAll(m.description, " ", "_") + ".sql"
}

func (m migration) checksum(d Dialect) int32 {
	return int32(crc32.ChecksumIEEE([]byte(strings.Join(m.sql[d], ";\n"))))
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, historyDDL[s.dialect]); err != nil {
		return fmt.Errorf("creating flyway_schema_history: %w", err)
	}
	applied := map[string]bool{}
	rows, err := s.db.QueryContext(ctx, "SELECT version FROM flyway_schema_history WHERE success = "+s.boolLiteral(true))
	if err != nil {
		return fmt.Errorf("reading flyway_schema_history: %w", err)
	}
	maxRank := 0
	for rows.Next() {
		var v sql.NullString
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("reading flyway_schema_history: %w", err)
		}
		applied[v.String] = true
	}
	rows.Close()
	if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(installed_rank), 0) FROM flyway_schema_history").Scan(&maxRank); err != nil {
		return fmt.Errorf("reading flyway_schema_history: %w", err)
	}
	for _, m := range migrations {
		if applied[m.version] {
			continue
		}
		start := time.Now()
		for _, stmt := range m.sql[s.dialect] {
			if _, err := s.db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migration %s (%s) failed; the database may hold an incompatible schema, use an empty database: %w", m.script(), firstLine(stmt), err)
			}
		}
		maxRank++
		_, err := s.exec(ctx, s.db, `INSERT INTO flyway_schema_history
			(installed_rank, version, description, type, script, checksum, installed_by, execution_time, success)
			VALUES (?, ?, ?, 'SQL', ?, ?, 'credhub-sim', ?, `+s.boolLiteral(true)+`)`,
			maxRank, m.version, m.description, m.script(), m.checksum(s.dialect), int(time.Since(start).Milliseconds()))
		if err != nil {
			return fmt.Errorf("recording migration %s: %w", m.script(), err)
		}
	}
	if s.dialect == SQLite {
		for _, stmt := range sqliteChildKeyIndexes {
			if _, err := s.db.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("indexing the references to encrypted_value (%s): %w", stmt, err)
			}
		}
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func (s *Store) boolLiteral(b bool) string {
	switch {
	case s.dialect == Postgres && b:
		return "TRUE"
	case s.dialect == Postgres:
		return "FALSE"
	case b:
		return "1"
	default:
		return "0"
	}
}

// matchCanary finds the canary the password decrypts, or creates the first
// canary in an empty database. Like CredHub, a password that matches no
// existing canary is refused rather than silently given a new key, so a typo
// cannot leave half the values unreadable.
func (s *Store) matchCanary(ctx context.Context, password string) (*Key, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT uuid, encrypted_value, nonce, salt FROM encryption_key_canary")
	if err != nil {
		return nil, fmt.Errorf("reading encryption_key_canary: %w", err)
	}
	type canary struct {
		id                 string
		value, nonce, salt []byte
	}
	var canaries []canary
	for rows.Next() {
		var c canary
		if err := rows.Scan(&c.id, &c.value, &c.nonce, &c.salt); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading encryption_key_canary: %w", err)
		}
		canaries = append(canaries, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading encryption_key_canary: %w", err)
	}
	for _, c := range canaries {
		aead, err := deriveKey(password, c.salt)
		if err != nil {
			return nil, err
		}
		if canaryMatches(aead, c.value, c.nonce) {
			return &Key{UUID: c.id, aead: aead}, nil
		}
	}
	if len(canaries) > 0 {
		return nil, ErrWrongPassword
	}
	salt := make([]byte, saltBytes)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("reading random salt: %w", err)
	}
	aead, err := deriveKey(password, salt)
	if err != nil {
		return nil, err
	}
	key := &Key{UUID: uuid.NewString(), aead: aead}
	value, nonce, err := key.Encrypt(canaryPlaintext)
	if err != nil {
		return nil, err
	}
	if _, err := s.exec(ctx, s.db, "INSERT INTO encryption_key_canary (uuid, encrypted_value, nonce, salt) VALUES (?, ?, ?, ?)",
		key.UUID, value, nonce, salt); err != nil {
		return nil, fmt.Errorf("writing encryption_key_canary: %w", err)
	}
	return key, nil
}
