package proxy_test

import (
	"context"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func TestCanSee(t *testing.T) {
	a, b := proxy.NewClientID("bridge", "secret-a"), proxy.NewClientID("bridge", "secret-b")
	ctx := context.Background()
	tests := []struct {
		name    string
		ctx     context.Context
		owner   proxy.ClientID
		visible bool
	}{
		{"the operator sees a client's session", ctx, a, true},
		{"the operator sees its own", ctx, "", true},
		{"a client sees its own", proxy.WithClient(ctx, a), a, true},
		{"a client does not see another's", proxy.WithClient(ctx, b), a, false},
		{"a client does not see the operator's", proxy.WithClient(ctx, a), "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := proxy.CanSee(tc.ctx, tc.owner); got != tc.visible {
				t.Errorf("CanSee = %v, want %v", got, tc.visible)
			}
		})
	}
}

func TestNewClientID(t *testing.T) {
	id := proxy.NewClientID("bridge", "s")
	switch {
	case id != proxy.NewClientID("bridge", "s"):
		t.Error("the same identity gives another ClientID")
	case id == proxy.NewClientID("mcp", "s"):
		t.Error("a bridge and an MCP session with the same secret are one client")
	case len(id) != 64 || string(id) == "s":
		t.Errorf("ClientID %q is not a hex SHA-256 digest", id)
	}
}
