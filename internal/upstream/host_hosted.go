package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

const (
	// hostHeapPlaceFraction of a session host's heap cap is the heap in use
	// past which no new session is placed on it: an OOM takes every
	// session of the host down, and one heavy answer needs several times
	// a resting session's heap.
	hostHeapPlaceFraction = 0.6
	// hostPingMin and hostPingMax bound a session host's ping timeout, which
	// is otherwise the ping interval: the session layer's bounds for a
	// worker's ping.
	hostPingMin = time.Second
	hostPingMax = 10 * time.Second
	// hostPingFailLimit missed pings in a row mean the host hangs, as for
	// a worker: one late answer from a host busy with a huge page must not
	// take its K sessions down.
	hostPingFailLimit = 3
)

// workerSession adapts *Worker to worker.Worker: the session layer keeps
// browser state as opaque JSON, upstream knows its shape.
type workerSession struct{ *Worker }

func (w workerSession) SaveState(ctx context.Context) (json.RawMessage, error) {
	return SaveStateJSON(ctx, w.Worker)
}

func (w workerSession) RestoreState(ctx context.Context, state json.RawMessage) error {
	return RestoreStateJSON(ctx, w.Worker, state)
}

// SessionsPerWorker is how many sessions share one node process: K when
// the host runs sessions in session hosts, else 1 (a process per session).
func (h *Host) SessionsPerWorker() int {
	if h.hosted() {
		return h.cfg.SessionsPerWorker
	}
	return 1
}

// hosted reports whether sessions run in session hosts: asked for, and the
// browsers are ours (each host's own) or browser nodes', under Playwright
// browser servers.
func (h *Host) hosted() bool {
	return h.cfg.SessionsPerWorker > 1 && !h.cfg.PerSession && h.cfg.RemoteCDPEndpoint == "" && !h.cfg.ShareOverCDP
}

// ownBrowsers reports whether each session host runs a browser of its own
// for its sessions (hosted, no browser nodes): the sessions of a host share
// it, and there is no browser shared by the whole proxy.
func (h *Host) ownBrowsers() bool { return h.hosted() && h.cfg.Nodes == nil }

// SpawnSession starts one session for the session layer: a worker process
// of its own (SessionsPerWorker 1), or a session in a session host. Retries
// and the circuit breaker are Spawn's; a host that fails to start or to
// open the session counts as a worker that failed to start.
func (h *Host) SpawnSession(ctx context.Context) (worker.Worker, error) {
	if !h.hosted() {
		w, err := h.Spawn(ctx)
		if err != nil {
			return nil, err
		}
		return workerSession{w}, nil
	}
	return spawnGuarded(ctx, h, h.openHostedOnce)
}

// pooledHost is one session host of the Host, with what placement reads.
type pooledHost struct {
	sh *SessionHost
	// heapUsed is V8's heap in use at the host's last pong.
	heapUsed atomic.Int64
	// missed counts the pings in a row it did not answer in time; no
	// session is placed on a host that missed its last.
	missed atomic.Int32
	// placed counts the sessions placed on it, from their open to their
	// end; under Host.mu.
	placed int
	// retired: taken out of the pool, never placed on again; idle: stopped
	// for having no session. Both under Host.mu.
	retired, idle bool
	// release gives back the reservation of its browser's CDP port.
	release func()
	// browserLost is set once its own browser is known to have died.
	browserLost atomic.Bool
}

// hostHeapCapMB is the heap cap of a host of k sessions.
func hostHeapCapMB(k int) int { return hostHeapBaseMB + hostHeapPerSessionMB*k }

// openHostedOnce is one attempt at opening a session in a session host.
func (h *Host) openHostedOnce(ctx context.Context) (worker.Worker, error) {
	release, err := h.spawnSlot(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	shape := ShapeFrom(ctx)
	cfg, err := h.shapeWorker(h.cfg.Worker, shape)
	if err != nil {
		return nil, err
	}
	target, err := h.hostedTarget(ctx, cfg.Browser)
	if err != nil {
		return nil, err
	}
	ph, err := h.placeSession(ctx)
	if err != nil {
		target.release()
		return nil, err
	}
	dir, err := os.MkdirTemp(h.cfg.TempDir, "pwproxy-worker-*")
	if err != nil {
		h.unplace(ph)
		target.release()
		return nil, fmt.Errorf("creating worker output dir: %w", err)
	}
	s, err := ph.sh.Open(ctx, SessionSpec{
		OutputDir:      dir,
		Args:           h.cfg.Worker.ExtraArgs,
		ContextOptions: shape.Context,
		Endpoint:       target.endpoint,
		Headers:        target.headers,
		BrowserName:    target.browserName,
	})
	if err != nil {
		h.unplace(ph)
		target.release()
		os.RemoveAll(dir)
		var closed *sessionClosedError
		if errors.As(err, &closed) && strings.HasPrefix(closed.reason, "open failed: ") {
			return nil, fmt.Errorf("%w (session host %d): %w", ErrNoBrowser, ph.sh.PID(), err)
		}
		return nil, err
	}
	if target.own {
		s.debug, s.browserServer = ph.sh.DebugEndpoint(), true
	}
	if target.lease != nil {
		s.nodePlace = h.placedOn(target.lease.Node())
	}
	if !h.watchHosted(s, ph, target) {
		h.unplace(ph)
		target.release()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), watchStopTimeout)
		defer cancel()
		_ = s.Close(cctx)
		return nil, ErrHostClosed
	}
	return s, nil
}

// hostedTarget is the browser a hosted session connects to: its session
// host's own (own, no endpoint), or a place on a browser node.
type hostedTarget struct {
	endpoint    string
	headers     map[string]string
	browserName string
	own         bool
	lease       *nodes.Lease // the place on a node; nil for a host's own
}

// hostedTarget finds the browser for a session of engine browserName.
func (h *Host) hostedTarget(ctx context.Context, browserName string) (hostedTarget, error) {
	if h.ownBrowsers() {
		return hostedTarget{own: true}, nil
	}
	if h.cfg.Nodes != nil {
		lease, err := h.cfg.Nodes.Place(ctx, browserName)
		if err != nil {
			return hostedTarget{}, placementError{err}
		}
		ep := lease.Endpoint()
		headers := make(map[string]string, len(ep.Header))
		for k, v := range ep.Header {
			headers[k] = strings.Join(v, ", ")
		}
		return hostedTarget{endpoint: ep.URL, headers: headers, browserName: browserName, lease: lease}, nil
	}
	return hostedTarget{}, errors.New("session hosts run on their own browsers or on browser nodes")
}

// release gives the node's place back, when there is one.
func (t hostedTarget) release() {
	if t.lease != nil {
		t.lease.Release()
	}
}

// placeSession picks the session host for one more session and counts it
// there (unplace undoes that): a host with room whose heap at its last
// pong is below hostHeapPlaceFraction of its cap, else a new host. Host
// starts are one at a time: sessions asked for together fill one host
// rather than each starting its own.
func (h *Host) placeSession(ctx context.Context) (*pooledHost, error) {
	if ph, err := h.pickHost(); ph != nil || err != nil {
		return ph, err
	}
	select {
	case h.hostStarts <- struct{}{}:
		defer func() { <-h.hostStarts }()
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a session host to start: %w", ctx.Err())
	case <-h.life.Done():
		return nil, ErrHostClosed
	}
	// One may have started, or got room, while we waited.
	if ph, err := h.pickHost(); ph != nil || err != nil {
		return ph, err
	}
	return h.addSessionHost(ctx, 1)
}

// addSessionHost starts a session host, with placed sessions counted on
// it, and puts it in the pool under supervision. The caller holds a
// hostStarts slot.
func (h *Host) addSessionHost(ctx context.Context, placed int) (*pooledHost, error) {
	sh, err := h.startSessionHost(ctx, h.sessionHostConfig())
	h.mu.Lock()
	h.hostStartErr = err
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	ph := &pooledHost{sh: sh, placed: placed, release: sync.OnceFunc(h.reserve(sh.DebugEndpoint()))}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopStepTimeout)
		defer cancel()
		_ = sh.Kill(cctx)
		ph.release()
		return nil, ErrHostClosed
	}
	h.sessionHosts = append(h.sessionHosts, ph)
	h.bg.Add(1)
	h.mu.Unlock()
	go h.superviseSessionHost(ph)
	return ph, nil
}

// startFirstHost starts a session host with its browser and no session
// yet, unless one runs: a browser that cannot start fails the proxy's
// start, not its first session's.
func (h *Host) startFirstHost(ctx context.Context) error {
	select {
	case h.hostStarts <- struct{}{}:
		defer func() { <-h.hostStarts }()
	case <-ctx.Done():
		return fmt.Errorf("waiting for a session host to start: %w", ctx.Err())
	case <-h.life.Done():
		return ErrHostClosed
	}
	h.mu.Lock()
	running := slices.ContainsFunc(h.sessionHosts, func(ph *pooledHost) bool { return !ph.retired })
	h.mu.Unlock()
	if running {
		return nil
	}
	_, err := h.addSessionHost(ctx, 0)
	return err
}

// sessionHostConfig is the configuration of the Host's session hosts: the
// worker command's node and @playwright/mcp, its environment, a heap cap
// for K sessions, and a browser of its own unless its sessions are on
// browser nodes.
func (h *Host) sessionHostConfig() SessionHostConfig {
	k := h.cfg.SessionsPerWorker
	// A command without playwright-core is not hosted (config); Start then
	// fails with what node says.
	from, _ := PlaywrightFrom(h.cfg.Worker.Command)
	var browser *BrowserConfig
	if h.ownBrowsers() {
		b := h.cfg.Browser
		b.DebugPort = true
		browser = &b
	}
	return SessionHostConfig{
		Node:        h.cfg.Worker.Command[0],
		ResolveFrom: from,
		Browser:     browser,
		MaxSessions: k,
		MaxHeapMB:   hostHeapCapMB(k),
		Env:         append(slices.Clone(h.cfg.Worker.Env), h.instanceEnv()...),
		TempDir:     h.cfg.TempDir,
		Logger:      h.log,
		Clock:       h.cfg.Worker.Clock,
	}
}

// pickHost returns a host with room, the session counted there, or nil.
func (h *Host) pickHost() (*pooledHost, error) {
	k := h.cfg.SessionsPerWorker
	heapLimit := int64(hostHeapPlaceFraction * float64(hostHeapCapMB(k)) * (1 << 20))
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrHostClosed
	}
	for _, ph := range h.sessionHosts {
		if ph.retired || ph.sh.proc.dying() || ph.missed.Load() > 0 || ph.sh.unanswered.Load() || ph.heapUsed.Load() >= heapLimit {
			continue
		}
		if ph.placed < k {
			ph.placed++
			return ph, nil
		}
	}
	return nil, nil
}

// unplace uncounts a session of ph that ended or never opened; a host
// left with none is stopped unless it is the last.
func (h *Host) unplace(ph *pooledHost) {
	h.mu.Lock()
	ph.placed--
	h.mu.Unlock()
	h.retireIfIdle(ph)
}

// retireIfIdle stops ph if it holds no session, unless it is the only
// host: one is kept warm for the next session.
func (h *Host) retireIfIdle(ph *pooledHost) {
	h.mu.Lock()
	live := 0
	for _, o := range h.sessionHosts {
		if !o.retired {
			live++
		}
	}
	if h.closed || ph.retired || ph.placed > 0 || live <= 1 || ph.sh.proc.dying() {
		h.mu.Unlock()
		return
	}
	ph.retired, ph.idle = true, true
	h.bg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.bg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 2*stopStepTimeout+time.Second)
		defer cancel()
		if err := ph.sh.Close(ctx); err != nil {
			h.log.Warn("stopping an idle session host", "pid", ph.sh.PID(), "err", err)
		}
	}()
}

// dropHost takes ph out of the pool.
func (h *Host) dropHost(ph *pooledHost) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ph.retired = true
	h.sessionHosts = slices.DeleteFunc(h.sessionHosts, func(o *pooledHost) bool { return o == ph })
}

// watchHosted follows s until it ends: its browser node going down ends
// it (the host reports its connection dropped; this covers a host that
// does not get to; a host's own browser ends the host when it dies); its
// end gives its node's place back and may leave its host idle. false
// means the Host is closed.
func (h *Host) watchHosted(s *HostedSession, ph *pooledHost, t hostedTarget) bool {
	var msg string
	attrs := []any{"session_host_pid", ph.sh.PID(), "session", s.Key()}
	var lost <-chan struct{}
	if !t.own {
		if lost = h.nodeLostChan(s.node); lost == nil {
			return false
		}
		msg, attrs = "browser node down; closing a hosted session placed on it", append(attrs, "node", s.node)
	}
	return h.background(func() {
		defer t.release()
		select {
		case <-s.Done():
		case <-lost:
			h.log.Warn(msg, attrs...)
			s.lostBrowser.Store(true)
			ctx, cancel := context.WithTimeout(context.Background(), watchStopTimeout)
			_ = s.Kill(ctx)
			cancel()
		case <-h.life.Done():
			return
		}
		if t.own && s.LostBrowser() {
			// Its sessions hear of the browser's death before the host
			// exits, and an emptied host may be stopped before it does.
			h.noteBrowserLost(ph)
		}
		if errors.Is(s.Err(), errHostExited) {
			// The host is gone: its supervisor says why and drops it.
			h.mu.Lock()
			ph.placed--
			h.mu.Unlock()
			return
		}
		h.unplace(ph)
	})
}

// hostPingTimeout is how long a session host may take to answer a ping.
func (h *Host) hostPingTimeout() time.Duration {
	return min(max(h.cfg.PingInterval, hostPingMin), hostPingMax)
}

// superviseSessionHost pings ph every PingInterval and kills it when it
// does not answer in time: a host whose event loop is stuck holds K
// sessions that answer nothing, and its death ends them (ErrWorkerExited),
// which the session layer handles as worker crashes, restoring each
// elsewhere. A host that exits, killed or not, is logged with its stderr
// tail, reaped and taken out of the pool.
func (h *Host) superviseSessionHost(ph *pooledHost) {
	defer h.bg.Done()
	sh := ph.sh
	for {
		var tick <-chan time.Time
		var t interface{ Stop() bool }
		if h.cfg.PingInterval > 0 {
			timer := h.clock.NewTimer(h.cfg.PingInterval)
			tick, t = timer.C(), timer
		}
		select {
		case <-sh.Done():
			ph.release()
			// A host whose browser died exits on its own with a code of
			// its own, even when it was being stopped for being idle.
			var ee *exec.ExitError
			if sh.BrowserPID() != 0 && errors.As(sh.ExitErr(), &ee) && ee.ExitCode() == hostBrowserExitCode {
				h.noteBrowserLost(ph)
			}
			h.mu.Lock()
			planned := h.closed || ph.idle && !ph.browserLost.Load()
			if !planned && sh.BrowserPID() != 0 {
				h.noteHostExitLocked(ph)
			}
			h.mu.Unlock()
			h.dropHost(ph)
			if !planned {
				h.log.Error("session host exited; its sessions are restarted elsewhere", "pid", sh.PID(), "browser_pid", sh.BrowserPID(),
					"exit", sh.ExitErr(), "stderr", tail(sh.Stderr(), 2048))
			}
			ctx, cancel := context.WithTimeout(context.Background(), stopStepTimeout)
			_ = sh.Close(ctx) // reaped already: removes its runtime dir
			cancel()
			return
		case <-h.life.Done():
			if t != nil {
				t.Stop()
			}
			return
		case <-tick:
		}
		if err := h.pingSessionHost(ph); err != nil {
			select {
			case <-sh.Done():
				continue // exited: noted above
			default:
			}
			if h.life.Err() != nil {
				return
			}
			if n := ph.missed.Add(1); n < hostPingFailLimit {
				h.log.Warn("session host did not answer its ping", "pid", sh.PID(), "timeout", h.hostPingTimeout(),
					"missed", n, "of", hostPingFailLimit, "err", err)
				continue
			}
			h.log.Error("session host did not answer its pings; killing it, its sessions are restarted elsewhere",
				"pid", sh.PID(), "missed", hostPingFailLimit, "timeout", h.hostPingTimeout(), "err", err, "stderr", tail(sh.Stderr(), 2048))
			sh.hung.Store(true)
			ctx, cancel := context.WithTimeout(context.Background(), stopStepTimeout)
			_ = sh.Kill(ctx)
			cancel()
		}
	}
}

// pingSessionHost pings ph once, timed by the host's clock, and records
// its heap for placement.
func (h *Host) pingSessionHost(ph *pooledHost) error {
	ctx, cancel := context.WithCancel(h.life)
	defer cancel()
	t := h.clock.NewTimer(h.hostPingTimeout())
	defer t.Stop()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-t.C():
			cancel()
		case <-stop:
		}
	}()
	p, err := ph.sh.Ping(ctx)
	if err != nil {
		return err
	}
	ph.heapUsed.Store(p.HeapUsed)
	ph.missed.Store(0)
	return nil
}

// closeSessionHosts stops every session host; their sessions end with
// ErrWorkerExited.
func (h *Host) closeSessionHosts(ctx context.Context) error {
	h.mu.Lock()
	hosts := h.sessionHosts
	h.sessionHosts = nil
	h.mu.Unlock()
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, ph := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ph.release()
			if err := ph.sh.Close(ctx); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("session host %d: %w", ph.sh.PID(), err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// hostBrowserExitCode is worker-host.js's exit status when its own browser
// exited under it.
const hostBrowserExitCode = 3

// noteBrowserLost counts the death of ph's own browser, once.
func (h *Host) noteBrowserLost(ph *pooledHost) {
	if ph.browserLost.CompareAndSwap(false, true) {
		h.crashes.Add(1)
		h.log.Error("a session host's browser exited; the host ends, its sessions are restarted elsewhere",
			"pid", ph.sh.PID(), "browser_pid", ph.sh.BrowserPID())
	}
}

// noteHostExitLocked records the unplanned exit of ph, a host with its own
// browser, for /health. mu must be held.
func (h *Host) noteHostExitLocked(ph *pooledHost) {
	sh := ph.sh
	h.exit = &browserExit{pid: sh.BrowserPID(), hostPID: sh.PID(), at: time.Now(), uptime: time.Since(sh.started),
		err: sh.ExitErr(), stderr: lastLine(sh.Stderr(), 300)}
}

// checkSessionHosts is Check for hosts with their own browsers: healthy
// while one runs; else why the last could not start, or how the last
// exited.
func (h *Host) checkSessionHosts() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrHostClosed
	}
	if slices.ContainsFunc(h.sessionHosts, func(ph *pooledHost) bool { return !ph.retired && !ph.sh.proc.dying() }) {
		return nil
	}
	if h.hostStartErr != nil {
		return fmt.Errorf("no session host with a browser is running: starting one failed: %w", h.hostStartErr)
	}
	if e := h.exit; e != nil {
		msg := fmt.Sprintf("session host %d with its browser (pid %d) exited unexpectedly %s ago after running %s (%v",
			e.hostPID, e.pid, time.Since(e.at).Round(time.Second), e.uptime.Round(time.Second), e.err)
		if e.stderr != "" {
			msg += ": " + e.stderr
		}
		return errors.New(msg + "); its sessions restart in a new one")
	}
	return errors.New("no session host with a browser is running")
}
