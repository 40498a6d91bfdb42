package bridge

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/config"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// Config is mcp-bridge's configuration, read from MCP_PROXY_* variables.
type Config struct {
	URL          string        // MCP_PROXY_URL
	Token        string        // MCP_PROXY_TOKEN
	LogLevel     string        // MCP_PROXY_LOG_LEVEL
	Autostart    bool          // MCP_PROXY_AUTOSTART
	RetryTimeout time.Duration // MCP_PROXY_RETRY_TIMEOUT
	// Toolsets is this client's own choice of tool groups (MCP_PROXY_TOOLSETS,
	// or mcp-bridge --toolsets): a comma list, or all; empty leaves the
	// choice to the server (PROXY_TOOLSETS).
	Toolsets string
	// DatabasePath is where an autostarted server keeps its database
	// (PROXY_DATABASE_PATH, else proxy-server's default); its directory is
	// the data directory of the autostart lock, pid and log files.
	DatabasePath string
	// Profile is the login profile the bridge's default session starts
	// from (MCP_PROXY_PROFILE, or mcp-bridge --profile); "" for none.
	Profile string
}

// ConfigFromEnv reads the configuration through getenv, over the defaults.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	env := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		URL:   env("MCP_PROXY_URL", "http://127.0.0.1:34501"),
		Token: getenv("MCP_PROXY_TOKEN"),
		// Warnings only by default: MCP clients show every line of a
		// stdio server's stderr to the user (Claude Code as "Server
		// stderr: …"), so a normal start and run must print nothing.
		LogLevel:     env("MCP_PROXY_LOG_LEVEL", "warn"),
		DatabasePath: env("PROXY_DATABASE_PATH", config.DefaultDatabasePath(getenv)),
	}
	auto, err := strconv.ParseBool(env("MCP_PROXY_AUTOSTART", "1"))
	if err != nil {
		return Config{}, fmt.Errorf("MCP_PROXY_AUTOSTART %q is not 1/0 or true/false", getenv("MCP_PROXY_AUTOSTART"))
	}
	c.Autostart = auto
	c.RetryTimeout, err = time.ParseDuration(env("MCP_PROXY_RETRY_TIMEOUT", DefaultRetryTimeout.String()))
	if err != nil || c.RetryTimeout < 0 {
		return Config{}, fmt.Errorf("MCP_PROXY_RETRY_TIMEOUT %q is not a duration such as 30s", getenv("MCP_PROXY_RETRY_TIMEOUT"))
	}
	if err := c.SetToolsets("MCP_PROXY_TOOLSETS", getenv("MCP_PROXY_TOOLSETS")); err != nil {
		return Config{}, err
	}
	if err := c.SetProfile("MCP_PROXY_PROFILE", getenv("MCP_PROXY_PROFILE")); err != nil {
		return Config{}, err
	}
	return c, nil
}

// SetProfile sets the profile of the default session from source (the
// variable or flag it came from, for the error), refusing a name that
// could not be a profile's here rather than at the first browser call.
// An empty one is none.
func (c *Config) SetProfile(source, name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		c.Profile = ""
		return nil
	}
	if err := proxy.ValidProfileName(source, name); err != nil {
		return errors.New(proxy.AsError(err).Message)
	}
	c.Profile = name
	return nil
}

// SetToolsets sets the client's choice of tool groups from source (the
// variable or flag it came from, for the error), refusing an unknown group
// here rather than at the server's first answer.
func (c *Config) SetToolsets(source, list string) error {
	if _, _, err := toolset.Choice(list); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	c.Toolsets = strings.TrimSpace(list)
	return nil
}
