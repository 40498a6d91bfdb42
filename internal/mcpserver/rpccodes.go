package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// JSON-RPC error codes of resource reads and prompts, as the MCP spec names
// them: an unknown resource is -32002 (resource not found), bad arguments
// -32602 (invalid params).
//
// mcp-go v1.2.1 answers every error a resource or prompt handler returns
// with -32603 (internal error), whatever it wraps; only its own lookups
// (no such template, no such prompt) use the other codes. So the handlers
// wrap their errors in mcp-go's sentinels, mcp.ErrResourceNotFound and
// mcp.ErrInvalidParams, which puts the sentinel's text first in the
// message, and the transports' output goes through WithRPCCodes, which
// rewrites the code of exactly those answers. The codes have the same
// length, so no framing (Content-Length, SSE event) changes.

// resourceError gives a resource read's error the code of its kind.
func resourceError(err error) error {
	switch proxy.ErrorCode(err) {
	case proxy.ESESSIONMISSING, proxy.EREFMISSING, proxy.EPAGEMISSING, proxy.EELEMENTMISSING:
		return fmt.Errorf("%w: %w", mcp.ErrResourceNotFound, err)
	case proxy.EINVALID:
		return fmt.Errorf("%w: %w", mcp.ErrInvalidParams, err)
	}
	return err
}

// promptError gives a prompt's refusal of its arguments -32602.
func promptError(err error) error {
	if proxy.ErrorCode(err) == proxy.EINVALID {
		return fmt.Errorf("%w: %w", mcp.ErrInvalidParams, err)
	}
	return err
}

// codedRead maps the errors of a resource handler.
func codedRead(h server.ResourceTemplateHandlerFunc) server.ResourceTemplateHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		out, err := h(ctx, req)
		return out, resourceError(err)
	}
}

// codeFix is one rewrite of a JSON-RPC error answer.
type codeFix struct{ from, to []byte }

var codeFixes = []codeFix{
	newCodeFix(mcp.ErrResourceNotFound, mcp.INTERNAL_ERROR, mcp.RESOURCE_NOT_FOUND),
	newCodeFix(mcp.ErrInvalidParams, mcp.INTERNAL_ERROR, mcp.INVALID_PARAMS),
	// explainUnknownTools refuses in a request hook, which mcp-go answers
	// with -32600; an unknown tool is -32602 wherever it is refused.
	newCodeFix(server.ErrToolNotFound, mcp.INVALID_REQUEST, mcp.INVALID_PARAMS),
	// A resources/subscribe is refused in a request hook too (-32600).
	newCodeFix(mcp.ErrResourceNotFound, mcp.INVALID_REQUEST, mcp.RESOURCE_NOT_FOUND),
	newCodeFix(mcp.ErrInvalidParams, mcp.INVALID_REQUEST, mcp.INVALID_PARAMS),
}

func newCodeFix(sentinel error, from, to int) codeFix {
	// mcp.JSONRPCError marshals as {"jsonrpc","id","error":{"code","message"}}.
	at := func(code int) []byte {
		return fmt.Appendf(nil, `"error":{"code":%d,"message":"%s: `, code, sentinel.Error())
	}
	f := codeFix{from: at(from), to: at(to)}
	if len(f.from) != len(f.to) {
		panic(fmt.Sprintf("mcpserver: JSON-RPC code %d is not as long as %d", to, from))
	}
	return f
}

// fixCodes returns p with the codes rewritten; p itself is left alone (a
// Write must not modify it).
func fixCodes(p []byte) []byte {
	out := p
	for _, f := range codeFixes {
		if bytes.Contains(out, f.from) {
			out = bytes.ReplaceAll(out, f.from, f.to) // a new slice
		}
	}
	return out
}

// WithRPCCodes wraps what mcp-go's stdio server writes to. Every message
// is one Write there.
func WithRPCCodes(w io.Writer) io.Writer { return rpcCodeWriter{w} }

type rpcCodeWriter struct{ w io.Writer }

func (c rpcCodeWriter) Write(p []byte) (int, error) { return c.w.Write(fixCodes(p)) }

// rpcCodeResponse wraps the ResponseWriter of mcp-go's Streamable HTTP
// server, which writes a JSON answer or an SSE event in one Write.
type rpcCodeResponse struct{ http.ResponseWriter }

func (c rpcCodeResponse) Write(p []byte) (int, error) {
	return c.ResponseWriter.Write(fixCodes(p))
}

// Flush keeps SSE streaming, which mcp-go detects with http.Flusher.
func (c rpcCodeResponse) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (write deadlines).
func (c rpcCodeResponse) Unwrap() http.ResponseWriter { return c.ResponseWriter }
