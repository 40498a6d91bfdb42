package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// TestUpstreamArguments: the params sent upstream are the arguments as
// they came over the wire (byte for byte without session_id), less
// session_id; numbers keep every digit.
func TestUpstreamArguments(t *testing.T) {
	tests := []struct {
		name    string
		wire    string // the arguments as received; "" for none
		session string
		params  string
		code    string // an error code, or "" for success
	}{
		{"none", "", "", `{}`, ""},
		{"null", `null`, "", `{}`, ""},
		{"big integers", `{"n": 9007199254740993, "m": -123456789012345678901234567890}`, "", `{"n": 9007199254740993, "m": -123456789012345678901234567890}`, ""},
		{"decimals as written", `{"x": 0.1000000000000000055511151231257827, "e": 1E+300}`, "", `{"x": 0.1000000000000000055511151231257827, "e": 1E+300}`, ""},
		{"session_id taken out", `{"session_id": "s1", "url": "http://a/"}`, "s1", `{"url":"http://a/"}`, ""},
		{"session_id null", `{"session_id": null, "n": 1}`, "", `{"n":1}`, ""},
		{"nested", `{"o": {"n": 18446744073709551617}}`, "", `{"o": {"n": 18446744073709551617}}`, ""},
		{"an array", `[1, 2]`, "", "", proxy.EINVALID},
		{"a string", `"x"`, "", "", proxy.EINVALID},
		{"session_id a number", `{"session_id": 7}`, "", "", proxy.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// As mcp-go decodes a tools/call from the wire.
			var req mcp.CallToolRequest
			body := `{"name":"browser_x"}`
			if tc.wire != "" {
				body = `{"name":"browser_x","arguments":` + tc.wire + `}`
			}
			if err := json.Unmarshal([]byte(body), &req.Params); err != nil {
				t.Fatal(err)
			}
			session, params, err := upstreamArguments(req)
			if tc.code != "" {
				if proxy.ErrorCode(err) != tc.code {
					t.Fatalf("upstreamArguments(%s) = %v, want %s", tc.wire, err, tc.code)
				}
				return
			}
			if err != nil || session != tc.session || string(params) != tc.params {
				t.Errorf("upstreamArguments(%s) = %q, %s, %v; want %q, %s", tc.wire, session, params, err, tc.session, tc.params)
			}
		})
	}

	// Built in-process rather than decoded: the map is used.
	req := mcp.CallToolRequest{}
	req.Params.Arguments = map[string]any{"session_id": "s2", "n": 5}
	if session, params, err := upstreamArguments(req); err != nil || session != "s2" || string(params) != `{"n":5}` {
		t.Errorf("in-process arguments = %q, %s, %v", session, params, err)
	}
}
