package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha512"
	"encoding/hex"
	"strings"
	"testing"

	"golang.org/x/crypto/pbkdf2"
)

func TestParseDSN(t *testing.T) {
	for _, tc := range []struct {
		in      string
		driver  string
		dialect Dialect
		dsnHas  string
	}{
		{"sqlite::memory:", "sqlite", SQLite, ":memory:"},
		{"sqlite:/tmp/x.db", "sqlite", SQLite, "file:/tmp/x.db?"},
		{"postgres://u:p@127.0.0.1:5432/db?sslmode=disable", "pgx", Postgres, "postgres://u:p@127.0.0.1:5432/db"},
		{"mysql://u:p%40ss@127.0.0.1:3307/credhub", "mysql", MySQL, "u:p@ss@tcp(127.0.0.1:3307)/credhub"},
		{"mariadb://u:p@db.example/credhub", "mysql", MySQL, "tcp(db.example:3306)/credhub"},
	} {
		driver, dsn, dialect, err := ParseDSN(tc.in)
		if err != nil || driver != tc.driver || dialect != tc.dialect || !strings.Contains(dsn, tc.dsnHas) {
			t.Errorf("ParseDSN(%q) = %q %q %q %v", tc.in, driver, dsn, dialect, err)
		}
	}
	for _, bad := range []string{"oracle://u:secretpw@h/db", "mysql://u:secretpw@h:3306/", "sqlite:"} {
		_, _, _, err := ParseDSN(bad)
		if err == nil {
			t.Errorf("ParseDSN(%q) accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "secretpw") {
			t.Errorf("ParseDSN(%q) error leaks the password: %v", bad, err)
		}
	}
}

// TestKeyDerivation pins the KDF to CredHub's: PBKDF2-HMAC-SHA384, 100 000
// iterations, 256-bit key (vector computed with Python's hashlib).
func TestKeyDerivation(t *testing.T) {
	salt := make([]byte, 64)
	for i := range salt {
		salt[i] = byte(i)
	}
	raw := pbkdf2.Key([]byte("correct horse battery staple"), salt, pbkdf2Iterations, keyBytes, sha512.New384)
	if got := hex.EncodeToString(raw); got != "97148e29d3c93d90b643326dd493221bbdb4ff4d0ad57e95df92c21193d54108" {
		t.Fatalf("derived key %s", got)
	}
	aead, err := deriveKey("correct horse battery staple", salt)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(raw)
	ref, _ := cipher.NewGCM(block)
	k := &Key{aead: aead}
	ct, nonce, err := k.Encrypt([]byte("plaintext"))
	if err != nil || len(nonce) != 12 || len(ct) != len("plaintext")+16 {
		t.Fatalf("encrypt: %v, nonce %d, ciphertext %d", err, len(nonce), len(ct))
	}
	plain, err := ref.Open(nil, nonce, ct, nil)
	if err != nil || string(plain) != "plaintext" {
		t.Fatalf("plain AES-256-GCM cannot open our ciphertext: %v", err)
	}
}

func TestCanaryAndWrongPassword(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/c.db"
	s, err := Open(ctx, "sqlite:"+path, "first-password")
	if err != nil {
		t.Fatal(err)
	}
	var value, nonce, salt []byte
	if err := s.db.QueryRow("SELECT encrypted_value, nonce, salt FROM encryption_key_canary").Scan(&value, &nonce, &salt); err != nil {
		t.Fatal(err)
	}
	if len(salt) != 64 || len(nonce) != 12 || len(value) != 128+16 {
		t.Fatalf("canary: salt %d, nonce %d, value %d bytes", len(salt), len(nonce), len(value))
	}
	s.Close()
	if _, err := Open(ctx, "sqlite:"+path, "second-password"); err != ErrWrongPassword {
		t.Fatalf("wrong password: %v", err)
	}
	s, err = Open(ctx, "sqlite:"+path, "first-password")
	if err != nil {
		t.Fatalf("reopening with the right password: %v", err)
	}
	var n int
	s.db.QueryRow("SELECT COUNT(*) FROM flyway_schema_history").Scan(&n) //nolint:errcheck // checked below
	if n != len(migrations) {
		t.Fatalf("migrations recorded %d times, want once each (%d)", n, len(migrations))
	}
	s.Close()
}

// On SQLite every foreign key's child column leads an index, where the sim
// deletes parent rows (all but encryption_key_canary, which it never
// deletes): otherwise each delete of a parent row scans the child table,
// and a cleanup of many versions grows with their square
// (sqliteChildKeyIndexes).
func TestSQLiteForeignKeysIndexed(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+t.TempDir()+"/fk.db", "a-password-of-16+")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.db.QueryContext(ctx, `SELECT m.name, f."from", f."table" FROM sqlite_master m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	type fk struct{ table, column, parent string }
	var fks []fk
	for rows.Next() {
		var k fk
		if err := rows.Scan(&k.table, &k.column, &k.parent); err != nil {
			t.Fatal(err)
		}
		fks = append(fks, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(fks) < 9 {
		t.Fatalf("found %d foreign keys, want CredHub's (9 or more): %v", len(fks), fks)
	}
	for _, k := range fks {
		if k.parent == "encryption_key_canary" {
			continue
		}
		// The column leads an index, or is the table's primary key.
		var n int
		err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_index_list(?) l, pragma_index_info(l.name) i
			WHERE i.seqno = 0 AND i.name = ?`, k.table, k.column).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("%s.%s references %s and leads no index: a delete from %s scans %s", k.table, k.column, k.parent, k.parent, k.table)
		}
	}
}
