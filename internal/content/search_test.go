package content_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/search")

func readSnapshot(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "snapshot.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSearchGolden searches a realistic @playwright/mcp snapshot. The
// golden files are the exact expected output; regenerate them with
// `go test ./internal/content -run TestSearchGolden -update` and review
// the diff.
func TestSearchGolden(t *testing.T) {
	t.Parallel()
	snapshot := readSnapshot(t)
	tests := []struct {
		name, query string
	}{
		{"button", "button"},
		{"sign_in_upper_case", "SIGN IN"},
		{"url_lines", "/url:"},
		{"japanese", "カート"},
		{"ref", "[ref=e35]"},
		{"password_shared_ancestors", "password"},
		{"euro_sign", "€"},
		{"heading_level", "[level="},
		{"no_match", "zzz-no-such-text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := content.Search(snapshot, tt.query)
			path := filepath.Join("testdata", "search", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("Search(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, query, want string
	}{
		{"empty query returns everything", "- a\n  - b\n", "", "- a\n  - b\n"},
		{"empty text", "", "x", ""},
		{"no match", "- a\n  - b\n", "zz", ""},
		{"top-level match has no ancestors", "- a\n- b\n", "B", "- b\n"},
		{"ancestors, not siblings",
			"- root:\n  - sib1\n  - parent:\n    - sib2\n    - hit\n  - after\n",
			"hit",
			"- root:\n  - parent:\n    - hit\n"},
		{"shared ancestors are not repeated",
			"- root:\n  - a:\n    - hit 1\n    - x\n    - hit 2\n  - b:\n    - hit 3\n",
			"hit",
			"- root:\n  - a:\n    - hit 1\n    - hit 2\n  - b:\n    - hit 3\n"},
		{"a matching ancestor appears once, in place",
			"- hit parent:\n  - hit child\n", "hit", "- hit parent:\n  - hit child\n"},
		{"children of a match are not included",
			"- link \"Home\":\n  - /url: /\n", "home", "- link \"Home\":\n"},
		{"blank lines do not break ancestry",
			"- root:\n\n  - hit\n", "hit", "- root:\n  - hit\n"},
		{"dedent ends the enclosing block",
			"- a:\n  - b:\n    - c\n- d:\n  - hit\n", "hit", "- d:\n  - hit\n"},
		{"CRLF kept", "- a:\r\n  - hit\r\n", "HIT", "- a:\r\n  - hit\r\n"},
		{"last line without newline", "- a:\n  - hit", "hit", "- a:\n  - hit"},
		{"does not match across lines", "- ab\n- cd\n", "b\n- c", ""},
		{"unicode case folding", "- heading \"ÉCOLE\"\n- text: école\n", "École", "- heading \"ÉCOLE\"\n- text: école\n"},
		{"invalid UTF-8 lines are kept byte for byte", "- a:\n  - \xff hit \xfe\n", "hit", "- a:\n  - \xff hit \xfe\n"},
		{"tabs count as indentation", "- a:\n\t- hit\n", "hit", "- a:\n\t- hit\n"},
		{"regexp characters are literal", "- a [ref=e1]\n- b\n", "[ref=e1]", "- a [ref=e1]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, content.Search(tt.text, tt.query)); diff != "" {
				t.Errorf("Search(%q, %q) (-want +got):\n%s", tt.text, tt.query, diff)
			}
		})
	}
}
