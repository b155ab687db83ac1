package api

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/credhub-perf/credhub-sim/internal/store"
)

// wireType maps credential_version.type to the API's type names.
func wireType(dbType string) string {
	if dbType == store.TypeCert {
		return "certificate"
	}
	return dbType
}

// formatTime renders epoch ms as CredHub does (ISO-8601 UTC, seconds).
func formatTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05Z")
}

func nullableString(ns sql.NullString) any {
	if !ns.Valid {
		return nil
	}
	return ns.String
}

// credentialView renders one version the way CredHub's CredentialView does,
// keys in CredHub's order: type, version_created_at, id, name, metadata,
// value, then the certificate-only top-level fields.
func credentialView(v store.Version) (json.RawMessage, error) {
	var buf bytes.Buffer
	field := func(first bool, key string, val any) error {
		if !first {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		buf.Write(k)
		buf.WriteByte(':')
		b, err := marshalNoEscape(val)
		if err != nil {
			return err
		}
		buf.Write(b)
		return nil
	}
	var metadata any = json.RawMessage("null")
	if v.Metadata.Valid && v.Metadata.String != "" {
		metadata = json.RawMessage(v.Metadata.String)
	}
	value, err := viewValue(v)
	if err != nil {
		return nil, err
	}
	buf.WriteByte('{')
	for i, kv := range []struct {
		k string
		v any
	}{
		{"type", wireType(v.Type)},
		{"version_created_at", formatTime(v.CreatedAt)},
		{"id", v.ID},
		{"name", v.Name},
		{"metadata", metadata},
		{"value", value},
	} {
		if err := field(i == 0, kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	if v.Type == store.TypeCert {
		var expiry any
		if v.Cert.ExpiryDate.Valid {
			expiry = formatTime(v.Cert.ExpiryDate.Int64)
		}
		extras := []struct {
			k string
			v any
		}{
			{"transitional", v.Cert.Transitional},
			{"expiry_date", expiry},
			{"certificate_authority", v.Cert.CertificateAuthority},
			{"self_signed", v.Cert.SelfSigned},
		}
		if v.Cert.Generated.Valid {
			extras = append(extras, struct {
				k string
				v any
			}{"generated", v.Cert.Generated.Bool})
		}
		for _, kv := range extras {
			if err := field(false, kv.k, kv.v); err != nil {
				return nil, err
			}
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshalNoEscape keeps <, > and & literal, as Jackson does (PEM bodies and
// passwords come back byte for byte).
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

type orderedFields []struct {
	k string
	v any
}

func (o orderedFields) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(kv.k)
		buf.Write(k)
		buf.WriteByte(':')
		b, err := marshalNoEscape(kv.v)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func secretOrNull(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func viewValue(v store.Version) (any, error) {
	switch v.Type {
	case store.TypeValue, store.TypePassword:
		return string(v.Secret), nil
	case store.TypeJSON:
		return json.RawMessage(v.Secret), nil
	case store.TypeUser:
		return orderedFields{
			{"username", nullableString(v.Username)},
			{"password", string(v.Secret)},
			{"password_hash", sha512Crypt(string(v.Secret), v.Salt)},
		}, nil
	case store.TypeCert:
		return orderedFields{
			{"ca", nullableString(v.Cert.CA)},
			{"certificate", nullableString(v.Cert.Certificate)},
			{"private_key", secretOrNull(v.Secret)},
		}, nil
	case store.TypeSSH:
		return orderedFields{
			{"public_key", nullableString(v.PublicKey)},
			{"private_key", secretOrNull(v.Secret)},
			{"public_key_fingerprint", sshFingerprint(v.PublicKey.String)},
		}, nil
	case store.TypeRSA:
		return orderedFields{
			{"public_key", nullableString(v.PublicKey)},
			{"private_key", secretOrNull(v.Secret)},
		}, nil
	}
	return string(v.Secret), nil
}

// sshFingerprint is the unpadded base64 SHA-256 of the key's wire form, or
// null when the public key is absent or unparsable (as CredHub does).
func sshFingerprint(pub string) any {
	if pub == "" {
		return nil
	}
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(pub))
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(key.Marshal())
	return base64.RawStdEncoding.EncodeToString(sum[:])
}
