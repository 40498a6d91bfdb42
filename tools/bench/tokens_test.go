package main

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
)

// TestResolveBridge: the bridge the stdio scenarios drive is the one built
// under -root (the task list's parsing is tested with TokensConfig).
func TestResolveBridge(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var c common
	c.register(fs, command{stdio: true})
	if err := fs.Parse([]string{"-root", "/root"}); err != nil {
		t.Fatal(err)
	}
	e, err := c.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if e.bridge != "/root/bin/mcp-bridge" {
		t.Errorf("bridge = %q, want it under the project root", e.bridge)
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
