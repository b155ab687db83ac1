package cleanup

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

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
// CredHub's, and no foreign key from a table that is not CredHub's reaches
// the tables the cleanup would empty. A run calls it before seeding, so a
// wrong password or the wrong database is found before any load.
func (d Database) Check(ctx context.Context) error {
	var err error
	switch d.kind() {
	case "postgres":
		var conn *pgx.Conn
		if conn, err = d.connectPostgres(ctx); err == nil {
			err = checkPostgres(ctx, conn)
			conn.Close(context.Background())
		}
	case "mysql":
		var db *sql.DB
		if db, err = d.openMySQL(); err == nil {
			err = checkMySQL(ctx, db)
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

func checkPostgres(ctx context.Context, conn *pgx.Conn) error {
	return checkSchema(func(q string) (rowSet, func(), error) {
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
}

func checkMySQL(ctx context.Context, db *sql.DB) error {
	return checkSchema(func(q string) (rowSet, func(), error) {
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
}

// checkSchema checks CredHub's tables and the foreign keys into them on
// either driver: query runs a listing and returns what closes it.
func checkSchema(query func(string) (rowSet, func(), error), tablesSQL, foreignKeysSQL string, ruleName func(string) string) error {
	rows, done, err := query(tablesSQL)
	if err != nil {
		return fmt.Errorf("listing tables: %w", err)
	}
	have, err := tableNames(rows)
	done()
	if err != nil {
		return err
	}
	if err := checkTables(have); err != nil {
		return err
	}
	rows, done, err = query(foreignKeysSQL)
	if err != nil {
		return fmt.Errorf("listing foreign keys: %w", err)
	}
	fks, err := foreignKeys(rows, ruleName)
	done()
	if err != nil {
		return err
	}
	return checkForeignKeys(fks)
}
