package remote

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"filippo.io/age"
	"golang.org/x/crypto/chacha20poly1305"
)

// keyLen is the size of a remote's master key: a 32-byte data key
// (XChaCha20-Poly1305) and a 32-byte name key (HMAC-SHA256 of ref names).
const keyLen = 64

// sealer encrypts a remote's objects. nil means the remote is not
// encrypted.
type sealer struct {
	key []byte
}

func newSealer(key []byte) (*sealer, error) {
	if len(key) != keyLen {
		return nil, fmt.Errorf("remote key has %d bytes, want %d", len(key), keyLen)
	}
	return &sealer{key: key}, nil
}

// seal returns nonce || ciphertext.
func (s *sealer) seal(plain []byte) []byte {
	aead, _ := chacha20poly1305.NewX(s.key[:32])
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err)
	}
	return aead.Seal(nonce, nonce, plain, nil)
}

// errOpen: a sealed object does not decrypt (wrong key or tampered).
var errOpen = errors.New("does not decrypt with the remote's key (tampered, or written with another key)")

func (s *sealer) open(sealed []byte) ([]byte, error) {
	aead, _ := chacha20poly1305.NewX(s.key[:32])
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, errOpen
	}
	out, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], nil)
	if err != nil {
		return nil, errOpen
	}
	return out, nil
}

// name hides a ref name: the hex HMAC of it under the name key.
func (s *sealer) name(n string) string {
	m := hmac.New(sha256.New, s.key[32:])
	m.Write([]byte(n))
	return hex.EncodeToString(m.Sum(nil))
}

// newKey makes a master key and wraps it for the recipients.
func newKey(recipients []age.Recipient) (key, wrapped []byte, err error) {
	key = make([]byte, keyLen)
	if _, err := rand.Read(key); err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, recipients...)
	if err != nil {
		return nil, nil, err
	}
	if _, err := w.Write(key); err != nil {
		return nil, nil, err
	}
	if err := w.Close(); err != nil {
		return nil, nil, err
	}
	return key, buf.Bytes(), nil
}

// unwrapKey opens a wrapped master key with the identities.
func unwrapKey(wrapped []byte, identities []age.Identity) ([]byte, error) {
	r, err := age.Decrypt(bytes.NewReader(wrapped), identities...)
	if err != nil {
		return nil, err
	}
	key, err := io.ReadAll(io.LimitReader(r, keyLen+1))
	if err != nil {
		return nil, err
	}
	if len(key) != keyLen {
		return nil, fmt.Errorf("the remote's wrapped key has %d bytes, want %d", len(key), keyLen)
	}
	return key, nil
}

// secretKeyPrefix starts an age secret key. Such a string is never
// repeated in a message.
const secretKeyPrefix = "AGE-SECRET-KEY-"

// errSecretKeyGiven: a secret key where a public key or a file name
// belongs (the message does not repeat it).
var errSecretKeyGiven = errors.New("that is an age secret key, which must not be passed on the command line; " +
	"give its public key (age1…, from age-keygen -y) as a recipient, and the file that holds the secret key as an identity")

func isSecretKey(s string) bool {
	return strings.HasPrefix(strings.ToUpper(strings.TrimSpace(s)), secretKeyPrefix)
}

// ParseRecipients parses age recipients: "age1..." strings, or paths of
// files that list them (one per line, as age -R reads).
func ParseRecipients(args []string) ([]age.Recipient, error) {
	var out []age.Recipient
	for _, a := range args {
		if isSecretKey(a) {
			return nil, fmt.Errorf("recipient: %w", errSecretKeyGiven)
		}
		if strings.HasPrefix(a, "age1") {
			rs, err := age.ParseRecipients(strings.NewReader(a))
			if err != nil {
				return nil, fmt.Errorf("recipient %q: %w", a, err)
			}
			out = append(out, rs...)
			continue
		}
		f, err := os.Open(a)
		if err != nil {
			return nil, fmt.Errorf("recipient %q is neither an age public key (age1…) nor a readable file: %w", a, err)
		}
		rs, err := age.ParseRecipients(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("recipients file %s: %w", a, err)
		}
		out = append(out, rs...)
	}
	return out, nil
}

// ParseIdentities reads age identity files (as age -i reads them).
func ParseIdentities(paths []string) ([]age.Identity, error) {
	var out []age.Identity
	for _, p := range paths {
		if isSecretKey(p) {
			return nil, fmt.Errorf("identity: %w", errSecretKeyGiven)
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("identity file %s: %w", p, errors.Unwrap(err))
		}
		ids, err := age.ParseIdentities(f)
		f.Close()
		if err != nil {
			// Never echo the file's content: it is a secret key.
			return nil, fmt.Errorf("identity file %s holds no age identity (want lines starting AGE-SECRET-KEY-1)", p)
		}
		out = append(out, ids...)
	}
	return out, nil
}

// ParseIdentityEnv reads CKPT_AGE_IDENTITY's value: the secret key itself
// (AGE-SECRET-KEY-1…, as a sandbox's secret store hands it over), or the
// path of an identity file.
func ParseIdentityEnv(v string) ([]age.Identity, error) {
	if isSecretKey(v) {
		ids, err := age.ParseIdentities(strings.NewReader(strings.TrimSpace(v)))
		if err != nil {
			return nil, errors.New("CKPT_AGE_IDENTITY holds something like an age secret key that does not parse")
		}
		return ids, nil
	}
	ids, err := ParseIdentities([]string{v})
	if err != nil {
		return nil, fmt.Errorf("CKPT_AGE_IDENTITY: %w", err)
	}
	return ids, nil
}
