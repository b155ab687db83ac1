package cleanup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// dataTables are CredHub's credential tables: the ones a database cleanup
// empties (credential and encrypted_value directly, the others through
// their ON DELETE CASCADE foreign keys). A foreign key into them from any
// other table means the cleanup would empty, modify or trip over data that
// is not a load test's, so it is refused before anything is seeded.
var dataTables = map[string]bool{
	"credential": true, "encrypted_value": true, "credential_version": true,
	"password_credential": true, "user_credential": true, "certificate_credential": true,
	"ssh_credential": true, "rsa_credential": true,
}

// foreignKey is one foreign key whose referenced (parent) table is in
// CredHub's schema.
type foreignKey struct {
	Name   string
	Child  string // table holding the key; schema-qualified when not CredHub's schema
	Parent string
	Rule   string // ON DELETE rule: CASCADE, SET NULL, SET DEFAULT, RESTRICT, NO ACTION
	// Foreign: the child lives in another schema (PostgreSQL) or database
	// (MySQL) than CredHub's, so it is not CredHub's table whatever its name.
	Foreign bool
}

// checkForeignKeys refuses any foreign key that reaches a table the cleanup
// empties from a table that is not one of CredHub's credential tables
// (whatever its ON DELETE rule: CASCADE would delete its rows, SET NULL and
// SET DEFAULT would modify them, a plain reference would make MySQL's
// DELETE fail and PostgreSQL's TRUNCATE ... CASCADE empty it), and a
// credential table whose link to another one (but encrypted_value, which is
// emptied last) is not CASCADE (MySQL's deletes would fail or leave orphans).
func checkForeignKeys(fks []foreignKey) error {
	for _, fk := range fks {
		parent := strings.ToLower(fk.Parent)
		if !dataTables[parent] {
			continue
		}
		child := strings.ToLower(fk.Child)
		rule := strings.ToUpper(fk.Rule)
		if fk.Foreign || !dataTables[child] {
			return fmt.Errorf("table %s references %s through constraint %s (ON DELETE %s): a database cleanup would %s it; refusing before seeding (drop that constraint, or use cleanup.mode api)",
				fk.Child, fk.Parent, fk.Name, rule, effect(rule))
		}
		if parent != "encrypted_value" && rule != "CASCADE" {
			return fmt.Errorf("table %s references %s through constraint %s with ON DELETE %s, not CredHub's CASCADE: the schema is not one database cleanup knows; refusing before seeding (use cleanup.mode api)",
				fk.Child, fk.Parent, fk.Name, rule)
		}
	}
	return nil
}

func effect(rule string) string {
	switch rule {
	case "CASCADE":
		return "delete rows of"
	case "SET NULL", "SET DEFAULT":
		return "modify rows of"
	}
	return "empty or fail on"
}

// Check connects to the database and verifies, without changing anything,
// that a cleanup could run safely: the credentials work, the schema is
// CredHub's, the user holds every privilege the cleanup's statements need,
// and no foreign key from a table that is not CredHub's reaches
// the tables the cleanup would empty. A run calls it before seeding, so a
// wrong password or the wrong database is found before any load.
func (d Database) Check(ctx context.Context) error {
	var err error
	switch d.kind() {
	case "postgres":
		var conn *pgx.Conn
		if conn, err = d.connectPostgres(ctx); err == nil {
			err = checkPostgres(ctx, conn, d.User)
			conn.Close(context.Background())
		}
	case "mysql":
		var db *sql.DB
		if db, err = d.openMySQL(); err == nil {
			err = checkMySQL(ctx, db, d.User)
			db.Close()
		}
	default:
		return fmt.Errorf("database type %q is not postgres or mysql", d.Type)
	}
	if err != nil {
		return fmt.Errorf("database cleanup check of the %s: %w", d.where(), d.scrub(err))
	}
	return nil
}

func checkTables(have map[string]bool) error {
	if m := missingTables(have); len(m) > 0 {
		return fmt.Errorf("%w: tables %s missing; refusing to touch anything", ErrNotCredHub, strings.Join(m, ", "))
	}
	return nil
}

// rowSet is what pgx.Rows and *sql.Rows share: the listings below read
// either driver's rows; the caller closes them.
type rowSet interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// tableNames reads a listing of table names, lower-cased.
func tableNames(rows rowSet) (map[string]bool, error) {
	have := map[string]bool{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("listing tables: %w", err)
		}
		have[strings.ToLower(t)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	return have, nil
}

// foreignKeys reads a listing of (name, child's schema, child, parent, ON
// DELETE rule, child is foreign) rows; ruleName spells the database's rule
// as checkForeignKeys expects it.
func foreignKeys(rows rowSet, ruleName func(string) string) ([]foreignKey, error) {
	var fks []foreignKey
	for rows.Next() {
		var fk foreignKey
		var schema, rule string
		if err := rows.Scan(&fk.Name, &schema, &fk.Child, &fk.Parent, &rule, &fk.Foreign); err != nil {
			return nil, fmt.Errorf("listing foreign keys: %w", err)
		}
		fk.Rule = ruleName(rule)
		if fk.Foreign {
			fk.Child = schema + "." + fk.Child
		}
		fks = append(fks, fk)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing foreign keys: %w", err)
	}
	return fks, nil
}

// pgRules spells pg_constraint.confdeltype's codes.
var pgRules = map[string]string{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}

func checkPostgres(ctx context.Context, conn *pgx.Conn, user string) error {
	fks, err := checkSchema(func(q string) (rowSet, func(), error) {
		rows, err := conn.Query(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		return rows, rows.Close, nil
	}, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`,
		// Every foreign key into CredHub's schema, from any schema: TRUNCATE
		// ... CASCADE follows them all, whatever their ON DELETE rule.
		`
SELECT con.conname, cn.nspname, c.relname, p.relname, con.confdeltype::text,
       cn.oid <> current_schema()::regnamespace::oid
  FROM pg_constraint con
  JOIN pg_class c ON c.oid = con.conrelid
  JOIN pg_namespace cn ON cn.oid = c.relnamespace
  JOIN pg_class p ON p.oid = con.confrelid
 WHERE con.contype = 'f' AND p.relnamespace = current_schema()::regnamespace`,
		func(code string) string { return pgRules[code] })
	if err != nil {
		return err
	}
	return checkPostgresPrivileges(ctx, conn, user, fks)
}

func checkMySQL(ctx context.Context, db *sql.DB, user string) error {
	_, err := checkSchema(func(q string) (rowSet, func(), error) {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		return rows, func() { rows.Close() }, nil
	}, `SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()`,
		// Keys from every database that reference CredHub's: unique_constraint_schema
		// is the referenced table's database.
		`SELECT constraint_name, constraint_schema, table_name, referenced_table_name, delete_rule,
       constraint_schema <> DATABASE()
  FROM information_schema.referential_constraints
 WHERE unique_constraint_schema = DATABASE()`,
		func(rule string) string { return rule })
	if err != nil {
		return err
	}
	return checkMySQLPrivileges(ctx, db, user)
}

// checkSchema checks CredHub's tables and the foreign keys into them on
// either driver: query runs a listing and returns what closes it.
func checkSchema(query func(string) (rowSet, func(), error), tablesSQL, foreignKeysSQL string, ruleName func(string) string) ([]foreignKey, error) {
	rows, done, err := query(tablesSQL)
	if err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	have, err := tableNames(rows)
	done()
	if err != nil {
		return nil, err
	}
	if err := checkTables(have); err != nil {
		return nil, err
	}
	rows, done, err = query(foreignKeysSQL)
	if err != nil {
		return nil, fmt.Errorf("listing foreign keys: %w", err)
	}
	fks, err := foreignKeys(rows, ruleName)
	done()
	if err != nil {
		return nil, err
	}
	return fks, checkForeignKeys(fks)
}

// truncated lists the tables PostgreSQL's TRUNCATE credential,
// encrypted_value CASCADE empties: those two and, transitively, every table
// with a foreign key into one already listed. Each needs the TRUNCATE
// privilege, or the whole statement fails after the run.
func truncated(fks []foreignKey) []string {
	set := map[string]bool{"credential": true, "encrypted_value": true}
	list := []string{"credential", "encrypted_value"}
	for grew := true; grew; {
		grew = false
		for _, fk := range fks {
			child := strings.ToLower(fk.Child)
			if set[strings.ToLower(fk.Parent)] && !set[child] {
				set[child] = true
				list = append(list, child)
				grew = true
			}
		}
	}
	return list
}

// ErrPrivilege is returned (wrapped) when the database user could read the
// schema but could not run the cleanup's own statements.
var ErrPrivilege = errors.New("missing privilege")

// checkPostgresPrivileges asks the catalog, for exactly the statements
// Truncate runs (SELECT count(*) FROM credential; TRUNCATE credential,
// encrypted_value CASCADE), whether the connected user holds each privilege
// they need, directly or through a role. Doing the TRUNCATE itself in a
// rolled-back transaction would take an exclusive lock on a live CredHub's
// tables; the catalog answers the same question without one.
func checkPostgresPrivileges(ctx context.Context, conn *pgx.Conn, user string, fks []foreignKey) error {
	need := [][2]string{{"credential", "SELECT"}}
	for _, t := range truncated(fks) {
		need = append(need, [2]string{t, "TRUNCATE"})
	}
	var missing []string
	for _, n := range need {
		var ok bool
		err := conn.QueryRow(ctx, `SELECT has_table_privilege(format('%I.%I', current_schema(), $1::text), $2)`, n[0], n[1]).Scan(&ok)
		if err != nil {
			return fmt.Errorf("checking %s on %s: %w", n[1], n[0], err)
		}
		if !ok {
			missing = append(missing, n[1]+" on "+n[0])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: user %q lacks %s, which the database cleanup needs; refusing before seeding (GRANT those to %s, or use cleanup.mode api)",
			ErrPrivilege, user, strings.Join(missing, ", "), user)
	}
	return nil
}

// checkMySQLPrivileges runs the cleanup's own statements, each limited to
// no rows, inside a transaction that is rolled back: MySQL checks the
// privileges of a statement before it looks at a row, so a user who could
// not delete is refused here, with MySQL's own message naming the command,
// and nothing is changed or locked.
func checkMySQLPrivileges(ctx context.Context, db *sql.DB, user string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // nothing to keep
	for _, st := range []struct{ priv, sql string }{
		{"SELECT on credential", "SELECT count(*) FROM credential LIMIT 0"},
		{"DELETE on credential", "DELETE FROM credential LIMIT 0"},
		{"DELETE on encrypted_value", "DELETE FROM encrypted_value LIMIT 0"},
	} {
		if _, err := tx.ExecContext(ctx, st.sql); err != nil {
			var me *mysql.MySQLError
			if errors.As(err, &me) && (me.Number == 1142 || me.Number == 1143 || me.Number == 1044) {
				return fmt.Errorf("%w: user %q lacks %s, which the database cleanup needs (%v); refusing before seeding (GRANT it to %s, or use cleanup.mode api)",
					ErrPrivilege, user, st.priv, err, user)
			}
			return fmt.Errorf("trying the cleanup's %s in a rolled-back transaction: %w", strings.Fields(st.sql)[0], err)
		}
	}
	return nil
}
