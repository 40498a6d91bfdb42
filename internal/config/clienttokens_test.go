package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadClientTokens(t *testing.T) {
	dir := filepath.Join("testdata", "clienttokens")
	t.Run("valid", func(t *testing.T) {
		got, err := LoadClientTokens(filepath.Join(dir, "valid.tokens"))
		if err != nil {
			t.Fatal(err)
		}
		want := []ClientToken{
			{Name: "alice", Token: "3f9c2b7e1d4a6085c3e9f1b27d5a8c40", Line: 3},
			{Name: "bob", Token: "Zq8-xL2_vN5kR7tY1mW4pB6sD9fH0jGc", Line: 4},
			{Name: "client-5", Token: "b1e2d3c4a5968778695a4b3c2d1e0f9e8d7c6b5a", Line: 5},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("LoadClientTokens (-want +got):\n%s", diff)
		}
	})
	// Every refusal names the line, and no error quotes a token of the
	// file (the valid one on another line included).
	bad := []struct {
		file string
		want string
	}{
		{"short.tokens", "line 3 (bob): the token is shorter than 32 characters"},
		{"weak.tokens", "line 2 (bob): the token is weak"},
		{"duplicate-token.tokens", "line 2 (bob): the same token as line 1"},
		{"duplicate-name.tokens", "line 2: the name alice is already used on line 1"},
		{"bad-name.tokens", "line 2: a name is 1 to 64 characters"},
		{"three-words.tokens", "line 1: want TOKEN or NAME TOKEN, got 3 words"},
		{"bad-char.tokens", "line 1 (alice): the token has characters other than"},
	}
	for _, tc := range bad {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			_, err := LoadClientTokens(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("LoadClientTokens(%s) = %v, want an error naming the file and %q", tc.file, err, tc.want)
			}
			raw, _ := os.ReadFile(path)
			for _, word := range strings.Fields(string(raw)) {
				if len(word) >= 16 && strings.Contains(err.Error(), word) {
					t.Errorf("the error quotes %q from the file: %v", word, err)
				}
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		if _, err := LoadClientTokens(filepath.Join(dir, "none.tokens")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("LoadClientTokens of a missing file = %v, want ErrNotExist", err)
		}
	})
}

func TestValidateClientTokens(t *testing.T) {
	valid := filepath.Join("testdata", "clienttokens", "valid.tokens")
	tests := []struct {
		name      string
		file      string
		authToken string
		want      string // "" = valid
	}{
		{"no client tokens, no operator token", "", "", ""},
		{"client tokens and the operator's", valid, "operator-token-of-this-test", ""},
		{"client tokens without the operator's", valid, "", "PROXY_AUTH_TOKEN: must be set when PROXY_CLIENT_TOKENS_FILE is"},
		{"a client token is the operator's", valid, "Zq8-xL2_vN5kR7tY1mW4pB6sD9fH0jGc", "PROXY_CLIENT_TOKENS_FILE: " + valid + ": line 4 (bob): the same token as PROXY_AUTH_TOKEN"},
		{"a bad file", filepath.Join("testdata", "clienttokens", "weak.tokens"), "operator-token-of-this-test", "PROXY_CLIENT_TOKENS_FILE: "},
		{"no such file", filepath.Join("testdata", "clienttokens", "none.tokens"), "operator-token-of-this-test", "PROXY_CLIENT_TOKENS_FILE: reading client tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig(env(map[string]string{"HOME": "/home/u"}))
			c.ClientTokensFile, c.AuthToken = tc.file, tc.authToken
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v, want ErrInvalid with %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "Zq8-xL2_vN5kR7tY1mW4pB6sD9fH0jGc"):
				t.Errorf("Validate() quotes a token: %v", err)
			}
		})
	}
}
