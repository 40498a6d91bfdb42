package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Client speaks proxy-server's HTTP API (README "HTTP API").
type Client struct {
	base  string
	http  *http.Client
	token string
}

// NewClient returns a client of the proxy-server at base, which must be a
// loopback URL. Each request is bounded by timeout.
func NewClient(base string, timeout time.Duration) (*Client, error) {
	if err := checkURL(base); err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 512
	tr.MaxIdleConnsPerHost = 512
	tr.Proxy = nil // never through an HTTP proxy: 127.0.0.1 only
	return &Client{base: base, http: &http.Client{Transport: tr, Timeout: timeout}, token: os.Getenv("PROXY_AUTH_TOKEN")}, nil
}

// APIError is a non-2xx answer of proxy-server.
type APIError struct {
	Status  int
	Code    string `json:"error"`
	Message string `json:"message"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// Session is the part of a session object the benchmark uses.
type Session struct {
	ID        string `json:"session_id"`
	State     string `json:"state"`
	WorkerPID int    `json:"worker_pid"`
}

// CallResult is the call response of POST /call.
type CallResult struct {
	RefID     string         `json:"ref_id"`
	SessionID string         `json:"session_id"`
	Status    string         `json:"status"`
	Error     string         `json:"error"`
	Metadata  map[string]any `json:"metadata"`
}

// ToolError is a call that ran but answered "status":"error".
type ToolError struct{ Tool, Message string }

func (e *ToolError) Error() string { return fmt.Sprintf("%s: status error: %s", e.Tool, e.Message) }

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encoding request: %w", err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, pathOnly(path), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading answer: %w", method, pathOnly(path), err)
	}
	if resp.StatusCode/100 != 2 {
		e := &APIError{Status: resp.StatusCode}
		if json.Unmarshal(data, e) != nil || e.Code == "" {
			e.Message = strings.TrimSpace(string(data))
		}
		return e
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *string:
		*o = string(data)
		return nil
	default:
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decoding answer: %w", method, pathOnly(path), err)
		}
		return nil
	}
}

func pathOnly(p string) string {
	p, _, _ = strings.Cut(p, "?")
	return p
}

// CreateSession is POST /sessions.
func (c *Client) CreateSession(ctx context.Context) (Session, error) {
	var s Session
	err := c.do(ctx, http.MethodPost, "/sessions", nil, &s)
	return s, err
}

// DeleteSession is DELETE /sessions/{id}.
func (c *Client) DeleteSession(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/sessions/"+url.PathEscape(id), nil, nil)
}

// ListSessions is GET /sessions.
func (c *Client) ListSessions(ctx context.Context) ([]Session, error) {
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/sessions", nil, &raw); err != nil {
		return nil, err
	}
	var list []Session
	if json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	var wrapped struct {
		Sessions []Session `json:"sessions"`
	}
	if err := json.Unmarshal(raw, &wrapped); err != nil {
		return nil, fmt.Errorf("GET /sessions: decoding answer: %w", err)
	}
	return wrapped.Sessions, nil
}

// Call is POST /call. A 200 with "status":"error" returns the result and a
// *ToolError.
func (c *Client) Call(ctx context.Context, sessionID, tool string, params map[string]any) (CallResult, error) {
	if params == nil {
		params = map[string]any{}
	}
	var res CallResult
	err := c.do(ctx, http.MethodPost, "/call", map[string]any{"session_id": sessionID, "tool": tool, "params": params}, &res)
	if err != nil {
		return res, fmt.Errorf("%s: %w", tool, err)
	}
	if res.Status != "success" {
		msg := res.Error
		if msg == "" {
			msg = "status " + res.Status
		}
		return res, &ToolError{Tool: tool, Message: msg}
	}
	return res, nil
}

// Content is GET /content/{ref}?search_for=…&reset_cursor=true (the whole
// match every time, regardless of earlier reads).
func (c *Client) Content(ctx context.Context, ref, search string) (string, error) {
	q := url.Values{"reset_cursor": {"true"}}
	if search != "" {
		q.Set("search_for", search)
	}
	var text string
	err := c.do(ctx, http.MethodGet, "/content/"+url.PathEscape(ref)+"?"+q.Encode(), nil, &text)
	return text, err
}

// Health is GET /health: the status string, whatever the HTTP code.
func (c *Client) Health(ctx context.Context) (string, error) {
	var h struct {
		Status string `json:"status"`
	}
	err := c.do(ctx, http.MethodGet, "/health", nil, &h)
	var ae *APIError
	if errors.As(err, &ae) {
		return fmt.Sprintf("HTTP %d %s", ae.Status, ae.Message), nil
	}
	return h.Status, err
}

// ClickTargetParam returns the name of browser_click's element argument
// ("target" in @playwright/mcp 0.0.83, "ref" before), read from GET /tools:
// the schemas change between versions, so they are not hard-coded.
func (c *Client) ClickTargetParam(ctx context.Context) (string, error) {
	var tools struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := c.do(ctx, http.MethodGet, "/tools", nil, &tools); err != nil {
		return "", err
	}
	for _, t := range tools.Tools {
		if t.Name != "browser_click" {
			continue
		}
		for _, p := range []string{"target", "ref"} {
			if _, ok := t.InputSchema.Properties[p]; ok {
				return p, nil
			}
		}
		return "", fmt.Errorf("browser_click has neither a target nor a ref argument")
	}
	return "", fmt.Errorf("GET /tools lists no browser_click")
}
