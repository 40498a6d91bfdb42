package main

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/tools/bench/internal/bench"
)

// TestTokensFlags: -tasks picks tasks in the order given; none means all.
func TestTokensFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"default: every task", nil, nil},
		{"two tasks, spaces trimmed", []string{"-tasks", "link, shop"}, []string{"link", "shop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			var c common
			c.register(fs, command{stdio: true})
			var cfg bench.TokensConfig
			cfg.Flags(fs)
			if err := fs.Parse(append([]string{"-root", "/root"}, tt.args...)); err != nil {
				t.Fatal(err)
			}
			if err := cfg.Check(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Tasks); diff != "" {
				t.Errorf("tasks (-want +got):\n%s", diff)
			}
			e, err := c.resolve()
			if err != nil {
				t.Fatal(err)
			}
			if e.bridge != "/root/bin/mcp-bridge" {
				t.Errorf("bridge = %q, want it under the project root", e.bridge)
			}
		})
	}
}

// TestTokensFlagErrors: bad task lists are refused before anything starts,
// in `bench tokens` and in `bench all`.
func TestTokensFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown task", []string{"tokens", "-tasks", "shop,nope"}, `unknown task "nope"`},
		{"empty name", []string{"tokens", "-tasks", "shop,,link"}, "empty task name"},
		{"twice", []string{"tokens", "-tasks", "shop,shop"}, "given twice"},
		{"in bench all", []string{"all", "-tokens-tasks", "nope"}, `unknown task "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := NewMain(&stdout, &stderr).Run(context.Background(), tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run(%q) = %v, want an error mentioning %q", tt.args, err, tt.want)
			}
		})
	}
}
