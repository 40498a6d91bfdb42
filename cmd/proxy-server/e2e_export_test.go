//go:build unix

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// TestExportReplaysWithPlaywright records a session through the proxy (type,
// submit, follow a link, click one of several same-named buttons), exports
// it as a Playwright test and runs that test with Playwright's own runner
// against the same pages: it must pass, assertions on the URLs and titles
// seen included.
func TestExportReplaysWithPlaywright(t *testing.T) {
	if testing.Short() {
		t.Skip("drives Chromium twice")
	}
	pages := site(t)
	secrets := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(secrets, []byte("API_TOKEN=tok-4f9a17c2e8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "", map[string]string{"PROXY_SECRETS_FILE": secrets})
	id := s.createSession(t)
	nav := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	box := refOf(t, s.content(t, nav.RefID, "?reset_cursor=true"), `textbox "Search query"`)
	s.call(t, id, "browser_type", map[string]any{"target": box, "text": "shoes", "submit": true})
	snap := s.call(t, id, "browser_snapshot", nil)
	if snap.Metadata.PageTitle != "Submitted shoes" {
		t.Fatalf("after submitting, the title is %q", snap.Metadata.PageTitle)
	}
	link := refOf(t, s.content(t, snap.RefID, "?reset_cursor=true"), `link "Catalogue"`)
	s.call(t, id, "browser_click", map[string]any{"target": link})
	cart := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/changes.html"})
	add := refOf(t, s.content(t, cart.RefID, "?search_for=Product%202&reset_cursor=true"), `button "Add to cart"`)
	s.call(t, id, "browser_click", map[string]any{"target": add})
	// A call that fails is in the record, and in the test as a comment.
	s.call(t, id, "browser_click", map[string]any{"target": "e9999"})

	var spec string
	if code := do(t, "GET", s.URL+"/sessions/"+id+"/export?format=playwright", nil, &spec); code != http.StatusOK {
		t.Fatalf("export = %d: %s", code, spec)
	}
	for _, want := range []string{".fill('shoes')", "toHaveTitle(\"Submitted shoes\")", "toHaveURL(\"" + pages + "/catalogue.html\")", "// failed:"} {
		if !strings.Contains(spec, want) {
			t.Errorf("the exported test lacks %s:\n%s", want, spec)
		}
	}
	out, err := runPlaywrightTest(t, spec)
	if err != nil {
		t.Fatalf("the exported test failed: %v\n%s\nthe test:\n%s", err, out, spec)
	}
	if !strings.Contains(out, "1 passed") {
		t.Errorf("Playwright's runner did not report a pass:\n%s", out)
	}

	// Secrets stay masked in both exports.
	other := s.createSession(t)
	s.call(t, other, "browser_navigate", map[string]string{"url": pages + "/read.html?token=tok-4f9a17c2e8"})
	for _, format := range []string{"playwright", "json"} {
		var body string
		if code := do(t, "GET", s.URL+"/sessions/"+other+"/export?format="+format, nil, &body); code != http.StatusOK {
			t.Fatalf("export %s = %d", format, code)
		}
		if strings.Contains(body, "tok-4f9a17c2e8") || !strings.Contains(body, "API_TOKEN") {
			t.Errorf("the %s export shows the secret or not its mask:\n%s", format, body)
		}
	}
}

// refOf finds the ref of the first snapshot line containing what.
func refOf(t *testing.T, snapshot, what string) string {
	t.Helper()
	for _, line := range strings.Split(snapshot, "\n") {
		if strings.Contains(line, what) {
			if m := regexp.MustCompile(`\[ref=([a-z0-9]+)\]`).FindStringSubmatch(line); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no ref for %s in:\n%s", what, snapshot)
	return ""
}

// runPlaywrightTest runs spec with Playwright's test runner from the
// project's node_modules, on this machine's Chromium. The pinned package
// is `playwright`, whose runner `@playwright/test` re-exports: a one-line
// package of that name in the test's directory stands in for it.
func runPlaywrightTest(t *testing.T, spec string) (string, error) {
	t.Helper()
	root := projectRoot(t)
	dir := t.TempDir()
	shim := filepath.Join(dir, "node_modules", "@playwright", "test")
	chromium, err := upstream.FindBrowser()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		filepath.Join(shim, "package.json"): `{"name":"@playwright/test","main":"index.js"}`,
		filepath.Join(shim, "index.js"):     fmt.Sprintf("module.exports = require(%q);\n", filepath.Join(root, "node_modules", "playwright", "test")),
		filepath.Join(dir, "playwright.config.js"): fmt.Sprintf(`module.exports = {
  testDir: '.', reporter: 'list', retries: 0, workers: 1, timeout: 60000,
  outputDir: %q,
  use: { headless: true, launchOptions: { executablePath: %q, args: ['--disable-background-networking', '--disable-component-update', '--disable-sync'] } },
};
`, filepath.Join(dir, "results"), chromium),
		filepath.Join(dir, "session.spec.ts"): spec,
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(root, "node_modules", "playwright", "cli.js"), "test", "--config", filepath.Join(dir, "playwright.config.js"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CI=1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "TMPDIR="+dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
