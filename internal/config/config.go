// Package config owns proxy-server's configuration: defaults, the PROXY_*
// environment (envconfig) and validation. It never starts anything.
package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store/seal"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// Response modes.
const (
	ResponseModeRef  = "ref"
	ResponseModeFull = "full"
)

// Browser modes.
const (
	BrowserModeShared     = "shared"
	BrowserModePerSession = "per-session"
)

// Config is proxy-server's configuration. Field tags name the PROXY_*
// variables (envconfig) and say what an empty or zero value means (unset).
type Config struct {
	Host               string        `envconfig:"PROXY_HOST"`
	Port               int           `envconfig:"PROXY_PORT"`
	DatabasePath       string        `envconfig:"PROXY_DATABASE_PATH"`
	MaxSessions        int           `envconfig:"PROXY_MAX_SESSIONS"`
	SessionIdleTimeout time.Duration `envconfig:"PROXY_SESSION_IDLE_TIMEOUT"`
	// ControlIdleTimeout ends a person's control of a session whose live
	// view sent nothing for that long: a closed browser tab must not keep
	// an agent waiting.
	ControlIdleTimeout time.Duration `envconfig:"PROXY_CONTROL_IDLE_TIMEOUT"`
	WarmPool           int           `envconfig:"PROXY_WARM_POOL"`
	PingInterval       time.Duration `envconfig:"PROXY_PING_INTERVAL"`
	BrowserMode        string        `envconfig:"PROXY_BROWSER_MODE"`
	// SessionsPerWorker is how many sessions share one node process (a
	// session host) where sessions share a browser the proxy runs under a
	// Playwright browser server; elsewhere it is 1 (SessionsPerHost says
	// where and why).
	SessionsPerWorker  int    `envconfig:"PROXY_SESSIONS_PER_WORKER"`
	BrowserExecutable  string `envconfig:"PROXY_BROWSER_EXECUTABLE" unset:"the Chromium found on this machine"`
	BrowserCDPEndpoint string `envconfig:"PROXY_BROWSER_CDP_ENDPOINT" unset:"launch a local browser"`
	// BrowserEndpoints are remote Playwright browser servers (browser
	// nodes) that sessions are placed on instead of a browser of ours:
	// nodes.ParseEndpoints says how they are written.
	BrowserEndpoints  string        `envconfig:"PROXY_BROWSER_ENDPOINTS" unset:"the local browser"`
	NodeProbeInterval time.Duration `envconfig:"PROXY_NODE_PROBE_INTERVAL"`
	// NodeProbeFailures is how many probes in a row must fail (time out,
	// be reset) before an up node is down; a refused connection takes it
	// down at once.
	NodeProbeFailures int `envconfig:"PROXY_NODE_PROBE_FAILURES"`
	// NodeQueueTimeout is how long a new session waits for room when
	// every browser node is full, before MAX_SESSIONS_REACHED.
	NodeQueueTimeout time.Duration `envconfig:"PROXY_NODE_QUEUE_TIMEOUT"`
	Headless         bool          `envconfig:"PROXY_HEADLESS"`
	// BrowserOptimizeMemory trades some page speed for less memory per
	// session (V8 --optimize-for-size in Chromium's renderers).
	BrowserOptimizeMemory bool   `envconfig:"PROXY_BROWSER_OPTIMIZE_MEMORY"`
	PlaywrightMCPCommand  string `envconfig:"PROXY_PLAYWRIGHT_MCP_COMMAND" unset:"the pinned @playwright/mcp in the project's node_modules"`
	PlaywrightArgs        string `envconfig:"PROXY_PLAYWRIGHT_ARGS"`
	ResponseMode          string `envconfig:"PROXY_RESPONSE_MODE"`
	AuthToken             string `envconfig:"PROXY_AUTH_TOKEN" unset:"no token required"`
	// ClientTokensFile lists the tokens of MCP clients (ParseClientTokens
	// says how): they open only the MCP surfaces, never the operator's
	// views, and need AuthToken set.
	ClientTokensFile       string   `envconfig:"PROXY_CLIENT_TOKENS_FILE" unset:"no client tokens"`
	AllowedOrigins         []string `envconfig:"PROXY_ALLOWED_ORIGINS" unset:"loopback origins only"`
	AllowedDomains         []string `envconfig:"PROXY_ALLOWED_DOMAINS" unset:"every domain not blocked"`
	BlockedDomains         []string `envconfig:"PROXY_BLOCKED_DOMAINS"`
	EnableScriptEvaluation bool     `envconfig:"PROXY_ENABLE_SCRIPT_EVALUATION"`
	EnableFileUpload       bool     `envconfig:"PROXY_ENABLE_FILE_UPLOAD"`
	EnableFileURLs         bool     `envconfig:"PROXY_ENABLE_FILE_URLS"` // file:// is refused unless this is on
	MaxScreenshotBytes     int64    `envconfig:"PROXY_MAX_SCREENSHOT_BYTES"`
	SecretsFile            string   `envconfig:"PROXY_SECRETS_FILE"`
	Toolsets               []string `envconfig:"PROXY_TOOLSETS" unset:"the default tool groups"`
	// InlineResultMax bounds a tool's own result (what browser_evaluate
	// returned, a selector tool's value) that rides in the MCP answer;
	// a larger one comes as its size, read with get_content.
	InlineResultMax int `envconfig:"PROXY_INLINE_RESULT_MAX" unset:"the result's size only, never the result"`
	// ChangesMax bounds the summary of what a call changed on the page that
	// its MCP answer carries; 0 keeps the counts only.
	ChangesMax   int           `envconfig:"PROXY_CHANGES_MAX" unset:"counts only, no lines"`
	MaxBodyBytes int64         `envconfig:"PROXY_MAX_BODY_BYTES"`
	CallTimeout  time.Duration `envconfig:"PROXY_CALL_TIMEOUT"`
	// MaxConcurrentCalls bounds tool calls running in the browser at once;
	// 0 means twice the number of CPUs.
	MaxConcurrentCalls int    `envconfig:"PROXY_MAX_CONCURRENT_CALLS" unset:"twice the number of CPUs"`
	LogLevel           string `envconfig:"PROXY_LOG_LEVEL"`
	LogFormat          string `envconfig:"PROXY_LOG_FORMAT"`
	// MaxSessionMemory is the resident memory, in bytes, of a session's
	// worker and renderers past which it is restarted with its state; 0
	// means no limit. It is checked when idle workers are pinged.
	MaxSessionMemory int64 `envconfig:"PROXY_MAX_SESSION_MEMORY" unset:"no limit"`
	// MinFreeMemory is the host's available memory, in bytes, below which
	// /health reports degraded; 0 turns the check off.
	MinFreeMemory int64 `envconfig:"PROXY_MIN_FREE_MEMORY"`
	// MaxDownloadBytes is the largest file a page downloads that is stored
	// with its call; a bigger one is named in the answer, not kept.
	MaxDownloadBytes int64 `envconfig:"PROXY_MAX_DOWNLOAD_BYTES" unset:"no limit"`
	// LogFile receives proxy-server's log instead of stderr; SIGHUP reopens
	// it at its path (logrotate). Its directory must exist.
	LogFile string `envconfig:"PROXY_LOG_FILE" unset:"stderr"`
	// StateKey seals saved browser states and login profiles in the
	// database (seal.ParseKey says how it is written). Secret: Variables
	// masks it.
	StateKey string `envconfig:"PROXY_STATE_KEY" unset:"a 0600 key file beside the database, created on first start" secret:"true"`
	// Profiles is what MCP clients may do with login profiles:
	// proxy.ProfilesOff, ProfilesUse or ProfilesSave.
	Profiles string `envconfig:"PROXY_PROFILES"`
	// ProfileMaxBytes bounds a login profile's storage state.
	ProfileMaxBytes int64 `envconfig:"PROXY_PROFILE_MAX_BYTES"`

	// getenv reads the environment the workers inherit, where upstream's
	// own PLAYWRIGHT_MCP_* variables may point them at a browser; nil
	// reads nothing.
	getenv func(string) string
}

// StateDirName is the directory of the default database (and of the files
// kept beside it) under the user's state directory.
const StateDirName = "playwright-mcp-proxy"

// DefaultConfig returns the configuration with every documented default.
// getenv supplies XDG_STATE_HOME and HOME, which place the default database.
func DefaultConfig(getenv func(string) string) Config {
	return Config{
		Host:                   "127.0.0.1",
		Port:                   34501,
		DatabasePath:           DefaultDatabasePath(getenv),
		MaxSessions:            10,
		SessionIdleTimeout:     30 * time.Minute,
		ControlIdleTimeout:     10 * time.Minute,
		WarmPool:               1,
		PingInterval:           30 * time.Second,
		BrowserMode:            BrowserModeShared,
		SessionsPerWorker:      DefaultSessionsPerWorker,
		NodeProbeInterval:      10 * time.Second,
		NodeProbeFailures:      3,
		NodeQueueTimeout:       30 * time.Second,
		Headless:               true,
		BrowserOptimizeMemory:  true,
		ResponseMode:           ResponseModeRef,
		EnableScriptEvaluation: true,
		EnableFileUpload:       true,
		MaxScreenshotBytes:     10 << 20,
		MaxBodyBytes:           2 << 20,
		InlineResultMax:        1000,
		ChangesMax:             1000,
		CallTimeout:            120 * time.Second,
		LogLevel:               "info",
		LogFormat:              "text",
		MinFreeMemory:          512 << 20,
		MaxDownloadBytes:       50 << 20,
		Profiles:               proxy.ProfilesSave,
		ProfileMaxBytes:        5 << 20,
		getenv:                 getenv,
	}
}

// DefaultDatabasePath is proxy.db in the user's state directory:
// $XDG_STATE_HOME/playwright-mcp-proxy, else
// ~/.local/state/playwright-mcp-proxy. Every way of starting proxy-server
// (by hand, or autostarted by mcp-bridge from whatever directory the MCP
// client runs in) finds the same record there, and nothing lands in a
// user's project. It is "" when neither variable gives a place.
func DefaultDatabasePath(getenv func(string) string) string {
	// The XDG spec says a relative XDG_STATE_HOME is invalid and ignored.
	if dir := getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, StateDirName, "proxy.db")
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state", StateDirName, "proxy.db")
	}
	return ""
}

// FromEnv reads PROXY_* variables over DefaultConfig. Tags carry the full
// variable names on purpose: envconfig falls back to a tag's bare name, and a
// stray HOST or PORT in the environment must not reconfigure the server.
func FromEnv() (Config, error) {
	c := DefaultConfig(os.Getenv)
	if err := envconfig.Process("", &c); err != nil {
		return Config{}, fmt.Errorf("reading PROXY_* environment: %w", err)
	}
	// An empty PROXY_DATABASE_PATH (as .env.example lists it) means the
	// default, as it does for mcp-bridge, which passes it on to the server
	// it starts.
	if strings.TrimSpace(c.DatabasePath) == "" {
		c.DatabasePath = DefaultDatabasePath(os.Getenv)
	}
	// Likewise an empty PROXY_PROFILES is the default mode.
	if strings.TrimSpace(c.Profiles) == "" {
		c.Profiles = proxy.ProfilesSave
	}
	return c, nil
}

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("invalid configuration")

// Validate reports the first setting that cannot work, naming its variable.
func (c Config) Validate() error {
	bad := func(name, format string, args ...any) error {
		return fmt.Errorf("%w: PROXY_%s: %s", ErrInvalid, name, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Host == "":
		return bad("HOST", "must not be empty")
	case net.ParseIP(c.Host) == nil && c.Host != "localhost":
		return bad("HOST", "%q is not an IP address or localhost", c.Host)
	case c.Port < 0 || c.Port > 65535:
		return bad("PORT", "%d is out of range 0-65535", c.Port)
	case c.DatabasePath == "":
		return bad("DATABASE_PATH", "must not be empty (with neither XDG_STATE_HOME nor HOME set there is no default)")
	case c.MaxSessions < 1:
		return bad("MAX_SESSIONS", "must be at least 1, got %d", c.MaxSessions)
	case c.SessionIdleTimeout < 0:
		return bad("SESSION_IDLE_TIMEOUT", "must not be negative")
	case c.ControlIdleTimeout <= 0:
		return bad("CONTROL_IDLE_TIMEOUT", "must be positive, got %s", c.ControlIdleTimeout)
	case c.WarmPool < 0:
		return bad("WARM_POOL", "must not be negative")
	case c.PingInterval < 0:
		return bad("PING_INTERVAL", "must not be negative")
	case c.BrowserMode != BrowserModeShared && c.BrowserMode != BrowserModePerSession:
		return bad("BROWSER_MODE", "%q is not shared or per-session", c.BrowserMode)
	case c.BrowserEndpoints != "" && c.BrowserMode != BrowserModeShared:
		return bad("BROWSER_ENDPOINTS", "browser nodes serve shared-mode sessions; PROXY_BROWSER_MODE is %q", c.BrowserMode)
	case c.BrowserEndpoints != "" && c.BrowserCDPEndpoint != "":
		return bad("BROWSER_ENDPOINTS", "set it or PROXY_BROWSER_CDP_ENDPOINT, not both")
	case c.SessionsPerWorker < 1 || c.SessionsPerWorker > MaxSessionsPerWorker:
		return bad("SESSIONS_PER_WORKER", "must be 1-%d, got %d", MaxSessionsPerWorker, c.SessionsPerWorker)
	case c.NodeProbeInterval <= 0:
		return bad("NODE_PROBE_INTERVAL", "must be positive")
	case c.NodeQueueTimeout <= 0:
		return bad("NODE_QUEUE_TIMEOUT", "must be positive")
	case c.NodeProbeFailures < 1:
		return bad("NODE_PROBE_FAILURES", "must be at least 1")
	case c.ResponseMode != ResponseModeRef && c.ResponseMode != ResponseModeFull:
		return bad("RESPONSE_MODE", "%q is not ref or full", c.ResponseMode)
	case c.InlineResultMax < 0:
		return bad("INLINE_RESULT_MAX", "must not be negative")
	case c.ChangesMax < 0:
		return bad("CHANGES_MAX", "must not be negative (0 = counts only)")
	case c.MaxBodyBytes < 1024:
		return bad("MAX_BODY_BYTES", "must be at least 1024")
	case c.CallTimeout <= 0:
		return bad("CALL_TIMEOUT", "must be positive")
	case c.MaxScreenshotBytes < 0:
		return bad("MAX_SCREENSHOT_BYTES", "must not be negative (0 = no limit)")
	case c.MaxConcurrentCalls < 0:
		return bad("MAX_CONCURRENT_CALLS", "must not be negative")
	case !oneOf(strings.ToLower(c.LogLevel), "debug", "info", "warn", "error"):
		return bad("LOG_LEVEL", "%q is not debug, info, warn or error", c.LogLevel)
	case !oneOf(c.LogFormat, "text", "json"):
		return bad("LOG_FORMAT", "%q is not text or json", c.LogFormat)
	case c.MaxSessionMemory < 0:
		return bad("MAX_SESSION_MEMORY", "must not be negative (0 = no limit)")
	case c.MaxSessionMemory > 0 && c.PingInterval <= 0:
		return bad("MAX_SESSION_MEMORY", "needs PROXY_PING_INTERVAL: sessions' memory is checked when idle workers are pinged")
	case c.MinFreeMemory < 0:
		return bad("MIN_FREE_MEMORY", "must not be negative (0 = no check)")
	case c.MaxDownloadBytes < 0:
		return bad("MAX_DOWNLOAD_BYTES", "must not be negative (0 = no limit)")
	case c.ClientTokensFile != "" && c.AuthToken == "":
		return bad("AUTH_TOKEN", "must be set when PROXY_CLIENT_TOKENS_FILE is: without the operator's token the operator's views would be open to anyone")
	case c.LogFile != "" && !isDir(filepath.Dir(c.LogFile)):
		return bad("LOG_FILE", "the directory of %q does not exist (it is not created)", c.LogFile)
	case !oneOf(c.Profiles, proxy.ProfilesOff, proxy.ProfilesUse, proxy.ProfilesSave):
		return bad("PROFILES", "%q is not off, use or save", c.Profiles)
	case c.ProfileMaxBytes < 1:
		return bad("PROFILE_MAX_BYTES", "must be positive")
	}
	if _, err := c.StateKeyBytes(); err != nil {
		return err
	}
	if _, err := c.ClientTokens(); err != nil {
		return fmt.Errorf("%w: PROXY_CLIENT_TOKENS_FILE: %w", ErrInvalid, err)
	}
	if _, err := c.Nodes(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	groups, err := toolset.Select(c.Toolsets)
	if err != nil {
		return fmt.Errorf("%w: PROXY_TOOLSETS: %w", ErrInvalid, err)
	}
	if shared := c.SharedBrowser(); shared != "" && groups.Has(toolset.GroupUnsafe) {
		return bad("TOOLSETS", "tool group %s offers browser_run_code_unsafe, which runs code outside the page with Playwright's objects, "+
			"but sessions share one browser process (%s): code run there would reach every session's pages and cookies. "+
			"Set PROXY_BROWSER_MODE=per-session (a browser process per session, no shared endpoint), or take %s out of PROXY_TOOLSETS",
			toolset.GroupUnsafe, shared, toolset.GroupUnsafe)
	}
	if _, why := c.SessionsPerHost(); why != "" && c.SessionsPerWorker > 1 && c.sessionsPerWorkerChosen() {
		return bad("SESSIONS_PER_WORKER", "%d sessions per node process need the shared browser this server runs under a Playwright browser server, but %s; set it to 1 or unset it",
			c.SessionsPerWorker, why)
	}
	if slices.ContainsFunc(c.PlaywrightExtraArgs(), isFlag(worker.IdleTimeoutFlag)) {
		return bad("PLAYWRIGHT_ARGS", "%s would let @playwright/mcp close a session's browser, with its pages and cookies, while the proxy keeps the session; "+
			"PROXY_SESSION_IDLE_TIMEOUT decides when an idle session gives its browser up", worker.IdleTimeoutFlag)
	}
	return nil
}

// StateKeyBytes is PROXY_STATE_KEY decoded; nil when it is unset (the
// store then keeps its key in a file beside the database). The error never
// holds the value.
func (c Config) StateKeyBytes() ([]byte, error) {
	if c.StateKey == "" {
		return nil, nil
	}
	key, err := seal.ParseKey(c.StateKey)
	if err != nil {
		return nil, fmt.Errorf("%w: PROXY_STATE_KEY: %w", ErrInvalid, err)
	}
	return key, nil
}

// DefaultSessionsPerWorker and MaxSessionsPerWorker bound
// PROXY_SESSIONS_PER_WORKER.
const (
	DefaultSessionsPerWorker = 16
	MaxSessionsPerWorker     = 64
)

// SessionsPerHost is how many sessions share one node process with this
// configuration: SessionsPerWorker where sessions connect to a Playwright
// browser server (the shared browser this server runs, or browser nodes),
// else 1 and why.
func (c Config) SessionsPerHost() (k int, whyOne string) {
	switch {
	case c.BrowserMode == BrowserModePerSession:
		// browser_run_code_unsafe may be offered there, and the node
		// process it runs in is no boundary between sessions.
		return 1, "PROXY_BROWSER_MODE is per-session"
	case c.BrowserCDPEndpoint != "":
		return 1, "PROXY_BROWSER_CDP_ENDPOINT is set"
	case c.PlaywrightMCPCommand != "":
		return 1, "PROXY_PLAYWRIGHT_MCP_COMMAND is set (a session host runs the pinned @playwright/mcp)"
	}
	for _, f := range workerBrowserFlags {
		if slices.ContainsFunc(c.PlaywrightExtraArgs(), isFlag(f)) {
			return 1, "PROXY_PLAYWRIGHT_ARGS has " + f
		}
	}
	for _, v := range workerBrowserEnv {
		if c.getenv != nil && c.getenv(v) != "" {
			return 1, v + " is set in the environment the workers inherit"
		}
	}
	return max(c.SessionsPerWorker, 1), ""
}

// sessionsPerWorkerChosen: the operator set SessionsPerWorker, rather than
// leaving the default, which quietly means 1 where it cannot apply.
func (c Config) sessionsPerWorkerChosen() bool {
	return c.SessionsPerWorker != DefaultSessionsPerWorker || c.getenv != nil && c.getenv("PROXY_SESSIONS_PER_WORKER") != ""
}

// workerBrowserFlags point a worker at a browser other than the one it
// would launch for itself (--config may, through its browser settings).
var workerBrowserFlags = []string{"--cdp-endpoint", "--endpoint", "--extension", "--config"}

// workerBrowserEnv are upstream's environment variables that do the same.
var workerBrowserEnv = []string{"PLAYWRIGHT_MCP_CDP_ENDPOINT", "PLAYWRIGHT_MCP_CONFIG", "PLAYWRIGHT_MCP_EXTENSION"}

// SharedBrowser says why sessions may share one browser process ("" when
// each worker launches a browser process of its own): the shared mode's
// browser, a CDP endpoint, browser nodes, or a worker argument or
// environment variable that points workers at a browser.
func (c Config) SharedBrowser() string {
	switch {
	case c.BrowserMode != BrowserModePerSession:
		return "PROXY_BROWSER_MODE is " + c.BrowserMode
	case c.BrowserCDPEndpoint != "":
		return "PROXY_BROWSER_CDP_ENDPOINT is set"
	case c.BrowserEndpoints != "":
		return "PROXY_BROWSER_ENDPOINTS is set"
	}
	for _, f := range workerBrowserFlags {
		if slices.ContainsFunc(c.PlaywrightExtraArgs(), isFlag(f)) {
			return "PROXY_PLAYWRIGHT_ARGS has " + f
		}
	}
	for _, v := range workerBrowserEnv {
		if c.getenv != nil && c.getenv(v) != "" {
			return v + " is set in the environment the workers inherit"
		}
	}
	return ""
}

// isFlag matches flag as a command-line argument, alone or with =value.
func isFlag(flag string) func(string) bool {
	return func(a string) bool { return a == flag || strings.HasPrefix(a, flag+"=") }
}

// Variable is one PROXY_* variable with its value in a Config.
type Variable struct {
	Name, Value string
	// Unset is what an empty (or zero) value means, when it means more
	// than nothing (the `unset` tag).
	Unset string
}

// Variables lists every PROXY_* variable Config reads, with c's values, in
// field order: usage text built from it shows the defaults and cannot miss
// a variable added later. A secret (the `secret` tag) that is set shows as
// "(set)", never its value.
func (c Config) Variables() []Variable {
	v := reflect.ValueOf(c)
	var out []Variable
	for i := range v.NumField() {
		name := v.Type().Field(i).Tag.Get("envconfig")
		if name == "" {
			continue
		}
		val := fmt.Sprint(v.Field(i).Interface())
		if list, ok := v.Field(i).Interface().([]string); ok {
			val = strings.Join(list, ",")
		}
		if v.Type().Field(i).Tag.Get("secret") == "true" && val != "" {
			val = "(set)"
		}
		out = append(out, Variable{Name: name, Value: val, Unset: v.Type().Field(i).Tag.Get("unset")})
	}
	return out
}

// Addr is the listen address.
func (c Config) Addr() string { return net.JoinHostPort(c.Host, fmt.Sprint(c.Port)) }

// ConcurrentCalls is MaxConcurrentCalls with 0 resolved for this machine.
func (c Config) ConcurrentCalls() int {
	if c.MaxConcurrentCalls > 0 {
		return c.MaxConcurrentCalls
	}
	return 2 * runtime.NumCPU()
}

// PlaywrightExtraArgs splits PROXY_PLAYWRIGHT_ARGS on white space.
func (c Config) PlaywrightExtraArgs() []string { return strings.Fields(c.PlaywrightArgs) }

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func oneOf(s string, set ...string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// Nodes parses PROXY_BROWSER_ENDPOINTS; none means the local browser.
func (c Config) Nodes() ([]nodes.Endpoint, error) {
	return nodes.ParseEndpoints(c.BrowserEndpoints)
}
