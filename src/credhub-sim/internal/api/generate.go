package api

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Character sets of CredHub's password generator.
const (
	upperChars   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowerChars   = "abcdefghijklmnopqrstuvwxyz"
	digitChars   = "0123456789"
	specialChars = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	hexChars     = "0123456789ABCDEF"
)

// passwordParams are the stored generation parameters (password and user);
// the JSON of the normalised struct is what converge mode compares.
type passwordParams struct {
	Length         int  `json:"length"`
	ExcludeUpper   bool `json:"exclude_upper"`
	ExcludeLower   bool `json:"exclude_lower"`
	ExcludeNumber  bool `json:"exclude_number"`
	IncludeSpecial bool `json:"include_special"`
	OnlyHex        bool `json:"only_hex"`
}

var errExcludesAll = errors.New(msgExcludesAllCharsets)

func (p *passwordParams) normalise() {
	// CredHub falls back to the default length outside 4..200.
	if p.Length < 4 || p.Length > 200 {
		p.Length = 30
	}
}

func randInt(n int) (int, error) {
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		return 0, fmt.Errorf("reading randomness: %w", err)
	}
	return int(v.Int64()), nil
}

// generatePassword draws at least one character from every included set,
// like CredHub's passay rules.
func generatePassword(p passwordParams) (string, error) {
	var sets []string
	if p.OnlyHex {
		sets = []string{hexChars}
	} else {
		if !p.ExcludeUpper {
			sets = append(sets, upperChars)
		}
		if !p.ExcludeLower {
			sets = append(sets, lowerChars)
		}
		if !p.ExcludeNumber {
			sets = append(sets, digitChars)
		}
		if p.IncludeSpecial {
			sets = append(sets, specialChars)
		}
	}
	if len(sets) == 0 {
		return "", errExcludesAll
	}
	all := strings.Join(sets, "")
	out := make([]byte, p.Length)
	for i := range out {
		n, err := randInt(len(all))
		if err != nil {
			return "", err
		}
		out[i] = all[n]
	}
	// Overwrite distinct random positions so every set is represented.
	positions := make([]int, p.Length)
	for i := range positions {
		positions[i] = i
	}
	for i, set := range sets {
		if i >= p.Length {
			break
		}
		j, err := randInt(len(positions) - i)
		if err != nil {
			return "", err
		}
		positions[i], positions[i+j] = positions[i+j], positions[i]
		n, err := randInt(len(set))
		if err != nil {
			return "", err
		}
		out[positions[i]] = set[n]
	}
	return string(out), nil
}

func randomUsername() (string, error) {
	return generatePassword(passwordParams{Length: 20, ExcludeNumber: true})
}

// randomSalt is a crypt(3) salt for user credentials: "$6$" and 8
// characters, what CredHub's CryptSaltFactory (commons-codec Crypt) makes
// and its VARCHAR(16) column holds.
func randomSalt() (string, error) {
	const itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 8)
	for i := range b {
		n, err := randInt(len(itoa64))
		if err != nil {
			return "", err
		}
		b[i] = itoa64[n]
	}
	return "$6$" + string(b), nil
}

type keyParams struct {
	KeyLength  int    `json:"key_length"`
	SSHComment string `json:"ssh_comment,omitempty"`
}

func (p *keyParams) validate() error {
	switch p.KeyLength {
	case 0:
		p.KeyLength = 2048
	case 2048, 3072, 4096:
	default:
		return errors.New(msgInvalidKeyLength)
	}
	return nil
}

// generateRSA returns PEM PKCS#1 private and PKIX public keys, as CredHub's
// rsa credentials hold them.
func generateRSA(bits int) (privPEM, pubPEM string, key *rsa.PrivateKey, err error) {
	key, err = rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		return "", "", nil, fmt.Errorf("generating RSA key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", nil, fmt.Errorf("encoding public key: %w", err)
	}
	privPEM = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	pubPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	return privPEM, pubPEM, key, nil
}

func generateSSH(p keyParams) (privPEM, authorized string, err error) {
	privPEM, _, key, err := generateRSA(p.KeyLength)
	if err != nil {
		return "", "", err
	}
	sshPub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", fmt.Errorf("encoding SSH public key: %w", err)
	}
	authorized = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub)))
	if p.SSHComment != "" {
		authorized += " " + p.SSHComment
	}
	return privPEM, authorized, nil
}

func canonicalJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
