// Package e2etest holds what the test packages share, mostly the end-to-end
// ones (cmd/proxy-server, cmd/mcp-bridge): finding the project, skipping only
// when the real browser parts are truly absent, building the real binaries
// once, free ports, and failing a run that leaves processes behind. It is
// for tests only and must never be imported by a binary.
package e2etest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// Main runs the tests as a child subreaper, so that orphans of anything they
// start re-parent to the test process and are found; a run that leaves a
// process behind fails. cleanup runs last (e.g. Binaries.Remove).
func Main(m *testing.M, cleanup ...func()) {
	code := proctest.RunChecked(m, "go")
	for _, f := range cleanup {
		f()
	}
	os.Exit(code)
}

// module is the product's module path: its go.mod marks the project root
// (tools/bench is a module of its own below it).
const module = "github.com/playwright-mcp-proxy/playwright-mcp-proxy"

// ProjectRoot is the repository root: the nearest directory above the test's
// working directory whose go.mod is the product's.
func ProjectRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(b) == module {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %s above the test's directory", module)
		}
		dir = parent
	}
}

// modulePath is the path of a go.mod's module line.
func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// RequireBrowser skips only when the real parts are truly absent (or under
// -short).
func RequireBrowser(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test with real Chromium: skipped under -short")
	}
	if _, err := upstream.FindBrowser(); err != nil {
		t.Skipf("Chromium is not installed (%v): apt-get install chromium, or run `make test`, which installs it", err)
	}
	if _, err := os.Stat(filepath.Join(ProjectRoot(t), "node_modules/@playwright/mcp/cli.js")); err != nil {
		t.Skip("node_modules/@playwright/mcp is missing: run `npm ci` (make test does)")
	}
}

// Binaries builds proxy-server and mcp-bridge once per test run, side by
// side (a bridge looks for its proxy-server next to itself).
type Binaries struct {
	once sync.Once
	dir  string
	err  error
}

// Build returns the paths of the two binaries, building them on first use.
func (b *Binaries) Build(t *testing.T) (proxyServer, bridge string) {
	t.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "pwproxy-bin-*")
		if b.err != nil {
			return
		}
		root := ProjectRoot(t)
		cmd := exec.Command("go", "build", "-o", b.dir+"/",
			"-ldflags", "-X github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/buildinfo.ProjectRoot="+root,
			"./cmd/proxy-server", "./cmd/mcp-bridge")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return filepath.Join(b.dir, "proxy-server"), filepath.Join(b.dir, "mcp-bridge")
}

// Remove deletes the built binaries.
func (b *Binaries) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// FreePort returns a loopback TCP port that was free a moment ago, for a
// process the test starts on a port it must know in advance.
func FreePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// ExitsNonZero starts cmd (its output already directed), waits for it to
// exit and fails the test unless it exits with a non-zero status. bound is
// a bound on a hang, not a measure of speed: past it the process is killed
// and the test stops. It returns how long the process ran.
func ExitsNonZero(t *testing.T, cmd *exec.Cmd, bound time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(bound):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s was still running after %s", cmd.Path, bound)
	}
	took := time.Since(began)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Errorf("%s ended with %v, want a non-zero exit", cmd.Path, err)
	}
	return took
}
