package proxy

import (
	"context"
	"time"
)

// A person can watch a session's browser live and take it over: the agent
// asks for one with request_human (a 2FA code, a CAPTCHA, a sign-in), a
// person takes control in the live view, acts, and hands back; the agent
// goes on in the same browser context.

// HolderPerson is the only holder of a control lease today.
const HolderPerson = "person"

// Control is who holds a session's browser besides its agent. While a
// person holds it, the agent's actions on that session are refused with
// HUMAN_IN_CONTROL; reads of the record still work.
type Control struct {
	Holder string    `json:"holder"`
	Since  time.Time `json:"since"`
}

// ControlLease is a taken control: Lease is the secret the holder's live
// view sends with its input and its hand-back. Another viewer does not
// have it, so it can watch but not act.
type ControlLease struct {
	Control
	Lease string `json:"lease"`
}

// HumanWait is an agent waiting for a person (request_human) on a session.
type HumanWait struct {
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
	// Until is when the wait ends without a hand-back.
	Until time.Time `json:"until"`
}

// HumanResult is what request_human answers.
type HumanResult struct {
	SessionID string `json:"session_id"`
	// HandedBack: a person took control and handed it back before the
	// timeout. False: the wait timed out (Control tells whether a person
	// still holds the browser).
	HandedBack bool `json:"handed_back"`
	// Actions are what the person did, as the session's events say it
	// ("click on button 'Sign in'", "typed 13 characters"); never what
	// was typed.
	Actions []string      `json:"actions,omitempty"`
	Waited  time.Duration `json:"waited_ns"`
	// Control is still set when the wait timed out while a person holds
	// the browser.
	Control *Control `json:"control,omitempty"`
	// Result is a snapshot recorded after the hand-back (its ref_id, its
	// metadata and Changes against the agent's last snapshot); nil when
	// nobody handed back.
	Result  *CallResult `json:"result,omitempty"`
	LiveURL string      `json:"live_url,omitempty"`
}

// Bounds of request_human's timeout.
const (
	DefaultHumanTimeout = 10 * time.Minute
	MaxHumanTimeout     = 30 * time.Minute
)

// HumanService is the person-in-the-loop part of a session: the control
// lease and an agent's wait for a person. The session manager implements
// it in the server; mcp-bridge's client over HTTP.
type HumanService interface {
	// TakeControl gives the browser of session id to a person: CONTROL_HELD
	// when someone holds it already. A suspended session is resumed.
	TakeControl(ctx context.Context, id string) (*ControlLease, error)
	// HandBack ends a control with its lease: CONTROL_HELD when lease is
	// not the holder's, INVALID_PARAMETERS when nobody holds it.
	HandBack(ctx context.Context, id, lease string) error
	// RequestHuman marks session id as waiting for a person with reason
	// and blocks until a person hands back, timeout passes (0 means
	// DefaultHumanTimeout, more than MaxHumanTimeout is INVALID_PARAMETERS)
	// or ctx ends.
	RequestHuman(ctx context.Context, id, reason string, timeout time.Duration) (*HumanResult, error)
}

// LiveTarget is where a live view attaches: the CDP endpoint of the
// browser holding the session's pages, and those pages.
type LiveTarget struct {
	// Endpoint is the browser's CDP address (http://host:port). It is the
	// server's alone: never shown to a viewer or a session.
	Endpoint string     `json:"-"`
	Pages    []LivePage `json:"pages"`
}

// LivePage is one page (tab) of a session as the live view knows it.
type LivePage struct {
	Index    int    `json:"index"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Current  bool   `json:"current"`
	TargetID string `json:"target_id"`
}

// LiveViewService is what the live view needs of sessions, in the
// server's own process.
type LiveViewService interface {
	HumanService
	// LiveTarget finds session id's pages and the browser they are in,
	// resuming a suspended session. UPSTREAM_UNAVAILABLE when the session's
	// browser has no CDP the server can reach (a Playwright browser node, a
	// Firefox or WebKit one).
	LiveTarget(ctx context.Context, id string) (*LiveTarget, error)
	// HoldsControl reports whether lease is the holder's of session id's
	// control now: only that viewer's input reaches the page.
	HoldsControl(id, lease string) bool
	// HumanAction records one thing the holder did, as an EventHumanAction
	// with detail (already free of what was typed); CONTROL_HELD when
	// lease is not the holder's.
	HumanAction(ctx context.Context, id, lease, detail string) error
}
