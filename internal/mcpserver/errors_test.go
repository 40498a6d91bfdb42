package mcpserver

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
)

// TestFailuresAnswerCompact: every failure a model can meet answers in the
// form of a successful call's answer, whichever layer refused it, with the
// ref_id only when the call was recorded; never a JSON body echoing the
// arguments.
func TestFailuresAnswerCompact(t *testing.T) {
	const (
		sess = "8a5fd1fc-1f0f-4b8c-9d3f-0cbdf1b0a7a1"
		ref  = "qx3h7kfa2mzr4d6e"
	)
	no := false
	recorded := func(e *proxy.Error) *proxy.Error {
		e.Details = map[string]any{"session_id": sess, "ref_id": ref}
		return e
	}
	tests := []struct {
		name string
		b    *fakeBackend
		tool string
		args map[string]any
		want string
		code string
	}{
		{name: "policy refusal of a conversation's first call",
			b:    &fakeBackend{validateErr: &proxy.Error{Code: proxy.EDOMAINBLOCKED, Message: `navigation to "evil.example" is blocked by policy`, Details: map[string]any{"url": "http://evil.example/"}, Suggestion: "Navigate only to the allowed domains."}},
			tool: "browser_navigate", args: map[string]any{"url": "http://evil.example/"},
			want: "error: DOMAIN_BLOCKED: navigation to \"evil.example\" is blocked by policy\nsuggestion: Navigate only to the allowed domains.",
			code: proxy.EDOMAINBLOCKED},
		{name: "schema check names the field",
			b:    &fakeBackend{callErr: &proxy.Error{Code: proxy.EINVALID, Message: `params.url: want a string, got 3`, Details: map[string]any{"field": "params.url"}, Suggestion: "Check the parameters against the tool's input schema."}},
			tool: "browser_navigate", args: map[string]any{"url": "x", "session_id": sess},
			want: "error: INVALID_PARAMETERS: params.url: want a string, got 3\nsuggestion: Check the parameters against the tool's input schema.",
			code: proxy.EINVALID},
		{name: "a listed tool the server no longer offers",
			b:    &fakeBackend{callErr: proxy.Errorf(proxy.ETOOLMISSING, `tool "browser_navigate" is switched off by policy`)},
			tool: "browser_navigate", args: map[string]any{"url": "x", "session_id": sess},
			want: "error: TOOL_NOT_FOUND: tool \"browser_navigate\" is switched off by policy\nsuggestion: List the available tools and use one of their names.",
			code: proxy.ETOOLMISSING},
		{name: "unknown session",
			b:    &fakeBackend{callErr: proxy.Errorf(proxy.ESESSIONMISSING, "no session %s", sess)},
			tool: "browser_navigate", args: map[string]any{"url": "x", "session_id": sess},
			want: "error: SESSION_NOT_FOUND: no session " + sess + "\nsuggestion: List sessions with list_sessions or create one with create_new_session.",
			code: proxy.ESESSIONMISSING},
		{name: "unknown ref of get_content",
			b:    &fakeBackend{},
			tool: catalog.ToolGetContent, args: map[string]any{"ref_id": "nope"},
			want: "error: REF_NOT_FOUND: no ref nope\nsuggestion: Use a ref_id returned by a previous tool call.",
			code: proxy.EREFMISSING},
		{name: "worker died during a recorded call",
			b: &fakeBackend{callErr: recorded(&proxy.Error{Code: proxy.EUNAVAILABLE, Retryable: true, Message: "the browser worker died during the call; it was not replayed",
				Suggestion: "Retry: the next call starts a fresh worker for this session (element refs will be stale)."})},
			tool: "browser_navigate", args: map[string]any{"url": "x", "session_id": sess},
			want: "error: UPSTREAM_UNAVAILABLE (retryable): the browser worker died during the call; it was not replayed\nsuggestion: Retry: the next call starts a fresh worker for this session (element refs will be stale).\nref_id: " + ref,
			code: proxy.EUNAVAILABLE},
		{name: "a failure the record could not take has no ref to read",
			b: &fakeBackend{callErr: &proxy.Error{Code: proxy.ETIMEOUT, Retryable: true, Message: "the tool call did not finish within 30s",
				Details: map[string]any{"session_id": sess, "ref_id": ref, "not_recorded": true}}},
			tool: "browser_navigate", args: map[string]any{"url": "x", "session_id": sess},
			want: "error: TIMEOUT (retryable): the tool call did not finish within 30s",
			code: proxy.ETIMEOUT},
		{name: "upstream's own error answer",
			b: &fakeBackend{callRes: &proxy.CallResult{RefID: ref, SessionID: sess, Status: proxy.StatusError, Error: "Ref e9 not found in the current page snapshot",
				ErrorCode: proxy.EELEMENTMISSING, Retryable: &[]bool{true}[0], Suggestion: "Take a new snapshot."}},
			tool: "browser_navigate", args: map[string]any{"url": "x", "session_id": sess},
			want: "error: ELEMENT_NOT_FOUND (retryable): Ref e9 not found in the current page snapshot\nsuggestion: Take a new snapshot.\nref_id: " + ref,
			code: proxy.EELEMENTMISSING},
		{name: "upstream's error without a code",
			b:    &fakeBackend{callRes: &proxy.CallResult{RefID: ref, SessionID: sess, Status: proxy.StatusError, Error: "Execution context was destroyed", Retryable: &no}},
			tool: "browser_navigate", args: map[string]any{"url": "x", "session_id": sess},
			want: "error: Execution context was destroyed\nref_id: " + ref},
		{name: "the record is full",
			b:    &fakeBackend{callErr: proxy.Errorf(proxy.ESTORAGEFULL, "the record cannot be written: disk full")},
			tool: "browser_navigate", args: map[string]any{"url": "x", "session_id": sess},
			want: "error: STORAGE_FULL: the record cannot be written: disk full\nsuggestion: The proxy's database cannot be written: free space in its data directory (the directory of PROXY_DATABASE_PATH), then send the call again; no restart is needed.",
			code: proxy.ESTORAGEFULL},
		{name: "a message of several lines stays one line",
			b:    &fakeBackend{callErr: &proxy.Error{Code: proxy.EUNAVAILABLE, Retryable: true, Message: "upstream error:\n  pipe closed", Suggestion: "Retry;\nthen check GET /health."}},
			tool: "browser_navigate", args: map[string]any{"url": "x", "session_id": sess},
			want: "error: UPSTREAM_UNAVAILABLE (retryable): upstream error: pipe closed\nsuggestion: Retry; then check GET /health.",
			code: proxy.EUNAVAILABLE},
		{name: "a foreign error hides its text",
			b:    &fakeBackend{callErr: errors.New("open /var/lib/secret.db: permission denied")},
			tool: "browser_navigate", args: map[string]any{"url": "x", "session_id": sess},
			want: "error: INTERNAL_ERROR: internal error",
			code: proxy.EINTERNAL},
		{name: "a session tool's refusal",
			b:    &fakeBackend{},
			tool: catalog.ToolResumeSession, args: map[string]any{},
			want: "error: INVALID_PARAMETERS: required argument \"session_id\" not found\nsuggestion: Check the parameters against the tool's input schema.",
			code: proxy.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(context.Background(), tt.b, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			got, isErr := call(t, connect(t, s), tt.tool, tt.args)
			if !isErr {
				t.Errorf("isError = false, want true")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			p, err := ParseAnswer(got)
			if err != nil {
				t.Fatal(err)
			}
			if p.ErrorCode != tt.code || p.ErrorMessage == "" {
				t.Errorf("ParseAnswer: code %q, message %q; want code %q", p.ErrorCode, p.ErrorMessage, tt.code)
			}
		})
	}
}
