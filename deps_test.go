package proxy_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSharedPackagesLinkOnlyTheRoot keeps the packages that both sides of a
// seam use on the standard library and this package, so that using one
// never links the server's or the process code behind the seam.
func TestSharedPackagesLinkOnlyTheRoot(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	const root = "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	for _, tc := range []struct {
		pkg, why string
	}{
		{"internal/wire", "every client of the HTTP API links it"},
		{"internal/answer", "whoever reads a stored answer must not link the code that starts workers and browsers"},
		{"internal/worker", "the session layer tests a worker's errors without process code"},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			out, err := exec.Command(goBin, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./"+tc.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps: %v\n%s", err, out)
			}
			for _, dep := range strings.Fields(string(out)) {
				if dep != root && dep != root+"/"+tc.pkg {
					t.Errorf("%s links %s (%s)", tc.pkg, dep, tc.why)
				}
			}
		})
	}
}
