package store

import "strings"

// historyDDL creates Flyway's own table with Flyway's columns, so tools that
// check "is this CredHub's schema" by reading it find what they expect.
var historyDDL = func() map[Dialect]string {
	out := map[Dialect]string{}
	for d, stmts := range ddl(`CREATE TABLE IF NOT EXISTS flyway_schema_history (
  installed_rank {INT} NOT NULL PRIMARY KEY,
  version VARCHAR(50),
  description VARCHAR(200) NOT NULL,
  type VARCHAR(20) NOT NULL,
  script VARCHAR(1000) NOT NULL,
  checksum {INT},
  installed_by VARCHAR(100) NOT NULL,
  installed_on TIMESTAMP NOT NULL DEFAULT {NOW},
  execution_time {INT} NOT NULL,
  success {BOOL} NOT NULL)` + "{ENGINE}") {
		out[d] = stmts[0]
	}
	return out
}()

// Column types per dialect, substituted into the portable DDL below. They
// are the types CredHub's Flyway migrations leave: bytea on PostgreSQL and
// BLOB on MySQL/MariaDB (so a value over 64 KiB fits on PostgreSQL and is
// refused by MySQL, as with CredHub), PEM columns VARCHAR(7000) (TEXT(7000)
// on MySQL, which it stores as TEXT: three VARCHAR(7000) exceed its row
// size). The one
// deliberate difference: UUIDs are VARCHAR(36) on MySQL where CredHub uses
// BINARY(16). PERMUNIQUE is the UNIQUE (path, actor) CredHub has on
// MySQL/MariaDB only.
var typeNames = map[Dialect]map[string]string{
	Postgres: {"INT": "INTEGER", "NOW": "now()", "UUID": "UUID", "BLOB": "BYTEA", "PEM": "VARCHAR(7000)", "BOOL": "BOOLEAN", "FALSE": "FALSE", "NAMELC": "VARCHAR(1024) GENERATED ALWAYS AS (lower(name)) STORED", "ENGINE": "", "IDXLEN": "", "PERMUNIQUE": ""},
	MySQL:    {"INT": "INT", "NOW": "CURRENT_TIMESTAMP", "UUID": "VARCHAR(36)", "BLOB": "BLOB", "PEM": "TEXT(7000)", "BOOL": "TINYINT(1)", "FALSE": "0", "NAMELC": "VARCHAR(1024) AS (LOWER(name)) STORED", "ENGINE": " ENGINE=InnoDB", "IDXLEN": "(255)", "PERMUNIQUE": ",\n  CONSTRAINT permission_path_actor_unique UNIQUE (path, actor)"},
	SQLite:   {"INT": "INTEGER", "NOW": "CURRENT_TIMESTAMP", "UUID": "VARCHAR(36)", "BLOB": "BLOB", "PEM": "VARCHAR(7000)", "BOOL": "BOOLEAN", "FALSE": "0", "NAMELC": "VARCHAR(1024) GENERATED ALWAYS AS (lower(name)) STORED", "ENGINE": "", "IDXLEN": "", "PERMUNIQUE": ""},
}

func ddl(stmts ...string) map[Dialect][]string {
	out := map[Dialect][]string{}
	for d, types := range typeNames {
		for _, s := range stmts {
			for k, v := range types {
				s = strings.ReplaceAll(s, "{"+k+"}", v)
			}
			out[d] = append(out[d], s)
		}
	}
	return out
}

// migrations build CredHub's current table set (the result of its Flyway
// migrations V1..V5x) in three steps. Foreign keys and their ON DELETE
// rules are CredHub's: versions cascade from credential, type tables cascade
// from credential_version, and encrypted_value is only a parent (no cascade),
// which is why a correct cleanup must clear encrypted_value explicitly.
var migrations = []migration{
	{
		version:     "1",
		description: "credential encryption and version tables",
		sql: ddl(
			`CREATE TABLE encryption_key_canary (
  uuid {UUID} NOT NULL PRIMARY KEY,
  encrypted_value {BLOB},
  nonce {BLOB},
  salt {BLOB})`+"{ENGINE}",
			`CREATE TABLE credential (
  uuid {UUID} NOT NULL PRIMARY KEY,
  name VARCHAR(1024) NOT NULL,
  checksum VARCHAR(100) NOT NULL UNIQUE,
  name_lowercase {NAMELC})`+"{ENGINE}",
			`CREATE INDEX credential_name_lowercase ON credential (name_lowercase{IDXLEN})`,
			`CREATE TABLE encrypted_value (
  uuid {UUID} NOT NULL PRIMARY KEY,
  encryption_key_uuid {UUID} NOT NULL,
  encrypted_value {BLOB} NOT NULL,
  nonce {BLOB} NOT NULL,
  updated_at BIGINT NOT NULL,
  CONSTRAINT encrypted_value_encryption_key_uuid_fkey FOREIGN KEY (encryption_key_uuid) REFERENCES encryption_key_canary (uuid))`+"{ENGINE}",
			`CREATE TABLE credential_version (
  uuid {UUID} NOT NULL PRIMARY KEY,
  type VARCHAR(31) NOT NULL,
  version_created_at BIGINT NOT NULL,
  credential_uuid {UUID} NOT NULL,
  encrypted_value_uuid {UUID},
  metadata VARCHAR(7000),
  CONSTRAINT credential_version_credential_uuid_fkey FOREIGN KEY (credential_uuid) REFERENCES credential (uuid) ON DELETE CASCADE,
  CONSTRAINT credential_version_encrypted_value_uuid_fkey FOREIGN KEY (encrypted_value_uuid) REFERENCES encrypted_value (uuid))`+"{ENGINE}",
			`CREATE INDEX credential_version_credential_uuid ON credential_version (credential_uuid, version_created_at)`,
		),
	},
	{
		version:     "2",
		description: "credential type tables",
		sql: ddl(
			`CREATE TABLE password_credential (
  uuid {UUID} NOT NULL PRIMARY KEY,
  password_parameters_uuid {UUID},
  CONSTRAINT password_credential_uuid_fkey FOREIGN KEY (uuid) REFERENCES credential_version (uuid) ON DELETE CASCADE,
  CONSTRAINT password_credential_parameters_fkey FOREIGN KEY (password_parameters_uuid) REFERENCES encrypted_value (uuid))`+"{ENGINE}",
			`CREATE TABLE user_credential (
  uuid {UUID} NOT NULL PRIMARY KEY,
  username VARCHAR(7000),
  salt VARCHAR(16) NOT NULL,
  password_parameters_uuid {UUID},
  CONSTRAINT user_credential_uuid_fkey FOREIGN KEY (uuid) REFERENCES credential_version (uuid) ON DELETE CASCADE,
  CONSTRAINT user_credential_parameters_fkey FOREIGN KEY (password_parameters_uuid) REFERENCES encrypted_value (uuid))`+"{ENGINE}",
			`CREATE TABLE certificate_credential (
  uuid {UUID} NOT NULL PRIMARY KEY,
  ca {PEM},
  certificate {PEM},
  ca_name VARCHAR(1024),
  transitional {BOOL} NOT NULL DEFAULT {FALSE},
  expiry_date BIGINT,
  certificate_authority {BOOL} DEFAULT {FALSE},
  self_signed {BOOL} DEFAULT {FALSE},
  certificate_generated {BOOL},
  trusted_ca {PEM},
  CONSTRAINT certificate_credential_uuid_fkey FOREIGN KEY (uuid) REFERENCES credential_version (uuid) ON DELETE CASCADE)`+"{ENGINE}",
			`CREATE TABLE ssh_credential (
  uuid {UUID} NOT NULL PRIMARY KEY,
  public_key {PEM},
  CONSTRAINT ssh_credential_uuid_fkey FOREIGN KEY (uuid) REFERENCES credential_version (uuid) ON DELETE CASCADE)`+"{ENGINE}",
			`CREATE TABLE rsa_credential (
  uuid {UUID} NOT NULL PRIMARY KEY,
  public_key {PEM},
  CONSTRAINT rsa_credential_uuid_fkey FOREIGN KEY (uuid) REFERENCES credential_version (uuid) ON DELETE CASCADE)`+"{ENGINE}",
		),
	},
	{
		version:     "3",
		description: "permission table",
		sql: ddl(
			`CREATE TABLE permission (
  uuid {UUID} NOT NULL PRIMARY KEY,
  path VARCHAR(255) NOT NULL,
  actor VARCHAR(255) NOT NULL,
  read_permission {BOOL} NOT NULL DEFAULT {FALSE},
  write_permission {BOOL} NOT NULL DEFAULT {FALSE},
  delete_permission {BOOL} NOT NULL DEFAULT {FALSE},
  read_acl_permission {BOOL} NOT NULL DEFAULT {FALSE},
  write_acl_permission {BOOL} NOT NULL DEFAULT {FALSE}{PERMUNIQUE})` + "{ENGINE}",
		),
	},
}

// sqliteChildKeyIndexes index the columns that reference encrypted_value,
// on SQLite only. SQLite checks a foreign key's children on every delete of
// a parent row, and without an index on the child column that check is a
// scan of the child table: deleting a credential's encrypted values then
// costs a scan of every version in the database per value, and cleaning
// up a set ramp's thousands of versions grows with their square. MySQL and
// MariaDB create these indexes with the foreign keys; on PostgreSQL the
// sim keeps CredHub's schema as its migrations leave it (CredHub's own
// guide to clearing orphaned encrypted values creates the same indexes
// first). Not recorded in flyway_schema_history: no CredHub migration.
var sqliteChildKeyIndexes = []string{
	"CREATE INDEX IF NOT EXISTS credential_version_encrypted_value_uuid ON credential_version (encrypted_value_uuid)",
	"CREATE INDEX IF NOT EXISTS password_credential_password_parameters_uuid ON password_credential (password_parameters_uuid)",
	"CREATE INDEX IF NOT EXISTS user_credential_password_parameters_uuid ON user_credential (password_parameters_uuid)",
}
