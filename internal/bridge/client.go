// Package bridge owns mcp-bridge's side of the HTTP API: a client of
// proxy-server that implements mcpserver.Backend, so the stdio bridge serves
// the same tools as /mcp. It keeps no state of its own beyond the connection
// and must never write to stdout (that is the MCP channel).
package bridge

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/api"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
)

// Client talks to one proxy-server.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// NewClient returns a client of the proxy-server at baseURL.
func NewClient(baseURL, token string) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("MCP_PROXY_URL %q is not an http(s) URL", baseURL)
	}
	// No client-wide timeout: a browser call may legitimately take minutes;
	// the server bounds it (PROXY_CALL_TIMEOUT) and ctx bounds the wait.
	return &Client{base: u, token: token, http: &http.Client{}}, nil
}

// Health returns nil when proxy-server answers /health.
func (c *Client) Health(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return c.do(ctx, http.MethodGet, "/health", nil, nil)
}

// Tools implements mcpserver.Backend.
func (c *Client) Tools(ctx context.Context) ([]mcpserver.Tool, error) {
	var out struct {
		Tools []mcpserver.Tool `json:"tools"`
	}
	if err := c.do(ctx, http.MethodGet, "/tools", nil, &out); err != nil {
		return nil, err
	}
	return out.Tools, nil
}

// CreateSession implements mcpserver.Backend.
func (c *Client) CreateSession(ctx context.Context) (*proxy.Session, error) {
	var s proxy.Session
	if err := c.do(ctx, http.MethodPost, "/sessions", struct{}{}, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// CloseSession implements mcpserver.Backend.
func (c *Client) CloseSession(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/sessions/"+url.PathEscape(id), nil, nil)
}

// ListSessions implements mcpserver.Backend.
func (c *Client) ListSessions(ctx context.Context) ([]*proxy.Session, error) {
	var out struct {
		Sessions []*proxy.Session `json:"sessions"`
	}
	if err := c.do(ctx, http.MethodGet, "/sessions", nil, &out); err != nil {
		return nil, err
	}
	return out.Sessions, nil
}

// Call implements mcpserver.Backend.
func (c *Client) Call(ctx context.Context, sessionID, tool string, params json.RawMessage) (*proxy.CallResult, error) {
	var res proxy.CallResult
	body := api.CallBody{SessionID: sessionID, Tool: tool, Params: params}
	if err := c.do(ctx, http.MethodPost, "/call", body, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Content implements mcpserver.Backend.
func (c *Client) Content(ctx context.Context, refID, searchFor string, reset bool) (*content.Content, error) {
	q := url.Values{"format": {"json"}}
	if searchFor != "" {
		q.Set("search_for", searchFor)
	}
	if reset {
		q.Set("reset_cursor", "true")
	}
	var body api.ContentBody
	if err := c.do(ctx, http.MethodGet, "/content/"+url.PathEscape(refID)+"?"+q.Encode(), nil, &body); err != nil {
		return nil, err
	}
	out := &content.Content{Text: body.Text, Unchanged: body.Unchanged}
	for _, im := range body.Images {
		data, err := base64.StdEncoding.DecodeString(im.Data)
		if err != nil {
			return nil, fmt.Errorf("decoding image of %s: %w", refID, err)
		}
		out.Images = append(out.Images, proxy.Image{RefID: refID, MimeType: im.MimeType, Data: data})
	}
	return out, nil
}

// Console implements mcpserver.Backend.
func (c *Client) Console(ctx context.Context, refID, level string) (string, error) {
	q := url.Values{"format": {"json"}}
	if level != "" {
		q.Set("level", level)
	}
	var body struct {
		Text string `json:"text"`
	}
	if err := c.do(ctx, http.MethodGet, "/console/"+url.PathEscape(refID)+"?"+q.Encode(), nil, &body); err != nil {
		return "", err
	}
	return body.Text, nil
}

// ErrUnreachable wraps failures to reach proxy-server at all.
var ErrUnreachable = errors.New("proxy-server is unreachable")

// do sends one request; error bodies come back as *proxy.Error so that codes
// survive the hop unchanged.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, body)
	if err != nil {
		return fmt.Errorf("building request: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &proxy.Error{Code: proxy.EUNAVAILABLE, Message: fmt.Sprintf("%v at %s: %v", ErrUnreachable, c.base, err), Retryable: true,
			Suggestion: "Start it with `proxy-server serve` (or `make run`) and retry."}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "reading proxy-server's answer: " + err.Error(), Retryable: true}
	}
	if resp.StatusCode >= 300 {
		var eb api.ErrorBody
		if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
			return &proxy.Error{Code: eb.Error, Message: eb.Message, Details: eb.Details, Retryable: eb.Retryable, Suggestion: eb.Suggestion}
		}
		return &proxy.Error{Code: proxy.EINTERNAL, Message: fmt.Sprintf("proxy-server answered %s: %.200s", resp.Status, data)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding proxy-server's answer to %s %s: %w", method, path, err)
	}
	return nil
}
