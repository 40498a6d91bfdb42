package session

import (
	"strings"
	"testing"
)

type reservedHosts []string

func (r reservedHosts) IsReserved(u string) bool {
	for _, h := range r {
		if strings.Contains(u, h) {
			return true
		}
	}
	return false
}

func TestEndpointMask(t *testing.T) {
	m := endpointMask{reserved: reservedHosts{"node-1:3000"}.IsReserved}
	tests := []struct{ name, in, want string }{
		{"a connect error's call log",
			"browserType.connect: Target closed\nCall log:\n  - <ws connecting> ws://127.0.0.1:41131/3f502cc0fd7b971109e6f232758a400a\n",
			"browserType.connect: Target closed\nCall log:\n  - <ws connecting> " + endpointMark + "\n"},
		{"quoted", `"ws://127.0.0.1:1/0123456789abcdef0123456789abcdef"`, `"` + endpointMark + `"`},
		{"a node's endpoint", "wss://node-1:3000/pw?token=x failed", endpointMark + " failed"},
		{"a page's own socket stays", "connecting to wss://chat.example.com/socket", "connecting to wss://chat.example.com/socket"},
		{"a page URL with a hash path stays", "https://example.com/0123456789abcdef0123456789abcdef", "https://example.com/0123456789abcdef0123456789abcdef"},
		{"no URL", "nothing here", "nothing here"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := m.Replace(tc.in); got != tc.want {
				t.Errorf("Replace(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestPageLine(t *testing.T) {
	tests := []struct{ name, raw, want string }{
		{"an answer's page", `{"content":[{"type":"text","text":"### Page\n- Page URL: http://127.0.0.1:34501/sessions\n- Page Title: x"}]}`, "http://127.0.0.1:34501/sessions"},
		{"the last line", `{"content":[{"type":"text","text":"- Page URL: http://localhost:1/a"}]}`, "http://localhost:1/a"},
		{"an escape in the path", `{"content":[{"type":"text","text":"- Page URL: http://[::1]:9/\u00e9\n"}]}`, "http://[::1]:9/"},
		{"no page", `{"content":[{"type":"text","text":"### Result\nok"}]}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pageLine([]byte(tc.raw)); got != tc.want {
				t.Errorf("pageLine = %q, want %q", got, tc.want)
			}
		})
	}
	m := endpointMask{}
	if !m.SkipDocument([]byte(`{"text":"https://example.com/"}`)) || m.SkipDocument([]byte(`{"text":"wss://x:1/y"}`)) {
		t.Error("SkipDocument must skip exactly the documents without a WebSocket URL")
	}
}
