package session

import (
	"encoding/json"
	"path/filepath"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
)

// ownFiles refuses a proxy tool's local paths outside root, the output
// directory of the session's worker (where its downloads and saved files
// are). upload_file's program runs in the worker, whose Playwright reads
// any file the proxy's user can read and gives it to the page: the
// database with every session's record, other sessions' downloads.
// Upstream's own file tools allow the same root and no other.
func ownFiles(tool *catalog.Resolved, params json.RawMessage, root string) error {
	if tool.Own == nil || tool.Own.Name != "upload_file" {
		return nil
	}
	var p struct {
		Paths []string `json:"paths"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return proxy.Errorf(proxy.EINVALID, "params: %v", err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil || root == "" {
		return proxy.Errorf(proxy.EUNAVAILABLE, "the session's worker has no output directory to upload from")
	}
	for i, path := range p.Paths {
		if !inside(realRoot, path) {
			e := proxy.Errorf(proxy.EINVALID, "File access denied: %s is outside this session's output directory (its downloads and saved files)", path)
			e.Details = map[string]any{"field": "params.paths", "index": i}
			e.Suggestion = "Upload a file this session downloaded or saved; paths are absolute and within its output directory."
			return e
		}
	}
	return nil
}

// inside reports whether path, absolute and with its links resolved, is
// root or below it. A path that does not exist is judged as written, once
// cleaned: the browser then fails to read it.
func inside(root, path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = filepath.Clean(path)
	}
	rel, err := filepath.Rel(root, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
