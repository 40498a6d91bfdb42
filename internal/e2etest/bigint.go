package e2etest

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	_ "modernc.org/sqlite" // reads the record beside a running server
)

// CheckBigIntegers calls tools over an initialised MCP client with
// integers JSON numbers cannot hold exactly in a float64 (above 2^53, and
// above int64), and asserts that the record at dbPath keeps their digits
// in the request's params: what the proxy stores is what it sent upstream.
func CheckBigIntegers(t *testing.T, c *client.Client, dbPath string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tests := []struct {
		tool, args string
		want       []string // in the stored params, as sent
	}{
		{"browser_tabs", `{"action":"select","index":9007199254740993}`, []string{`"index":9007199254740993`}},
		{"browser_resize", `{"width":9007199254740993,"height":123456789012345678901234567890}`,
			[]string{`"width":9007199254740993`, `"height":123456789012345678901234567890`}},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			req := mcp.CallToolRequest{}
			req.Params.Name = tc.tool
			// Raw, so that the client sends the digits as written.
			req.Params.RawArguments = json.RawMessage(tc.args)
			res, err := c.CallTool(ctx, req)
			if err != nil {
				t.Fatalf("%s: %v", tc.tool, err)
			}
			var text strings.Builder
			for _, part := range res.Content {
				if tc, ok := part.(mcp.TextContent); ok {
					text.WriteString(tc.Text)
				}
			}
			out, err := mcpserver.ParseAnswer(text.String())
			if err != nil {
				t.Fatalf("%s answered %q, want a call result with a ref_id", tc.tool, text.String())
			}
			var params string
			if err := db.QueryRowContext(ctx, "SELECT params FROM requests WHERE ref_id = ?", out.RefID).Scan(&params); err != nil {
				t.Fatalf("reading the record of %s: %v", out.RefID, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(params, w) {
					t.Errorf("%s recorded params %s, want %s as sent", tc.tool, params, w)
				}
			}
		})
	}
}
