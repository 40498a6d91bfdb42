//go:build unix

package upstream

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParseMemAvailable(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{"real", "MemTotal:       24684144 kB\nMemFree:        20653912 kB\nMemAvailable:   23110236 kB\nBuffers:          123 kB\n", 23110236 << 10, false},
		{"missing", "MemTotal:       24684144 kB\n", 0, true},
		{"not a number", "MemAvailable:   lots kB\n", 0, true},
		{"empty", "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMemAvailable([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseMemAvailable = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrNoMemInfo) {
				t.Errorf("error %v is not ErrNoMemInfo", err)
			}
		})
	}
}

func TestHostMemoryCheck(t *testing.T) {
	const gb = 1 << 30
	tests := []struct {
		name     string
		avail    int64
		err      error
		wantFail string // "" for a pass
	}{
		{"enough", 4 * gb, nil, ""},
		{"exactly the minimum", 1 * gb, nil, ""},
		{"low", gb / 2, nil, "512 MB available, below PROXY_MIN_FREE_MEMORY (1024 MB)"},
		{"unreadable", 0, ErrNoMemInfo, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := HostMemoryCheck(gb, func() (int64, error) { return tt.avail, tt.err })(context.Background())
			switch {
			case tt.wantFail == "" && err != nil:
				t.Errorf("check = %v, want a pass", err)
			case tt.wantFail != "" && (err == nil || !strings.Contains(err.Error(), tt.wantFail)):
				t.Errorf("check = %v, want an error saying %q", err, tt.wantFail)
			}
		})
	}
}
