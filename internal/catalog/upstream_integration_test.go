package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

func TestMain(m *testing.M) { e2etest.Main(m) }

// everyCap is every --caps value the pinned @playwright/mcp knows besides
// its core ones, which it always has.
var everyCap = []string{"storage", "network", "pdf", "vision", "devtools", "testing", "config"}

// TestUpstreamToolsAreReviewed starts the real pinned @playwright/mcp with
// every capability and fails on a tool it lists that the reviewed table
// does not hold: a tool a newer upstream adds cannot reach clients before
// someone has read what it reaches (until then the catalogue treats it as
// reaching outside the page).
func TestUpstreamToolsAreReviewed(t *testing.T) {
	e2etest.RequireBrowser(t)
	root := e2etest.ProjectRoot(t)
	tmp, err := os.MkdirTemp("", "pwcat-") // short: Playwright's sockets live in TMPDIR
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	w, err := upstream.StartWorker(ctx, upstream.WorkerConfig{
		Command:   upstream.DefaultCommand(root),
		OutputDir: filepath.Join(t.TempDir(), "out"),
		ExtraArgs: []string{"--caps=" + strings.Join(everyCap, ",")},
		Env:       []string{"TMPDIR=" + tmp},
	})
	if err != nil {
		t.Fatalf("starting @playwright/mcp with every capability: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := w.Close(ctx); err != nil {
			t.Errorf("closing the worker: %v", err)
		}
	})
	var listed, outside []string
	for _, tool := range w.Tools() {
		listed = append(listed, tool.Name)
		r, ok := catalog.ReviewOf(tool.Name)
		if !ok {
			t.Errorf("@playwright/mcp lists %s, which the reviewed table (upstreamReview) does not hold: read its handler in playwright-core's coreBundle.js and add it", tool.Name)
			continue
		}
		if r.Reach != catalog.InPage {
			outside = append(outside, tool.Name)
		}
	}
	slices.Sort(outside)
	t.Logf("%d tools listed with --caps=%s; reaching outside the page: %v", len(listed), strings.Join(everyCap, ","), outside)
	// The ones this proxy keeps from shared-browser clients are among them:
	// the table and the real list agree on what matters most.
	for _, name := range []string{"browser_run_code_unsafe", "browser_get_config", "browser_annotate"} {
		if !slices.Contains(outside, name) {
			t.Errorf("%s is not listed as reaching outside the page with every capability (listed: %v)", name, listed)
		}
	}
}
