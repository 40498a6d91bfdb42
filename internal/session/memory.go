package session

import (
	"context"
	"fmt"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// rendererLookupTimeout bounds one search for a session's renderers (a
// short trace per page, in the worker).
const rendererLookupTimeout = 30 * time.Second

// memoryWorker is a worker that can tell its memory (upstream.Worker).
type memoryWorker interface {
	Memory(rendererPIDs []int) upstream.Memory
	RendererPIDs(ctx context.Context) ([]int, error)
	SharesBrowser() bool
}

// sessionMemory measures l's worker w and the renderers last found for it.
// It reads /proc (a scan shared for up to a second), never the worker, so
// a reader may call it for every session it lists.
func sessionMemory(l *live, w Worker) *proxy.SessionMemory {
	mw, ok := w.(memoryWorker)
	if !ok {
		return nil
	}
	l.mu.Lock()
	pids, at := l.renderers, l.renderersAt
	l.mu.Unlock()
	m := mw.Memory(pids)
	if m.WorkerBytes == 0 {
		return nil // it has exited
	}
	return &proxy.SessionMemory{
		WorkerBytes: m.WorkerBytes, RendererBytes: m.RendererBytes, TotalBytes: m.WorkerBytes + m.RendererBytes,
		Renderers: m.Renderers, RenderersFound: at.UTC(),
	}
}

// checkMemory follows a successful ping of an idle session: it finds the
// renderers of its pages again if a call (or a new worker) may have moved
// them, and restarts the session with its state if it holds more than
// MaxSessionMemory. Sampling here, not per call, keeps calls free of it
// and idle sessions cost nothing but the /proc scan.
func (s *supervisor) checkMemory(l *live, w Worker) {
	mw, ok := w.(memoryWorker)
	if !ok {
		return
	}
	l.mu.Lock()
	due := l.renderersDue && mw.SharesBrowser()
	l.mu.Unlock()
	if due {
		s.findRenderers(l, w, mw)
	}
	if s.opts.MaxSessionMemory <= 0 {
		return
	}
	if m := sessionMemory(l, w); m != nil && m.TotalBytes > s.opts.MaxSessionMemory {
		s.memoryRestart(l, w, m)
	}
}

// tryLock takes l's lock only if no call holds it or waits for it: the
// supervisor's own work on a session never delays a call.
func (l *live) tryLock() bool {
	select {
	case l.sem <- struct{}{}:
	default:
		return false
	}
	if l.busy() {
		l.unlock()
		return false
	}
	return true
}

// findRenderers asks the worker which renderer processes serve its pages.
// It runs in the worker as a tool call of its own, so only between calls.
func (s *supervisor) findRenderers(l *live, w Worker, mw memoryWorker) {
	select {
	case s.tracing <- struct{}{}:
		defer func() { <-s.tracing }()
	default:
		return // another session's lookup traces; this one stays due
	}
	if !l.tryLock() {
		return // the call's end makes it due again
	}
	defer l.unlock()
	if l.retired || l.worker != w {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), rendererLookupTimeout)
	defer cancel()
	start := s.opts.Clock.Now()
	pids, err := mw.RendererPIDs(ctx)
	l.mu.Lock()
	// A failure is not retried before the next call: a page that breaks
	// the trace would otherwise cost one at every ping.
	l.renderersDue = false
	if err == nil {
		l.renderers, l.renderersAt = pids, s.opts.Clock.Now()
	}
	l.mu.Unlock()
	if err != nil {
		s.log.Warn("finding the session's renderer processes", "session_id", l.id, "worker_pid", w.PID(), "err", err)
		return
	}
	s.log.Debug("session renderers found", "session_id", l.id, "pids", pids, "took", s.opts.Clock.Now().Sub(start).Round(time.Millisecond))
}

// memoryRestart replaces the worker of l, which holds more than
// MaxSessionMemory, the way a crash does: the state is saved first, so the
// new worker gets the session's page and cookies back, and the restart
// uses the session's restart budget, so a page that fills memory again at
// once ends in the error state instead of a restart loop.
func (s *supervisor) memoryRestart(l *live, w Worker, m *proxy.SessionMemory) {
	if s.engaged != nil && s.engaged(l.id) {
		return // checked again at the next ping, once the person is done
	}
	if !l.tryLock() {
		return // checked again at the next ping
	}
	defer l.unlock()
	if l.retired || l.worker != w || s.closing() {
		return
	}
	ctx, cancel := s.restartContext()
	defer cancel()
	why := fmt.Sprintf("its memory, %s (worker %s, renderers %s in %d processes), went over PROXY_MAX_SESSION_MEMORY (%s)",
		mb(m.TotalBytes), mb(m.WorkerBytes), mb(m.RendererBytes), m.Renderers, mb(s.opts.MaxSessionMemory))
	s.log.Warn("session over its memory limit; restarting it with its state", "session_id", l.id, "worker_pid", w.PID(),
		"total_bytes", m.TotalBytes, "worker_bytes", m.WorkerBytes, "renderer_bytes", m.RendererBytes, "limit_bytes", s.opts.MaxSessionMemory)
	recordEvent(s.store, s.log, s.opts.Clock.Now(), l.id, proxy.EventMemoryLimit, why)
	s.saveState(ctx, l, w)
	l.mu.Lock()
	l.replacedWhy = why
	l.mu.Unlock()
	l.setWorker(nil)
	closeWorker(w, s.log)
	l.crashed, l.excused = true, false
	l.diedAt = s.opts.Clock.Now()
	if _, err := s.ensureWorker(ctx, l); err != nil {
		s.log.Warn("restarting the session over its memory limit failed", "session_id", l.id, "err", err)
	}
}

// mb formats bytes for people.
func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }
