// Package seal encrypts what the record keeps that would hand a reader a
// login (saved browser states, login profiles) with AES-256-GCM, and finds
// the key: PROXY_STATE_KEY, or a 0600 key file beside the database. It
// imports nothing but the standard library, so the configuration can check
// a key without linking SQLite.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

// version is the first byte of every sealed blob, so that a later format
// (another cipher, a key id) can be told from this one.
const version byte = 1

// ErrOpen is wrapped by every failure to open a sealed blob: another key
// (PROXY_STATE_KEY or the key file changed), a blob moved from another row,
// or one that is damaged. GCM cannot tell these apart, and neither can we.
var ErrOpen = errors.New("sealed data does not open with this key (was PROXY_STATE_KEY or the key file changed?)")

// ErrKey is wrapped by every refusal of a key's spelling.
var ErrKey = errors.New("not a state key: want 64 hex digits or the base64 of 32 bytes (make one with `openssl rand -hex 32`)")

// Box seals and opens blobs with one key. It is safe for concurrent use.
type Box struct{ aead cipher.AEAD }

// New returns the Box of a KeySize-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("seal: key of %d bytes: %w", len(key), ErrKey)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain into version byte + random nonce + ciphertext. ad
// names the row the blob belongs to (see Row): the blob opens only with the
// same ad, so it cannot be copied into another row and opened there.
func (b *Box) Seal(ad string, plain []byte) ([]byte, error) {
	out := make([]byte, 1+b.aead.NonceSize(), 1+b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	out[0] = version
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, fmt.Errorf("seal: nonce: %w", err)
	}
	return b.aead.Seal(out, out[1:], plain, []byte(ad)), nil
}

// Open decrypts a blob Seal made with the same key and ad; anything else
// is an error wrapping ErrOpen.
func (b *Box) Open(ad string, blob []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	switch {
	case len(blob) < 1+n+b.aead.Overhead():
		return nil, fmt.Errorf("seal: blob of %d bytes is too short: %w", len(blob), ErrOpen)
	case blob[0] != version:
		return nil, fmt.Errorf("seal: blob of unknown format %d: %w", blob[0], ErrOpen)
	}
	plain, err := b.aead.Open(nil, blob[1:1+n], blob[1+n:], []byte(ad))
	if err != nil {
		return nil, fmt.Errorf("seal: %w", ErrOpen)
	}
	return plain, nil
}

// Row is the associated data that binds a blob to one row of one table.
func Row(table, key string) string { return table + "\x00" + key }

// ParseKey reads a key written as 64 hex digits, or as standard or URL
// base64 (padded or not) of KeySize bytes. Its errors never repeat s.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	return nil, ErrKey
}
