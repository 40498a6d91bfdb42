package nodes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Probe failures a node can answer with. Anything else (a refused
// connection, a timeout) is a node that is not there.
var (
	// ErrVersionMismatch: the node runs another Playwright than the
	// workers' pinned one; Playwright refuses such a connection with 428.
	ErrVersionMismatch = errors.New("playwright version mismatch")
	// ErrUnauthorized: the node wants credentials the endpoint lacks.
	ErrUnauthorized = errors.New("browser node refused our credentials")
)

// Prober checks one node: connect, one cheap round trip.
type Prober interface {
	Probe(ctx context.Context, ep Endpoint) error
}

// HTTPProber probes a Playwright browser server with one WebSocket opening
// handshake that the server must refuse: it carries the pinned Playwright
// client version, which a Playwright server checks before anything else
// (428 Precondition Required on a mismatch), and an unsupported WebSocket
// version, so a server whose Playwright matches refuses the handshake (400)
// without opening a connection: in run-server mode a connection launches
// a browser, far from cheap.
type HTTPProber struct {
	// Version is the workers' Playwright version (e.g. "1.64.0").
	Version string
	// Client is used for the handshake; nil means a client with Timeout.
	Client *http.Client
	// Timeout bounds one probe; 0 means 5 s.
	Timeout time.Duration
}

// probeBodyMax bounds how much of a refusal we read.
const probeBodyMax = 4 << 10

// Probe implements Prober.
func (p HTTPProber) Probe(ctx context.Context, ep Endpoint) error {
	u, err := url.Parse(ep.URL)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrEndpoint, err)
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("probe request: %w", err)
	}
	for k, vs := range ep.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("User-Agent", "Playwright/"+p.Version+" (playwright-mcp-proxy probe)")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Key", "cHJvYmVwcm9iZXByb2JlIQ==")
	req.Header.Set("Sec-WebSocket-Version", "0")
	client := p.Client
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("probe %s: %w", ep.Masked(), err)
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// Not a Playwright server's answer to this handshake, but a node
		// that accepts any WebSocket is at least there.
		_ = resp.Body.Close()
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, probeBodyMax))
	_ = resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusPreconditionRequired:
		return fmt.Errorf("%w: %s answers that our Playwright %s is not its own: %s", ErrVersionMismatch, ep.Masked(), p.Version, serverVersion(string(body)))
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: %s answered %s", ErrUnauthorized, ep.Masked(), resp.Status)
	case resp.StatusCode >= 500:
		return fmt.Errorf("probe %s: answered %s", ep.Masked(), resp.Status)
	}
	return nil
}

// serverVersion picks "server version: vX" out of Playwright's 428 box.
func serverVersion(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if i := strings.Index(line, "server version:"); i >= 0 {
			return "it runs " + strings.Trim(strings.TrimSpace(line[i+len("server version:"):]), "║| ")
		}
	}
	return "no version given"
}
