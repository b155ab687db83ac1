// Package cleanup removes what a load test wrote into CredHub: through the
// API (every credential under the run's prefix) or directly in CredHub's
// database (every credential, in one transaction, after checking the schema
// really is CredHub's).
package cleanup

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/credhub-perf/credhub-perf/credhub"
)

// Result says what a cleanup did.
type Result struct {
	Mode    string `json:"mode"`
	Deleted int64  `json:"deleted"` // credentials removed
	// Foreign counts the removed credentials whose name is not under the
	// run's path (database cleanup only: it empties every credential of
	// that CredHub), and ForeignNames names a few of them, so a cleanup
	// that removed someone else's data says so.
	Foreign      int64    `json:"foreign"`
	ForeignNames []string `json:"foreign_names,omitempty"`
	Elapsed      time.Duration
}

// foreignExamples is how many names of removed credentials not written by
// the run a database cleanup reports.
const foreignExamples = 5

// likePrefix is a LIKE pattern (with ESCAPE '!') matching names that start
// with prefix; '!' rather than a backslash because PostgreSQL and MySQL
// read a backslash in a string literal differently.
func likePrefix(prefix string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(prefix) + "%"
}

// API deletes every credential under the run's prefix through CredHub's API.
func API(ctx context.Context, c *credhub.Client, n credhub.Names) (Result, error) {
	start := time.Now()
	k, err := credhub.DeleteAll(ctx, c, n, 8)
	return Result{Mode: "api", Deleted: int64(k), Elapsed: time.Since(start)}, err
}

// Database holds how to reach CredHub's database.
type Database struct {
	Type       string // postgres | mysql (mariadb, postgresql accepted)
	Host       string
	Port       int
	User       string
	Password   string
	Name       string
	TLS        bool
	CACertFile string
}

// Tables a CredHub schema must have. The canary and the migration history
// are in the list on purpose: a database without them is not one we may
// touch, and with them present we know what we must not touch.
var requiredTables = []string{"credential", "credential_version", "encrypted_value", "encryption_key_canary", "flyway_schema_history"}

// ErrNotCredHub is returned (wrapped) when the database lacks CredHub's tables.
var ErrNotCredHub = errors.New("not a CredHub database")

func (d Database) kind() string {
	switch strings.ToLower(d.Type) {
	case "postgres", "postgresql":
		return "postgres"
	case "mysql", "mariadb":
		return "mysql"
	}
	return ""
}

func (d Database) port() int {
	if d.Port != 0 {
		return d.Port
	}
	if d.kind() == "postgres" {
		return 5432
	}
	return 3306
}

func (d Database) tlsConfig() (*tls.Config, error) {
	if !d.TLS {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: d.Host, MinVersion: tls.VersionTLS12}
	if d.CACertFile != "" {
		pem, err := os.ReadFile(d.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("database CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("database CA file %s holds no PEM certificate", d.CACertFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// scrub keeps the password out of any error text a driver might build.
func (d Database) scrub(err error) error {
	if err == nil || d.Password == "" || !strings.Contains(err.Error(), d.Password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), d.Password, "<redacted>"))
}

func (d Database) where() string {
	return fmt.Sprintf("%s database %q at %s", d.kind(), d.Name, net.JoinHostPort(d.Host, strconv.Itoa(d.port())))
}

// Truncate empties CredHub's credential tables. It refuses (ErrNotCredHub)
// a database without CredHub's schema and never touches the key canary, the
// migration history or permissions. runPrefix is the path the run wrote
// under (e.g. /credhub-perf/<run id>/): the result counts, and names a
// few of, the removed credentials outside it ("" counts none).
func (d Database) Truncate(ctx context.Context, runPrefix string) (Result, error) {
	start := time.Now()
	res := Result{Mode: "database"}
	var err error
	switch d.kind() {
	case "postgres":
		err = d.truncatePostgres(ctx, runPrefix, &res)
	case "mysql":
		err = d.truncateMySQL(ctx, runPrefix, &res)
	default:
		return res, fmt.Errorf("database type %q is not postgres or mysql", d.Type)
	}
	if err != nil {
		err = fmt.Errorf("database cleanup of the %s: %w", d.where(), d.scrub(err))
		res.Deleted, res.Foreign, res.ForeignNames = 0, 0, nil
	}
	res.Elapsed = time.Since(start)
	return res, err
}

func missingTables(have map[string]bool) []string {
	var missing []string
	for _, t := range requiredTables {
		if !have[t] {
			missing = append(missing, t)
		}
	}
	return missing
}

func (d Database) connectPostgres(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cfg.Host, cfg.Port, cfg.User, cfg.Password, cfg.Database = d.Host, uint16(d.port()), d.User, d.Password, d.Name
	cfg.ConnectTimeout = 15 * time.Second
	if cfg.TLSConfig, err = d.tlsConfig(); err != nil {
		return nil, err
	}
	cfg.Fallbacks = nil
	return pgx.ConnectConfig(ctx, cfg)
}

func (d Database) truncatePostgres(ctx context.Context, runPrefix string, res *Result) error {
	conn, err := d.connectPostgres(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	// The same check as before seeding: the schema could have changed
	// during the run.
	if err := checkPostgres(ctx, conn, d.User); err != nil {
		return err
	}

	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // no-op after Commit
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM credential`).Scan(&res.Deleted); err != nil {
		return fmt.Errorf("counting credentials: %w", err)
	}
	if runPrefix != "" {
		// Counted in the transaction that deletes: what it reports is what
		// it removed.
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM credential WHERE name NOT LIKE $1 ESCAPE '!'`, likePrefix(runPrefix)).Scan(&res.Foreign); err != nil {
			return fmt.Errorf("counting credentials outside %s: %w", runPrefix, err)
		}
		if res.Foreign > 0 {
			rows, err := tx.Query(ctx, `SELECT name FROM credential WHERE name NOT LIKE $1 ESCAPE '!' ORDER BY name LIMIT `+strconv.Itoa(foreignExamples), likePrefix(runPrefix))
			if err != nil {
				return fmt.Errorf("naming credentials outside %s: %w", runPrefix, err)
			}
			res.ForeignNames, err = scanNames(rows)
			rows.Close()
			if err != nil {
				return err
			}
		}
	}
	if _, err := tx.Exec(ctx, `TRUNCATE credential, encrypted_value CASCADE`); err != nil {
		return fmt.Errorf("TRUNCATE credential, encrypted_value CASCADE: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// mysqlBatch bounds each DELETE so one statement never has to hold an
// enormous undo log entry at once.
const mysqlBatch = 5000

func (d Database) openMySQL() (*sql.DB, error) {
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	cfg.Addr = net.JoinHostPort(d.Host, strconv.Itoa(d.port()))
	cfg.User, cfg.Passwd, cfg.DBName = d.User, d.Password, d.Name
	cfg.Timeout = 15 * time.Second
	tc, err := d.tlsConfig()
	if err != nil {
		return nil, err
	}
	cfg.TLS = tc
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	return db, nil
}

func (d Database) truncateMySQL(ctx context.Context, runPrefix string, res *Result) error {
	db, err := d.openMySQL()
	if err != nil {
		return err
	}
	defer db.Close()
	if err := checkMySQL(ctx, db, d.User); err != nil {
		return err
	}

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM credential`).Scan(&res.Deleted); err != nil {
		return fmt.Errorf("counting credentials: %w", err)
	}
	if runPrefix != "" {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM credential WHERE name NOT LIKE ? ESCAPE '!'`, likePrefix(runPrefix)).Scan(&res.Foreign); err != nil {
			return fmt.Errorf("counting credentials outside %s: %w", runPrefix, err)
		}
		if res.Foreign > 0 {
			rows, err := tx.QueryContext(ctx, `SELECT name FROM credential WHERE name NOT LIKE ? ESCAPE '!' ORDER BY name LIMIT `+strconv.Itoa(foreignExamples), likePrefix(runPrefix))
			if err != nil {
				return fmt.Errorf("naming credentials outside %s: %w", runPrefix, err)
			}
			res.ForeignNames, err = scanNames(rows)
			rows.Close()
			if err != nil {
				return err
			}
		}
	}
	// MySQL refuses TRUNCATE on a table other tables reference (error
	// 1701), so delete: credential first (its ON DELETE CASCADE removes the
	// versions and type rows), then the now unreferenced encrypted values.
	for _, table := range []string{"credential", "encrypted_value"} {
		for {
			r, err := tx.ExecContext(ctx, "DELETE FROM "+table+" LIMIT "+strconv.Itoa(mysqlBatch))
			if err != nil {
				return fmt.Errorf("DELETE FROM %s: %w", table, err)
			}
			k, err := r.RowsAffected()
			if err != nil {
				return err
			}
			if k < mysqlBatch {
				break
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// nameRows is what pgx and database/sql result sets share, so both
// databases' cleanups read the names of a one-column query the same way.
type nameRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanNames reads every row's one column; the caller closes rows.
func scanNames(rows nameRows) ([]string, error) {
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, rows.Err()
}
