package upstream

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// browserServerJS runs Chromium under a Playwright browser server in a
// process of its own, for worker processes to share.
//
//go:embed js/browser-server.js
var browserServerJS []byte

// browserLaunchJS launches that browser server in the process that loads
// it (browser-server.js, or a session host with a browser of its own); see
// the file for why clients connect to that rather than to Chromium's CDP
// port.
//
//go:embed js/browser-launch.js
var browserLaunchJS []byte

// keepGroupJS, preloaded into a node process, keeps the browsers Playwright
// launches in that process's group instead of a detached one.
//
//go:embed js/keep-group.js
var keepGroupJS []byte

// KeepGroupJS is the preload script that keeps the browsers a node process
// launches through Playwright in that process's group (see keepGroupJS).
func KeepGroupJS() []byte { return append([]byte(nil), keepGroupJS...) }

// chromiumSh is the executable the browser server launches: it merges the
// --disable-features lists of Playwright and chromiumFlags (Chromium would
// keep only the last) and execs the real browser, named in chromiumEnv.
//
//go:embed js/chromium.sh
var chromiumSh []byte

const chromiumEnv = "PWPROXY_CHROMIUM"

// chromiumLauncher writes chromiumSh into dir and checks that it can run
// there.
func chromiumLauncher(dir string) (string, error) {
	p, err := writeRuntimeFile(dir, "chromium.sh", chromiumSh)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(p, 0o700); err != nil {
		return "", fmt.Errorf("chromium launcher: %w", err)
	}
	probe := exec.Command(p)
	probe.Env = []string{chromiumEnv + "=true", "PATH=" + os.Getenv("PATH")}
	if out, err := probe.CombinedOutput(); err != nil {
		return "", fmt.Errorf("chromium launcher %s cannot run: %w: %s", p, err, out)
	}
	return p, nil
}

// browserServerEnv carries the launcher's JSON configuration.
const browserServerEnv = "PWPROXY_BROWSER_SERVER"

// ErrNoPlaywright means the Playwright library the browser server needs is
// not where the workers' @playwright/mcp is: callers fall back to sharing
// Chromium over CDP.
var ErrNoPlaywright = errors.New("playwright-core not found next to @playwright/mcp")

// PlaywrightFrom returns the directory from which node can resolve
// playwright-core for a worker command such as DefaultCommand(root): the
// directory of the command's script when it is a file inside node_modules.
func PlaywrightFrom(command []string) (string, error) {
	if len(command) == 0 {
		return "", ErrNoPlaywright
	}
	script := command[len(command)-1]
	if !strings.HasSuffix(script, ".js") || !filepath.IsAbs(script) {
		return "", fmt.Errorf("worker command %q: %w", strings.Join(command, " "), ErrNoPlaywright)
	}
	dir := filepath.Dir(script)
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "node_modules", "playwright-core", "package.json")); err == nil {
			return dir, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("from %s: %w", dir, ErrNoPlaywright)
		}
	}
}

// writeRuntimeFile writes one of the embedded scripts into dir.
func writeRuntimeFile(dir, name string, data []byte) (string, error) {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	return p, nil
}

// nodeRequire is NODE_OPTIONS with script preloaded, keeping any options
// the environment already sets.
func nodeRequire(script string) string {
	opt := fmt.Sprintf("--require=%q", script)
	if prev := strings.TrimSpace(os.Getenv("NODE_OPTIONS")); prev != "" {
		return "NODE_OPTIONS=" + prev + " " + opt
	}
	return "NODE_OPTIONS=" + opt
}

// LaunchBrowserServer starts Chromium under a Playwright browser server (a
// node process we start, with the browser kept in its process group) and
// returns once workers can connect to PlaywrightEndpoint. from is where node
// resolves playwright-core (PlaywrightFrom). ctx bounds only the start-up.
func LaunchBrowserServer(ctx context.Context, cfg BrowserConfig, node, from string) (*Browser, error) {
	logger := loggerOr(cfg.Logger).With("component", "browser")
	exe, err := cfg.executable()
	if err != nil {
		return nil, err
	}
	if node == "" {
		node = "node"
	}
	// Everything the server and its browser write (scripts, the profile
	// Playwright creates in TMPDIR) lives here and goes with Close, even
	// after a SIGKILL that left Playwright no time to clean up.
	dir, err := os.MkdirTemp(cfg.TempDir, "pwp-browser-")
	if err != nil {
		return nil, fmt.Errorf("browser runtime dir: %w", err)
	}
	fail := func(err error) (*Browser, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	script, err := writeRuntimeFile(dir, "browser-server.js", browserServerJS)
	if err != nil {
		return fail(err)
	}
	host, port, err := serverAddr(cfg.ServerAddr)
	if err != nil {
		return fail(err)
	}
	launch, env, err := browserLaunch(dir, cfg, exe, logger)
	if err != nil {
		return fail(err)
	}
	launch["resolveFrom"], launch["host"], launch["port"], launch["wsPath"] = from, host, port, cfg.ServerPath
	conf, err := json.Marshal(launch)
	if err != nil {
		return fail(err)
	}

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return fail(fmt.Errorf("browser server stdin: %w", err))
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeFiles(stdinR, stdinW)
		return fail(fmt.Errorf("browser server stdout: %w", err))
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeFiles(stdinR, stdinW, stdoutR, stdoutW)
		return fail(fmt.Errorf("browser server stderr: %w", err))
	}
	cmd := exec.Command(node, script)
	cmd.Dir = dir
	cmd.Env = append(append(childEnv(cfg.Env), env...), browserServerEnv+"="+string(conf))
	// TMPDIR=dir, not a directory below it: Chromium's socket path below
	// TMPDIR must stay short (chromiumTMPDIRMax).
	cmd.Env = append(cmd.Env, tmpdirEnv(dir, logger)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.SysProcAttr = sysProcAttr()
	started := time.Now()
	proc, err := startProcess(cmd, nil)
	closeFiles(stdinR, stdoutW, stderrW)
	if err != nil {
		closeFiles(stdinW, stdoutR, stderrR)
		return fail(fmt.Errorf("start %s: %w", node, err))
	}
	b := &Browser{proc: proc, dir: dir, stdin: stdinW, stderr: newRingBuffer(stderrRingBytes), logger: logger.With("pid", proc.pid), started: started}
	go func() {
		defer closeFiles(stderrR)
		drainStderr(stderrR, b.stderr, b.logger, nil)
	}()

	type hello struct {
		Endpoint   string `json:"endpoint"`
		BrowserPID int    `json:"browserPid"`
		CDP        string `json:"cdp"`
	}
	found := make(chan hello, 1)
	var announced atomic.Bool
	go func() {
		// Later stdout lines (there should be none) are drained and dropped
		// so the server can never block on a full pipe.
		defer closeFiles(stdoutR)
		drainStderr(stdoutR, newRingBuffer(4<<10), b.logger, func(line string) {
			var h hello
			if announced.Load() || json.Unmarshal([]byte(line), &h) != nil || h.Endpoint == "" {
				return
			}
			announced.Store(true)
			found <- h
		})
	}()

	h, err := awaitStart(ctx, b, found, "browser server", "start listening")
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(h.Endpoint, "ws://") {
		b.closeAfterFailedStart(ctx)
		return nil, fmt.Errorf("browser server announced an unexpected endpoint %q", h.Endpoint)
	}
	b.playwright, b.browserPID = h.Endpoint, h.BrowserPID
	if cfg.DebugPort {
		if b.debug, err = cdpHTTPEndpoint(h.CDP); err != nil {
			// The workers do not need it; only the live view goes without.
			b.logger.Warn("the browser has no CDP endpoint: no live view of its sessions", "err", err)
		}
	}
	b.logger.Info("browser server started", "endpoint", b.playwright, "browser_pid", b.browserPID, "cdp", b.debug, "executable", exe, "took", time.Since(started).Round(time.Millisecond))
	return b, nil
}

// browserLaunch prepares dir for a node process that launches Chromium
// through browser-launch.js: the scripts it needs, and Chromium behind
// chromiumSh. It returns browser-launch.js's configuration (no address or
// resolveFrom) and the environment the process needs: the real browser
// for chromiumSh, and keep-group.js preloaded so that the browser stays in
// the process's group.
func browserLaunch(dir string, cfg BrowserConfig, exe string, logger *slog.Logger) (map[string]any, []string, error) {
	if _, err := writeRuntimeFile(dir, "browser-launch.js", browserLaunchJS); err != nil {
		return nil, nil, err
	}
	preload, err := writeRuntimeFile(dir, "keep-group.js", keepGroupJS)
	if err != nil {
		return nil, nil, err
	}
	launcher, err := chromiumLauncher(dir)
	if err != nil {
		// A temp dir mounted noexec, say: the browser still starts, with
		// the proxy's feature list in place of Playwright's.
		logger.Warn("starting Chromium directly: its --disable-features list replaces Playwright's", "err", err)
		launcher = exe
	}
	conf := map[string]any{
		"executable": launcher,
		"headless":   cfg.Headless,
		"args":       append(append(chromiumFlags(cfg), debugPortFlags(cfg)...), cfg.ExtraArgs...),
		"debugPort":  cfg.DebugPort,
	}
	return conf, []string{chromiumEnv + "=" + exe, nodeRequire(preload)}, nil
}

// debugPortFlags open Chromium's CDP port on loopback beside Playwright's
// pipe, for the proxy's own live view.
func debugPortFlags(cfg BrowserConfig) []string {
	if !cfg.DebugPort {
		return nil
	}
	return []string{"--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1"}
}

// serverAddr splits a browser server's listen address; "" is a free port on
// 127.0.0.1.
func serverAddr(addr string) (host string, port int, err error) {
	if addr == "" {
		return "127.0.0.1", 0, nil
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("browser server address %q: %w", addr, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("browser server address %q: bad port", addr)
	}
	if h == "" {
		h = "0.0.0.0"
	}
	return h, n, nil
}

// PlaywrightVersion is the version of the playwright-core node resolves from
// dir (PlaywrightFrom): the client version the workers announce to a
// browser server, which refuses another minor version.
func PlaywrightVersion(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "node_modules", "playwright-core", "package.json"))
		if err == nil {
			var pkg struct {
				Version string `json:"version"`
			}
			if err := json.Unmarshal(data, &pkg); err != nil || pkg.Version == "" {
				return "", fmt.Errorf("playwright-core's package.json in %s: no version", d)
			}
			return pkg.Version, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("from %s: %w", dir, ErrNoPlaywright)
		}
	}
}
