package proxy_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func TestDecodeBrowserOptions(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  proxy.BrowserOptions
		field string // the field a refusal names; "" when it is accepted
	}{
		{"empty", ``, proxy.BrowserOptions{}, ""},
		{"null", `null`, proxy.BrowserOptions{}, ""},
		{"all", `{"viewport":{"width":1,"height":2},"user_agent":"u","device":"d","locale":"l","timezone":"t","color_scheme":"c","browser":"b"}`,
			proxy.BrowserOptions{Viewport: &proxy.Viewport{Width: 1, Height: 2}, UserAgent: "u", Device: "d", Locale: "l", Timezone: "t", ColorScheme: "c", Browser: "b"}, ""},
		{"width as a string", `{"viewport":{"width":"1","height":2}}`, proxy.BrowserOptions{}, "viewport.width"},
		{"viewport as a string", `{"viewport":"1x2"}`, proxy.BrowserOptions{}, "viewport"},
		{"device as a number", `{"device":7}`, proxy.BrowserOptions{}, "device"},
		{"unknown field", `{"zoom":2}`, proxy.BrowserOptions{}, "zoom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := proxy.DecodeBrowserOptions([]byte(tt.in))
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("options (-want +got):\n%s", diff)
				}
				return
			}
			var e *proxy.Error
			if !errors.As(err, &e) || e.Code != proxy.EINVALID || e.Details["field"] != tt.field {
				t.Errorf("DecodeBrowserOptions(%s) = %v, want %s naming %s", tt.in, err, proxy.EINVALID, tt.field)
			}
		})
	}
}
