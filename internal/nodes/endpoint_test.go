package nodes

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseEndpoints(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Endpoint
	}{
		{"empty", "", nil},
		{"one with defaults", "ws://10.0.0.5:3000/pw", []Endpoint{
			{ID: "10.0.0.5:3000", URL: "ws://10.0.0.5:3000/pw", Header: http.Header{}, Capacity: DefaultCapacity},
		}},
		{"capacity, name and headers", "wss://browser.example/pw?token=abc#max=20&name=hosted&header=X-Api-Key:k1&header=x-team:%20blue", []Endpoint{
			{ID: "hosted", URL: "wss://browser.example/pw?token=abc", Header: http.Header{"X-Api-Key": {"k1"}, "X-Team": {"blue"}}, Capacity: 20},
		}},
		{"separators and duplicate ids", "ws://a:1/x, ws://a:1/y\nws://b:2", []Endpoint{
			{ID: "a:1", URL: "ws://a:1/x", Header: http.Header{}, Capacity: DefaultCapacity},
			{ID: "a:1-2", URL: "ws://a:1/y", Header: http.Header{}, Capacity: DefaultCapacity},
			{ID: "b:2", URL: "ws://b:2", Header: http.Header{}, Capacity: DefaultCapacity},
		}},
		{"browser engines", "ws://f:1/pw#browser=firefox&max=3 ws://w:2#browser=webkit ws://c:3#browser=chromium", []Endpoint{
			{ID: "f:1", URL: "ws://f:1/pw", Header: http.Header{}, Capacity: 3, Browser: "firefox"},
			{ID: "w:2", URL: "ws://w:2", Header: http.Header{}, Capacity: DefaultCapacity, Browser: "webkit"},
			{ID: "c:3", URL: "ws://c:3", Header: http.Header{}, Capacity: DefaultCapacity, Browser: "chromium"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEndpoints(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseEndpoints(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseEndpointsRefuses(t *testing.T) {
	tests := []struct {
		in       string
		mention  string
		mustHide string
	}{
		{"http://a:1", "scheme must be ws or wss", ""},
		{"ws:///path", "no host", ""},
		{"ws://a:1#max=0", "max=", ""},
		{"ws://a:1#max=lots", "max=", ""},
		{"ws://a:1#name=a/b", "name=", ""},
		{"ws://a:1#header=novalue", "header=", ""},
		{"ws://a:1#colour=red", `unknown option "colour"`, ""},
		{"ws://a:1#browser=safari", `browser="safari" must be chromium, firefox or webkit`, ""},
		{"ws://user:s3cret@a:1#max=0", "user:xxxxx@a:1", "s3cret"},
		{"ws://a:1/?token=s3cret#max=0", "token=xxxxx", "s3cret"},
		{"ws://user:s3cret@a:1/%zz", "ws://a:1/…", "s3cret"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseEndpoints(tt.in)
			if !errors.Is(err, ErrEndpoint) {
				t.Fatalf("ParseEndpoints(%q) = %v, want ErrEndpoint", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
			if tt.mustHide != "" && strings.Contains(err.Error(), tt.mustHide) {
				t.Errorf("error %q shows the credential %q", err, tt.mustHide)
			}
		})
	}
}

func TestMasked(t *testing.T) {
	tests := map[string]string{
		"ws://a:1/pw":                         "ws://a:1/pw",
		"wss://u:pw@host/x?token=t&region=eu": "wss://u:xxxxx@host/x?region=xxxxx&token=xxxxx",
		"wss://u@host/x":                      "wss://u@host/x",
	}
	for in, want := range tests {
		if got := (Endpoint{URL: in}).Masked(); got != want {
			t.Errorf("Masked(%q) = %q, want %q", in, got, want)
		}
	}
}
