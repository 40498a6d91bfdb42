package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// sessionCloseTimeout bounds how long Close waits for the host to report
// the session closed; the host gives its own steps 10 s.
const sessionCloseTimeout = 12 * time.Second

// SessionSpec configures one session opened in a SessionHost.
type SessionSpec struct {
	// OutputDir receives the session's files. It must not exist or be
	// empty: it is created, and Close removes it. Give every session its own.
	OutputDir string
	// Workspace is the root for files the model names (a screenshot
	// "x.png"); "" means OutputDir.
	Workspace string
	// Capabilities are added to storage, which SaveState needs.
	Capabilities []string
	// Args are @playwright/mcp's command-line flags (cli.js's): the host
	// builds the session's configuration from them with upstream's own
	// parser, so they mean what they mean for a worker process of its own.
	// --caps values join Capabilities; the fields the proxy sets (output
	// directory, file paths) win over theirs, and ContextOptions over the
	// context options they imply. A flag cli.js refuses refuses the open.
	Args []string
	// ContextOptions are the session's BrowserContext options (JSON); nil
	// keeps Playwright's.
	ContextOptions json.RawMessage
	// Endpoint is the browser server of this session; "" is the host's.
	Endpoint string
	// Headers go with the connection to Endpoint; they travel on the
	// host's stdin, never its command line.
	Headers map[string]string
	// BrowserName is Endpoint's engine: chromium (""), firefox or webkit.
	BrowserName string
}

// HostedSession is one @playwright/mcp session in a SessionHost: its own
// MCP server, BrowserContext and connection to the browser server, in a
// node process shared with the host's other sessions. It implements
// worker.Worker; its methods are safe for concurrent use.
type HostedSession struct {
	host      *SessionHost
	key       string
	outputDir string
	logger    *slog.Logger
	tr        *hostTransport
	conn      mcpConn
	client    *client.Client

	opened chan error // the host's answer to the open
	done   chan struct{}
	// exited is closed once done is or the host process has been reaped,
	// whichever comes first: the host's stdout can end after the reap (a
	// busy reader), and a session must not look alive meanwhile, to a
	// watcher of Done, while a call already finds it gone.
	exited      chan struct{}
	exitOnce    sync.Once
	endOnce     sync.Once
	endErr      error // why the session ended; written before done is closed
	lostBrowser atomic.Bool

	closeOnce sync.Once
	closeErr  error

	// debug is the CDP address of the browser holding the session's pages
	// and browserServer says it is the local shared browser (its renderers
	// are this machine's); both set before the session is handed out.
	debug         string
	browserServer bool
	// nodePlace is the browser node the session's browser is on (none
	// for the shared browser).
	nodePlace
}

// sessionClosedError is the host's report that it closed a session (asked
// to, its browser connection dropped, an uncaught exception of its own).
type sessionClosedError struct{ reason string }

func (e *sessionClosedError) Error() string { return "session closed by its host: " + e.reason }

// hostReasonBrowserGone is the host's reason for a session whose
// connection to the browser server dropped.
const hostReasonBrowserGone = "browser disconnected"

// Open opens a session in the host, performs the MCP handshake and fetches
// its tools. ctx bounds only the opening.
func (h *SessionHost) Open(ctx context.Context, spec SessionSpec) (_ *HostedSession, err error) {
	outputDir, err := freshOutputDir("hosted session", spec.OutputDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(outputDir, 0o700); err != nil {
		return nil, fmt.Errorf("hosted session output dir: %w", err)
	}
	key := "s" + strconv.FormatInt(h.nextKey.Add(1), 10)
	s := &HostedSession{
		host:      h,
		key:       key,
		outputDir: outputDir,
		logger:    h.logger.With("session", key),
		opened:    make(chan error, 1),
		done:      make(chan struct{}),
		exited:    make(chan struct{}),
	}
	go func() {
		select {
		case <-s.done:
		case <-h.proc.done:
		}
		s.exit()
	}()
	s.tr = &hostTransport{s: s, responses: map[string]chan *transport.JSONRPCResponse{}, done: make(chan struct{})}
	s.conn = mcpConn{transport: s.tr, gone: s.gone, wrap: s.wrapErr, logger: s.logger}
	s.client = client.NewClient(s.tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	h.mu.Lock()
	if h.gone {
		h.mu.Unlock()
		_ = os.RemoveAll(outputDir)
		return nil, exitedErr(fmt.Errorf("%w: %w", worker.ErrNotDelivered, errHostExited))
	}
	h.sessions[key] = s
	h.mu.Unlock()
	defer func() {
		if err != nil {
			closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopStepTimeout)
			defer cancel()
			_ = s.Kill(closeCtx)
		}
	}()

	workspace := spec.Workspace
	if workspace == "" {
		workspace = outputDir
	}
	caps, args := splitCaps(spec.Args)
	if args == nil {
		// Parsed even when empty: cli.js's defaults (its context options
		// among them) then apply as they do to a worker of its own.
		args = []string{}
	}
	open := map[string]any{
		"config": map[string]any{
			"outputDir":    outputDir,
			"filePaths":    "absolute",
			"capabilities": mergeCaps(mergeCaps([]string{"storage"}, spec.Capabilities), caps),
		},
		"args":      args,
		"workspace": workspace,
	}
	if len(spec.ContextOptions) > 0 {
		open["contextOptions"] = spec.ContextOptions
	}
	if spec.Endpoint != "" {
		open["endpoint"] = spec.Endpoint
	}
	if len(spec.Headers) > 0 {
		open["headers"] = spec.Headers
	}
	if spec.BrowserName != "" {
		open["browserName"] = spec.BrowserName
	}
	started := time.Now()
	if err := h.send(map[string]any{"s": key, "open": open}); err != nil {
		return nil, s.startErr("open", exitedErr(fmt.Errorf("%w: %w", worker.ErrNotDelivered, err)))
	}
	select {
	case err := <-s.opened:
		if err != nil {
			return nil, s.startErr("open", s.wrapErr(err))
		}
	case <-ctx.Done():
		return nil, fmt.Errorf("hosted session open: %w", ctx.Err())
	}
	opened := time.Since(started)
	if err := s.conn.start(s.client); err != nil {
		return nil, fmt.Errorf("hosted session transport: %w", err)
	}
	if _, step, err := s.conn.handshake(ctx, s.client); err != nil {
		return nil, s.startErr(step, s.wrapErr(err))
	}
	s.logger.Info("hosted session opened", "output_dir", outputDir, "tools", len(s.Tools()),
		"open", opened.Round(time.Millisecond), "took", time.Since(started).Round(time.Millisecond))
	return s, nil
}

// startErr describes a failed open with what the host said about this
// session on stderr.
func (s *HostedSession) startErr(step string, err error) error {
	var lines []string
	for line := range strings.SplitSeq(s.host.Stderr(), "\n") {
		if strings.HasPrefix(line, "session "+s.key+": ") || strings.HasPrefix(line, "host: ") {
			lines = append(lines, line)
		}
	}
	if len(lines) > 0 {
		return fmt.Errorf("hosted session %s: %w; stderr: %s", step, err, tail(strings.Join(lines, "\n"), 2048))
	}
	return fmt.Errorf("hosted session %s: %w", step, err)
}

// openResult hands the host's answer to the open to Open, if it waits.
func (s *HostedSession) openResult(err error) {
	select {
	case s.opened <- err:
	default:
	}
}

// ended marks the session gone for why: calls in flight and to come fail,
// Done is closed. The first reason stays.
func (s *HostedSession) ended(why error) {
	s.endOnce.Do(func() {
		var closed *sessionClosedError
		if errors.As(why, &closed) && closed.reason == hostReasonBrowserGone {
			s.lostBrowser.Store(true)
		}
		s.endErr = why
		s.host.mu.Lock()
		if s.host.sessions[s.key] == s {
			delete(s.host.sessions, s.key)
		}
		s.host.mu.Unlock()
		s.tr.end()
		close(s.done)
		s.exit() // now, not when the watcher above gets to it: Kill's caller sees Done closed
		s.openResult(why)
		s.logger.Info("hosted session ended", "why", why)
	})
}

// exit closes exited, once.
func (s *HostedSession) exit() { s.exitOnce.Do(func() { close(s.exited) }) }

// gone reports that a request written now could never be answered.
func (s *HostedSession) gone() bool {
	select {
	case <-s.done:
		return true
	default:
		return s.host.proc.dying()
	}
}

// wrapErr turns the ways of saying "the session or its host is gone" into
// ErrWorkerExited, with why it ended.
func (s *HostedSession) wrapErr(err error) error {
	if err == nil || errors.Is(err, worker.ErrWorkerExited) {
		return err
	}
	var closed *sessionClosedError
	switch {
	case errors.Is(err, transport.ErrTransportClosed):
		select {
		case <-s.done:
			if s.endErr != nil {
				err = fmt.Errorf("%w: %w", err, s.endErr)
			}
		default:
		}
		return exitedErr(err)
	case errors.Is(err, worker.ErrNotDelivered), errors.As(err, &closed), errors.Is(err, errHostExited), s.host.proc.exited():
		return exitedErr(err)
	}
	return err
}

// Key is the session's key in its host.
func (s *HostedSession) Key() string { return s.key }

// Host is the process the session runs in.
func (s *HostedSession) Host() *SessionHost { return s.host }

// Tools returns the tools the session announced (refreshed on
// tools/list_changed). The raw schemas are shared and must not be modified.
func (s *HostedSession) Tools() []proxy.Tool { return s.conn.toolList() }

// CallTool is Worker.CallTool for a hosted session: ErrWorkerExited
// (wrapped) when the session or its host is gone, with ErrNotDelivered when
// the call certainly did not reach its server.
func (s *HostedSession) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	params, err := toolCallParams(name, args)
	if err != nil {
		return nil, err
	}
	if err := s.goneErr(ctx, &s.lostBrowser); err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	res, err := s.conn.request(ctx, string(mcp.MethodToolsCall), params)
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, s.callErr(err, &s.lostBrowser))
	}
	if s.downUnder(ctx, res, &s.lostBrowser) {
		return nil, fmt.Errorf("tools/call %s: %w", name, worker.ErrNodeDown)
	}
	return res, nil
}

// Ping sends an MCP ping through the host to the session's server.
func (s *HostedSession) Ping(ctx context.Context) error {
	// A session whose node is gone answers pings but can serve no call.
	if err := s.goneErr(ctx, &s.lostBrowser); err != nil {
		return fmt.Errorf("upstream ping: %w", err)
	}
	if s.gone() {
		return fmt.Errorf("upstream ping: %w", exitedErr(worker.ErrNotDelivered))
	}
	if err := s.client.Ping(ctx); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("upstream ping: %w", ctxErr)
		}
		return fmt.Errorf("upstream ping: %w", s.wrapErr(err))
	}
	return nil
}

// PID is the host's process id: the session has no process of its own.
func (s *HostedSession) PID() int { return s.host.PID() }

// OutputDir is the absolute directory the session writes to.
func (s *HostedSession) OutputDir() string { return s.outputDir }

func (s *HostedSession) log() *slog.Logger { return s.logger }

// Done is closed once the session ended for any reason: closed, killed,
// closed by its host, or its host exited (reaped).
func (s *HostedSession) Done() <-chan struct{} { return s.exited }

// Err is why the session ended once Done is closed, else nil.
func (s *HostedSession) Err() error {
	select {
	case <-s.done:
		return s.endErr
	default:
	}
	select {
	case <-s.exited:
		return errHostExited
	default:
		return nil
	}
}

// LostBrowser reports whether the host closed the session because its
// connection to the browser server dropped: no crash of the session's own.
func (s *HostedSession) LostBrowser() bool { return s.lostBrowser.Load() }

// HostHung reports whether the session's host was killed for not
// answering its pings: the session hung with it, whichever of them hung.
func (s *HostedSession) HostHung() bool { return s.host.hung.Load() }

// RSS is the host's resident memory divided among its open sessions: a
// share, not a measurement of this session (they share one heap).
func (s *HostedSession) RSS() int64 {
	select {
	case <-s.done:
		return 0
	default:
	}
	return s.host.RSS() / int64(max(1, s.host.Sessions()))
}

// DebugEndpoint is the CDP address of the browser holding the session's
// pages, for the live view; "" when there is none.
func (s *HostedSession) DebugEndpoint() string { return s.debug }

// SharesBrowser reports whether the session's pages live in the local
// shared browser, whose renderers RendererPIDs can name.
func (s *HostedSession) SharesBrowser() bool { return s.browserServer }

// Memory is Worker.Memory for a hosted session: WorkerBytes is its share of
// the host's memory (RSS), RendererBytes the renderers of its pages.
func (s *HostedSession) Memory(rendererPIDs []int) Memory {
	m := Memory{WorkerBytes: s.RSS()}
	if m.WorkerBytes == 0 {
		return Memory{}
	}
	if s.browserServer && len(rendererPIDs) > 0 {
		m.RendererBytes, m.Renderers = pidsRSS(rendererPIDs)
	}
	return m
}

// RendererPIDs is Worker.RendererPIDs for a hosted session.
func (s *HostedSession) RendererPIDs(ctx context.Context) ([]int, error) {
	if !s.browserServer {
		return nil, nil
	}
	return rendererPIDs(ctx, s)
}

// SaveState is SaveStateJSON on this session.
func (s *HostedSession) SaveState(ctx context.Context) (json.RawMessage, error) {
	return SaveStateJSON(ctx, s)
}

// RestoreState is RestoreStateJSON on this session.
func (s *HostedSession) RestoreState(ctx context.Context, state json.RawMessage) error {
	return RestoreStateJSON(ctx, s, state)
}

// errSessionKilled ends a session that Kill stopped.
var errSessionKilled = errors.New("session killed")

// Close asks the host to close the session (its server, context and
// connection; calls in flight are answered with an error) and waits up to
// 12 s or ctx for it, then removes OutputDir. The host goes on. Safe to
// call more than once, concurrently, and after the session ended.
func (s *HostedSession) Close(ctx context.Context) error { return s.stop(ctx, false) }

// Kill ends the session on the proxy's side at once (the host is told to
// close it, not waited for) and removes OutputDir. Only the host's own Kill
// kills the process, which the host's other sessions share.
func (s *HostedSession) Kill(ctx context.Context) error { return s.stop(ctx, true) }

func (s *HostedSession) stop(ctx context.Context, kill bool) error {
	s.closeOnce.Do(func() {
		s.conn.closed.Store(true)
		if !s.gone() {
			if err := s.host.send(map[string]any{"s": s.key, "close": true}); err != nil {
				s.ended(exitedErr(err))
			}
		}
		if kill {
			s.ended(errSessionKilled)
		} else {
			t := s.host.proc.clock.NewTimer(sessionCloseTimeout)
			select {
			case <-s.done:
			case <-ctx.Done():
			case <-t.C():
			}
			t.Stop()
			select {
			case <-s.done:
			default:
				s.host.unanswered.Store(true)
			}
			s.ended(&sessionClosedError{reason: "closed"})
		}
		s.conn.endLife()
		if err := os.RemoveAll(s.outputDir); err != nil {
			s.closeErr = fmt.Errorf("remove hosted session output dir: %w", err)
		}
	})
	return s.closeErr
}

// hostTransport is mcp-go's transport for one session: requests and
// notifications go to the host wrapped in {"s":key,"m":...}; the host's
// reader hands this session's messages to deliver.
type hostTransport struct {
	s *HostedSession

	mu        sync.Mutex
	responses map[string]chan *transport.JSONRPCResponse
	notify    func(mcp.JSONRPCNotification)

	done     chan struct{}
	doneOnce sync.Once
}

var _ transport.Interface = (*hostTransport)(nil)

func (t *hostTransport) Start(context.Context) error { return nil }

func (t *hostTransport) GetSessionId() string { return "" }

func (t *hostTransport) SetNotificationHandler(handler func(mcp.JSONRPCNotification)) {
	t.mu.Lock()
	t.notify = handler
	t.mu.Unlock()
}

// Close ends the transport only: closing the session is HostedSession's.
func (t *hostTransport) Close() error {
	t.end()
	return nil
}

func (t *hostTransport) end() { t.doneOnce.Do(func() { close(t.done) }) }

func (t *hostTransport) write(m any) error {
	select {
	case <-t.done:
		return fmt.Errorf("%w: %w", worker.ErrNotDelivered, transport.ErrTransportClosed)
	default:
	}
	if err := t.s.host.send(map[string]any{"s": t.s.key, "m": m}); err != nil {
		// A write that failed was never read by the host.
		return fmt.Errorf("%w: %w", worker.ErrNotDelivered, err)
	}
	return nil
}

func (t *hostTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return t.write(n)
}

func (t *hostTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	idKey := req.ID.String()
	ch := make(chan *transport.JSONRPCResponse, 1)
	t.mu.Lock()
	t.responses[idKey] = ch
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.responses, idKey)
		t.mu.Unlock()
	}()
	if err := t.write(req); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		return t.hostAnswer(resp)
	case <-t.done:
		select {
		case resp := <-ch:
			return t.hostAnswer(resp)
		default:
		}
		return nil, transport.ErrTransportClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// hostErrorCode is the JSON-RPC error code of the host's own answers for a
// session that closed or is not open.
const hostErrorCode = -32000

// hostAnswer turns the host's own answers for a session that is gone into
// errors: "not open" means the request reached no server.
func (t *hostTransport) hostAnswer(resp *transport.JSONRPCResponse) (*transport.JSONRPCResponse, error) {
	if resp.Error == nil || resp.Error.Code != hostErrorCode {
		return resp, nil
	}
	prefix := "session " + t.s.key + " "
	switch msg := resp.Error.Message; {
	case msg == prefix+"is not open":
		return nil, fmt.Errorf("%w: %s", worker.ErrNotDelivered, msg)
	case strings.HasPrefix(msg, prefix+"closed: "):
		return nil, &sessionClosedError{reason: strings.TrimPrefix(msg, prefix+"closed: ")}
	}
	return resp, nil
}

// deliver routes one message of the session's server. It runs on the host's
// reader and must not block it.
func (t *hostTransport) deliver(raw json.RawMessage) {
	// One decode serves an answer, nearly every message: a snapshot's
	// result is only copied here, and parsed once, by the caller.
	var m struct {
		ID     *mcp.RequestId           `json:"id"`
		Method string                   `json:"method"`
		Result json.RawMessage          `json:"result"`
		Error  *mcp.JSONRPCErrorDetails `json:"error"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.s.logger.Warn("hosted session sent a message that is not JSON-RPC", "err", err)
		return
	}
	switch {
	case m.Method != "" && m.ID == nil:
		var n mcp.JSONRPCNotification
		if json.Unmarshal(raw, &n) != nil {
			return
		}
		t.mu.Lock()
		notify := t.notify
		t.mu.Unlock()
		if notify != nil {
			notify(n)
		}
	case m.Method != "":
		// The host answers roots/list itself; the proxy offers the server
		// nothing else. Off the reader: the write may wait for the host.
		go func() {
			_ = t.write(transport.NewJSONRPCErrorResponse(*m.ID, mcp.METHOD_NOT_FOUND, "not supported by the proxy", nil))
		}()
	case m.ID != nil:
		resp := &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: *m.ID, Result: m.Result, Error: m.Error}
		t.mu.Lock()
		ch := t.responses[resp.ID.String()]
		t.mu.Unlock()
		if ch != nil {
			select {
			case ch <- resp:
			default:
			}
		}
	}
}
