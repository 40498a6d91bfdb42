// Package logging builds the slog logger both binaries use from
// PROXY_LOG_LEVEL / PROXY_LOG_FORMAT. It always writes to the writer it is
// given (stderr in practice): stdout belongs to the MCP stdio channel.
package logging

import (
	"io"
	"log/slog"
	"strings"
)

// New returns a logger at level ("debug", "info", "warn", "error") in format
// ("text" or "json"). Unknown values fall back to info and text.
func New(w io.Writer, level, format string) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToLower(level))); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
