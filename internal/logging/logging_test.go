package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFormatAndLevel checks which handler New picks from PROXY_LOG_FORMAT
// and which lines PROXY_LOG_LEVEL lets through.
func TestFormatAndLevel(t *testing.T) {
	tests := []struct {
		name, level, format string
		wantJSON            bool
		wantDebug, wantInfo bool
	}{
		{"json", "info", "json", true, false, true},
		{"json upper case", "INFO", "JSON", true, false, true},
		{"text", "info", "text", false, false, true},
		{"empty format is text", "info", "", false, false, true},
		{"unknown format is text", "info", "yaml", false, false, true},
		{"debug level", "debug", "json", true, true, true},
		{"warn level", "warn", "json", true, false, false},
		{"unknown level is info", "loud", "json", true, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := New(&buf, tc.level, tc.format)
			log.Debug("debug line", "k", "v")
			log.Info("info line", "k", "v")
			out := buf.String()
			if got := strings.Contains(out, "debug line"); got != tc.wantDebug {
				t.Errorf("debug line written = %v, want %v:\n%s", got, tc.wantDebug, out)
			}
			if got := strings.Contains(out, "info line"); got != tc.wantInfo {
				t.Errorf("info line written = %v, want %v:\n%s", got, tc.wantInfo, out)
			}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if line == "" {
					continue
				}
				var rec map[string]any
				isJSON := json.Unmarshal([]byte(line), &rec) == nil
				if isJSON != tc.wantJSON {
					t.Errorf("line %q: JSON = %v, want %v", line, isJSON, tc.wantJSON)
				}
				if !tc.wantJSON && !strings.Contains(line, "k=v") {
					t.Errorf("text line %q lacks k=v", line)
				}
			}
		})
	}
}

// TestRequestIDFromContext checks that a line logged with a context that
// carries a request id gets it once, and a line without one gets none.
func TestRequestIDFromContext(t *testing.T) {
	ctx := WithRequestID(context.Background(), "req-1")
	tests := []struct {
		name string
		log  func(l *slog.Logger)
		want []map[string]any
	}{
		{"context method", func(l *slog.Logger) { l.InfoContext(ctx, "m", "session_id", "s1") },
			[]map[string]any{{"msg": "m", "session_id": "s1", "request_id": "req-1"}}},
		{"no context", func(l *slog.Logger) { l.Info("m", "session_id", "s1") },
			[]map[string]any{{"msg": "m", "session_id": "s1"}}},
		{"context without id", func(l *slog.Logger) { l.InfoContext(context.Background(), "m") },
			[]map[string]any{{"msg": "m"}}},
		{"explicit id is not doubled", func(l *slog.Logger) { l.InfoContext(ctx, "m", "request_id", "req-1") },
			[]map[string]any{{"msg": "m", "request_id": "req-1"}}},
		{"bound id is not doubled", func(l *slog.Logger) { l.With("request_id", "req-0").InfoContext(ctx, "m") },
			[]map[string]any{{"msg": "m", "request_id": "req-0"}}},
		{"derived logger", func(l *slog.Logger) { l.With("session_id", "s2").WarnContext(ctx, "m") },
			[]map[string]any{{"msg": "m", "session_id": "s2", "request_id": "req-1"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			tc.log(New(&buf, "debug", "json"))
			var got []map[string]any
			dec := json.NewDecoder(&buf)
			for dec.More() {
				var rec map[string]any
				if err := dec.Decode(&rec); err != nil {
					t.Fatalf("log output is not JSON lines: %v", err)
				}
				delete(rec, "time")
				delete(rec, "level")
				got = append(got, rec)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestIDRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"set", WithRequestID(context.Background(), "abc"), "abc"},
		{"empty leaves none", WithRequestID(context.Background(), ""), ""},
		{"none", context.Background(), ""},
		{"inner wins", WithRequestID(WithRequestID(context.Background(), "outer"), "inner"), "inner"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RequestID(tc.ctx); got != tc.want {
				t.Errorf("RequestID = %q, want %q", got, tc.want)
			}
		})
	}
}
