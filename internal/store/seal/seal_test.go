package seal_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store/seal"
)

func newKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, seal.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func newBox(t *testing.T, key []byte) *seal.Box {
	t.Helper()
	b, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealOpen(t *testing.T) {
	key := newKey(t)
	box, other := newBox(t, key), newBox(t, newKey(t))
	plain := []byte(`{"cookies":[{"name":"sid","value":"SECRET-1"}]}`)
	ad := seal.Row("profile", "work")
	blob, err := box.Seal(ad, plain)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(blob, []byte("SECRET-1")) {
		t.Fatal("the sealed blob holds the plaintext")
	}
	again, err := box.Seal(ad, plain)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(blob, again) {
		t.Error("two seals of the same plaintext are equal: the nonce is not random")
	}
	flipped := bytes.Clone(blob)
	flipped[len(flipped)-1] ^= 1
	badVersion := bytes.Clone(blob)
	badVersion[0] = 9

	tests := []struct {
		name string
		box  *seal.Box
		ad   string
		blob []byte
		want []byte // nil: must fail with ErrOpen
	}{
		{"same key and row", box, ad, blob, plain},
		{"a new Box of the same key", newBox(t, key), ad, blob, plain},
		{"another key", other, ad, blob, nil},
		{"moved to another row", box, seal.Row("profile", "home"), blob, nil},
		{"moved to another table", box, seal.Row("session_state", "work"), blob, nil},
		{"tampered", box, ad, flipped, nil},
		{"unknown format", box, ad, badVersion, nil},
		{"truncated", box, ad, blob[:10], nil},
		{"empty", box, ad, nil, nil},
		{"plaintext JSON", box, ad, plain, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.box.Open(tt.ad, tt.blob)
			if tt.want == nil {
				if !errors.Is(err, seal.ErrOpen) {
					t.Fatalf("Open = %q, %v; want an error wrapping ErrOpen", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(tt.want), string(got)); diff != "" {
				t.Errorf("opened (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	key := newKey(t)
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"hex", hex.EncodeToString(key), true},
		{"hex with a newline", hex.EncodeToString(key) + "\n", true},
		{"upper-case hex", strings.ToUpper(hex.EncodeToString(key)), true},
		{"base64", base64.StdEncoding.EncodeToString(key), true},
		{"base64 unpadded", base64.RawStdEncoding.EncodeToString(key), true},
		{"base64url", base64.URLEncoding.EncodeToString(key), true},
		{"base64url unpadded", base64.RawURLEncoding.EncodeToString(key), true},
		{"empty", "", false},
		{"short hex", hex.EncodeToString(key[:16]), false},
		{"base64 of 16 bytes", base64.StdEncoding.EncodeToString(key[:16]), false},
		{"a passphrase", "correct horse battery staple", false},
		{"hex with a stray letter", "g" + hex.EncodeToString(key)[1:], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := seal.ParseKey(tt.in)
			if !tt.ok {
				if !errors.Is(err, seal.ErrKey) {
					t.Fatalf("ParseKey = %x, %v; want ErrKey", got, err)
				}
				if tt.in != "" && strings.Contains(err.Error(), tt.in) {
					t.Errorf("the error repeats the key: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, key) {
				t.Errorf("ParseKey = %x, want %x", got, key)
			}
		})
	}
}

func TestNewRefusesAKeyOfAnotherSize(t *testing.T) {
	for _, n := range []int{0, 16, 31, 33} {
		if _, err := seal.New(make([]byte, n)); !errors.Is(err, seal.ErrKey) {
			t.Errorf("New(%d bytes) = %v, want ErrKey", n, err)
		}
	}
}

func TestKeyFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no permission bits to check")
	}
	t.Run("created 0600 as hex and a newline, then reused", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "proxy.db.key")
		key, err := seal.KeyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %04o, want 0600", fi.Mode().Perm())
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if want := hex.EncodeToString(key) + "\n"; string(raw) != want {
			t.Errorf("file holds %q, want the key as hex and a newline", raw)
		}
		again, err := seal.KeyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(key, again) {
			t.Error("a second KeyFile made a new key")
		}
		entries, err := os.ReadDir(filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Errorf("directory holds %d entries, want the key file only", len(entries))
		}
	})
	refusals := []struct {
		name    string
		content string
		mode    os.FileMode
		want    []string
	}{
		{"readable by others", hex.EncodeToString(newKey(t)) + "\n", 0o644, []string{"chmod 600", "proxy.db.key"}},
		{"readable by the group", hex.EncodeToString(newKey(t)) + "\n", 0o640, []string{"chmod 600"}},
		{"not a key", "hunter2\n", 0o600, []string{"proxy.db.key", "openssl rand -hex 32"}},
		{"empty", "", 0o600, []string{"proxy.db.key"}},
	}
	for _, tt := range refusals {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "proxy.db.key")
			if err := os.WriteFile(path, []byte(tt.content), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil { // past the umask
				t.Fatal(err)
			}
			key, err := seal.KeyFile(path)
			if err == nil {
				t.Fatalf("KeyFile = %x, want an error", key)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tt.content != "" && strings.Contains(err.Error(), strings.TrimSpace(tt.content)) {
				t.Errorf("the error repeats the file's content: %v", err)
			}
			raw, _ := os.ReadFile(path)
			if string(raw) != tt.content {
				t.Error("the refused file was changed")
			}
		})
	}
}
