package proxy

import (
	"errors"
	"fmt"
)

// Error codes of the public contract. The HTTP API answers each with one
// status (internal/api); MCP answers carry the code itself.
const (
	EINVALID        = "INVALID_PARAMETERS"
	ESESSIONMISSING = "SESSION_NOT_FOUND"
	EREFMISSING     = "REF_NOT_FOUND"
	ETOOLMISSING    = "TOOL_NOT_FOUND"
	ENODEMISSING    = "NODE_NOT_FOUND"
	ESESSIONCLOSED  = "SESSION_CLOSED"
	EMAXSESSIONS    = "MAX_SESSIONS_REACHED"
	EORIGIN         = "ORIGIN_NOT_ALLOWED"
	EHOST           = "HOST_NOT_ALLOWED" // Host header not served (DNS-rebinding defence)
	EUNAUTHORIZED   = "UNAUTHORIZED"
	EFORBIDDEN      = "FORBIDDEN" // a client token on an endpoint that is the operator's
	EDOMAINBLOCKED  = "DOMAIN_BLOCKED"
	EUNAVAILABLE    = "UPSTREAM_UNAVAILABLE"
	ETIMEOUT        = "TIMEOUT"
	EINTERNAL       = "INTERNAL_ERROR"
	ENOENDPOINT     = "NOT_FOUND" // no such HTTP endpoint
	// ESTORAGEFULL: the record cannot be written (disk full, I/O error,
	// read-only database). A call refused with it never reached the
	// browser. Not retryable: the same call fails the same way until space
	// returns, and then it is safe to send again.
	ESTORAGEFULL = "STORAGE_FULL"
	// EDOWNLOADMISSING: the ref exists but holds no stored download of that
	// name (none by that name, or one over PROXY_MAX_DOWNLOAD_BYTES that was
	// not kept).
	EDOWNLOADMISSING = "DOWNLOAD_NOT_FOUND"
	// EPAGEMISSING: a session has no page (tab) of that index, or no open
	// page at all (suspended: its browser is closed until it is revived).
	EPAGEMISSING = "PAGE_NOT_FOUND"
	// EPROFILEMISSING: no login profile of that name.
	EPROFILEMISSING = "PROFILE_NOT_FOUND"
	// ETOOLARGE: a body over its limit (a profile's storage state over
	// PROXY_PROFILE_MAX_BYTES); HTTP 413.
	ETOOLARGE = "PAYLOAD_TOO_LARGE"
	// ECONTROLHELD: someone else holds the session's control lease (409).
	ECONTROLHELD = "CONTROL_HELD"
	// EHUMANINCONTROL: a person holds the session's browser; the agent's
	// action was not sent (409, retryable).
	EHUMANINCONTROL = "HUMAN_IN_CONTROL"

	// Codes of a tool that ran in the browser and failed there. They come
	// back in a call result (HTTP 200, status "error"), not as a refusal.
	EELEMENTMISSING  = "ELEMENT_NOT_FOUND"
	ENOTINTERACTIVE  = "ELEMENT_NOT_INTERACTIVE"
	EINVALIDSELECTOR = "INVALID_SELECTOR"
	ENAVIGATION      = "NAVIGATION_FAILED"
	EBROWSER         = "BROWSER_ERROR"
)

// Error is the one error type that crosses package boundaries with meaning.
// Anything that is not an *Error is reported to callers as INTERNAL_ERROR.
type Error struct {
	Code       string
	Message    string
	Details    map[string]any
	Retryable  bool
	Suggestion string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Retryable: retryable(code), Suggestion: suggestion(code)}
}

// ErrorCode returns the code of err, EINTERNAL for foreign errors, "" for nil.
func ErrorCode(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// AsError returns err as an *Error. A foreign error becomes INTERNAL_ERROR
// without its text: that text can name files, addresses or SQL, so it
// belongs in the server's log (written where the error is answered), never
// in an answer.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: EINTERNAL, Message: "internal error", Suggestion: suggestion(EINTERNAL)}
}

// IsForeign reports whether err is not an *Error: one AsError hides.
func IsForeign(err error) bool {
	var e *Error
	return err != nil && !errors.As(err, &e)
}

func retryable(code string) bool {
	switch code {
	case EMAXSESSIONS, EUNAVAILABLE, ETIMEOUT, EELEMENTMISSING, ENOTINTERACTIVE, ENAVIGATION, EHUMANINCONTROL:
		return true
	}
	return false
}

func suggestion(code string) string {
	switch code {
	case EINVALID:
		return "Check the parameters against the tool's input schema."
	case ESESSIONMISSING:
		return "List sessions with list_sessions or create one with create_new_session."
	case EREFMISSING:
		return "Use a ref_id returned by a previous tool call."
	case ETOOLMISSING:
		return "List the available tools and use one of their names."
	case EPAGEMISSING:
		return "Read the session's pages from resources/list (playwright:///page/{session_id}/{index}); a suspended session opens its pages again on its next call or resume_session."
	case ENODEMISSING:
		return "List the browser nodes with GET /nodes and use one of their ids."
	case ESESSIONCLOSED:
		return "The session was closed; create a new one with create_new_session."
	case EMAXSESSIONS:
		return "Close an unused session or retry later."
	case EUNAVAILABLE:
		return "The browser backend is restarting or down; retry in a few seconds."
	case ETIMEOUT:
		return "The call took too long; retry, or check that the page responds."
	case EORIGIN:
		return "Call the server from a loopback page, or list the origin in PROXY_ALLOWED_ORIGINS."
	case EHOST:
		return "Use http://127.0.0.1:<port> (or localhost), or list the host in PROXY_ALLOWED_ORIGINS."
	case EUNAUTHORIZED:
		return "Send Authorization: Bearer <PROXY_AUTH_TOKEN> (mcp-bridge: set MCP_PROXY_TOKEN)."
	case EFORBIDDEN:
		return "A client token opens only the MCP surfaces (/mcp and the calls mcp-bridge makes); use PROXY_AUTH_TOKEN for the operator's views."
	case EELEMENTMISSING:
		return "Nothing matches yet: find the element again (get_content with search_for on the last ref, or a new snapshot), wait for it (browser_wait_for), or pass a longer timeout; after restored: true, refs from before are stale."
	case ENOTINTERACTIVE:
		return "The element exists but is hidden, disabled, covered or moving: scroll to it, close what covers it, wait until it is enabled, or act on another match."
	case EINVALIDSELECTOR:
		return "Fix the selector: CSS such as #id, .class or button[type='submit'], or XPath starting with // (or xpath=...)."
	case ENAVIGATION:
		return "Check the URL and that the site is reachable (offline mode, blocked resources, DNS); retry if the network was busy."
	case EBROWSER:
		return "The browser refused the operation; read the message, look at the page with get_content(ref_id), and adjust the arguments."
	case ESTORAGEFULL:
		return "The proxy's database cannot be written: free space in its data directory (the directory of PROXY_DATABASE_PATH), then send the call again; no restart is needed."
	case EPROFILEMISSING:
		return "List the profiles with list_profiles and use one of their names, or sign in and save one with save_profile."
	case ETOOLARGE:
		return "Send less: a profile's storage state may be at most PROXY_PROFILE_MAX_BYTES."
	case ECONTROLHELD:
		return "Someone else controls this session's browser; watch the live view until they hand back."
	case EHUMANINCONTROL:
		return "A person is using this session's browser: wait with request_human, or read what is stored with get_content."
	case EDOWNLOADMISSING:
		return "Use a name from a download: line of that ref's answer; a download over PROXY_MAX_DOWNLOAD_BYTES is not kept."
	}
	return ""
}
