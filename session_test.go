package proxy_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// TestSessionMetadataJSON: the typed metadata is written byte for byte as
// the map it replaced, and read back from what the record holds.
func TestSessionMetadataJSON(t *testing.T) {
	md := proxy.SessionMetadata{LastURL: "https://example.com/?a=1&b=<2>", LastTitle: "Tom & Jerry"}
	got, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(map[string]string{"last_url": md.LastURL, "last_title": md.LastTitle})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("SessionMetadata JSON (-want +got):\n%s", diff)
	}

	tests := []struct {
		name string
		raw  string
		want proxy.SessionMetadata
	}{
		{"written", string(got), md},
		{"new session", `{}`, proxy.SessionMetadata{}},
		{"none", ``, proxy.SessionMetadata{}},
		{"foreign", `{"k":[1,2]}`, proxy.SessionMetadata{}},
		{"not an object", `[1]`, proxy.SessionMetadata{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &proxy.Session{Metadata: json.RawMessage(tc.raw)}
			if diff := cmp.Diff(tc.want, s.PageMetadata()); diff != "" {
				t.Errorf("PageMetadata(%s) (-want +got):\n%s", tc.raw, diff)
			}
		})
	}
}
