package session

import (
	"context"
	"strings"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func TestForCallerHidesTheNode(t *testing.T) {
	client := proxy.ClientID(strings.Repeat("c", 40))
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"the operator", context.Background(), "127.0.0.1:3000"},
		{"an MCP client", proxy.WithClient(context.Background(), client), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := forCaller(tc.ctx, &proxy.Session{ID: "s", Owner: client, Node: "127.0.0.1:3000"})
			if s.Node != tc.want {
				t.Errorf("node = %q, want %q", s.Node, tc.want)
			}
		})
	}
}
