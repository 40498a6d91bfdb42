package proxyserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/config"
)

// TestWorkerCommandPaths: relative paths in PROXY_PLAYWRIGHT_MCP_COMMAND
// that name a file in the project directory become absolute (workers run
// in their own directory); everything else stays as written.
func TestWorkerCommandPaths(t *testing.T) {
	root := t.TempDir()
	cli := filepath.Join(root, "node_modules", "@playwright", "mcp", "cli.js")
	for _, f := range []string{cli, filepath.Join(root, "bin", "run-mcp")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, command string
		want          []string
	}{
		{"the documented default", "node node_modules/@playwright/mcp/cli.js", []string{"node", cli}},
		{"dot-relative", "node ./node_modules/@playwright/mcp/cli.js --headless", []string{"node", cli, "--headless"}},
		{"a program by path", "bin/run-mcp --port 0", []string{filepath.Join(root, "bin", "run-mcp"), "--port", "0"}},
		{"a program on PATH", "npx @playwright/mcp@0.0.83", []string{"npx", "@playwright/mcp@0.0.83"}},
		{"inline code", "node -e process.exit(1)", []string{"node", "-e", "process.exit(1)"}},
		{"absolute", "/usr/bin/node /opt/mcp/cli.js", []string{"/usr/bin/node", "/opt/mcp/cli.js"}},
		{"a missing file", "node no/such/cli.js", []string{"node", "no/such/cli.js"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := workerCommand(config.Config{PlaywrightMCPCommand: tc.command}, root)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("workerCommand(%q) (-want +got):\n%s", tc.command, diff)
			}
		})
	}
}
