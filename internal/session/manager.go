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
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// Worker is one upstream @playwright/mcp process (real: *upstream.Worker).
type Worker interface {
	Tools() []proxy.Tool
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
	Ping(ctx context.Context) error
	PID() int
	OutputDir() string
	Done() <-chan struct{}
	Close(ctx context.Context) error
	// Kill stops the worker at once, without Close's polite steps: for a
	// worker that answers nothing. Like Close it reaps the process and
	// removes OutputDir.
	Kill(ctx context.Context) error
	// SaveState captures what the session needs to come back in another
	// worker (URL, cookies, localStorage) as opaque JSON.
	SaveState(ctx context.Context) (json.RawMessage, error)
	// RestoreState puts a saved state into this (fresh) worker.
	RestoreState(ctx context.Context, state json.RawMessage) error
	// RSS is the resident memory of the worker's process group, in bytes.
	RSS() int64
}

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
	SetSessionMetadata(ctx context.Context, id string, md json.RawMessage) error
	SaveSessionState(ctx context.Context, id string, state json.RawMessage, at time.Time) error
	LoadSessionState(ctx context.Context, id string) (json.RawMessage, time.Time, error)
	InsertRequest(ctx context.Context, r *proxy.Request) error
	GetRequest(ctx context.Context, refID string) (*proxy.Request, error)
	InsertResponse(ctx context.Context, r *proxy.Response, console []proxy.ConsoleEntry, images []proxy.Image) error
	// RecordResponse is InsertResponse plus the session's activity, in one
	// transaction.
	RecordResponse(ctx context.Context, r *proxy.Response, console []proxy.ConsoleEntry, images []proxy.Image, act *proxy.SessionActivity) error
	GetResponse(ctx context.Context, refID string) (*proxy.Response, error)
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
	Logger     *slog.Logger
	Now        func() time.Time
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
	// restartBackoff is the first restart delay (tests shorten it).
	restartBackoff time.Duration
	// sleep waits out a restart backoff; nil is a timer (tests record the
	// delays asked for instead of waiting).
	sleep func(ctx context.Context, d time.Duration) error
	// restartTimeLimit bounds one background restart (default 2 min).
	restartTimeLimit time.Duration
	// saveDelay is the quiet time before a background state save.
	saveDelay time.Duration
	// handOutPing bounds the ping a pooled worker must answer before a
	// session gets it (default handOutPingTimeout).
	handOutPing time.Duration
	// pingTimeout bounds one ping of the ping loop (default: the interval,
	// within minPingTimeout and maxPingTimeout).
	pingTimeout time.Duration
}

// Manager maps session ids to live workers and records every call.
type Manager struct {
	opts    Options
	store   Store
	spawner Spawner
	log     *slog.Logger

	mu       sync.Mutex
	live     map[string]*live
	reserved int // slots promised to creates and resumes in progress

	transitions map[string]*transitionLock
	tools       []proxy.Tool
	discovery   *toolDiscovery // the worker start learning tools, if any
	shutdown    bool
	// tasksEnding: Shutdown waits for the background tasks; no more start.
	tasksEnding bool

	pool     chan Worker
	poolKick chan struct{}
	// spares are the workers in pool, with their pings (guarded by mu). A
	// worker is in spares before it enters the pool and leaves it when
	// taken out: whoever removes it owns it.
	spares map[Worker]*spare
	// spareLost: the ping loop dropped a spare that is still in pool.
	spareLost atomic.Bool

	upstream chan struct{} // admission to upstream calls; nil: unbounded
	stop     context.CancelFunc
	done     <-chan struct{} // closed by Shutdown: background work ends
	bg       sync.WaitGroup  // pool filler and idle sweeper
	tasks    sync.WaitGroup  // watchers, restarts, pings, state saves
	stats    stats
	catalog  *catalog.Catalog // the tools calls are resolved and checked against
	creds    credentials      // values typed through placeholders, never recorded
}

// live is a session that may have a worker. sem serialises everything that
// touches the worker: calls on one page must not interleave, and a close must
// wait for the call in flight.
type live struct {
	id    string
	owner proxy.ClientID // never changes
	sem   chan struct{}

	// Guarded by sem.
	worker    Worker
	hadWorker bool
	retired   bool // closed, suspended or failed: this handle is out of m.live
	// lastPage is the session's page as its last call saw it: its URL is
	// the session's last_url, its snapshot what the next call's changes are
	// measured against (none when its refs no longer hold: a new worker).
	lastPage content.Page
	crashed  bool // the worker died under the session
	// restored: a new worker got the saved state and no call has said so
	// yet (a background restart cannot tell anyone itself).
	restored bool
	diedAt   time.Time // when it was noticed
	// excused: the worker was lost with the shared browser, through no
	// fault of its own or its page's; its restart uses none of the budget.
	excused bool

	// Guarded by mu, readable without waiting for a call in flight.
	mu           sync.Mutex
	lastActivity time.Time
	quietSince   time.Time // wall clock of the last call's end (Options.Now may be fake)
	calls        int       // calls in flight or waiting for sem: the session is busy
	current      Worker
	dirty        bool // browser state may have changed since the last save
	saving       bool // a background save is scheduled or running
	pinging      bool
	pingFailures int
	restarts     []time.Time // replacements after crashes of its own, for the budget
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
	ctx, cancel := context.WithCancel(context.Background())
	var sem chan struct{}
	if opts.MaxConcurrentCalls > 0 {
		sem = make(chan struct{}, opts.MaxConcurrentCalls)
	}
	m := &Manager{
		opts:        opts,
		store:       store,
		spawner:     spawner,
		log:         opts.Logger,
		live:        make(map[string]*live),
		transitions: make(map[string]*transitionLock),
		pool:        make(chan Worker, max(opts.WarmPool, 1)),
		spares:      make(map[Worker]*spare),
		poolKick:    make(chan struct{}, 1),
		upstream:    sem,
		stop:        cancel,
		done:        ctx.Done(),
	}
	m.spawner = spawnTracker{Spawner: spawner, stats: &m.stats, now: opts.Now} // for CheckWorkers
	m.catalog = catalog.New(m.upstreamTools, opts.Policy, opts.Toolset, opts.Logger)
	if opts.WarmPool > 0 {
		m.bg.Add(1)
		go m.fillPool(ctx)
	}
	if opts.IdleTimeout > 0 {
		m.bg.Add(1)
		go m.suspendIdle(ctx)
	}
	if opts.PingInterval > 0 {
		m.tasks.Add(1)
		go m.pingLoop(opts.PingInterval)
	}
	return m
}

// fillPool keeps WarmPool initialised workers ready so that a create does not
// wait for a process start.
func (m *Manager) fillPool(ctx context.Context) {
	defer m.bg.Done()
	backoff := time.Second
	for {
		m.dropDeadSpares()
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
			m.addSpare(w)
			select {
			case m.pool <- w:
				m.log.Debug("spare worker ready", "worker_pid", w.PID())
				continue
			default:
				m.takeSpare(w)
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

// worker returns a ready worker: a warm one that answers a ping if any,
// else a fresh spawn.
func (m *Manager) worker(ctx context.Context) (Worker, error) {
	for {
		select {
		case w := <-m.pool:
			m.kickPool()
			if !m.takeSpare(w) {
				continue // its pings failed: the ping loop is killing it
			}
			select {
			case <-w.Done():
				continue // died while waiting in the pool
			default:
			}
			if m.answers(ctx, w) {
				return w, nil
			}
			if err := ctx.Err(); err != nil {
				m.putSpare(w) // the caller gave up; the worker may be fine
				return nil, fmt.Errorf("waiting for a warm browser worker: %w", err)
			}
			continue
		default:
		}
		m.kickPool()
		w, err := m.spawner.Spawn(ctx)
		var refused *proxy.Error
		if errors.As(err, &refused) {
			return nil, refused // placement's answer: every browser node full or down
		}
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
	if m.tools != nil {
		tools := m.tools
		m.mu.Unlock()
		return tools, nil
	}
	d := m.discovery
	if d == nil {
		d = &toolDiscovery{done: make(chan struct{})}
		m.discovery = d
		if m.tasksEnding {
			d.err = errShuttingDown()
			close(d.done)
		} else {
			m.tasks.Add(1)
			go m.discoverTools(d)
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
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tools, nil
}

func (m *Manager) discoverTools(d *toolDiscovery) {
	defer m.tasks.Done()
	ctx, cancel := context.WithTimeout(context.Background(), toolDiscoveryLimit)
	defer cancel()
	go func() { // Shutdown ends the start
		select {
		case <-m.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	w, err := m.worker(ctx)
	if err == nil {
		m.putSpare(w)
	}
	m.mu.Lock()
	d.err = err
	m.discovery = nil // a failed start is tried again by the next caller
	m.mu.Unlock()
	close(d.done)
}

// putSpare returns an unused worker to the pool, or stops it when full.
func (m *Manager) putSpare(w Worker) {
	m.mu.Lock()
	down := m.shutdown
	m.mu.Unlock()
	if !down {
		m.addSpare(w)
		select {
		case m.pool <- w:
			return
		default:
			m.takeSpare(w)
		}
	}
	closeWorker(w, m.log)
}

// Create starts a new isolated session.
func (m *Manager) CreateSession(ctx context.Context) (*proxy.Session, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	if err := m.reserve(ctx); err != nil {
		return nil, err
	}
	w, err := m.worker(ctx)
	if err != nil {
		m.unreserve()
		return nil, err
	}
	now := m.opts.Now().UTC()
	owner, _ := proxy.ClientFrom(ctx)
	s := &proxy.Session{ID: uuid.NewString(), CreatedAt: now, LastActivity: now, State: proxy.SessionActive, Metadata: json.RawMessage(`{}`), Owner: owner}
	if err := m.store.CreateSession(ctx, s); err != nil {
		m.unreserve()
		m.putSpare(w)
		return nil, fmt.Errorf("recording new session: %w", err)
	}
	l := &live{id: s.ID, owner: owner, sem: make(chan struct{}, 1), hadWorker: true, lastActivity: now}
	l.sem <- struct{}{} // nobody can see l yet; assign wants the lock held
	m.assign(l, w)
	l.unlock()
	m.mu.Lock()
	m.live[s.ID] = l
	m.reserved--
	m.mu.Unlock()
	m.stats.created.Add(1)
	m.log.Info("session created", "session_id", s.ID, "worker_pid", w.PID())
	return m.withExpiry(s), nil
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

// withExpiry fills the derived fields of s. For a live session the
// in-memory activity time is the truth (the idle sweeper goes by it; the
// stored one is written when a call ends).
func (m *Manager) withExpiry(s *proxy.Session) *proxy.Session {
	m.mu.Lock()
	l := m.live[s.ID]
	m.mu.Unlock()
	if l != nil {
		l.mu.Lock()
		s.LastActivity = l.lastActivity.UTC()
		w := l.current
		l.mu.Unlock()
		if w != nil {
			s.WorkerPID, s.RSSBytes, s.Node = w.PID(), w.RSS(), nodeOf(w)
		}
		left := l.restartsLeft(m.opts.Now())
		s.RestartsLeft = &left
	}
	if m.opts.IdleTimeout > 0 && (s.State == proxy.SessionActive || s.State == proxy.SessionSuspended) {
		s.ExpiresAt = s.LastActivity.Add(m.opts.IdleTimeout)
	}
	return s
}

// Get returns one session the caller may see (proxy.CanSee).
func (m *Manager) GetSession(ctx context.Context, id string) (*proxy.Session, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	s, err := m.session(ctx, id)
	if err != nil {
		return nil, err
	}
	return m.withExpiry(s), nil
}

// session reads a session from the store for the caller of ctx: one that
// belongs to another client is SESSION_NOT_FOUND, word for word as an
// unknown id, so no answer tells the two apart.
func (m *Manager) session(ctx context.Context, id string) (*proxy.Session, error) {
	s, err := m.store.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	if !proxy.CanSee(ctx, s.Owner) {
		return nil, proxy.SessionNotFound(id)
	}
	return s, nil
}

// List returns every session the caller may see, newest first.
func (m *Manager) ListSessions(ctx context.Context) ([]*proxy.Session, error) {
	all, err := m.store.ListSessions(ctx)
	if err != nil {
		return nil, err
	}
	ss := all[:0]
	for _, s := range all {
		if proxy.CanSee(ctx, s.Owner) {
			ss = append(ss, m.withExpiry(s))
		}
	}
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].CreatedAt.After(ss[j].CreatedAt) })
	return ss, nil
}

// Close stops a session's worker; its history stays readable.
func (m *Manager) CloseSession(ctx context.Context, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	// The transition lock keeps a concurrent resume from bringing the
	// session back between our look-up and the state change.
	unlock := m.transition(id)
	defer unlock()
	s, err := m.session(ctx, id)
	if err != nil {
		return err
	}
	if s.State == proxy.SessionClosed {
		return nil
	}
	m.mu.Lock()
	l := m.live[id]
	m.mu.Unlock()
	var w Worker
	if l != nil {
		if err := l.lock(ctx); err != nil {
			return err
		}
		defer l.unlock()
		w = l.worker
		l.setWorker(nil)
		l.retired = true
	}
	// The stored state changes before the handle leaves m.live, so whoever
	// finds the handle gone reads "closed".
	if err := m.store.UpdateSessionState(context.WithoutCancel(ctx), id, proxy.SessionClosed); err != nil {
		return fmt.Errorf("recording session close: %w", err)
	}
	if l != nil {
		m.mu.Lock()
		if m.live[id] == l {
			delete(m.live, id)
		}
		m.mu.Unlock()
	}
	if w != nil {
		closeWorker(w, m.log)
	}
	m.log.Info("session closed", "session_id", id)
	return nil
}

// transition serialises the lifecycle changes of one session id that do not
// go through its live handle (a close or a resume of a session without a
// worker). It returns the unlock function.
func (m *Manager) transition(id string) func() {
	m.mu.Lock()
	t := m.transitions[id]
	if t == nil {
		t = &transitionLock{}
		m.transitions[id] = t
	}
	t.refs++
	m.mu.Unlock()
	t.mu.Lock()
	return func() {
		t.mu.Unlock()
		m.mu.Lock()
		if t.refs--; t.refs == 0 {
			delete(m.transitions, id)
		}
		m.mu.Unlock()
	}
}

type transitionLock struct {
	mu   sync.Mutex
	refs int // guarded by Manager.mu
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
			var err error
			if l, err = m.revive(ctx, id); err != nil {
				return nil, withSessionID(err, id)
			}
		}
		if !proxy.CanSee(ctx, l.owner) {
			return nil, withSessionID(proxy.SessionNotFound(id), id)
		}
		// Counted before waiting: a session with a call queued is busy, so
		// neither eviction nor a background save takes it from under the call.
		l.enter()
		if err := l.lock(ctx); err != nil {
			l.leave(m.opts.Now())
			return nil, err
		}
		if l.retired {
			l.unlock()
			l.leave(m.opts.Now())
			continue // closed, suspended or failed meanwhile: re-read its state
		}
		return l, nil
	}
}

// release ends what acquire began and saves the session's browser state in
// the background if the call may have changed it.
func (m *Manager) release(l *live) {
	l.unlock()
	// The activity time is when the call ends.
	l.leave(m.opts.Now())
	m.saveSoon(l)
}

// revive makes a live handle for a known session that has none (suspended,
// or left by an earlier server): it resumes in a fresh worker, in a slot of
// its own.
func (m *Manager) revive(ctx context.Context, id string) (*live, error) {
	unlock := m.transition(id)
	defer unlock()
	m.mu.Lock()
	l := m.live[id]
	m.mu.Unlock()
	if l != nil {
		return l, nil // revived meanwhile
	}
	s, err := m.session(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := stateErr(s); err != nil {
		return nil, err
	}
	if err := m.reserve(ctx); err != nil {
		return nil, err
	}
	l = &live{id: id, owner: s.Owner, sem: make(chan struct{}, 1), hadWorker: true, lastActivity: m.opts.Now()}
	if md := sessionMetadata(s.Metadata); md.LastURL != "" {
		l.lastPage.URL = md.LastURL
	}
	m.mu.Lock()
	m.live[id] = l
	m.reserved--
	m.mu.Unlock()
	return l, nil
}

// ensureWorker gives l a live worker; it reports whether the session's
// browser state had to start afresh (old element refs are stale).
func (m *Manager) ensureWorker(ctx context.Context, l *live) (restored bool, err error) {
	if l.worker != nil {
		select {
		case <-l.worker.Done():
			m.log.WarnContext(ctx, "session worker had exited; replacing it", "session_id", l.id, "worker_pid", l.worker.PID())
			m.workerLost(l)
		default:
			return false, nil
		}
	}
	if l.crashed {
		if err := m.allowRestart(ctx, l); err != nil {
			return false, err
		}
	}
	w, err := m.worker(ctx)
	if err != nil {
		return false, err
	}
	m.assign(l, w)
	l.crashed, l.excused = false, false
	l.clearPings()
	if err := m.store.UpdateSessionState(ctx, l.id, proxy.SessionActive); err != nil {
		m.log.WarnContext(ctx, "marking session active", "session_id", l.id, "err", err)
	}
	restored = l.hadWorker
	l.hadWorker = true
	if restored {
		m.restore(ctx, l, w)
		l.restored = true
		m.stats.restored.Add(1)
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
		return failedErr(s.ID)
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
			// Wait for the call in flight, but not into the part of the
			// budget kept for stopping the worker; then save the state so
			// the session resumes after a restart.
			lctx, cancel := shutdownBudget(ctx)
			err := l.lock(lctx)
			cancel()
			if err == nil {
				if !l.retired {
					m.suspendLocked(ctx, l, reasonShutdown)
				}
				l.unlock()
				return
			}
			if w := l.currentWorker(); w != nil {
				stopWorker(ctx, w, m.log)
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
			go func() { defer wg.Done(); stopWorker(ctx, w, m.log) }()
			continue
		default:
		}
		break
	}
	wg.Wait()
	// Watchers, pings and saves end on m.done; a restart in progress ends
	// once its spawn does. None starts from here on (goTask).
	m.mu.Lock()
	m.tasksEnding = true
	m.mu.Unlock()
	m.tasks.Wait()
	return nil
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

// currentWorker reads the worker without waiting for a call in flight.
func (l *live) currentWorker() Worker {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current
}

// setWorker replaces the worker; the caller holds sem.
func (l *live) setWorker(w Worker) {
	l.worker = w
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current = w
}

// takeRestored reports, once, that the session's worker was replaced and
// given the saved state. The caller holds sem.
func (l *live) takeRestored() bool {
	r := l.restored
	l.restored = false
	return r
}

// enter counts a call that wants the session.
func (l *live) enter() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
}

// leave ends what enter began.
func (l *live) leave(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls--
	l.lastActivity = now
	l.quietSince = time.Now()
}

// busy reports whether a call is in flight or queued.
func (l *live) busy() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls > 0
}

// lockWithin takes sem, waiting at most d: eviction waits for a state save
// or a restart, never for a call (it checks busy first and again after).
func (l *live) lockWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case l.sem <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

func (l *live) doneSaving() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.saving = false
}

// startPing reports whether a ping may start now: not while a call is in
// flight (busy is not dead) nor while the last ping is outstanding.
func (l *live) startPing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls > 0 || l.pinging {
		return false
	}
	l.pinging = true
	return true
}

func (l *live) endPing() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pinging = false
}

// pingResult counts a ping's outcome; a failure while a call started
// meanwhile does not count. It returns the consecutive failures and
// whether the worker is fine.
func (l *live) pingResult(err error) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil || l.calls > 0 {
		l.pingFailures = 0
		return 0, true
	}
	l.pingFailures++
	return l.pingFailures, false
}

func (l *live) clearPings() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pingFailures = 0
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
