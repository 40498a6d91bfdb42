// Package logging builds the slog logger both binaries use from
// PROXY_LOG_LEVEL / PROXY_LOG_FORMAT. It always writes to the writer it is
// given (stderr in practice): stdout belongs to the MCP stdio channel.
//
// It also carries the HTTP request id through a call: the API puts it in the
// request's context (WithRequestID), and every line logged with that context
// (slog's *Context methods, LogAttrs, Log) gets a request_id attribute, so
// the access line and the session manager's lines of one request share it.
package logging

import (
	"context"
	"io"
	"log/slog"
	"strings"
)

// RequestIDKey is the attribute name of the request id.
const RequestIDKey = "request_id"

// New returns a logger at level ("debug", "info", "warn", "error") in format
// ("text" or "json", case-insensitive). Unknown values fall back to info and
// text. Lines logged with a context that carries a request id
// (WithRequestID) get a request_id attribute.
func New(w io.Writer, level, format string) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToLower(strings.TrimSpace(level)))); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	var h slog.Handler
	if strings.EqualFold(strings.TrimSpace(format), "json") {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(NewContextHandler(h))
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id id ("" leaves ctx as is).
func WithRequestID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id ctx carries, or "".
func RequestID(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// NewContextHandler wraps h so that a record logged with a context carrying
// a request id gets it as request_id, unless the record (or the logger's
// own attributes) already has one.
func NewContextHandler(h slog.Handler) slog.Handler {
	if ch, ok := h.(*contextHandler); ok {
		return ch
	}
	return &contextHandler{next: h}
}

type contextHandler struct {
	next slog.Handler
	// bound is set once the logger's own attributes (With) hold a request_id.
	bound bool
}

func (h *contextHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" && !h.bound && !hasRequestID(r) {
		r = r.Clone()
		r.AddAttrs(slog.String(RequestIDKey, id))
	}
	return h.next.Handle(ctx, r)
}

func (h *contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	bound := h.bound
	for _, a := range attrs {
		bound = bound || a.Key == RequestIDKey
	}
	return &contextHandler{next: h.next.WithAttrs(attrs), bound: bound}
}

func (h *contextHandler) WithGroup(name string) slog.Handler {
	// After a group, the request id lands inside it, like every attribute
	// of the record.
	return &contextHandler{next: h.next.WithGroup(name), bound: h.bound}
}

func hasRequestID(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == RequestIDKey
		return !found
	})
	return found
}
