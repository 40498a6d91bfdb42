//go:build unix

package main

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/config"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// TestServeBusyPort: the real binary on a port another process holds exits
// non-zero at once, naming the port, and starts no browser or worker (nor
// touches its data directory) first.
func TestServeBusyPort(t *testing.T) {
	// With the browser and node_modules present, a server that did not bind
	// first would start them before failing.
	requireBrowser(t)
	serverBin, _ := binaries(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	dataDir := filepath.Join(t.TempDir(), "data")

	cmd := exec.Command(serverBin, "serve", "-port", port, "-db", filepath.Join(dataDir, "proxy.db"))
	cmd.Env = append(os.Environ(), "PROXY_HOST=127.0.0.1", "PROXY_WARM_POOL=2")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	// Every child the server has while it runs is a failure: nothing but
	// the port should have been tried.
	var children []proctest.Proc
	var waitErr error
	hang := time.After(30 * time.Second) // a bound on a hang
watch:
	for {
		select {
		case waitErr = <-done:
			break watch
		case <-time.After(10 * time.Millisecond):
			children = append(children, proctest.Descendants(cmd.Process.Pid)...)
		case <-hang:
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("serve on a busy port was still running after 30s:\n%s", &out)
		}
	}
	took := time.Since(began)

	var exit *exec.ExitError
	if !errors.As(waitErr, &exit) || exit.ExitCode() == 0 {
		t.Errorf("serve on a busy port ended with %v, want a non-zero exit", waitErr)
	}
	if msg := out.String(); !strings.Contains(msg, ":"+port) || !strings.Contains(msg, "address already in use") {
		t.Errorf("serve's message does not name port %s as in use:\n%s", port, msg)
	}
	if took > 2*time.Second {
		t.Errorf("serve took %s to fail on a busy port, want it at once", took.Round(time.Millisecond))
	}
	if len(children) > 0 {
		t.Errorf("serve started %v before failing on the busy port", children)
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("serve touched its data directory before failing on the busy port (stat: %v)", err)
	}
}

// TestHelp: asked for help, the real binary prints its usage with every
// PROXY_* variable on stdout and exits 0; without a command it is an error.
func TestHelp(t *testing.T) {
	serverBin, _ := binaries(t)
	tests := []struct {
		args []string
		ok   bool
		want []string
	}{
		{[]string{"--help"}, true, []string{"proxy-server serve"}},
		{[]string{"-h"}, true, []string{"proxy-server serve"}},
		{[]string{"help"}, true, []string{"proxy-server serve"}},
		{[]string{"serve", "-h"}, true, []string{"-port", "-db"}},
		{[]string{"serve", "--help"}, true, []string{"-port", "-db"}},
		{[]string{"migrate", "-h"}, true, []string{"-db"}},
		{nil, false, nil},
	}
	for _, tc := range tests {
		t.Run(strings.Join(append([]string{"proxy-server"}, tc.args...), " "), func(t *testing.T) {
			cmd := exec.Command(serverBin, tc.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if (err == nil) != tc.ok {
				t.Fatalf("exit: %v, want success %v\nstderr:\n%s", err, tc.ok, &stderr)
			}
			if !tc.ok {
				return
			}
			if stderr.Len() > 0 {
				t.Errorf("help wrote to stderr:\n%s", &stderr)
			}
			want := tc.want
			for _, v := range config.DefaultConfig(os.Getenv).Variables() {
				want = append(want, v.Name+"=")
			}
			for _, s := range want {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("help lacks %q:\n%s", s, &stdout)
				}
			}
		})
	}
}

// TestServeWorkerCommand: PROXY_PLAYWRIGHT_MCP_COMMAND set to its documented
// default, a path relative to the project, works from any working
// directory (workers run in their own), and with PROXY_WARM_POOL=0 too.
func TestServeWorkerCommand(t *testing.T) {
	for _, pool := range []string{"0", "1"} {
		t.Run("PROXY_WARM_POOL="+pool, func(t *testing.T) {
			s := runBinary(t, filepath.Join(t.TempDir(), "p.db"), map[string]string{
				"PROXY_PLAYWRIGHT_MCP_COMMAND": "node node_modules/@playwright/mcp/cli.js",
				"PROXY_WARM_POOL":              pool,
			})
			if wd, _ := os.Getwd(); fileExists(filepath.Join(wd, "node_modules")) {
				t.Fatalf("the server runs in %s, which has node_modules: the test would not show where the path resolves", wd)
			}
			res := s.call(t, s.createSession(t), "browser_navigate", map[string]any{"url": site(t) + "/"})
			if res.Status != "success" {
				t.Fatalf("browser_navigate = %+v", res)
			}
			if h := healthOf(t, s.URL); h.Status != "ok" {
				t.Errorf("/health = %+v, want ok", h)
			}
		})
	}
}

// TestServeFailsOnBadWorkerCommand: a worker command that cannot start
// makes the real binary exit non-zero before it serves, naming the command
// and saying what went wrong, and leaves no process behind.
func TestServeFailsOnBadWorkerCommand(t *testing.T) {
	requireBrowser(t)
	serverBin, _ := binaries(t)
	tests := []struct {
		name, command string
		want          string // in the message besides the command
	}{
		{"no such program", "/nonexistent/bin/playwright-mcp --flag", "no such file or directory"},
		{"no such module", "node node_modules/@playwright/mcp/no-such-cli.js", "Cannot find module"},
		{"not an MCP server", "false", "upstream worker exited"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(serverBin, "serve", "-port", "0", "-db", filepath.Join(t.TempDir(), "p.db"))
			cmd.Env = append(os.Environ(), "PROXY_HOST=127.0.0.1", "PROXY_PLAYWRIGHT_MCP_COMMAND="+tc.command)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			e2etest.ExitsNonZero(t, cmd, 45*time.Second)
			msg := out.String()
			for _, s := range []string{tc.command, tc.want} {
				if !strings.Contains(msg, s) {
					t.Errorf("serve's message lacks %q:\n%s", s, msg)
				}
			}
			if strings.Contains(msg, "proxy-server listening") {
				t.Errorf("serve announced it was listening before failing:\n%s", msg)
			}
		})
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestServeWithRemoteBrowserDown: a remote browser (PROXY_BROWSER_CDP_ENDPOINT)
// that does not answer at start is no reason not to serve: the server comes
// up degraded, /health says why, and calls get a retryable 503 until the
// browser answers. (A worker command that cannot start does stop serve.)
func TestServeWithRemoteBrowserDown(t *testing.T) {
	requireBrowser(t)
	s := startServer(t, "", map[string]string{"PROXY_BROWSER_CDP_ENDPOINT": "http://127.0.0.1:" + e2etest.FreePort(t)})
	h := healthOf(t, s.URL)
	if h.Status != "degraded" {
		t.Errorf("/health = %+v, want degraded", h)
	}
	var eb struct {
		Error     string `json:"error"`
		Retryable bool   `json:"retryable"`
	}
	if code := do(t, "POST", s.URL+"/sessions", nil, &eb); code != http.StatusServiceUnavailable || eb.Error != "UPSTREAM_UNAVAILABLE" || !eb.Retryable {
		t.Errorf("POST /sessions = %d %+v, want 503 UPSTREAM_UNAVAILABLE, retryable", code, eb)
	}
}
