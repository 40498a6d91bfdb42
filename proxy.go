// Package proxy holds the domain of playwright-mcp-proxy: sessions, the record
// of every tool call (requests, responses, console entries, images) and the
// error type every layer speaks. It owns no I/O; storage lives in
// internal/store and the upstream @playwright/mcp workers in internal/upstream.
package proxy

import (
	"encoding/json"
	"time"
)

// SessionState is the lifecycle state of a browser session.
type SessionState string

const (
	// SessionActive has a live worker (or is about to get one).
	SessionActive SessionState = "active"
	// SessionSuspended has no worker; its state is saved and it can be resumed.
	SessionSuspended SessionState = "suspended"
	// SessionClosed was closed by its owner; its history stays readable.
	SessionClosed SessionState = "closed"
	// SessionError gave up after too many upstream failures.
	SessionError SessionState = "error"
)

// Session is one isolated browser session: one worker, one BrowserContext.
type Session struct {
	ID           string          `json:"session_id"`
	CreatedAt    time.Time       `json:"created_at"`
	LastActivity time.Time       `json:"last_activity"`
	State        SessionState    `json:"state"`
	Metadata     json.RawMessage `json:"metadata,omitempty"` // a SessionMetadata ({} until a call moves the page)
	// Owner is the MCP client that created the session ("" for the HTTP
	// API used directly). It is never shown in answers: which sessions
	// belong together is the clients' business, not the reader's.
	Owner ClientID `json:"-"`

	// Derived, never stored: when idleness suspends it (last activity + idle
	// timeout), and the pid and resident memory of its worker while it has one.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	WorkerPID int       `json:"worker_pid,omitempty"`
	RSSBytes  int64     `json:"rss_bytes,omitempty"`
	// Node is the browser node its worker runs on (PROXY_BROWSER_ENDPOINTS).
	Node string `json:"node,omitempty"`
	// RestartsLeft is how many more crashes of its own worker a live
	// session survives within the restart window (crashes of the shared
	// browser do not count); at 0 the next one puts it in the error state.
	RestartsLeft *int `json:"restarts_left,omitempty"`
	// Memory is what its processes hold resident, while it has a worker.
	Memory *SessionMemory `json:"memory,omitempty"`
	// Options shape the session's browser context (nil: the defaults); a
	// session whose worker is replaced gets them again.
	Options *BrowserOptions `json:"options,omitempty"`
	// Profile is the login profile the session started from ("" for
	// none); ProfileVersion the version it started from or last wrote
	// back; ProfileWrite whether it writes its state back to the profile
	// when it closes or is suspended.
	Profile        string `json:"profile,omitempty"`
	ProfileVersion int64  `json:"profile_version,omitempty"`
	ProfileWrite   bool   `json:"profile_write,omitempty"`

	// Control is set while a person holds the session's browser; Waiting
	// while its agent waits for one (request_human).
	Control *Control   `json:"control,omitempty"`
	Waiting *HumanWait `json:"waiting,omitempty"`
	// LiveURL is the session's live view in the inspector, where a person
	// watches and takes control ("" when the server serves no inspector).
	LiveURL string `json:"live_url,omitempty"`
}

// SessionMemory is a live session's resident memory, in bytes: sums of
// per-process RSS, so pages shared between processes count once per process.
type SessionMemory struct {
	// WorkerBytes is its worker's node process (RSSBytes is the whole
	// group, which in per-session mode holds its browser too).
	WorkerBytes int64 `json:"worker_bytes"`
	// RendererBytes is its part of Chromium: with a browser of its own
	// (per-session mode) all of that browser's processes; in the shared
	// browser the renderer processes that serve its pages' frames, as last
	// found (RenderersFound), at their current size.
	RendererBytes int64 `json:"renderer_bytes"`
	TotalBytes    int64 `json:"total_bytes"`
	// Renderers is how many processes RendererBytes counts.
	Renderers int `json:"renderers"`
	// RenderersFound is when the shared browser last said which renderers
	// serve the session's pages; zero before it was asked (no call yet, or
	// not since the worker changed) and with a browser of its own.
	RenderersFound time.Time `json:"renderers_found,omitzero"`
}

// Request is a tool call as its client named it, its arguments with secrets
// masked; the session manager commits it before the worker sees the call.
type Request struct {
	RefID     string          `json:"ref_id"`
	SessionID string          `json:"session_id"`
	ToolName  string          `json:"tool_name"`
	Params    json.RawMessage `json:"params"`
	Timestamp time.Time       `json:"timestamp"`
}

// Response statuses.
const (
	StatusSuccess = "success"
	StatusError   = "error"
)

// SessionMetadata is what a session's metadata says: the page its last
// call that moved the page left it on. The fields are in the order they
// have always been written.
type SessionMetadata struct {
	LastTitle string `json:"last_title"`
	LastURL   string `json:"last_url"`
}

// PageMetadata reads s's metadata. It is advisory: absent or foreign
// metadata leaves the fields empty.
func (s *Session) PageMetadata() SessionMetadata {
	var md SessionMetadata
	_ = json.Unmarshal(s.Metadata, &md)
	return md
}

// SessionActivity is what a call's answer also changes in its session. The
// store writes it in the response's transaction, so it costs no commit of
// its own.
type SessionActivity struct {
	SessionID string
	// At raises last_activity (never lowers it).
	At time.Time
	// Metadata, when not nil, replaces the session's metadata.
	Metadata json.RawMessage
}

// Response is what the upstream answered to a Request.
//
// Result is the upstream JSON-RPC result exactly as received; PageSnapshot is
// the exact yaml text; ConsoleLogs the raw console lines of this call.
// Nothing here is transformed on write.
type Response struct {
	RefID        string `json:"ref_id"`
	Status       string `json:"status"`
	Result       string `json:"result"`
	PageSnapshot string `json:"page_snapshot,omitempty"`
	ConsoleLogs  string `json:"console_logs,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	// ErrorCode is the documented code of a failed call.
	ErrorCode string    `json:"error_code,omitempty"`
	Timestamp time.Time `json:"timestamp"`
}

// SessionEvent is something that happened to a session besides its calls:
// what its timeline shows between them.
type SessionEvent struct {
	SessionID string    `json:"session_id"`
	At        time.Time `json:"at"`
	Kind      string    `json:"kind"`
	Detail    string    `json:"detail,omitempty"`
}

// Session event kinds.
const (
	EventCreated      = "created"
	EventSuspended    = "suspended"
	EventResumed      = "resumed"
	EventWorkerLost   = "worker_lost"
	EventRestarted    = "restarted"
	EventFailed       = "failed"
	EventMoved        = "moved"
	EventClosed       = "closed"
	EventStateRestore = "state_restored"
	// EventMemoryLimit: the session went over PROXY_MAX_SESSION_MEMORY and
	// is being restarted with its state; the detail gives the figures.
	EventMemoryLimit = "memory_limit"
	// EventProfileSaved: the session's state became a version of its
	// profile (detail: the profile and version), on close or suspend.
	EventProfileSaved = "profile_saved"
	// EventProfileConflict: the session's state was not written back
	// because its profile changed since the session started from it; the
	// newer profile stays.
	EventProfileConflict = "profile_conflict"
	// EventHumanRequested: the agent asked for a person (detail: the
	// reason).
	EventHumanRequested = "human_requested"
	// EventControlTaken, EventControlReturned: a person took the browser
	// and handed it back (detail: the ref_id of the screenshot stored at
	// that moment, when one could be taken).
	EventControlTaken    = "control_taken"
	EventControlReturned = "control_returned"
	// EventHumanAction: one thing the person did in the live view ("click
	// on button 'Sign in'", "typed 13 characters", "pressed Enter"). What
	// was typed is never recorded.
	EventHumanAction = "human_action"
)

// Call is one recorded tool call: what was sent and, once it answered,
// what came back (nil while it is in flight).
type Call struct {
	Request  Request   `json:"request"`
	Response *Response `json:"response,omitempty"`
	// Downloads are the files its pages downloaded, described.
	Downloads []Download `json:"downloads,omitempty"`
}

// Console levels, in increasing severity.
const (
	LevelDebug = "debug"
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
)

// ConsoleEntry is one normalised console message of a call.
type ConsoleEntry struct {
	ID        int64           `json:"id,omitempty"`
	RefID     string          `json:"ref_id"`
	Level     string          `json:"level"`
	Message   string          `json:"message"`
	Timestamp time.Time       `json:"timestamp"`
	Location  json.RawMessage `json:"location,omitempty"`
}

// Image is a binary attachment of a response (a screenshot).
type Image struct {
	RefID    string `json:"ref_id"`
	Seq      int    `json:"seq"`
	MimeType string `json:"mime_type"`
	Data     []byte `json:"-"`
}

// Download is a file a page downloaded during a call, stored with the call
// that started it. Name is the file's name as the worker saved it (no
// directory part); it names the download within its ref. Stored is false
// when the file was over the size limit and nothing of it was kept (Size
// still says how big it was); Data is then nil, and it is nil too where
// only the description travels (a call result, a listing).
type Download struct {
	RefID    string `json:"ref_id"`
	Name     string `json:"name"`
	MimeType string `json:"mime_type"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256,omitempty"`
	Stored   bool   `json:"stored"`
	Data     []byte `json:"-"`
}

// DiffCursor remembers what get_content last returned for a ref.
type DiffCursor struct {
	RefID            string    `json:"ref_id"`
	CursorPosition   int       `json:"cursor_position"`
	LastSnapshotHash string    `json:"last_snapshot_hash"`
	LastRead         time.Time `json:"last_read"`
}

// CallMetadata is what the model sees about a call instead of its content.
type CallMetadata struct {
	Tool              string `json:"tool"`
	PageURL           string `json:"page_url,omitempty"`
	PageTitle         string `json:"page_title,omitempty"`
	HasSnapshot       bool   `json:"has_snapshot"`
	SnapshotBytes     int    `json:"snapshot_bytes"`
	HasConsoleLogs    bool   `json:"has_console_logs"`
	ConsoleErrorCount int    `json:"console_error_count"`
	HasImage          bool   `json:"has_image"`
	Restored          bool   `json:"restored"`
	// Result is the tool's own result text (what browser_evaluate
	// returned, a tab list), when it fits PROXY_INLINE_RESULT_MAX.
	Result string `json:"result,omitempty"`
	// ResultBytes is the size of the tool's own result (Result's text, or
	// the Value of one of the proxy's tools) when it is over
	// PROXY_INLINE_RESULT_MAX: the MCP answer then gives this size and
	// the ref instead of the result, which get_content reads.
	ResultBytes int `json:"result_bytes,omitempty"`
}

// Changes is what a call did to the page, so that the model needs no second
// read to see the effect of an action.
type Changes struct {
	// NewPage: the snapshot is of another page than the session's previous
	// one (another URL, or none before); Text is then the page itself.
	NewPage      bool `json:"new_page,omitempty"`
	TitleChanged bool `json:"title_changed,omitempty"`
	// URLAsSent: the page is at the URL the call itself navigated to, so
	// an answer need not repeat it.
	URLAsSent bool `json:"url_as_sent,omitempty"`
	// SameURL: the page is at the URL of the session's previous page, so
	// an answer names it only if its title changed.
	SameURL bool `json:"same_url,omitempty"`
	// Lines added, removed and changed (element lines whose ref held).
	Added   int `json:"added"`
	Removed int `json:"removed"`
	Changed int `json:"changed"`
	// Text is the summary, one line each: "+ line", "- line",
	// "~ line (was …)"; or the new page's yaml. Empty when nothing changed
	// or when it is Over the byte budget.
	Text string `json:"text,omitempty"`
	Over bool   `json:"over,omitempty"`
}

// CallResult is the answer to a call (POST /call, docs/API.md): the ref
// and its metadata.
type CallResult struct {
	RefID     string       `json:"ref_id"`
	SessionID string       `json:"session_id"`
	Status    string       `json:"status"`
	Timestamp time.Time    `json:"timestamp"`
	Metadata  CallMetadata `json:"metadata"`
	// Value is the answer of one of the proxy's own tools (navigate,
	// extract_table…): small JSON the model needs, so it comes inline.
	Value json.RawMessage `json:"value,omitempty"`
	Error string          `json:"error,omitempty"`
	// For status error: the documented code of the failure, whether the same
	// call may succeed later, and what the model can do about it.
	ErrorCode  string `json:"error_code,omitempty"`
	Retryable  *bool  `json:"retryable,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`

	// Changes is what the call did to the page, against the session's
	// previous snapshot: given when the call asked for it and the tool
	// reported the page.
	Changes *Changes `json:"changes,omitempty"`
	// ConsoleErrors are the call's console errors as its MCP answer shows
	// them (bounded; other levels never), given with Changes.
	ConsoleErrors []string `json:"console_errors,omitempty"`
	// Downloads are the files pages downloaded during the call, described
	// (their bytes are read with GET /content/{ref_id}/downloads/{name}).
	Downloads []Download `json:"downloads,omitempty"`
	// DownloadsPending names the downloads the call started that had not
	// finished when it answered: each is stored with this call once a later
	// answer sees it finish, and listed in that answer's Downloads with this
	// call's ref.
	DownloadsPending []string `json:"downloads_pending,omitempty"`

	// NotRecorded: the call ran in the browser, but its answer could not be
	// written to the record (the database's disk filled during the call).
	// The result is still this call's, but get_content(ref_id) cannot read
	// it; Warning says so in words. Sending the call again would repeat it.
	NotRecorded bool   `json:"not_recorded,omitempty"`
	Warning     string `json:"warning,omitempty"`

	// Upstream is the raw upstream result; set only in PROXY_RESPONSE_MODE=full,
	// where the bridge hands it to the model unchanged.
	Upstream json.RawMessage `json:"upstream,omitempty"`

	// Encoded is this result as JSON, encoded once by the session manager
	// when the call returns (it counts the bytes returned) and written as
	// is by the HTTP API; empty on a result built or decoded elsewhere.
	Encoded json.RawMessage `json:"-"`
}
