// Package session owns the lifecycle of browser sessions: which worker serves
// which session, the warm pool of spare workers, and the recording of every
// call (request row before forwarding, response row after). It never talks to
// HTTP or MCP clients and never parses SQL; it must never hold a store
// transaction open while a worker is called.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// Worker is one upstream @playwright/mcp process (real: *upstream.Worker).
type Worker interface {
	Tools() []upstream.Tool
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
	Ping(ctx context.Context) error
	PID() int
	OutputDir() string
	Done() <-chan struct{}
	Close(ctx context.Context) error
}

// Spawner starts workers, each with its own isolated BrowserContext.
type Spawner interface {
	Spawn(ctx context.Context) (Worker, error)
}

// Store is the part of the record the manager writes.
type Store interface {
	CreateSession(ctx context.Context, s *proxy.Session) error
	GetSession(ctx context.Context, id string) (*proxy.Session, error)
	ListSessions(ctx context.Context) ([]*proxy.Session, error)
	UpdateSessionState(ctx context.Context, id string, state proxy.SessionState) error
	TouchSession(ctx context.Context, id string, at time.Time) error
	SetSessionMetadata(ctx context.Context, id string, md json.RawMessage) error
	InsertRequest(ctx context.Context, r *proxy.Request) error
	GetRequest(ctx context.Context, refID string) (*proxy.Request, error)
	InsertResponse(ctx context.Context, r *proxy.Response, console []proxy.ConsoleEntry, images []proxy.Image) error
}

// Options tune a Manager; zero values get DESIGN.md's defaults.
type Options struct {
	MaxSessions     int
	IdleTimeout     time.Duration
	WarmPool        int
	CallTimeout     time.Duration
	FullResponses   bool // PROXY_RESPONSE_MODE=full
	InlineResultMax int
	Logger          *slog.Logger
	Now             func() time.Time
}

// Manager maps session ids to live workers and records every call.
type Manager struct {
	opts    Options
	store   Store
	spawner Spawner
	log     *slog.Logger

	mu       sync.Mutex
	live     map[string]*live
	tools    []upstream.Tool
	shutdown bool

	pool     chan Worker
	poolKick chan struct{}
	stop     context.CancelFunc
	bg       sync.WaitGroup
}

// live is a session that may have a worker. sem serialises everything that
// touches the worker: calls on one page must not interleave, and a close must
// wait for the call in flight.
type live struct {
	id  string
	sem chan struct{}

	// Guarded by sem.
	worker    Worker
	hadWorker bool
	closed    bool
	lastURL   string

	mu           sync.Mutex
	lastActivity time.Time
	busy         bool
	workerPID    int
}

// New returns a Manager and starts its warm pool. Close it with Shutdown.
func New(store Store, spawner Spawner, opts Options) *Manager {
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 10
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 2 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts:     opts,
		store:    store,
		spawner:  spawner,
		log:      opts.Logger,
		live:     make(map[string]*live),
		pool:     make(chan Worker, max(opts.WarmPool, 1)),
		poolKick: make(chan struct{}, 1),
		stop:     cancel,
	}
	if opts.WarmPool > 0 {
		m.bg.Add(1)
		go m.fillPool(ctx)
	}
	return m
}

// fillPool keeps WarmPool initialised workers ready so that a create does not
// wait for a process start.
func (m *Manager) fillPool(ctx context.Context) {
	defer m.bg.Done()
	backoff := time.Second
	for {
		if len(m.pool) < m.opts.WarmPool {
			w, err := m.spawner.Spawn(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				m.log.Warn("warm pool spawn failed", "err", err, "retry_in", backoff)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(backoff*2, 30*time.Second)
				continue
			}
			backoff = time.Second
			m.noteTools(w)
			select {
			case m.pool <- w:
				continue
			default:
				closeWorker(w, m.log)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-m.poolKick:
		}
	}
}

// worker returns a ready worker: a warm one if any, else a fresh spawn.
func (m *Manager) worker(ctx context.Context) (Worker, error) {
	for {
		select {
		case w := <-m.pool:
			m.kickPool()
			select {
			case <-w.Done():
				continue // died while waiting in the pool
			default:
				return w, nil
			}
		default:
		}
		m.kickPool()
		w, err := m.spawner.Spawn(ctx)
		if err != nil {
			return nil, &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "starting a browser worker failed: " + err.Error(), Retryable: true,
				Suggestion: "Retry in a few seconds; if it persists check GET /health."}
		}
		m.noteTools(w)
		return w, nil
	}
}

func (m *Manager) kickPool() {
	select {
	case m.poolKick <- struct{}{}:
	default:
	}
}

func (m *Manager) noteTools(w Worker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tools == nil {
		m.tools = w.Tools()
	}
}

// Tools returns the upstream tool list, discovered with tools/list from a
// worker (never hard-coded: schemas change between upstream versions).
func (m *Manager) Tools(ctx context.Context) ([]upstream.Tool, error) {
	m.mu.Lock()
	tools := m.tools
	m.mu.Unlock()
	if tools != nil {
		return tools, nil
	}
	w, err := m.worker(ctx)
	if err != nil {
		return nil, err
	}
	m.putSpare(w)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tools, nil
}

// putSpare returns an unused worker to the pool, or stops it when full.
func (m *Manager) putSpare(w Worker) {
	m.mu.Lock()
	down := m.shutdown
	m.mu.Unlock()
	if !down {
		select {
		case m.pool <- w:
			return
		default:
		}
	}
	closeWorker(w, m.log)
}

func (m *Manager) hasTool(ctx context.Context, name string) (bool, error) {
	tools, err := m.Tools(ctx)
	if err != nil {
		return false, err
	}
	for _, t := range tools {
		if t.Name == name {
			return true, nil
		}
	}
	return false, nil
}

// Create starts a new isolated session.
func (m *Manager) Create(ctx context.Context) (*proxy.Session, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	if n := m.liveCount(); n >= m.opts.MaxSessions {
		return nil, &proxy.Error{Code: proxy.EMAXSESSIONS, Message: fmt.Sprintf("%d sessions are live, the limit is %d", n, m.opts.MaxSessions),
			Retryable: true, Suggestion: "Close a session you no longer need (close_session) or retry later.",
			Details: map[string]any{"max_sessions": m.opts.MaxSessions}}
	}
	w, err := m.worker(ctx)
	if err != nil {
		return nil, err
	}
	now := m.opts.Now().UTC()
	s := &proxy.Session{ID: uuid.NewString(), CreatedAt: now, LastActivity: now, State: proxy.SessionActive, Metadata: json.RawMessage(`{}`)}
	if err := m.store.CreateSession(ctx, s); err != nil {
		m.putSpare(w)
		return nil, fmt.Errorf("recording new session: %w", err)
	}
	l := &live{id: s.ID, sem: make(chan struct{}, 1), hadWorker: true, lastActivity: now}
	l.setWorker(w)
	m.mu.Lock()
	m.live[s.ID] = l
	m.mu.Unlock()
	m.log.Info("session created", "session_id", s.ID, "worker_pid", w.PID())
	return m.withExpiry(s), nil
}

func (m *Manager) checkOpen() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shutdown {
		return &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "proxy-server is shutting down", Retryable: true,
			Suggestion: "Retry once the server is back."}
	}
	return nil
}

// liveCount counts sessions that hold a worker.
func (m *Manager) liveCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

// withExpiry fills the derived fields of s.
func (m *Manager) withExpiry(s *proxy.Session) *proxy.Session {
	if m.opts.IdleTimeout > 0 && (s.State == proxy.SessionActive || s.State == proxy.SessionSuspended) {
		s.ExpiresAt = s.LastActivity.Add(m.opts.IdleTimeout)
	}
	m.mu.Lock()
	l := m.live[s.ID]
	m.mu.Unlock()
	if l != nil {
		s.WorkerPID = l.pid()
	}
	return s
}

// Get returns one session.
func (m *Manager) Get(ctx context.Context, id string) (*proxy.Session, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	s, err := m.store.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	return m.withExpiry(s), nil
}

// List returns every session, newest first.
func (m *Manager) List(ctx context.Context) ([]*proxy.Session, error) {
	ss, err := m.store.ListSessions(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range ss {
		m.withExpiry(s)
	}
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].CreatedAt.After(ss[j].CreatedAt) })
	return ss, nil
}

// Close stops a session's worker; its history stays readable.
func (m *Manager) Close(ctx context.Context, id string) error {
	s, err := m.Get(ctx, id)
	if err != nil {
		return err
	}
	if s.State == proxy.SessionClosed {
		return nil
	}
	m.mu.Lock()
	l := m.live[id]
	m.mu.Unlock()
	if l != nil {
		if err := l.lock(ctx); err != nil {
			return err
		}
		l.closed = true
		w := l.worker
		l.setWorker(nil)
		l.unlock()
		m.mu.Lock()
		delete(m.live, id)
		m.mu.Unlock()
		if w != nil {
			closeWorker(w, m.log)
		}
	}
	if err := m.store.UpdateSessionState(ctx, id, proxy.SessionClosed); err != nil {
		return fmt.Errorf("recording session close: %w", err)
	}
	m.log.Info("session closed", "session_id", id)
	return nil
}

// CallRequest is one tool call addressed to a session.
type CallRequest struct {
	SessionID string
	Tool      string
	Params    json.RawMessage
	RequestID string // optional; becomes the ref_id
}

// Call forwards a tool call to the session's worker and records it.
//
// Proxy-level failures come back as *proxy.Error. A tool that ran but failed
// in the browser is not an error here: it is a CallResult with status error.
func (m *Manager) Call(ctx context.Context, req CallRequest) (*proxy.CallResult, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	params, err := normaliseParams(req.Params)
	if err != nil {
		return nil, err
	}
	refID := req.RequestID
	if refID == "" {
		refID = uuid.NewString()
	} else if err := validRef(refID); err != nil {
		return nil, err
	}
	if req.Tool == "" {
		return nil, proxy.Errorf(proxy.EINVALID, "tool is required")
	}
	ok, err := m.hasTool(ctx, req.Tool)
	if err != nil {
		return nil, err
	}
	if !ok {
		e := proxy.Errorf(proxy.ETOOLMISSING, "no upstream tool named %q", req.Tool)
		e.Details = map[string]any{"tool": req.Tool}
		return nil, e
	}
	l, err := m.acquire(ctx, req.SessionID)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	l.setBusy(true, m.opts.Now())
	defer l.setBusy(false, m.opts.Now())

	restored, err := m.ensureWorker(ctx, l)
	if err != nil {
		return nil, err
	}

	started := m.opts.Now().UTC()
	if err := m.store.InsertRequest(ctx, &proxy.Request{RefID: refID, SessionID: l.id, ToolName: req.Tool, Params: params, Timestamp: started}); err != nil {
		if _, gerr := m.store.GetRequest(ctx, refID); gerr == nil {
			return nil, proxy.Errorf(proxy.EINVALID, "request_id %s was already used; send a new one or omit it", refID)
		}
		return nil, fmt.Errorf("recording request: %w", err)
	}

	callCtx, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
	raw, callErr := l.worker.CallTool(callCtx, req.Tool, params)
	cancel()
	finished := m.opts.Now().UTC()
	// The record is written even when the caller has gone away: the call
	// happened in the browser, so its outcome belongs in history.
	recCtx := context.WithoutCancel(ctx)
	if callErr != nil {
		return nil, m.recordFailure(recCtx, l, refID, finished, callErr)
	}

	res, err := m.record(recCtx, l, refID, req.Tool, raw, finished)
	if err != nil {
		return nil, err
	}
	res.Metadata.Restored = restored
	if err := m.store.TouchSession(recCtx, l.id, finished); err != nil {
		m.log.Warn("touching session", "session_id", l.id, "err", err)
	}
	return res, nil
}

// record parses and ingests what the worker returned and writes the response.
func (m *Manager) record(ctx context.Context, l *live, refID, tool string, raw json.RawMessage, at time.Time) (*proxy.CallResult, error) {
	resp := &proxy.Response{RefID: refID, Status: proxy.StatusSuccess, Result: string(raw), Timestamp: at}
	res := &proxy.CallResult{RefID: refID, SessionID: l.id, Status: proxy.StatusSuccess, Timestamp: at, Metadata: proxy.CallMetadata{Tool: tool}}

	var ing *upstream.Ingested
	parsed, perr := upstream.Parse(raw)
	if perr != nil {
		// Keep the bytes anyway; only the metadata is lost.
		m.log.Warn("unparseable upstream result", "ref_id", refID, "err", perr)
		parsed = &upstream.Parsed{}
	} else {
		var ierr error
		ing, ierr = upstream.Ingest(parsed, l.worker.OutputDir(), at)
		if ierr != nil {
			m.log.Warn("ingesting upstream files", "ref_id", refID, "err", ierr)
		}
	}
	if ing == nil {
		ing = &upstream.Ingested{}
	}
	if parsed.IsError {
		resp.Status, res.Status = proxy.StatusError, proxy.StatusError
		resp.ErrorMessage, res.Error = parsed.ErrorText, parsed.ErrorText
	}
	resp.PageSnapshot = ing.Snapshot
	resp.ConsoleLogs = ing.ConsoleRaw
	for i := range ing.Images {
		ing.Images[i].RefID = refID
		ing.Images[i].Seq = i
	}
	if err := m.store.InsertResponse(ctx, resp, ing.Console, ing.Images); err != nil {
		return nil, fmt.Errorf("recording response %s: %w", refID, err)
	}

	md := &res.Metadata
	md.PageURL, md.PageTitle = parsed.PageURL, parsed.PageTitle
	md.HasSnapshot = ing.Snapshot != ""
	md.SnapshotBytes = len(ing.Snapshot)
	md.HasConsoleLogs = len(ing.Console) > 0
	for _, e := range ing.Console {
		if e.Level == proxy.LevelError {
			md.ConsoleErrorCount++
		}
	}
	md.HasImage = len(ing.Images) > 0
	if n := m.opts.InlineResultMax; n > 0 && parsed.ResultText != "" && len(parsed.ResultText) <= n {
		md.Result = parsed.ResultText
	}
	if m.opts.FullResponses {
		res.Upstream = raw
	}
	if parsed.PageURL != "" && parsed.PageURL != l.lastURL {
		l.lastURL = parsed.PageURL
		md, _ := json.Marshal(map[string]string{"last_url": parsed.PageURL, "last_title": parsed.PageTitle})
		if err := m.store.SetSessionMetadata(ctx, l.id, md); err != nil {
			m.log.Warn("saving session metadata", "session_id", l.id, "err", err)
		}
	}
	return res, nil
}

// recordFailure stores a call that got no upstream answer and maps the
// failure to the documented code. The call is never replayed: actions such
// as clicks are not idempotent.
func (m *Manager) recordFailure(ctx context.Context, l *live, refID string, at time.Time, callErr error) error {
	var perr *proxy.Error
	switch {
	case errors.Is(callErr, context.DeadlineExceeded):
		perr = &proxy.Error{Code: proxy.ETIMEOUT, Message: fmt.Sprintf("the tool call did not finish within %s", m.opts.CallTimeout), Retryable: true,
			Suggestion: "Retry, or check that the page responds; the browser state may have changed."}
	case errors.Is(callErr, context.Canceled):
		perr = &proxy.Error{Code: proxy.ETIMEOUT, Message: "the caller cancelled the tool call", Retryable: true}
	case errors.Is(callErr, upstream.ErrWorkerExited):
		perr = &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "the browser worker died during the call; it was not replayed", Retryable: true,
			Suggestion: "Retry: the next call starts a fresh worker for this session (element refs will be stale)."}
	default:
		perr = &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "upstream error: " + callErr.Error(), Retryable: true,
			Suggestion: "Retry; if it persists check GET /health."}
	}
	perr.Details = map[string]any{"session_id": l.id, "ref_id": refID}
	if l.worker != nil {
		select {
		case <-l.worker.Done():
			closeWorker(l.worker, m.log)
			l.setWorker(nil)
		default:
			if errors.Is(callErr, upstream.ErrWorkerExited) {
				closeWorker(l.worker, m.log)
				l.setWorker(nil)
			}
		}
	}
	resp := &proxy.Response{RefID: refID, Status: proxy.StatusError, ErrorMessage: perr.Message, Timestamp: at}
	if err := m.store.InsertResponse(ctx, resp, nil, nil); err != nil {
		m.log.Error("recording failed call", "ref_id", refID, "err", err)
	}
	m.log.Warn("tool call failed", "session_id", l.id, "ref_id", refID, "code", perr.Code, "err", callErr)
	return perr
}

// acquire returns the session's live handle with its lock held.
func (m *Manager) acquire(ctx context.Context, id string) (*live, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	for {
		m.mu.Lock()
		l := m.live[id]
		m.mu.Unlock()
		if l == nil {
			s, err := m.store.GetSession(ctx, id)
			if err != nil {
				return nil, err
			}
			if err := stateErr(s); err != nil {
				return nil, err
			}
			m.mu.Lock()
			if l = m.live[id]; l == nil {
				if len(m.live) >= m.opts.MaxSessions {
					m.mu.Unlock()
					return nil, &proxy.Error{Code: proxy.EMAXSESSIONS, Message: fmt.Sprintf("cannot resume %s: the limit of %d live sessions is reached", id, m.opts.MaxSessions),
						Retryable: true, Suggestion: "Close a session you no longer need or retry later."}
				}
				// A known session without a worker (e.g. after a server
				// restart): it resumes transparently in a fresh worker.
				l = &live{id: id, sem: make(chan struct{}, 1), hadWorker: true, lastActivity: s.LastActivity}
				if md := sessionMetadata(s.Metadata); md.LastURL != "" {
					l.lastURL = md.LastURL
				}
				m.live[id] = l
			}
			m.mu.Unlock()
		}
		if err := l.lock(ctx); err != nil {
			return nil, err
		}
		if l.closed {
			l.unlock()
			continue // re-read the state: it is closed now
		}
		return l, nil
	}
}

// ensureWorker gives l a live worker; it reports whether the session's
// browser state had to start afresh (old element refs are stale).
func (m *Manager) ensureWorker(ctx context.Context, l *live) (restored bool, err error) {
	if l.worker != nil {
		select {
		case <-l.worker.Done():
			m.log.Warn("session worker had exited; replacing it", "session_id", l.id, "worker_pid", l.worker.PID())
			closeWorker(l.worker, m.log)
			l.setWorker(nil)
		default:
			return false, nil
		}
	}
	w, err := m.worker(ctx)
	if err != nil {
		return false, err
	}
	l.setWorker(w)
	if err := m.store.UpdateSessionState(ctx, l.id, proxy.SessionActive); err != nil {
		m.log.Warn("marking session active", "session_id", l.id, "err", err)
	}
	restored = l.hadWorker
	l.hadWorker = true
	if restored && l.lastURL != "" {
		m.log.Info("session resumed in a new worker", "session_id", l.id, "worker_pid", w.PID(), "last_url", l.lastURL)
	}
	return restored, nil
}

type sessionMeta struct {
	LastURL string `json:"last_url"`
}

func sessionMetadata(raw json.RawMessage) sessionMeta {
	var md sessionMeta
	_ = json.Unmarshal(raw, &md) // metadata is advisory; absent fields stay empty
	return md
}

func stateErr(s *proxy.Session) error {
	switch s.State {
	case proxy.SessionClosed:
		e := proxy.Errorf(proxy.ESESSIONCLOSED, "session %s is closed", s.ID)
		e.Details = map[string]any{"session_id": s.ID}
		return e
	case proxy.SessionError:
		return &proxy.Error{Code: proxy.EUNAVAILABLE, Message: fmt.Sprintf("session %s failed too often and is in error state", s.ID), Retryable: false,
			Suggestion: "Create a new session with create_new_session.", Details: map[string]any{"session_id": s.ID}}
	}
	return nil
}

// Shutdown stops every worker and the pool. Sessions that were live are left
// suspended: their history stays and a later call resumes them.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	if m.shutdown {
		m.mu.Unlock()
		return nil
	}
	m.shutdown = true
	lives := make([]*live, 0, len(m.live))
	for _, l := range m.live {
		lives = append(lives, l)
	}
	m.mu.Unlock()
	m.stop()
	m.bg.Wait()

	var wg sync.WaitGroup
	for _, l := range lives {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Wait for the call in flight, but not past the budget.
			locked := l.lock(ctx) == nil
			w := l.worker
			if locked {
				l.setWorker(nil)
				l.closed = true
				l.unlock()
			}
			if w != nil {
				closeWorker(w, m.log)
			}
			if err := m.store.UpdateSessionState(context.WithoutCancel(ctx), l.id, proxy.SessionSuspended); err != nil {
				m.log.Warn("suspending session at shutdown", "session_id", l.id, "err", err)
			}
		}()
	}
	for {
		select {
		case w := <-m.pool:
			wg.Add(1)
			go func() { defer wg.Done(); closeWorker(w, m.log) }()
			continue
		default:
		}
		break
	}
	wg.Wait()
	return nil
}

func closeWorker(w Worker, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		log.Warn("stopping worker", "worker_pid", w.PID(), "err", err)
	}
}

func (l *live) lock(ctx context.Context) error {
	select {
	case l.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &proxy.Error{Code: proxy.ETIMEOUT, Message: "timed out waiting for the session's previous call to finish", Retryable: true,
			Details: map[string]any{"session_id": l.id}}
	}
}

func (l *live) unlock() { <-l.sem }

// pid reads the worker's pid without waiting for a call in flight.
func (l *live) pid() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.workerPID
}

// setWorker replaces the worker; the caller holds sem.
func (l *live) setWorker(w Worker) {
	l.worker = w
	l.mu.Lock()
	defer l.mu.Unlock()
	l.workerPID = 0
	if w != nil {
		l.workerPID = w.PID()
	}
}

func (l *live) setBusy(b bool, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.busy = b
	l.lastActivity = now
}

func normaliseParams(p json.RawMessage) (json.RawMessage, error) {
	if len(p) == 0 || string(p) == "null" {
		return json.RawMessage(`{}`), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(p, &obj); err != nil {
		return nil, proxy.Errorf(proxy.EINVALID, "params must be a JSON object: %v", err)
	}
	return p, nil
}

func validID(id string) error {
	if id == "" {
		return proxy.Errorf(proxy.EINVALID, "session_id is required")
	}
	if _, err := uuid.Parse(id); err != nil {
		e := proxy.Errorf(proxy.ESESSIONMISSING, "no session %q", id)
		e.Details = map[string]any{"session_id": id}
		return e
	}
	return nil
}

func validRef(ref string) error {
	if len(ref) > 128 {
		return proxy.Errorf(proxy.EINVALID, "request_id is longer than 128 characters")
	}
	if _, err := uuid.Parse(ref); err != nil {
		return proxy.Errorf(proxy.EINVALID, "request_id must be a UUID: %v", err)
	}
	return nil
}

// SpawnFunc adapts a function to Spawner.
type SpawnFunc func(ctx context.Context) (Worker, error)

// Spawn implements Spawner.
func (f SpawnFunc) Spawn(ctx context.Context) (Worker, error) { return f(ctx) }

// Check reports whether the manager accepts work, for /health.
func (m *Manager) Check(context.Context) error { return m.checkOpen() }
