package bench

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestStartHTTP drives a real Streamable HTTP MCP server (mcp-go's, on
// loopback) with side F's client: the handshake, a timed call with the
// result's size as received, isError as a *ToolResultError, the bearer
// token, and the session ended by Stop.
func TestStartHTTP(t *testing.T) {
	ms := server.NewMCPServer("echo", "1", server.WithToolCapabilities(false))
	ms.AddTool(mcp.NewTool("echo", mcp.WithString("text", mcp.Required())), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text := req.GetString("text", "")
		if text == "fail" {
			return mcp.NewToolResultError("asked to fail"), nil
		}
		return mcp.NewToolResultText(text), nil
	})
	var auth []string
	var deletes int
	h := server.NewStreamableHTTPServer(ms)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		if r.Method == http.MethodDelete {
			deletes++
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)

	s, err := StartHTTP(ctx, log, "F", hs.URL+"/mcp", "s3cret")
	if err != nil {
		t.Fatalf("StartHTTP: %v", err)
	}
	if !s.HasTool("echo") || s.PID != 0 {
		t.Errorf("tools %v, pid %d; want echo and no child", s.Tools, s.PID)
	}
	c, err := s.Call(ctx, "echo", map[string]any{"text": "hello"})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if c.Text() != "hello" || c.Took <= 0 || c.Bytes < len(`"hello"`) {
		t.Errorf("call = text %q, took %v, %d bytes", c.Text(), c.Took, c.Bytes)
	}
	_, err = s.Call(ctx, "echo", map[string]any{"text": "fail"})
	var te *ToolResultError
	if !errors.As(err, &te) || te.Side != "F" || !strings.Contains(te.Text, "asked to fail") {
		t.Errorf("isError call: err %v, want a *ToolResultError from F", err)
	}
	rep := s.Stop(ctx)
	if !rep.Clean() || rep.Procs != 0 {
		t.Errorf("stop: %s", rep.Summary())
	}
	if deletes != 1 {
		t.Errorf("%d DELETEs, want the session ended once", deletes)
	}
	for i, a := range auth {
		if diff := cmp.Diff("Bearer s3cret", a); diff != "" {
			t.Errorf("request %d's Authorization (-want +got):\n%s", i, diff)
		}
	}
}

func TestStartHTTPRefusesAnotherHost(t *testing.T) {
	_, err := StartHTTP(context.Background(), slog.New(slog.DiscardHandler), "F", "http://example.com/mcp", "")
	if err == nil {
		t.Fatal("a client of example.com was started")
	}
}
