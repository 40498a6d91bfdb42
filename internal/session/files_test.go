package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

func TestOwnFiles(t *testing.T) {
	all, err := toolset.Select([]string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	upload, ok := all.Lookup("upload_file")
	if !ok {
		t.Fatal("no upload_file")
	}
	click, _ := all.Lookup("click")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "mine.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "theirs.txt")
	if err := os.WriteFile(outside, []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tool  *toolset.Own
		paths []string
		want  string // the error code; "" accepts
	}{
		{"a file of the session's", upload, []string{filepath.Join(root, "mine.txt")}, ""},
		{"the directory itself", upload, []string{root}, ""},
		{"a directory below it", upload, []string{filepath.Join(root, "sub")}, ""},
		{"a missing file inside", upload, []string{filepath.Join(root, "gone.txt")}, ""},
		{"a file elsewhere", upload, []string{outside}, proxy.EINVALID},
		{"a system file", upload, []string{"/etc/passwd"}, proxy.EINVALID},
		{"the directory above", upload, []string{filepath.Dir(root)}, proxy.EINVALID},
		{"climbing out with ..", upload, []string{filepath.Join(root, "sub") + "/../../x"}, proxy.EINVALID},
		{"a relative path", upload, []string{"mine.txt"}, proxy.EINVALID},
		{"a link inside to a file outside", upload, []string{filepath.Join(root, "link.txt")}, proxy.EINVALID},
		{"one bad path among good ones", upload, []string{filepath.Join(root, "mine.txt"), "/etc/passwd"}, proxy.EINVALID},
		{"another tool", click, []string{"/etc/passwd"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			params, _ := json.Marshal(map[string]any{"selector": "#f", "paths": tc.paths})
			err := ownFiles(&catalog.Resolved{Own: tc.tool}, params, root)
			if got := proxy.ErrorCode(err); got != tc.want && !(tc.want == "" && err == nil) {
				t.Errorf("ownFiles(%v) = %v, want code %q", tc.paths, err, tc.want)
			}
		})
	}
	// Upstream's tools are not the proxy's to check.
	if err := ownFiles(&catalog.Resolved{Tool: proxy.Tool{Name: "browser_file_upload"}}, json.RawMessage(`{"paths":["/etc/passwd"]}`), root); err != nil {
		t.Errorf("browser_file_upload: %v", err)
	}
}
