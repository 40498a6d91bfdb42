// Package wire is the HTTP contract between proxy-server (internal/api) and
// its clients (mcp-bridge's internal/bridge): the headers and the JSON
// bodies of docs/API.md. Both sides use these types, so a field changed
// here changes on both; it links nothing but the standard library and the
// root package, so a client gets the shapes without the server's code.
package wire

import (
	"encoding/json"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// BridgeVersionHeader carries mcp-bridge's version on its requests.
const BridgeVersionHeader = "X-Mcp-Bridge-Version"

// ClientIDHeader carries the secret identity of the MCP client a request
// acts for (mcp-bridge sends one per process). With it, the request sees
// only that client's sessions and refs, and the sessions it creates are
// that client's; without it, the request is the operator's and sees every
// session. With a client token the identity is derived from the token and
// the header together, and without the header it is the token's own. The
// value is never logged or stored, only its digest.
const ClientIDHeader = "X-Mcp-Client-Id"

// ToolsetsHeader carries a client's own choice of tool groups (a comma list,
// or all): GET /tools lists those groups and /call, /call/validate accept
// their tools, instead of the server's PROXY_TOOLSETS. mcp-bridge sends its
// --toolsets (MCP_PROXY_TOOLSETS) with every request.
const ToolsetsHeader = "X-Mcp-Toolsets"

// DownloadSHA256Header carries the hex sha256 of a download's bytes, so a
// client can check what it received against what was stored.
const DownloadSHA256Header = "X-Content-SHA256"

// ErrorBody is the documented error shape.
type ErrorBody struct {
	Error      string         `json:"error"`
	Message    string         `json:"message"`
	Details    map[string]any `json:"details,omitempty"`
	Retryable  bool           `json:"retryable"`
	Suggestion string         `json:"suggestion,omitempty"`
}

// CallBody is the body of POST /call.
type CallBody struct {
	SessionID string          `json:"session_id"`
	Tool      string          `json:"tool"`
	Params    json.RawMessage `json:"params"`
	RequestID string          `json:"request_id,omitempty"`
	// Changes asks for "changes" in the answer: what the call did to the
	// page against the session's previous snapshot (what MCP clients see).
	Changes bool `json:"changes,omitempty"`
}

// ValidateBody is the body of POST /call/validate: a call without its
// session.
type ValidateBody struct {
	Tool   string          `json:"tool"`
	Params json.RawMessage `json:"params"`
}

// ResumeBody is the answer of POST /sessions/{id}/resume.
type ResumeBody struct {
	*proxy.Session
	// Restored is true when the session came back in a new worker with its
	// saved state: element refs from before are stale.
	Restored bool `json:"restored"`
}

// ContentBody is the JSON form of GET /content (Accept: application/json).
type ContentBody struct {
	RefID     string      `json:"ref_id"`
	Text      string      `json:"text"`
	Unchanged bool        `json:"unchanged"`
	Images    []ImageBody `json:"images,omitempty"`
	// Snapshot is true when Text is (a view of) the page snapshot, false
	// when it is the result text.
	Snapshot bool `json:"snapshot,omitempty"`
	// NoMatch is true when search_for matched nothing (Text is "").
	NoMatch bool `json:"no_match,omitempty"`
}

// ImageBody is one stored image, base64 encoded.
type ImageBody struct {
	MimeType string `json:"mime_type"`
	Data     string `json:"data"`
}

// DownloadBody is the JSON answer of GET /content/{ref}/downloads/{name}
// (Accept: application/json, or format=json): the description and the
// bytes, base64.
type DownloadBody struct {
	proxy.Download
	Data []byte `json:"data"`
}

// CredentialBody is the body of POST /credentials.
type CredentialBody struct {
	Value string `json:"value"`
}

// CredentialAnswer is the answer of POST /credentials.
type CredentialAnswer struct {
	// Placeholder (<secret>cred_…</secret>) stands for the value: typed into
	// a page through any tool, the browser gets the value; the record and
	// every answer show the placeholder.
	Placeholder string `json:"placeholder"`
}

// PagesBody is the answer of GET /sessions/{id}/pages.
type PagesBody struct {
	Pages []proxy.Page `json:"pages"`
}

// NetworkLogBody is the answer of GET /sessions/{id}/pages/{page}/network.
type NetworkLogBody struct {
	Entries []proxy.NetworkEntry `json:"entries"`
}

// ProfilesBody is the answer of GET /profiles.
type ProfilesBody struct {
	Profiles []*proxy.Profile `json:"profiles"`
}

// SaveProfileBody is the body of POST /sessions/{id}/profile.
type SaveProfileBody struct {
	Name string `json:"name"`
}

// HandBackBody is the body of DELETE /sessions/{id}/control.
type HandBackBody struct {
	Lease string `json:"lease"`
}

// HumanBody is the body of POST /sessions/{id}/human.
type HumanBody struct {
	Reason string `json:"reason"`
	// TimeoutMS is how long to wait for a person; 0 is the default.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// DrainBody is the answer of POST /nodes/{id}/drain.
type DrainBody struct {
	*proxy.Node
	// Moved is how many sessions moved to other nodes.
	Moved int `json:"moved"`
}

// Health is the answer of GET /health (200, or 503 when degraded). Its
// fields are in the order of their JSON names, which is the order the
// answer has always had.
type Health struct {
	// Checks is each dependency's "ok", or why it is not.
	Checks map[string]string `json:"checks"`
	// Counters are the supervision counters (restarts, crashes, …), there
	// when the server keeps them.
	Counters any `json:"counters,omitempty"`
	// Nodes are the browser nodes, there when the server has some.
	Nodes []proxy.Node `json:"nodes,omitzero"`
	// RestartsLeft names the live sessions that used some of their
	// restart budget, with what is left of it.
	RestartsLeft map[string]int `json:"restarts_left,omitzero"`
	Status       string         `json:"status"`
	Version      string         `json:"version"`
}

// OK reports whether every check passed.
func (h *Health) OK() bool { return h.Status == "ok" }

// ToolsBody is the answer of GET /tools.
type ToolsBody struct {
	Tools []proxy.Tool `json:"tools"`
}

// SessionsBody is the answer of GET /sessions.
type SessionsBody struct {
	Sessions []*proxy.Session `json:"sessions"`
}

// ValidBody is the answer of POST /call/validate when the call would be
// accepted.
type ValidBody struct {
	Valid bool `json:"valid"`
}

// ConsoleBody is the JSON form of GET /console/{ref} (Accept:
// application/json, or format=json).
type ConsoleBody struct {
	RefID string `json:"ref_id"`
	Text  string `json:"text"`
}

// NodesBody is the answer of GET /nodes.
type NodesBody struct {
	Nodes []proxy.Node `json:"nodes"`
}

// ExportRecord is a session's whole record, the answer of GET
// /sessions/{id}/export?format=json.
type ExportRecord struct {
	Session *proxy.Session `json:"session"`
	Calls   []ExportedCall `json:"calls"`
	// Events are what happened to the session besides its calls.
	Events []proxy.SessionEvent `json:"events"`
}

// ExportedCall is one call in an ExportRecord: the call as stored, and
// what the proxy read from its answer.
type ExportedCall struct {
	proxy.Call
	PageURL   string `json:"page_url,omitempty"`
	PageTitle string `json:"page_title,omitempty"`
	// Code is the Playwright code upstream ran for the call.
	Code string `json:"code,omitempty"`
	// DurationMS is how long the call took, from its request to its
	// recorded answer.
	DurationMS int64 `json:"duration_ms"`
	// SnapshotBytes is the size of the call's page snapshot, which a
	// record without snapshots leaves out.
	SnapshotBytes int `json:"snapshot_bytes"`
}
