package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// readLimit bounds one CDP message: a screencast frame or a full-page
// screenshot is base64 and can reach several MiB; more than this is not a
// message we asked for.
const readLimit = 32 << 20

// cdpMessage is any message Chromium sends: a response (ID set) or an event.
type cdpMessage struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *cdpError) Error() string { return fmt.Sprintf("cdp error %d: %s", e.Code, e.Message) }

// conn is one WebSocket to a browser's CDP endpoint. A reader goroutine
// routes responses to their callers and events to handle; it ends when the
// socket does.
type conn struct {
	ws     *websocket.Conn
	nextID atomic.Int64
	handle func(cdpMessage)

	mu      sync.Mutex
	pending map[int64]chan cdpMessage
	err     error // why the socket ended; set once, before done closes

	done       chan struct{} // closed when the reader has ended
	cancelRead context.CancelFunc
}

// browserWebSocket turns an endpoint into the browser's WebSocket URL: a
// ws:// URL is used as given; http://host:port asks /json/version, the
// only HTTP endpoint read (/json/list would name every context's pages).
func browserWebSocket(ctx context.Context, endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("live: bad CDP endpoint %q", endpoint)
	}
	switch u.Scheme {
	case "ws", "wss":
		return endpoint, nil
	case "http", "https":
	default:
		return "", fmt.Errorf("live: bad CDP endpoint %q: want http:// or ws://", endpoint)
	}
	u.Path, u.RawQuery = "/json/version", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("live: %w", err)
	}
	// No idle connection (and its goroutines) outlives the one request.
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("live: CDP endpoint: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("live: CDP endpoint: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("live: CDP endpoint /json/version: %s", resp.Status)
	}
	var v struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.WebSocketDebuggerURL == "" {
		return "", errors.New("live: CDP endpoint /json/version has no webSocketDebuggerUrl")
	}
	ws, err := url.Parse(v.WebSocketDebuggerURL)
	if err != nil {
		return "", fmt.Errorf("live: CDP endpoint: bad webSocketDebuggerUrl: %w", err)
	}
	// Chromium names the address it listens on; the caller may reach it
	// under another (a forwarded port, a container's name).
	ws.Host = u.Host
	if u.Scheme == "https" {
		ws.Scheme = "wss"
	}
	return ws.String(), nil
}

func dial(ctx context.Context, endpoint string, handle func(cdpMessage)) (*conn, error) {
	wsURL, err := browserWebSocket(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, fmt.Errorf("live: connect to the browser: %w", err)
	}
	ws.SetReadLimit(readLimit)
	readCtx, cancel := context.WithCancel(context.Background())
	c := &conn{ws: ws, handle: handle, pending: map[int64]chan cdpMessage{}, done: make(chan struct{}), cancelRead: cancel}
	go c.read(readCtx)
	return c, nil
}

func (c *conn) read(ctx context.Context) {
	defer close(c.done)
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			c.mu.Lock()
			c.err = err
			pending := c.pending
			c.pending = nil
			c.mu.Unlock()
			for _, ch := range pending {
				close(ch)
			}
			return
		}
		var m cdpMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		if m.ID != 0 {
			c.mu.Lock()
			ch := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		c.handle(m)
	}
}

// encode is a command as Chromium reads it.
func encode(id int64, session, method string, params any) ([]byte, error) {
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("live: %s: %w", method, err)
	}
	return data, nil
}

// send writes a command without waiting for its answer (the reader drops
// an answer nobody waits for).
func (c *conn) send(ctx context.Context, session, method string, params any) error {
	data, err := encode(c.nextID.Add(1), session, method, params)
	if err != nil {
		return err
	}
	if err := c.ws.Write(ctx, websocket.MessageText, data); err != nil {
		return fmt.Errorf("live: %s: %w", method, err)
	}
	return nil
}

// call runs one command and decodes its result into out (nil: ignored).
func (c *conn) call(ctx context.Context, session, method string, params, out any) error {
	id := c.nextID.Add(1)
	ch := make(chan cdpMessage, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return fmt.Errorf("live: %s: %w", method, ErrGone)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		if c.pending != nil {
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}
	data, err := encode(id, session, method, params)
	if err != nil {
		forget()
		return err
	}
	if err := c.ws.Write(ctx, websocket.MessageText, data); err != nil {
		forget()
		return fmt.Errorf("live: %s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("live: %s: %w", method, ErrGone)
		}
		if m.Error != nil {
			return fmt.Errorf("live: %s: %w", method, m.Error)
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				return fmt.Errorf("live: %s: decoding the answer: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		forget()
		return fmt.Errorf("live: %s: %w", method, ctx.Err())
	}
}

// close ends the socket and waits for the reader. The close handshake is
// best effort: a browser that stopped answering must not hold Close for
// the library's whole handshake timeout.
func (c *conn) close() {
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = c.ws.Close(websocket.StatusNormalClosure, "")
	}()
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		_ = c.ws.CloseNow()
		<-closed
	}
	c.cancelRead()
	<-c.done
}
