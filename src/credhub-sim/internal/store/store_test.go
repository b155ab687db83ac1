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
