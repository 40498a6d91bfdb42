package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

const (
	// maxToolPages bounds tools/list pagination against a looping cursor.
	maxToolPages = 100
	// cancelNotifyTimeout bounds sending notifications/cancelled.
	cancelNotifyTimeout = 5 * time.Second
	// requestIDPrefix keeps our string ids apart from mcp-go's integer ids on
	// the same transport.
	requestIDPrefix = "pwp-"
)

// RPCError is a JSON-RPC error the worker answered with (unknown tool,
// invalid params, …), as opposed to a tool that ran and failed (isError).
type RPCError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("upstream JSON-RPC error %d: %s", e.Code, e.Message)
}

// mcpConn is the JSON-RPC side of one @playwright/mcp server, whether it
// is a worker process of its own or a session in a SessionHost: the two
// differ only in how they learn that the server is gone.
type mcpConn struct {
	transport transport.Interface
	nextID    atomic.Int64
	// gone reports that a request written now could never be read.
	gone func() bool
	// wrap turns the transport's ways of saying "the server is gone" into
	// ErrWorkerExited.
	wrap   func(error) error
	logger *slog.Logger

	tools     atomic.Pointer[[]proxy.Tool]
	refreshMu sync.Mutex // one tools refresh at a time; endLife waits for it
	closed    atomic.Bool
	lifeStop  context.CancelFunc
}

// start starts cl, which runs over c.transport, and keeps the tools fresh.
func (c *mcpConn) start(cl *client.Client) error {
	// The transport keeps this ctx for the server's whole life (it hands it
	// to handlers of server-initiated requests), so it must not be a
	// caller's.
	lifeCtx, lifeStop := context.WithCancel(context.Background())
	c.lifeStop = lifeStop
	if err := cl.Start(lifeCtx); err != nil {
		return err
	}
	cl.OnNotification(func(n mcp.JSONRPCNotification) {
		// Runs on the transport's read goroutine: must not block it.
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			go c.refreshTools()
		}
	})
	return nil
}

// handshake initializes the server and fetches its tools; on failure, step
// names what failed.
func (c *mcpConn) handshake(ctx context.Context, cl *client.Client) (initialized time.Duration, step string, err error) {
	start := time.Now()
	initReq := mcp.InitializeRequest{}
	initReq.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	initReq.Params.ClientInfo = mcp.Implementation{Name: "playwright-mcp-proxy", Version: "1"}
	if _, err := cl.Initialize(ctx, initReq); err != nil {
		return 0, "initialize", err
	}
	initialized = time.Since(start)
	tools, err := c.listTools(ctx)
	if err != nil {
		return 0, "tools/list", err
	}
	c.tools.Store(&tools)
	return initialized, "", nil
}

// endLife waits for a tools refresh in flight (it fails fast once the
// transport is closed), so that nothing of the server runs or logs after
// its Close.
func (c *mcpConn) endLife() {
	c.refreshMu.Lock()
	if c.lifeStop != nil {
		c.lifeStop()
	}
	c.refreshMu.Unlock()
}

func (w *mcpConn) newID() mcp.RequestId {
	return mcp.NewRequestId(fmt.Sprintf("%s%d", requestIDPrefix, w.nextID.Add(1)))
}

// listTools decodes tools/list ourselves to keep the raw schemas.
func (w *mcpConn) listTools(ctx context.Context) ([]proxy.Tool, error) {
	var tools []proxy.Tool
	cursor := ""
	seen := map[string]bool{}
	for range maxToolPages {
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		raw, err := w.request(ctx, "tools/list", params)
		if err != nil {
			return nil, err
		}
		var page struct {
			Tools      []proxy.Tool `json:"tools"`
			NextCursor string       `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("decode tools/list: %w", err)
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == "" {
			return tools, nil
		}
		if seen[page.NextCursor] {
			return nil, fmt.Errorf("tools/list cursor %q repeated", page.NextCursor)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("tools/list: more than %d pages", maxToolPages)
}

func (w *mcpConn) refreshTools() {
	w.refreshMu.Lock()
	defer w.refreshMu.Unlock()
	if w.closed.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := w.listTools(ctx)
	if err != nil {
		if !w.closed.Load() {
			w.logger.Warn("refresh upstream tools", "err", err)
		}
		return
	}
	w.tools.Store(&tools)
	w.logger.Info("upstream tools changed", "tools", len(tools))
}

// request sends one JSON-RPC request with a string id and returns its result
// bytes as received.
func (w *mcpConn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("upstream %s: %w", method, err)
	}
	if w.gone() {
		return nil, exitedErr(worker.ErrNotDelivered)
	}
	id := w.newID()
	resp, err := w.transport.SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params,
	})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			w.cancelRequest(id, ctxErr)
			return nil, fmt.Errorf("upstream %s: %w", method, ctxErr)
		}
		return nil, w.wrap(err)
	}
	if resp.Error != nil {
		e := &RPCError{Code: resp.Error.Code, Message: resp.Error.Message}
		if resp.Error.Data != nil {
			e.Data, _ = json.Marshal(resp.Error.Data)
		}
		return nil, e
	}
	if len(resp.Result) == 0 {
		return nil, fmt.Errorf("upstream %s: response without result", method)
	}
	return resp.Result, nil
}

// cancelRequest tells the worker to stop working on id. Best effort, off the
// caller's path: the caller already has its error.
func (w *mcpConn) cancelRequest(id mcp.RequestId, reason error) {
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": reason.Error()}},
		},
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), cancelNotifyTimeout)
		defer cancel()
		_ = w.transport.SendNotification(ctx, n)
	}()
}

// eofReader notes when the worker's stdout ends.
type eofReader struct {
	r   io.Reader
	eof *atomic.Bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.eof.Store(true)
	}
	return n, err
}

// workerExitedError is what calls on a dead worker return: errors.Is matches
// ErrWorkerExited and the transport cause, and proxy.ErrorCode gives
// UPSTREAM_UNAVAILABLE.
type workerExitedError struct {
	cause error
	code  *proxy.Error
}

func (e *workerExitedError) Error() string {
	return worker.ErrWorkerExited.Error() + ": " + e.cause.Error()
}

func (e *workerExitedError) Unwrap() []error {
	return []error{worker.ErrWorkerExited, e.code, e.cause}
}

func exitedErr(cause error) error {
	return &workerExitedError{cause: cause, code: proxy.Errorf(proxy.EUNAVAILABLE, "upstream worker exited")}
}

// wrapErr turns the transport's ways of saying "the worker is gone" into
// ErrWorkerExited.
func (w *Worker) wrapErr(err error) error {
	if err == nil || errors.Is(err, worker.ErrWorkerExited) {
		return err
	}
	if errors.Is(err, syscall.EPIPE) {
		// The write failed: the worker never read the request.
		err = fmt.Errorf("%w: %w", worker.ErrNotDelivered, err)
	}
	if errors.Is(err, transport.ErrTransportClosed) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, errLineTooLong) || w.proc.exited() {
		return exitedErr(err)
	}
	return err
}

// Tools returns the tools the worker announced (refreshed on
// tools/list_changed). The slice is a copy; the raw schemas are shared and
// must not be modified.
func (w *Worker) Tools() []proxy.Tool { return w.conn.toolList() }

func (w *mcpConn) toolList() []proxy.Tool {
	if t := w.tools.Load(); t != nil {
		return slices.Clone(*t)
	}
	return nil
}

// callParams is tools/call's params with the arguments passed through as
// given.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// toolCallParams checks a call's name and arguments; no arguments are {}.
func toolCallParams(name string, args json.RawMessage) (callParams, error) {
	if name == "" {
		return callParams{}, errors.New("upstream tools/call: empty tool name")
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	} else if !json.Valid(args) {
		return callParams{}, fmt.Errorf("upstream tools/call %s: arguments are not valid JSON", name)
	}
	return callParams{Name: name, Arguments: args}, nil
}

// CallTool calls an upstream tool and returns the JSON-RPC result exactly as
// the worker sent it. A tool that ran and failed is a result with isError,
// not an error. Errors: *RPCError for a JSON-RPC error, ErrWorkerExited
// (wrapped) when the worker is gone, ctx's error when ctx ended first (the
// worker is then sent notifications/cancelled).
func (w *Worker) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	params, err := toolCallParams(name, args)
	if err != nil {
		return nil, err
	}
	if err := w.goneErr(ctx, &w.lostBrowser); err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	res, err := w.conn.request(ctx, string(mcp.MethodToolsCall), params)
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, w.callErr(err, &w.lostBrowser))
	}
	if w.downUnder(ctx, res, &w.lostBrowser) {
		return nil, fmt.Errorf("tools/call %s: %w", name, worker.ErrNodeDown)
	}
	return res, nil
}

// Ping sends an MCP ping; it fails once the worker is gone or wedged past ctx.
func (w *Worker) Ping(ctx context.Context) error {
	// A worker whose node is gone answers pings but can serve no call.
	if err := w.goneErr(ctx, &w.lostBrowser); err != nil {
		return fmt.Errorf("upstream ping: %w", err)
	}
	if err := w.client.Ping(ctx); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("upstream ping: %w", ctxErr)
		}
		return fmt.Errorf("upstream ping: %w", w.wrapErr(err))
	}
	return nil
}
