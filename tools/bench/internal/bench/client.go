package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/bridge"
)

// Client drives proxy-server's HTTP API for the scenarios: the product's own
// client of it (bridge.Client), with a connection pool sized for many
// sessions at once and a bound on each request, sending each request once.
type Client struct {
	api   *bridge.Client
	http  *http.Client
	base  string
	token string
}

// NewClient returns a client of the proxy-server at base, which must be a
// loopback URL. Each request is bounded by timeout.
func NewClient(base string, timeout time.Duration) (*Client, error) {
	if err := checkURL(base); err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 512, 512
	tr.Proxy = nil // never through an HTTP proxy: 127.0.0.1 only
	hc, token := &http.Client{Transport: tr, Timeout: timeout}, os.Getenv("PROXY_AUTH_TOKEN")
	api, err := bridge.NewClient(base, token,
		bridge.WithHTTPClient(hc),
		bridge.WithRetryTimeout(0),
		// No version: the benchmark is not a bridge, and a version unlike
		// the server's would be a warning in the server log it checks.
		bridge.WithVersion(""))
	if err != nil {
		return nil, err
	}
	return &Client{api: api, http: hc, base: base, token: token}, nil
}

// get reads a text page outside the API's contract (GET /metrics).
func (c *Client) get(ctx context.Context, path string) (string, error) {
	data, err := c.do(ctx, http.MethodGet, path, nil)
	return string(data), err
}

// PutProfile stores a login profile (PUT /profiles/{name}), as the
// operator: mcp-bridge's client may not.
func (c *Client) PutProfile(ctx context.Context, name string, state json.RawMessage) error {
	_, err := c.do(ctx, http.MethodPut, "/profiles/"+name, state)
	return err
}

func (c *Client) do(ctx context.Context, method, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err == nil && resp.StatusCode/100 != 2 {
		err = fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, data)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return data, nil
}

func (c *Client) CreateSession(ctx context.Context, opts ...proxy.BrowserOptions) (*proxy.Session, error) {
	return c.api.CreateSession(ctx, opts...)
}

func (c *Client) DeleteSession(ctx context.Context, id string) error {
	return c.api.CloseSession(ctx, id)
}

func (c *Client) ListSessions(ctx context.Context) ([]*proxy.Session, error) {
	return c.api.ListSessions(ctx)
}

// Call is POST /call. A call that ran but answered "status":"error" returns
// its result and an error.
func (c *Client) Call(ctx context.Context, sessionID, tool string, params map[string]any) (proxy.CallResult, error) {
	if params == nil {
		params = map[string]any{} // upstream wants an object, not null
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return proxy.CallResult{}, fmt.Errorf("%s: encoding params: %w", tool, err)
	}
	res, err := c.api.Call(ctx, proxy.CallRequest{SessionID: sessionID, Tool: tool, Params: raw})
	if err != nil {
		return proxy.CallResult{}, fmt.Errorf("%s: %w", tool, err)
	}
	if res.Status != "success" {
		return *res, fmt.Errorf("%s: status error: %s", tool, cmp.Or(res.Error, "status "+res.Status))
	}
	return *res, nil
}

// Content is GET /content/{ref}?search_for=…&reset_cursor=true (the whole
// match every time, regardless of earlier reads).
func (c *Client) Content(ctx context.Context, ref, search string) (string, error) {
	ct, err := c.api.Content(ctx, ref, proxy.Query{Text: search}, true)
	if err != nil {
		return "", err
	}
	return ct.Text, nil
}

// Health is GET /health: the status string (a degraded server's too).
func (c *Client) Health(ctx context.Context) (string, error) {
	h, err := c.api.Health(ctx)
	if err != nil {
		return "", err
	}
	return h.Status, nil
}

// ClickTargetParam returns the name of browser_click's element argument,
// read from GET /tools: "target" in @playwright/mcp 0.0.83, "ref" before.
func (c *Client) ClickTargetParam(ctx context.Context) (string, error) {
	tools, err := c.api.Tools(ctx)
	if err != nil {
		return "", err
	}
	for _, t := range tools {
		for _, p := range []string{"target", "ref"} {
			if t.Name == "browser_click" && bytes.Contains(t.InputSchema, []byte(`"`+p+`"`)) {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("GET /tools lists no browser_click with a target or ref argument")
}
