//go:build unix

package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// allocate is a browser_evaluate function that makes the page hold mb
// megabytes more, written to, so the pages are resident.
func allocate(mb int) map[string]string {
	return map[string]string{"function": fmt.Sprintf(
		"() => { window.hog = window.hog || []; for (let i = 0; i < %d; i++) { const a = new Uint8Array(1 << 20); a.fill(i & 255 | 1); window.hog.push(a); } return window.hog.length; }", mb)}
}

// waitMemory polls GET /sessions/{id} until ok accepts its memory.
func (s *server) waitMemory(t *testing.T, id, what string, ok func(m proxy.SessionMemory) bool) proxy.SessionMemory {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		sess := s.getSession(t, id)
		if sess.Memory != nil && ok(*sess.Memory) {
			return *sess.Memory
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: %s; memory is %+v", id, what, sess.Memory)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// One real proxy-server, the shared browser: each session's memory is its
// worker and the renderers of its own pages, it grows with what its page
// allocates (and not with another session's), /metrics has it per
// session, a session over PROXY_MAX_SESSION_MEMORY comes back with its
// state, and /health reports low host memory.
func TestSessionMemory(t *testing.T) {
	const mb = 1 << 20
	pages := site(t)
	dbPath := filepath.Join(t.TempDir(), "p.db")
	const limit = 1024 * mb
	s := runBinary(t, dbPath, map[string]string{
		"PROXY_PING_INTERVAL":      "1s",
		"PROXY_MAX_SESSION_MEMORY": fmt.Sprint(limit),
		// More than any machine has: /health must say degraded.
		"PROXY_MIN_FREE_MEMORY": fmt.Sprint(int64(1) << 50),
	})
	db := openRO(t, dbPath)

	t.Run("health reports low host memory", func(t *testing.T) {
		var h struct {
			Status string            `json:"status"`
			Checks map[string]string `json:"checks"`
		}
		if code := do(t, "GET", s.URL+"/health", nil, &h); code != http.StatusServiceUnavailable {
			t.Errorf("/health = %d, want 503", code)
		}
		if h.Status != "degraded" || !strings.Contains(h.Checks["host_memory"], "below PROXY_MIN_FREE_MEMORY") {
			t.Errorf("/health = %+v, want degraded with a host_memory check naming PROXY_MIN_FREE_MEMORY", h)
		}
	})

	a := s.createSession(t)
	t.Run("memory is split and grows with the page", func(t *testing.T) {
		s.call(t, a, "browser_navigate", map[string]string{"url": pages + "/read.html"})
		before := s.waitMemory(t, a, "no renderers found after a call", func(m proxy.SessionMemory) bool {
			return !m.RenderersFound.IsZero() && m.Renderers >= 1
		})
		if before.WorkerBytes < 10*mb || before.RendererBytes < 10*mb || before.TotalBytes != before.WorkerBytes+before.RendererBytes {
			t.Errorf("memory = %+v, want worker and renderers above 10 MB each, total their sum", before)
		}
		if got := s.getSession(t, a); got.RSSBytes < 10*mb {
			t.Errorf("rss_bytes = %d, want the worker's, kept for clients that read it", got.RSSBytes)
		}
		if res := s.call(t, a, "browser_evaluate", allocate(300)); res.Status != "success" {
			t.Fatalf("allocating: %+v", res)
		}
		after := s.waitMemory(t, a, "renderer memory did not grow by 250 MB after allocating 300 MB", func(m proxy.SessionMemory) bool {
			return m.RenderersFound.After(before.RenderersFound) && m.RendererBytes >= before.RendererBytes+250*mb
		})
		t.Logf("session memory before %+v, after allocating 300 MB %+v", before, after)
		fams := metricsOf(t, s.server)
		if got := sample(fams, "pwproxy_session_memory_bytes", map[string]string{"session_id": a, "kind": "renderers"}); got < float64(before.RendererBytes+250*mb) {
			t.Errorf("pwproxy_session_memory_bytes{session_id=%s,kind=renderers} = %.0f, want at least %d", a, got, before.RendererBytes+250*mb)
		}
		if got := sample(fams, "pwproxy_session_memory_bytes", map[string]string{"session_id": a, "kind": "worker"}); got < 10*mb {
			t.Errorf("pwproxy_session_memory_bytes{session_id=%s,kind=worker} = %.0f, want the worker's", a, got)
		}
	})

	t.Run("over the limit it is restarted with its state", func(t *testing.T) {
		aBefore := s.getSession(t, a).Memory
		b := s.createSession(t)
		prepare(t, s.server, db, pages, b, "heavy")
		if res := s.call(t, b, "browser_evaluate", allocate(1200)); res.Status != "success" {
			t.Fatalf("allocating: %+v", res)
		}
		// The restart is told by its event, not by a new worker pid: the
		// new worker may share the old one's session host.
		waitRestarted(t, db, b, 0, 90*time.Second)
		checkRestored(t, s.server, pages, b, "heavy")
		var detail string
		if err := db.QueryRow("SELECT detail FROM session_events WHERE session_id = ? AND kind = ?", b, proxy.EventMemoryLimit).Scan(&detail); err != nil {
			t.Fatalf("no %s event: %v", proxy.EventMemoryLimit, err)
		}
		if !strings.Contains(detail, "went over PROXY_MAX_SESSION_MEMORY (1024.0 MB)") || !strings.Contains(detail, "renderers ") {
			t.Errorf("%s event = %q, want the figures and the limit", proxy.EventMemoryLimit, detail)
		}
		var restarted string
		if err := db.QueryRow("SELECT detail FROM session_events WHERE session_id = ? AND kind = ?", b, proxy.EventRestarted).Scan(&restarted); err != nil || !strings.Contains(restarted, "PROXY_MAX_SESSION_MEMORY") {
			t.Errorf("%s event = %q (%v), want the memory reason", proxy.EventRestarted, restarted, err)
		}
		// b's 1.2 GB never counted as a's: contexts share no renderer.
		if got := s.getSession(t, a).Memory; got == nil || aBefore == nil || got.RendererBytes > aBefore.RendererBytes+200*mb {
			t.Errorf("session a's memory went from %+v to %+v while b allocated 1.2 GB", aBefore, got)
		}
	})
}
