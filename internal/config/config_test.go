package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Host", c.Host, "127.0.0.1"},
		{"Port", c.Port, 34501},
		{"DatabasePath", c.DatabasePath, "./proxy.db"},
		{"MaxSessions", c.MaxSessions, 10},
		{"SessionIdleTimeout", c.SessionIdleTimeout, 30 * time.Minute},
		{"WarmPool", c.WarmPool, 1},
		{"PingInterval", c.PingInterval, 30 * time.Second},
		{"BrowserMode", c.BrowserMode, "shared"},
		{"Headless", c.Headless, true},
		{"ResponseMode", c.ResponseMode, "ref"},
		{"EnableScriptEvaluation", c.EnableScriptEvaluation, true},
		{"InlineResultMax", c.InlineResultMax, 0},
	}
	for _, tc := range checks {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
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
		{"browser mode", func(c *Config) { c.BrowserMode = "x" }, "PROXY_BROWSER_MODE"},
		{"response mode", func(c *Config) { c.ResponseMode = "x" }, "PROXY_RESPONSE_MODE"},
		{"log level", func(c *Config) { c.LogLevel = "loud" }, "PROXY_LOG_LEVEL"},
		{"log format", func(c *Config) { c.LogFormat = "xml" }, "PROXY_LOG_FORMAT"},
		{"inline max", func(c *Config) { c.InlineResultMax = -1 }, "PROXY_INLINE_RESULT_MAX"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mutate(&c)
			err := c.Validate()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("Validate() = %v, want ErrInvalid naming %s", err, tc.field)
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
