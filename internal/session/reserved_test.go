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
	m := endpointMask{reserved: reservedHosts{"node-1:3000"}}
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
