package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// env is a getenv over a map.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig(env(map[string]string{"HOME": "/home/u"}))
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Host", c.Host, "127.0.0.1"},
		{"Port", c.Port, 34501},
		{"DatabasePath", c.DatabasePath, "/home/u/.local/state/playwright-mcp-proxy/proxy.db"},
		{"MaxSessions", c.MaxSessions, 10},
		{"SessionIdleTimeout", c.SessionIdleTimeout, 30 * time.Minute},
		{"ControlIdleTimeout", c.ControlIdleTimeout, 10 * time.Minute},
		{"WarmPool", c.WarmPool, 1},
		{"PingInterval", c.PingInterval, 30 * time.Second},
		{"BrowserMode", c.BrowserMode, "shared"},
		{"SessionsPerWorker", c.SessionsPerWorker, 16},
		{"Headless", c.Headless, true},
		{"ResponseMode", c.ResponseMode, "ref"},
		{"EnableScriptEvaluation", c.EnableScriptEvaluation, true},
		{"InlineResultMax", c.InlineResultMax, 1000},
		{"StateKey", c.StateKey, ""},
		{"Profiles", c.Profiles, "save"},
		{"ProfileMaxBytes", c.ProfileMaxBytes, int64(5242880)},
	}
	for _, tc := range checks {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestDefaultDatabasePath(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"XDG_STATE_HOME first", map[string]string{"XDG_STATE_HOME": "/xdg/state", "HOME": "/home/u"}, "/xdg/state/playwright-mcp-proxy/proxy.db"},
		{"else HOME", map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/playwright-mcp-proxy/proxy.db"},
		{"relative XDG_STATE_HOME is ignored", map[string]string{"XDG_STATE_HOME": "state", "HOME": "/home/u"}, "/home/u/.local/state/playwright-mcp-proxy/proxy.db"},
		{"never the working directory", map[string]string{"HOME": "."}, ""},
		{"no place at all", nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DefaultDatabasePath(env(tc.env)); got != tc.want {
				t.Errorf("DefaultDatabasePath = %q, want %q", got, tc.want)
			}
		})
	}
	err := DefaultConfig(env(nil)).Validate()
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "PROXY_DATABASE_PATH") || !strings.Contains(err.Error(), "HOME") {
		t.Errorf("Validate without a default database = %v, want ErrInvalid naming PROXY_DATABASE_PATH and HOME", err)
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("PROXY_PORT", "4000")
	t.Setenv("PROXY_RESPONSE_MODE", "full")
	t.Setenv("PROXY_BLOCKED_DOMAINS", "a.com,b.com")
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 4000 || c.ResponseMode != "full" || len(c.BlockedDomains) != 2 || c.Host != "127.0.0.1" {
		t.Errorf("FromEnv = %+v", c)
	}
	t.Setenv("PROXY_PORT", "notanumber")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "PORT") {
		t.Errorf("bad PROXY_PORT: err = %v, want one naming PORT", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		field  string
	}{
		{"empty host", func(c *Config) { c.Host = "" }, "PROXY_HOST"},
		{"bad host", func(c *Config) { c.Host = "example.com" }, "PROXY_HOST"},
		{"port range", func(c *Config) { c.Port = 70000 }, "PROXY_PORT"},
		{"no db", func(c *Config) { c.DatabasePath = "" }, "PROXY_DATABASE_PATH"},
		{"max sessions", func(c *Config) { c.MaxSessions = 0 }, "PROXY_MAX_SESSIONS"},
		{"control idle timeout", func(c *Config) { c.ControlIdleTimeout = 0 }, "PROXY_CONTROL_IDLE_TIMEOUT"},
		{"browser mode", func(c *Config) { c.BrowserMode = "x" }, "PROXY_BROWSER_MODE"},
		{"sessions per worker 0", func(c *Config) { c.SessionsPerWorker = 0 }, "PROXY_SESSIONS_PER_WORKER"},
		{"sessions per worker 65", func(c *Config) { c.SessionsPerWorker = 65 }, "PROXY_SESSIONS_PER_WORKER"},
		{"response mode", func(c *Config) { c.ResponseMode = "x" }, "PROXY_RESPONSE_MODE"},
		{"log level", func(c *Config) { c.LogLevel = "loud" }, "PROXY_LOG_LEVEL"},
		{"log format", func(c *Config) { c.LogFormat = "xml" }, "PROXY_LOG_FORMAT"},
		{"inline max", func(c *Config) { c.InlineResultMax = -1 }, "PROXY_INLINE_RESULT_MAX"},
		{"endpoint scheme", func(c *Config) { c.BrowserEndpoints = "http://10.0.0.5:3000" }, "PROXY_BROWSER_ENDPOINTS"},
		{"endpoints per session", func(c *Config) {
			c.BrowserEndpoints, c.BrowserMode = "ws://10.0.0.5:3000", BrowserModePerSession
		}, "PROXY_BROWSER_ENDPOINTS"},
		{"endpoints and cdp", func(c *Config) {
			c.BrowserEndpoints, c.BrowserCDPEndpoint = "ws://10.0.0.5:3000", "http://127.0.0.1:9222"
		}, "PROXY_BROWSER_ENDPOINTS"},
		{"probe interval", func(c *Config) { c.NodeProbeInterval = 0 }, "PROXY_NODE_PROBE_INTERVAL"},
		{"queue timeout", func(c *Config) { c.NodeQueueTimeout = -time.Second }, "PROXY_NODE_QUEUE_TIMEOUT"},
		{"node probe failures", func(c *Config) { c.NodeProbeFailures = 0 }, "PROXY_NODE_PROBE_FAILURES"},
		{"max session memory", func(c *Config) { c.MaxSessionMemory = -1 }, "PROXY_MAX_SESSION_MEMORY"},
		{"max session memory without pings", func(c *Config) { c.MaxSessionMemory, c.PingInterval = 1<<30, 0 }, "PROXY_MAX_SESSION_MEMORY"},
		{"min free memory", func(c *Config) { c.MinFreeMemory = -1 }, "PROXY_MIN_FREE_MEMORY"},
		{"max download bytes", func(c *Config) { c.MaxDownloadBytes = -1 }, "PROXY_MAX_DOWNLOAD_BYTES"},
		{"log file directory missing", func(c *Config) {
			c.LogFile = filepath.Join(os.TempDir(), "pwproxy-no-such-dir", "proxy.log")
		}, "PROXY_LOG_FILE"},
		{"log file in a file", func(c *Config) { c.LogFile = filepath.Join(os.Args[0], "proxy.log") }, "PROXY_LOG_FILE"},
		{"profiles mode", func(c *Config) { c.Profiles = "write" }, "PROXY_PROFILES"},
		{"profiles mode empty", func(c *Config) { c.Profiles = "" }, "PROXY_PROFILES"},
		{"profile max bytes", func(c *Config) { c.ProfileMaxBytes = 0 }, "PROXY_PROFILE_MAX_BYTES"},
		{"state key short", func(c *Config) { c.StateKey = strings.Repeat("ab", 16) }, "PROXY_STATE_KEY"},
		{"state key passphrase", func(c *Config) { c.StateKey = "hunter2" }, "PROXY_STATE_KEY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig(env(map[string]string{"HOME": "/home/u"}))
			tc.mutate(&c)
			err := c.Validate()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("Validate() = %v, want ErrInvalid naming %s", err, tc.field)
			}
		})
	}
}

// Tool group unsafe needs a browser process per session: with any browser
// sessions may share, the server does not start, and says why and what to
// set instead.
func TestValidateUnsafeNeedsABrowserPerSession(t *testing.T) {
	perSession := func(c *Config) { c.BrowserMode = BrowserModePerSession }
	tests := []struct {
		name    string
		env     map[string]string
		mutate  func(*Config)
		wantErr []string // nil: valid
	}{
		{name: "shared mode", mutate: func(c *Config) {},
			wantErr: []string{"PROXY_TOOLSETS", "share one browser process", "PROXY_BROWSER_MODE is shared", "every session's pages and cookies", "PROXY_BROWSER_MODE=per-session"}},
		{name: "shared mode, all and unsafe", mutate: func(c *Config) { c.Toolsets = []string{"all", "Unsafe"} },
			wantErr: []string{"PROXY_TOOLSETS", "PROXY_BROWSER_MODE=per-session"}},
		{name: "CDP endpoint", mutate: func(c *Config) { perSession(c); c.BrowserCDPEndpoint = "http://127.0.0.1:9222" },
			wantErr: []string{"PROXY_TOOLSETS", "PROXY_BROWSER_CDP_ENDPOINT is set"}},
		{name: "browser nodes", mutate: func(c *Config) { c.BrowserEndpoints = "ws://10.0.0.5:3000" },
			wantErr: []string{"PROXY_TOOLSETS", "PROXY_BROWSER_MODE is shared"}},
		{name: "worker told to attach", mutate: func(c *Config) { perSession(c); c.PlaywrightArgs = "--timeout-action 100 --cdp-endpoint=http://x" },
			wantErr: []string{"PROXY_TOOLSETS", "PROXY_PLAYWRIGHT_ARGS has --cdp-endpoint"}},
		{name: "worker given a config file", mutate: func(c *Config) { perSession(c); c.PlaywrightArgs = "--config /etc/pw.json" },
			wantErr: []string{"PROXY_TOOLSETS", "PROXY_PLAYWRIGHT_ARGS has --config"}},
		{name: "upstream's own variable", env: map[string]string{"PLAYWRIGHT_MCP_CDP_ENDPOINT": "http://x"}, mutate: perSession,
			wantErr: []string{"PROXY_TOOLSETS", "PLAYWRIGHT_MCP_CDP_ENDPOINT is set in the environment"}},
		{name: "per-session", mutate: perSession},
		{name: "per-session with worker flags of its own", mutate: func(c *Config) { perSession(c); c.PlaywrightArgs = "--timeout-action 100 --caps=pdf" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := map[string]string{"HOME": "/home/u"}
			for k, v := range tt.env {
				e[k] = v
			}
			c := DefaultConfig(env(e))
			c.Toolsets = []string{"upstream", "session", "content", "unsafe"}
			tt.mutate(&c)
			err := c.Validate()
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				if why := c.SharedBrowser(); why != "" {
					t.Errorf("SharedBrowser() = %q, want none", why)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate() = %v, want ErrInvalid", err)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Validate() = %q, want it to say %q", err, want)
				}
			}
			// Without unsafe the same configuration is fine.
			c.Toolsets = nil
			if err := c.Validate(); err != nil {
				t.Errorf("without unsafe: Validate() = %v", err)
			}
		})
	}
}

// Sessions share node processes only on a Playwright browser server (the
// browser the server runs, or browser nodes): elsewhere the default quietly
// means 1, and a value set above 1 is refused, naming the variable and why.
func TestSessionsPerHost(t *testing.T) {
	perSession := func(c *Config) { c.BrowserMode = BrowserModePerSession }
	tests := []struct {
		name    string
		env     map[string]string
		mutate  func(*Config)
		wantK   int
		wantErr string // "": valid
	}{
		{name: "default", mutate: func(*Config) {}, wantK: 16},
		{name: "set", env: map[string]string{"PROXY_SESSIONS_PER_WORKER": "4"}, mutate: func(c *Config) { c.SessionsPerWorker = 4 }, wantK: 4},
		{name: "one", mutate: func(c *Config) { c.SessionsPerWorker = 1 }, wantK: 1},
		{name: "worker flags keep their meaning", mutate: func(c *Config) { c.PlaywrightArgs = "--timeout-settle=0 --caps=pdf" }, wantK: 16},
		{name: "per-session, default", mutate: perSession, wantK: 1},
		{name: "per-session, one", mutate: func(c *Config) { perSession(c); c.SessionsPerWorker = 1 }, wantK: 1},
		{name: "per-session, set", mutate: func(c *Config) { perSession(c); c.SessionsPerWorker = 4 }, wantK: 1,
			wantErr: "PROXY_BROWSER_MODE is per-session"},
		{name: "per-session, set to the default", env: map[string]string{"PROXY_SESSIONS_PER_WORKER": "16"}, mutate: perSession, wantK: 1,
			wantErr: "PROXY_BROWSER_MODE is per-session"},
		{name: "CDP endpoint, default", mutate: func(c *Config) { c.BrowserCDPEndpoint = "http://127.0.0.1:9222" }, wantK: 1},
		{name: "CDP endpoint, set", mutate: func(c *Config) { c.BrowserCDPEndpoint = "http://127.0.0.1:9222"; c.SessionsPerWorker = 2 }, wantK: 1,
			wantErr: "PROXY_BROWSER_CDP_ENDPOINT is set"},
		{name: "browser nodes, default", mutate: func(c *Config) { c.BrowserEndpoints = "ws://10.0.0.5:3000" }, wantK: 16},
		{name: "browser nodes, set", mutate: func(c *Config) { c.BrowserEndpoints = "ws://10.0.0.5:3000"; c.SessionsPerWorker = 4 }, wantK: 4},
		{name: "own command, default", mutate: func(c *Config) { c.PlaywrightMCPCommand = "npx @playwright/mcp" }, wantK: 1},
		{name: "own command, set", mutate: func(c *Config) { c.PlaywrightMCPCommand = "npx @playwright/mcp"; c.SessionsPerWorker = 4 }, wantK: 1,
			wantErr: "PROXY_PLAYWRIGHT_MCP_COMMAND is set"},
		{name: "worker pointed at a browser, set", mutate: func(c *Config) { c.PlaywrightArgs = "--endpoint ws://x"; c.SessionsPerWorker = 4 }, wantK: 1,
			wantErr: "PROXY_PLAYWRIGHT_ARGS has --endpoint"},
		{name: "upstream's own variable, default", env: map[string]string{"PLAYWRIGHT_MCP_CONFIG": "/etc/pw.json"}, mutate: func(*Config) {}, wantK: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := map[string]string{"HOME": "/home/u"}
			for k, v := range tt.env {
				e[k] = v
			}
			c := DefaultConfig(env(e))
			tt.mutate(&c)
			k, why := c.SessionsPerHost()
			if k != tt.wantK {
				t.Errorf("SessionsPerHost() = %d, %q; want %d", k, why, tt.wantK)
			}
			if k == 1 && c.SessionsPerWorker > 1 && why == "" {
				t.Errorf("SessionsPerHost() = 1 without saying why")
			}
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "PROXY_SESSIONS_PER_WORKER") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want ErrInvalid naming PROXY_SESSIONS_PER_WORKER and saying %q", err, tt.wantErr)
			}
		})
	}
}

// Upstream's idle timeout would close a session's browser under a session
// the proxy keeps: PROXY_PLAYWRIGHT_ARGS may not set it.
func TestValidateRefusesUpstreamIdleTimeout(t *testing.T) {
	for _, args := range []string{"--idle-timeout=60000", "--headless --idle-timeout 5000", "--idle-timeout=0"} {
		t.Run(args, func(t *testing.T) {
			c := DefaultConfig(env(map[string]string{"HOME": "/home/u"}))
			c.PlaywrightArgs = args
			err := c.Validate()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "PROXY_PLAYWRIGHT_ARGS") || !strings.Contains(err.Error(), "PROXY_SESSION_IDLE_TIMEOUT") {
				t.Errorf("Validate() = %v, want ErrInvalid naming PROXY_PLAYWRIGHT_ARGS and PROXY_SESSION_IDLE_TIMEOUT", err)
			}
		})
	}
	c := DefaultConfig(env(map[string]string{"HOME": "/home/u"}))
	c.PlaywrightArgs = "--idle-timeouts-are-not-this-flag"
	if err := c.Validate(); err != nil {
		t.Errorf("a flag that only starts like it: Validate() = %v", err)
	}
}

func TestFromEnvEmptyDatabasePathIsTheDefault(t *testing.T) {
	t.Setenv("PROXY_DATABASE_PATH", "")
	t.Setenv("XDG_STATE_HOME", "/xdg")
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if want := "/xdg/playwright-mcp-proxy/proxy.db"; c.DatabasePath != want {
		t.Errorf("DatabasePath = %q, want %q", c.DatabasePath, want)
	}
}

func TestFromEnvProfiles(t *testing.T) {
	tests := []struct{ env, want string }{{"", "save"}, {"use", "use"}, {"off", "off"}}
	for _, tc := range tests {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv("PROXY_PROFILES", tc.env)
			t.Setenv("PROXY_PROFILE_MAX_BYTES", "1024")
			c, err := FromEnv()
			if err != nil {
				t.Fatal(err)
			}
			if c.Profiles != tc.want || c.ProfileMaxBytes != 1024 {
				t.Errorf("Profiles = %q, ProfileMaxBytes = %d; want %q, 1024", c.Profiles, c.ProfileMaxBytes, tc.want)
			}
		})
	}
}

func TestFromEnvIgnoresBareNames(t *testing.T) {
	t.Setenv("PORT", "9999")
	t.Setenv("HOST", "0.0.0.0")
	c, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 34501 || c.Host != "127.0.0.1" {
		t.Errorf("bare PORT/HOST leaked into config: %s", c.Addr())
	}
}

// TestVariables: every field envconfig reads is listed once, with its value.
func TestVariables(t *testing.T) {
	c := DefaultConfig(env(map[string]string{"HOME": "/home/u"}))
	c.BlockedDomains = []string{"a.com", "b.com"}
	got, unset := map[string]string{}, map[string]string{}
	for _, v := range c.Variables() {
		if _, dup := got[v.Name]; dup {
			t.Errorf("%s listed twice", v.Name)
		}
		got[v.Name], unset[v.Name] = v.Value, v.Unset
	}
	// What empty means is said where it is not nothing.
	if unset["PROXY_TOOLSETS"] == "" || unset["PROXY_AUTH_TOKEN"] == "" || unset["PROXY_PORT"] != "" {
		t.Errorf("unset meanings: %v", unset)
	}
	n := 0
	for f := range reflect.TypeOf(c).Fields() {
		if f.IsExported() {
			n++
		}
	}
	if len(got) != n {
		t.Errorf("%d variables listed, Config has %d exported fields", len(got), n)
	}
	for name, want := range map[string]string{
		"PROXY_PORT":            "34501",
		"PROXY_DATABASE_PATH":   "/home/u/.local/state/playwright-mcp-proxy/proxy.db",
		"PROXY_BLOCKED_DOMAINS": "a.com,b.com",
		"PROXY_AUTH_TOKEN":      "",
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %q (listed %v), want %q", name, v, ok, want)
		}
	}
}

// TestStateKey: PROXY_STATE_KEY in each spelling it takes, and a refusal
// that says how to make one without repeating the value.
func TestStateKey(t *testing.T) {
	hexKey := strings.Repeat("0123456789abcdef", 4)
	want := []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	tests := []struct {
		name, value string
		ok          bool
	}{
		{"unset: the key file", "", true},
		{"hex", hexKey, true},
		{"base64", "ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8=", true},
		{"base64url unpadded", "ASNFZ4mrze8BI0VniavN7wEjRWeJq83vASNFZ4mrze8", true},
		{"too short", hexKey[:62], false},
		{"a word", "SECRETWORD-not-a-key", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig(env(map[string]string{"HOME": "/home/u"}))
			c.StateKey = tc.value
			key, err := c.StateKeyBytes()
			verr := c.Validate()
			if !tc.ok {
				for _, e := range []error{err, verr} {
					if !errors.Is(e, ErrInvalid) || !strings.Contains(e.Error(), "PROXY_STATE_KEY") || !strings.Contains(e.Error(), "openssl rand -hex 32") {
						t.Errorf("error %v, want ErrInvalid naming PROXY_STATE_KEY with a hint", e)
					}
					if e != nil && strings.Contains(e.Error(), tc.value) {
						t.Errorf("error %q repeats the value", e)
					}
				}
				return
			}
			if err != nil || verr != nil {
				t.Fatalf("StateKeyBytes: %v; Validate: %v", err, verr)
			}
			switch {
			case tc.value == "" && key != nil:
				t.Errorf("key %x, want none", key)
			case tc.value != "" && (len(key) != 32 || string(key[:8]) != string(want)):
				t.Errorf("key %x, want 0123456789abcdef × 4", key)
			}
		})
	}
}

// TestVariablesMaskSecrets: a set PROXY_STATE_KEY is listed as set, never
// as its value.
func TestVariablesMaskSecrets(t *testing.T) {
	c := DefaultConfig(env(map[string]string{"HOME": "/home/u"}))
	c.StateKey = strings.Repeat("5e", 32)
	for _, v := range c.Variables() {
		if strings.Contains(v.Value, c.StateKey) {
			t.Errorf("%s lists the key", v.Name)
		}
		if v.Name == "PROXY_STATE_KEY" && v.Value != "(set)" {
			t.Errorf("PROXY_STATE_KEY = %q, want (set)", v.Value)
		}
	}
}
