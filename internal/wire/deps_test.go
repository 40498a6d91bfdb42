package wire

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksOnlyStandardLibraryAndRoot keeps the contract cheap to share:
// every client of the HTTP API links this package, and with it nothing of
// the server's.
func TestLinksOnlyStandardLibraryAndRoot(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const root = "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	allowed := map[string]bool{root: true, root + "/internal/wire": true}
	for _, dep := range strings.Fields(string(out)) {
		if !allowed[dep] {
			t.Errorf("internal/wire links %s", dep)
		}
	}
}
