// Package session owns the lifecycle of browser sessions: which worker serves
// which session, the warm pool of spare workers, and the recording of every
// call: a tool call's request row is committed before the worker sees the
// call, and its response row (or its failure) written after; the only
// worker calls without rows are the manager's own housekeeping (a page read
// for an MCP resource, closing the browser, state saves, pings, taking a
// page off one of the proxy's addresses). It never talks to
// HTTP or MCP clients and never parses SQL; it must never hold a store
// transaction open while a worker is called.
//
// Manager is the package's service (proxy.SessionService), composed of
// parts each with one job: the registry of live sessions, their slots and
// which of them are idle (registry.go); the warm pool, where every worker
// comes from (pool.go); and the supervisor, which keeps the workers under
// sessions alive and their browser state saved (supervisor.go). A
// session's lifecycle reads top to bottom in lifecycle.go, a tool call's
// path in call.go.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// Worker is the session layer's name for a worker (worker.Worker), kept so
// that spawners and fakes need not import the contract's package.
type Worker = worker.Worker

// Observer learns how each call ended (metrics). It must not block.
type Observer interface {
	// ObserveCall reports a call forwarded to a worker: status is
	// "success", "error" (the tool failed in the browser) or the proxy
	// error code; stored and returned are the bytes kept in the record and
	// the bytes of the answer given back.
	ObserveCall(tool, status string, d time.Duration, stored, returned int)
	// ObserveRefused reports a call refused before it reached a worker,
	// with its proxy error code (DOMAIN_BLOCKED, INVALID_PARAMETERS,
	// TOOL_NOT_FOUND, SESSION_NOT_FOUND…). tool is "unknown" for a name
	// the server does not know, so clients cannot mint label values.
	ObserveRefused(tool, code string)
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
	SaveSessionState(ctx context.Context, id string, state json.RawMessage, at time.Time) error
	LoadSessionState(ctx context.Context, id string) (json.RawMessage, time.Time, error)
	InsertRequest(ctx context.Context, r *proxy.Request) error
	GetRequest(ctx context.Context, refID string) (*proxy.Request, error)
	InsertResponse(ctx context.Context, r *proxy.Response, console []proxy.ConsoleEntry, images []proxy.Image) error
	// RecordResponse is InsertResponse plus the session's activity, in one
	// transaction.
	RecordResponse(ctx context.Context, r *proxy.Response, console []proxy.ConsoleEntry, images []proxy.Image, downloads []proxy.Download, act *proxy.SessionActivity) error
	GetResponse(ctx context.Context, refID string) (*proxy.Response, error)
	AddSessionEvent(ctx context.Context, e proxy.SessionEvent) error
}

// Options tune a Manager; zero values get the defaults of
// docs/CONFIGURATION.md.
type Options struct {
	MaxSessions int
	IdleTimeout time.Duration
	WarmPool    int
	CallTimeout time.Duration
	// PingInterval is how often idle workers are pinged; 0 disables it.
	PingInterval time.Duration
	// MaxConcurrentCalls bounds the tool calls running in upstream at once
	// across all sessions (0: no bound). Past it, calls queue in the proxy
	// instead of overloading the browser, where they would time out.
	MaxConcurrentCalls int
	FullResponses      bool // PROXY_RESPONSE_MODE=full
	InlineResultMax    int
	// ChangesMax bounds, in bytes, the summary of what a call changed on
	// the page that comes with its answer (PROXY_CHANGES_MAX); past it the
	// answer carries the counts only. 0 takes DefaultChangesMax, below 0
	// keeps counts only.
	ChangesMax int
	// MaxDownloadBytes is the largest download stored with its call
	// (PROXY_MAX_DOWNLOAD_BYTES); a bigger one is described, not kept. 0
	// keeps every download whole.
	MaxDownloadBytes int64
	Logger           *slog.Logger
	// Observer, if set, learns the outcome of every forwarded call.
	Observer Observer
	// Policy, if set, refuses calls (navigation policy, switched-off tools)
	// before they are recorded or forwarded, and masks secrets in all that
	// is recorded or returned; nil allows everything.
	Policy Policy
	// Toolset is the tool groups listed and callable (PROXY_TOOLSETS) for
	// requests that carry no choice of their own (toolset.WithSelection);
	// the zero value is toolset.DefaultGroups.
	Toolset toolset.Selection
	// OwnBrowsers says every worker launches a browser process of its own
	// (PROXY_BROWSER_MODE=per-session): only then are upstream's tools that
	// reach outside the page offered, in tool group unsafe. The zero value
	// assumes a shared browser and never offers them.
	OwnBrowsers bool
	// MaxSessionMemory restarts, with its state, a session whose worker and
	// renderers hold more resident bytes than this when it is pinged
	// (PROXY_MAX_SESSION_MEMORY); 0 means no limit.
	MaxSessionMemory int64
	// Profiles is what MCP clients may do with login profiles
	// (PROXY_PROFILES; "" is proxy.ProfilesSave). The operator (a caller
	// that is no MCP client) may do everything whatever it says.
	Profiles string
	// MaxProfileBytes bounds a profile's storage state
	// (PROXY_PROFILE_MAX_BYTES); 0 takes DefaultMaxProfileBytes.
	MaxProfileBytes int64
	// restartBackoff is the first restart delay (tests shorten it).
	restartBackoff time.Duration
	// restartTimeLimit bounds one background restart (default 2 min).
	restartTimeLimit time.Duration
	// saveDelay is the quiet time before a background state save.
	saveDelay time.Duration
	// handOutPing bounds the ping a pooled worker must answer before a
	// session gets it (default handOutPingTimeout).
	handOutPing time.Duration
	// Devices is the device catalogue a session's device option is looked
	// up in; nil refuses the option.
	Devices DeviceCatalog
	// ControlIdleTimeout ends a person's control of a session after this
	// long without a sign of its holder (PROXY_CONTROL_IDLE_TIMEOUT); 0
	// takes DefaultControlIdleTimeout.
	ControlIdleTimeout time.Duration
	// LiveURL is the address of session id's live view, given to agents
	// and shown with the session; nil (or "") when the server shows none.
	LiveURL func(id string) string
	// Clock tells the time of everything recorded (rows, events, restart
	// windows, call durations) and times every wait of the manager: its
	// backoffs (a worker's restart, the warm pool's respawn), the ping and
	// idle-sweep intervals, the state save's quiet spell, its bounded
	// waits for a session's lock and its waits for a person (a
	// request_human timeout, a control's idle end); nil is the wall clock.
	Clock clock.Clock
	// pingTimeout bounds one ping of the ping loop (default: the interval,
	// within minPingTimeout and maxPingTimeout).
	pingTimeout time.Duration
}

// Manager maps session ids to live workers and records every call. It owns
// what the parts share: the store, the options, the counters, and the end
// of background work at Shutdown.
type Manager struct {
	opts  Options
	store Store
	// profiles is the store's part that keeps login profiles; nil when the
	// store keeps none (every profile operation is then unavailable).
	profiles ProfileStore
	log      *slog.Logger

	reg  *registry   // the live sessions
	pool *pool       // where workers come from
	sup  *supervisor // what keeps the live sessions' workers alive

	mu        sync.Mutex
	discovery *toolDiscovery // the worker start learning tools, if any
	shutdown  bool

	upstream chan struct{} // admission to upstream calls; nil: unbounded
	stop     context.CancelFunc
	done     <-chan struct{} // closed by Shutdown: background work ends
	bg       sync.WaitGroup  // pool filler and idle sweeper
	stats    stats
	catalog  *catalog.Catalog // the tools calls are resolved and checked against
	creds    credentials      // values typed through placeholders, never recorded
	human    humans           // people holding sessions' browsers, agents waiting for them
	clock    clock.Clock
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
	opts.Clock = clock.Or(opts.Clock)
	if opts.Policy == nil {
		opts.Policy = openPolicy{}
	}
	if opts.Toolset.Empty() {
		opts.Toolset, _ = toolset.Select(nil) // the defaults always parse
	}
	if opts.restartBackoff <= 0 {
		opts.restartBackoff = firstBackoff
	}
	if opts.saveDelay <= 0 {
		opts.saveDelay = saveDelay
	}
	if opts.Profiles == "" {
		opts.Profiles = proxy.ProfilesSave
	}
	if opts.MaxProfileBytes <= 0 {
		opts.MaxProfileBytes = DefaultMaxProfileBytes
	}
	if opts.ControlIdleTimeout <= 0 {
		opts.ControlIdleTimeout = DefaultControlIdleTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	var sem chan struct{}
	if opts.MaxConcurrentCalls > 0 {
		sem = make(chan struct{}, opts.MaxConcurrentCalls)
	}
	m := &Manager{
		opts:     opts,
		store:    store,
		log:      opts.Logger,
		reg:      newRegistry(opts.MaxSessions),
		upstream: sem,
		stop:     cancel,
		done:     ctx.Done(),
		clock:    opts.Clock,
	}
	m.profiles, _ = store.(ProfileStore)
	tracked := spawnTracker{Spawner: spawner, stats: &m.stats, now: opts.Clock.Now} // for CheckWorkers
	m.pool = newPool(opts.WarmPool, opts.handOutPing, tracked, &m.stats, opts.Clock, opts.Logger)
	m.sup = &supervisor{opts: opts, store: store, log: opts.Logger, stats: &m.stats, reg: m.reg, pool: m.pool, done: m.done, tracing: make(chan struct{}, 1),
		engaged: m.human.engaged}
	m.catalog = catalog.New(m.upstreamTools, catalog.Options{ToolEnabled: opts.Policy.ToolEnabled, Default: opts.Toolset, OwnBrowsers: opts.OwnBrowsers, Profiles: opts.Profiles})
	if opts.WarmPool > 0 {
		m.bg.Add(1)
		go func() {
			defer m.bg.Done()
			m.pool.fill(ctx)
		}()
	}
	if opts.IdleTimeout > 0 {
		m.bg.Add(1)
		go m.suspendIdle(ctx)
	}
	if opts.PingInterval > 0 {
		m.sup.goTask(func() { m.sup.pingLoop(opts.PingInterval) })
	}
	return m
}

// Tools is the tool catalogue for the groups ctx selects. Upstream's part
// is discovered with tools/list from a worker (never hard-coded: schemas
// change between upstream versions).
func (m *Manager) Tools(ctx context.Context) ([]proxy.Tool, error) {
	return m.catalog.List(ctx)
}

// toolDiscoveryLimit bounds the worker start that learns upstream's tools.
const toolDiscoveryLimit = 2 * time.Minute

// toolDiscovery is one worker start whose only purpose is tools/list; every
// caller that needs the list meanwhile waits for the same one.
type toolDiscovery struct {
	done chan struct{}
	err  error // set before done closes
}

// upstreamTools is every tool upstream offers, switched off or not.
//
// The first caller starts a worker to learn the list, detached from its own
// context: a caller with a short budget (a /health check on a loaded
// machine) would otherwise abandon the start each time, and the list would
// never be learned. The worker then goes to the pool.
func (m *Manager) upstreamTools(ctx context.Context) ([]proxy.Tool, error) {
	m.mu.Lock()
	if tools := m.pool.knownTools(); tools != nil {
		m.mu.Unlock()
		return tools, nil
	}
	d := m.discovery
	if d == nil {
		d = &toolDiscovery{done: make(chan struct{})}
		m.discovery = d
		if !m.sup.goTask(func() { m.discoverTools(d) }) {
			d.err = errShuttingDown()
			close(d.done)
		}
	}
	m.mu.Unlock()
	select {
	case <-d.done:
	case <-ctx.Done():
		return nil, &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "upstream's tool list is not known yet: the first browser worker is still starting", Retryable: true,
			Suggestion: "Retry in a few seconds."}
	}
	if d.err != nil {
		return nil, d.err
	}
	return m.pool.knownTools(), nil
}

func (m *Manager) discoverTools(d *toolDiscovery) {
	ctx, cancel := context.WithTimeout(context.Background(), toolDiscoveryLimit)
	defer cancel()
	go func() { // Shutdown ends the start
		select {
		case <-m.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	w, err := m.pool.get(ctx, upstream.Shape{})
	if err == nil {
		m.pool.put(w)
	}
	m.mu.Lock()
	d.err = err
	m.discovery = nil // a failed start is tried again by the next caller
	m.mu.Unlock()
	close(d.done)
}

func (m *Manager) checkOpen() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shutdown {
		return errShuttingDown()
	}
	return nil
}

func errShuttingDown() error {
	return &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "proxy-server is shutting down", Retryable: true,
		Suggestion: "Retry once the server is back."}
}

func closeWorker(w Worker, log *slog.Logger) { stopWorker(context.Background(), w, log) }

// stopWorker stops w within ctx, and 8 s at most: a ctx about to end cuts
// the polite steps of the stop short, down to SIGKILL (at shutdown, what
// is left of its budget).
func stopWorker(ctx context.Context, w Worker, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		log.Warn("stopping worker", "worker_pid", w.PID(), "err", err)
	}
}

// killWorker stops a worker that answers nothing at once: the polite steps
// of a stop (stdin closed, SIGTERM, each waited for) would only delay its
// replacement.
func killWorker(w Worker, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	if err := w.Kill(ctx); err != nil {
		log.Warn("killing worker", "worker_pid", w.PID(), "err", err)
	}
}

// withSessionID names the session in a proxy error's details (the model
// must know which session an error is about), leaving others as they are.
func withSessionID(err error, id string) error {
	var e *proxy.Error
	if !errors.As(err, &e) {
		return err
	}
	if _, ok := e.Details["session_id"]; ok {
		return err
	}
	cp := *e
	cp.Details = map[string]any{"session_id": id}
	for k, v := range e.Details {
		cp.Details[k] = v
	}
	return &cp
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

// SpawnFunc adapts a function to Spawner.
type SpawnFunc func(ctx context.Context) (Worker, error)

// Spawn implements Spawner.
func (f SpawnFunc) Spawn(ctx context.Context) (Worker, error) { return f(ctx) }

// Check reports whether the manager accepts work, for /health.
func (m *Manager) Check(context.Context) error { return m.checkOpen() }

var _ proxy.SessionService = (*Manager)(nil)
