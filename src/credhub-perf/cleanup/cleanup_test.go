package cleanup

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDefaultsAndScrub(t *testing.T) {
	pg := Database{Type: "postgresql", Host: "db", Password: "s3cret-pw"}
	my := Database{Type: "mariadb", Host: "db"}
	if pg.kind() != "postgres" || pg.port() != 5432 || my.kind() != "mysql" || my.port() != 3306 {
		t.Fatalf("kinds/ports: %s %d %s %d", pg.kind(), pg.port(), my.kind(), my.port())
	}
	err := pg.scrub(errors.New("connect failed: password=s3cret-pw rejected"))
	if strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), "<redacted>") {
		t.Fatalf("scrub: %v", err)
	}
	if m := missingTables(map[string]bool{"credential": true, "encrypted_value": true}); strings.Join(m, ",") != "credential_version,encryption_key_canary,flyway_schema_history" {
		t.Fatalf("missing: %v", m)
	}
}

func TestUnknownTypeAndUnreachable(t *testing.T) {
	if _, err := (Database{Type: "oracle"}).Truncate(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "oracle") {
		t.Fatalf("want an error naming the type, got %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, typ := range []string{"postgres", "mysql"} {
		d := Database{Type: typ, Host: "127.0.0.1", Port: 1, User: "u", Password: "pw-never-shown", Name: "credhub"}
		_, err := d.Truncate(ctx, "")
		if err == nil || strings.Contains(err.Error(), "pw-never-shown") || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Fatalf("%s: %v", typ, err)
		}
	}
}

// CredHub's own keys (those of credhub-sim's schema, CredHub's migrations).
var credhubKeys = []foreignKey{
	{"credential_version_credential_uuid_fkey", "credential_version", "credential", "CASCADE", false},
	{"credential_version_encrypted_value_uuid_fkey", "credential_version", "encrypted_value", "NO ACTION", false},
	{"password_credential_uuid_fkey", "password_credential", "credential_version", "CASCADE", false},
	{"password_credential_parameters_fkey", "password_credential", "encrypted_value", "NO ACTION", false},
	{"user_credential_uuid_fkey", "user_credential", "credential_version", "CASCADE", false},
	{"certificate_credential_uuid_fkey", "certificate_credential", "credential_version", "CASCADE", false},
	{"encrypted_value_encryption_key_uuid_fkey", "encrypted_value", "encryption_key_canary", "NO ACTION", false},
}

func TestCheckForeignKeys(t *testing.T) {
	if err := checkForeignKeys(credhubKeys); err != nil {
		t.Fatalf("CredHub's own schema refused: %v", err)
	}
	for _, tc := range []struct {
		fk   foreignKey
		want string
	}{
		{foreignKey{"notes_cred_fkey", "operator_notes", "credential", "NO ACTION", false}, "table operator_notes references credential through constraint notes_cred_fkey (ON DELETE NO ACTION)"},
		{foreignKey{"perm_cred_fkey", "permission", "credential", "SET NULL", false}, "table permission references credential through constraint perm_cred_fkey (ON DELETE SET NULL): a database cleanup would modify rows of it"},
		{foreignKey{"x_fkey", "audit", "credential_version", "SET DEFAULT", false}, "table audit references credential_version through constraint x_fkey (ON DELETE SET DEFAULT)"},
		{foreignKey{"y_fkey", "mine", "encrypted_value", "CASCADE", false}, "would delete rows of it"},
		{foreignKey{"z_fkey", "rsa_credential", "ssh_credential", "RESTRICT", false}, "ON DELETE RESTRICT"},
		// A CredHub-named table in another schema is still not CredHub's.
		{foreignKey{"w_fkey", "other.credential_version", "credential", "CASCADE", true}, "table other.credential_version references credential"},
		// CredHub's own table with the cascade replaced.
		{foreignKey{"v_fkey", "credential_version", "credential", "SET NULL", false}, "not CredHub's CASCADE"},
	} {
		err := checkForeignKeys(append(append([]foreignKey{}, credhubKeys...), tc.fk))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: got %v, want one line with %q", tc.fk, err, tc.want)
		}
	}
	// Keys into tables the cleanup does not empty are not its business.
	if err := checkForeignKeys([]foreignKey{{"k", "mine", "permission", "CASCADE", false}, {"k2", "mine", "encryption_key_canary", "NO ACTION", false}}); err != nil {
		t.Fatalf("a key into a table cleanup leaves alone was refused: %v", err)
	}
}
