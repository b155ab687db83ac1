package store

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha512"
	"errors"
	"fmt"

	"golang.org/x/crypto/pbkdf2"
)

// The internal encryption provider of CredHub: PBKDF2-HMAC-SHA384 with
// 100 000 iterations turns the operator's password and a per-key random salt
// into an AES-256 key; values are sealed with AES-GCM under a fresh 12-byte
// nonce. The canary proves at start that the password matches the key the
// database was written with.
const (
	pbkdf2Iterations = 100000
	keyBytes         = 32
	saltBytes        = 64
	nonceBytes       = 12
)

// canaryPlaintext is CredHub's canary value; the older 64-byte variant is
// accepted when checking.
var (
	canaryPlaintext       = make([]byte, 128)
	legacyCanaryPlaintext = make([]byte, 64)
)

// ErrWrongPassword means the database holds a canary that the configured
// encryption password cannot decrypt.
var ErrWrongPassword = errors.New("the encryption password does not decrypt this database's encryption_key_canary; start with the password the database was created with, or use a fresh database")

// Key is one derived encryption key, bound to the canary row it matched.
type Key struct {
	UUID string // encryption_key_canary.uuid, referenced by encrypted_value rows
	aead cipher.AEAD
}

func deriveKey(password string, salt []byte) (cipher.AEAD, error) {
	raw := pbkdf2.Key([]byte(password), salt, pbkdf2Iterations, keyBytes, sha512.New384)
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("creating AES cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("creating AES-GCM: %w", err)
	}
	return aead, nil
}

// Encrypt seals plaintext under a new random nonce.
func (k *Key) Encrypt(plaintext []byte) (ciphertext, nonce []byte, err error) {
	nonce = make([]byte, nonceBytes)
	if _, err := rand.Read(nonce); err != nil {
		return nil, nil, fmt.Errorf("reading random nonce: %w", err)
	}
	return k.aead.Seal(nil, nonce, plaintext, nil), nonce, nil
}

// Decrypt opens a value sealed by Encrypt.
func (k *Key) Decrypt(ciphertext, nonce []byte) ([]byte, error) {
	if len(nonce) != nonceBytes {
		return nil, fmt.Errorf("nonce is %d bytes, want %d", len(nonce), nonceBytes)
	}
	out, err := k.aead.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return nil, fmt.Errorf("decrypting value: %w", err)
	}
	return out, nil
}

func canaryMatches(aead cipher.AEAD, ciphertext, nonce []byte) bool {
	if len(nonce) != nonceBytes {
		return false
	}
	plain, err := aead.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return false
	}
	return bytes.Equal(plain, canaryPlaintext) || bytes.Equal(plain, legacyCanaryPlaintext)
}
