package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/credhub-perf/credhub-perf/internal/testdb"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/credhub-perf/credhub-perf/cleanup"
	"github.com/credhub-perf/credhub-perf/credhub"
	"github.com/credhub-perf/credhub-perf/results/resultstest"
)

// sqlDB opens the test database with the driver cleanup uses.
func sqlDB(t *testing.T, env map[string]string) (exec func(q string) error, count func(table string) int64) {
	t.Helper()
	ctx := context.Background()
	port, _ := strconv.Atoi(env["DB_PORT"])
	if env["DB_TYPE"] == "postgres" {
		cfg, err := pgx.ParseConfig("")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Host, cfg.Port, cfg.User, cfg.Password, cfg.Database = env["DB_HOST"], uint16(port), env["DB_USER"], env["DB_PASSWORD"], env["DB_NAME"]
		cfg.TLSConfig, cfg.Fallbacks = nil, nil
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(ctx) })
		return func(q string) error { _, err := conn.Exec(ctx, q); return err },
			func(table string) int64 {
				var n int64
				if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
					t.Fatalf("count %s: %v", table, err)
				}
				return n
			}
	}
	mc := mysql.NewConfig()
	mc.Net, mc.Addr, mc.User, mc.Passwd, mc.DBName = "tcp", net.JoinHostPort(env["DB_HOST"], env["DB_PORT"]), env["DB_USER"], env["DB_PASSWORD"], env["DB_NAME"]
	connector, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return func(q string) error { _, err := db.Exec(q); return err },
		func(table string) int64 {
			var n int64
			if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
				t.Fatalf("count %s: %v", table, err)
			}
			return n
		}
}

func TestDatabaseCleanup(t *testing.T) {
	for _, kind := range []string{"postgres", "mariadb"} {
		t.Run(kind, func(t *testing.T) {
			binaries(t)
			env := testdb.Start(t, kind)
			port, _ := strconv.Atoi(env["DB_PORT"])
			db := cleanup.Database{Type: env["DB_TYPE"], Host: env["DB_HOST"], Port: port, User: env["DB_USER"], Password: env["DB_PASSWORD"], Name: env["DB_NAME"]}
			exec, count := sqlDB(t, env)

			// 1. A database that only looks a bit like CredHub's is refused
			// and left alone.
			for _, q := range []string{"CREATE TABLE credential (id INT)", "CREATE TABLE encrypted_value (id INT)", "INSERT INTO credential VALUES (1)", "INSERT INTO encrypted_value VALUES (1)"} {
				if err := exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			_, err := db.Truncate(context.Background(), "/credhub-perf/x/")
			if !errors.Is(err, cleanup.ErrNotCredHub) || !strings.Contains(err.Error(), "encryption_key_canary") || strings.Contains(err.Error(), env["DB_PASSWORD"]) {
				t.Fatalf("want a refusal naming the missing tables, got %v", err)
			}
			if count("credential") != 1 || count("encrypted_value") != 1 {
				t.Fatal("a refused cleanup changed the tables")
			}
			for _, q := range []string{"DROP TABLE credential", "DROP TABLE encrypted_value"} {
				if err := exec(q); err != nil {
					t.Fatal(err)
				}
			}

			// 2. credhub-sim on that database, a get and a set run with
			// database cleanup.
			s := startSim(t, env["DB_URL"])
			api := s.client(t)
			if err := api.SetJSON(context.Background(), "/other/app/creds", []byte(`{"password":"x"}`)); err != nil {
				t.Fatal(err)
			}
			canaries, history := count("encryption_key_canary"), count("flyway_schema_history")
			if canaries == 0 || history == 0 {
				t.Fatalf("the sim's schema has %d canaries, %d history rows", canaries, history)
			}
			cfg := writeConfig(t, s.URL, fmt.Sprintf(`steps: {min_concurrency: 1, max_concurrency: 3, step: 2, requests: 150}
cleanup:
  mode: database
  database: {type: %s, host: %s, port: %d, user: %s, password: %q, name: %s}`,
				env["DB_TYPE"], env["DB_HOST"], port, env["DB_USER"], env["DB_PASSWORD"], env["DB_NAME"]))
			r := perf(t, "run", "--config", cfg, "--scenarios", "get,set")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if strings.Count(r.stderr, "removed 1 credentials not written by this run") != 1 || !strings.Contains(r.stderr, "e.g. /other/app/creds:") {
				t.Fatalf("no warning of the application's credential removed:\n%s", r.stderr)
			}
			if strings.Contains(r.stderr+r.stdout, env["DB_PASSWORD"]) {
				t.Fatal("the database password reached the log")
			}
			dirs, _ := filepath.Glob(filepath.Join(outputDir(t, cfg), "*"))
			if len(dirs) != 2 {
				t.Fatalf("run directories %v", dirs)
			}
			for _, dir := range dirs {
				meta := resultstest.Meta(t, dir)
				if meta.Cleanup != "database" || meta.CleanupStatus != "ok" || meta.CleanupDeleted == 0 {
					t.Fatalf("meta %+v", meta)
				}
				// The first scenario's cleanup also removed the application's
				// credential, and says so; the second found only its own.
				if meta.Scenario == "get" && (meta.CleanupForeign != 1 || len(meta.CleanupForeignNames) != 1 || meta.CleanupForeignNames[0] != "/other/app/creds") ||
					meta.Scenario == "set" && (meta.CleanupForeign != 0 || meta.CleanupForeignNames != nil) {
					t.Fatalf("%s: cleanup_foreign %d %v", meta.Scenario, meta.CleanupForeign, meta.CleanupForeignNames)
				}
				rows, failed := countRows(t, filepath.Join(dir, "results.csv"))
				if rows != 300 || failed != 0 {
					t.Fatalf("%s: rows %d failed %d", dir, rows, failed)
				}
			}
			for _, table := range []string{"credential", "credential_version", "encrypted_value"} {
				if n := count(table); n != 0 {
					t.Errorf("%s still has %d rows", table, n)
				}
			}
			if count("encryption_key_canary") != canaries || count("flyway_schema_history") != history {
				t.Fatal("the key canary or the schema history changed")
			}
			// The running target still works: its key canary is intact.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := api.SetJSON(ctx, "/after/cleanup", []byte(`{"ok":true}`)); err != nil {
				t.Fatalf("CredHub cannot write after the cleanup: %v", err)
			}
			if v, err := api.GetJSON(ctx, "/after/cleanup"); err != nil || !strings.Contains(string(v), "true") {
				t.Fatalf("read back after cleanup: %s %v", v, err)
			}
		})
	}
}

// dbCleanupConfig is a run configuration with database cleanup of env's
// database (password given separately, to try a wrong one).
func dbCleanupConfig(t *testing.T, url string, env map[string]string, password string) string {
	t.Helper()
	port, _ := strconv.Atoi(env["DB_PORT"])
	return writeConfig(t, url, fmt.Sprintf(`steps: {min_concurrency: 1, max_concurrency: 2, step: 1, requests: 50}
cleanup:
  mode: database
  database: {type: %s, host: %s, port: %d, user: %s, password: %q, name: %s}`,
		env["DB_TYPE"], env["DB_HOST"], port, env["DB_USER"], password, env["DB_NAME"]))
}

// refusedAtSetup checks that a run stopped before seeding: exit 2, the
// reason on one line, no run directory, nothing written to CredHub.
func refusedAtSetup(t *testing.T, r perfRun, cfg string, api *credhub.Client, want ...string) {
	t.Helper()
	if r.code != 2 || !strings.Contains(r.stderr, "nothing was sent") {
		t.Fatalf("want exit 2 before any load, got %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var line string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, want[0]) {
			line = l
		}
	}
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Fatalf("no single line with %q in\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "JSON credentials of about") {
		t.Fatalf("the run seeded before refusing:\n%s", r.stderr)
	}
	if dirs, _ := filepath.Glob(filepath.Join(outputDir(t, cfg), "*")); len(dirs) != 0 {
		t.Fatalf("run directories were created: %v", dirs)
	}
	if left, err := api.FindPath(context.Background(), "/credhub-perf"); err != nil || len(left) != 0 {
		t.Fatalf("%d credentials written under /credhub-perf (%v)", len(left), err)
	}
}

// Database cleanup must refuse, before seeding, anything it could not
// clean up safely: a wrong password, a database that is not CredHub's, and
// an operator's table with a foreign key into the credential tables.
func TestDatabaseSafetyBeforeSeeding(t *testing.T) {
	for _, kind := range []string{"postgres", "mariadb"} {
		t.Run(kind, func(t *testing.T) {
			binaries(t)
			env := testdb.Start(t, kind)
			exec, count := sqlDB(t, env)

			// A target on its own SQLite database, cleanup pointed at an
			// empty (not CredHub's) database, then with a wrong password.
			other := startSim(t, "")
			otherAPI := other.client(t)
			cfg := dbCleanupConfig(t, other.URL, env, env["DB_PASSWORD"])
			refusedAtSetup(t, perf(t, "run", "--config", cfg), cfg, otherAPI, "not a CredHub database", "credential_version")
			cfg = dbCleanupConfig(t, other.URL, env, "wrong-"+env["DB_PASSWORD"])
			r := perf(t, "run", "--config", cfg)
			refusedAtSetup(t, r, cfg, otherAPI, "cleanup.database: ", env["DB_NAME"])
			if strings.Contains(r.stderr, "wrong-"+env["DB_PASSWORD"]) {
				t.Fatal("the database password reached the log")
			}
			other.stop()

			// The target on the database, with an operator's table that
			// references credential.
			s := startSim(t, env["DB_URL"])
			api := s.client(t)
			if err := api.SetJSON(context.Background(), "/other/app/creds", []byte(`{"password":"x"}`)); err != nil {
				t.Fatal(err)
			}
			uuidType := "UUID"
			if env["DB_TYPE"] == "mysql" {
				uuidType = "VARCHAR(36)"
			}
			cfg = dbCleanupConfig(t, s.URL, env, env["DB_PASSWORD"])
			for _, rule := range []string{"CASCADE", "SET NULL", "NO ACTION"} {
				constraint := "notes_cred_" + strings.ReplaceAll(strings.ToLower(rule), " ", "_")
				for _, q := range []string{
					"CREATE TABLE operator_notes (id INT PRIMARY KEY, cred " + uuidType + " NULL, note VARCHAR(100), CONSTRAINT " + constraint +
						" FOREIGN KEY (cred) REFERENCES credential (uuid) ON DELETE " + rule + ")",
					"INSERT INTO operator_notes SELECT 1, uuid, 'keep me' FROM credential",
				} {
					if err := exec(q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				creds, versions := count("credential"), count("credential_version")
				refusedAtSetup(t, perf(t, "run", "--config", cfg), cfg, api, "table operator_notes", "constraint "+constraint, "ON DELETE "+rule)
				if count("operator_notes") != 1 || count("operator_notes WHERE cred IS NOT NULL") != 1 ||
					count("credential") != creds || count("credential_version") != versions {
					t.Fatalf("%s: the refused run modified the database", rule)
				}
				if err := exec("DROP TABLE operator_notes"); err != nil {
					t.Fatal(err)
				}
			}

			// Without the operator's table the same run goes ahead.
			r = perf(t, "run", "--config", cfg)
			if r.code != 0 || !strings.Contains(r.stderr, "nothing else references its credential tables") {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}

			// A user who can read the schema but not run the cleanup's
			// statements is refused before seeding, the privilege named.
			readerEnv := map[string]string{}
			for k, v := range env {
				readerEnv[k] = v
			}
			readerEnv["DB_USER"], readerEnv["DB_PASSWORD"] = "perf_reader", "reader-secret-pw"
			var grantSelect, grantMore []string
			wantMissing := "DELETE on credential"
			if env["DB_TYPE"] == "postgres" {
				grantSelect = []string{"CREATE ROLE perf_reader LOGIN PASSWORD 'reader-secret-pw'", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO perf_reader"}
				// TRUNCATE ... CASCADE also needs TRUNCATE on the tables it
				// reaches through foreign keys, so two grants are not enough.
				grantMore = []string{"GRANT TRUNCATE ON credential, encrypted_value TO perf_reader"}
				wantMissing = "TRUNCATE on credential"
			} else {
				for _, host := range []string{"localhost", "127.0.0.1"} {
					grantSelect = append(grantSelect, "CREATE USER 'perf_reader'@'"+host+"' IDENTIFIED BY 'reader-secret-pw'",
						"GRANT SELECT ON "+env["DB_NAME"]+".* TO 'perf_reader'@'"+host+"'")
					grantMore = append(grantMore, "GRANT DELETE ON "+env["DB_NAME"]+".credential TO 'perf_reader'@'"+host+"'")
				}
			}
			for _, q := range grantSelect {
				if err := exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			creds := count("credential")
			cfg = dbCleanupConfig(t, s.URL, readerEnv, readerEnv["DB_PASSWORD"])
			r = perf(t, "run", "--config", cfg)
			refusedAtSetup(t, r, cfg, api, "lacks", wantMissing, "perf_reader", "cleanup.mode api")
			if strings.Contains(r.stderr, "reader-secret-pw") {
				t.Fatal("the database password reached the log")
			}
			if count("credential") != creds {
				t.Fatal("the privilege check changed the database")
			}
			for _, q := range grantMore {
				if err := exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			port, _ := strconv.Atoi(env["DB_PORT"])
			reader := cleanup.Database{Type: env["DB_TYPE"], Host: env["DB_HOST"], Port: port, User: "perf_reader", Password: "reader-secret-pw", Name: env["DB_NAME"]}
			err := reader.Check(context.Background())
			wantNext := "DELETE on encrypted_value"
			if env["DB_TYPE"] == "postgres" {
				wantNext = "TRUNCATE on credential_version"
			}
			if !errors.Is(err, cleanup.ErrPrivilege) || !strings.Contains(err.Error(), wantNext) || strings.Contains(err.Error(), "TRUNCATE on credential,") {
				t.Fatalf("want the remaining privilege %q named, got %v", wantNext, err)
			}
			if env["DB_TYPE"] == "postgres" {
				err = exec("GRANT TRUNCATE ON ALL TABLES IN SCHEMA public TO perf_reader")
			} else {
				err = exec("GRANT DELETE ON " + env["DB_NAME"] + ".* TO 'perf_reader'@'localhost', 'perf_reader'@'127.0.0.1'")
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := reader.Check(context.Background()); err != nil {
				t.Fatalf("a user with the cleanup's privileges was refused: %v", err)
			}
			if count("credential") != creds {
				t.Fatal("the privilege check changed the database")
			}
		})
	}
}
