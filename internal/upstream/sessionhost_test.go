//go:build unix

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

var _ worker.Worker = (*HostedSession)(nil)

// startFakeHost runs this test binary as a session host (fakeHost) and
// checks at cleanup that nothing of it is left.
func startFakeHost(t *testing.T) *SessionHost {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	h, err := StartSessionHost(ctx, SessionHostConfig{
		Node: os.Args[0], ResolveFrom: t.TempDir(), Env: []string{"PWP_FAKE_HOST=1"},
		TempDir: t.TempDir(), Logger: testLogger(t),
	})
	if err != nil {
		t.Fatalf("StartSessionHost: %v", err)
	}
	closeSessionHostAtCleanup(t, h)
	return h
}

// closeSessionHostAtCleanup closes h after the test and checks that its
// process group and runtime directory are gone.
func closeSessionHostAtCleanup(t *testing.T, h *SessionHost) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("SessionHost.Close: %v", err)
		}
		if left := proctest.WaitGone(2*time.Second, func() []proctest.Proc { return proctest.Group(h.PID()) }); len(left) > 0 {
			t.Errorf("session host processes left in group %d: %+v", h.PID(), left)
		}
		if _, err := os.Stat(h.dir); !os.IsNotExist(err) {
			t.Errorf("session host dir %s left: %v", h.dir, err)
		}
	})
}

// openSession opens a session in h and checks at cleanup that Close removed
// its output dir.
func openSession(t *testing.T, h *SessionHost, spec SessionSpec) *HostedSession {
	t.Helper()
	if spec.OutputDir == "" {
		spec.OutputDir = filepath.Join(t.TempDir(), "out")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := h.Open(ctx, spec)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("HostedSession.Close: %v", err)
		}
		if _, err := os.Stat(s.OutputDir()); !os.IsNotExist(err) {
			t.Errorf("output dir %s left: %v", s.OutputDir(), err)
		}
	})
	return s
}

func callText(t *testing.T, s *HostedSession, tool, args string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, tool, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s on %s: %v", tool, s.Key(), err)
	}
	p, err := answer.Parse(res)
	if err != nil {
		t.Fatal(err)
	}
	return p.Text
}

// hangOn starts a call that s's server never answers and returns its
// outcome's channel once the host has it.
func hangOn(ctx context.Context, t *testing.T, s *HostedSession) <-chan error {
	t.Helper()
	hung := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, "hang", nil)
		hung <- err
	}()
	if !eventually(10*time.Second, func() bool { return strings.Contains(s.host.Stderr(), "session "+s.Key()+": hanging") }) {
		t.Fatal("the host never got the call")
	}
	return hung
}

func isDone(s *HostedSession) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

func TestSessionHostFakeDemultiplexes(t *testing.T) {
	h := startFakeHost(t)
	a := openSession(t, h, SessionSpec{})
	b := openSession(t, h, SessionSpec{})
	if got := len(a.Tools()); got != 1 {
		t.Errorf("tools = %d, want 1", got)
	}

	// Many calls at once on both sessions: each answer reaches its caller.
	var wg sync.WaitGroup
	got := make([]string, 40)
	for i := range got {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			res, err := s.CallTool(ctx, "echo", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)))
			if err != nil {
				t.Errorf("echo %d: %v", i, err)
				return
			}
			p, _ := answer.Parse(res)
			got[i] = p.Text
		})
	}
	wg.Wait()
	want := make([]string, len(got))
	for i := range want {
		key := a.Key()
		if i%2 == 1 {
			key = b.Key()
		}
		want[i] = fmt.Sprintf(`%s {"i":%d}`, key, i)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := b.Ping(ctx); err != nil {
		t.Errorf("session Ping: %v", err)
	}
	pong, err := h.Ping(ctx)
	if err != nil {
		t.Fatalf("host Ping: %v", err)
	}
	if pong.Sessions != 2 {
		t.Errorf("pong.Sessions = %d, want 2", pong.Sessions)
	}
	if a.PID() != h.PID() {
		t.Errorf("session PID %d, host PID %d", a.PID(), h.PID())
	}

	// Closing a leaves b working, and a's calls are not delivered.
	if err := a.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if !isDone(a) {
		t.Error("Done not closed after Close")
	}
	if _, err := os.Stat(a.OutputDir()); !os.IsNotExist(err) {
		t.Errorf("output dir after Close: %v", err)
	}
	_, err = a.CallTool(ctx, "echo", nil)
	if !errors.Is(err, worker.ErrWorkerExited) || !errors.Is(err, worker.ErrNotDelivered) {
		t.Errorf("call after Close = %v, want ErrWorkerExited and ErrNotDelivered", err)
	}
	if got, want := callText(t, b, "echo", `{}`), b.Key()+" {}"; got != want {
		t.Errorf("b after a closed = %q, want %q", got, want)
	}
	if pong, err := h.Ping(ctx); err != nil || pong.Sessions != 1 {
		t.Errorf("host Ping after a closed = %+v, %v; want 1 session", pong, err)
	}
}

func TestSessionHostFakeSessionClosedByHost(t *testing.T) {
	h := startFakeHost(t)
	a := openSession(t, h, SessionSpec{})
	b := openSession(t, h, SessionSpec{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	// The call in flight when the host closes the session may have run:
	// ErrWorkerExited without ErrNotDelivered.
	_, err := a.CallTool(ctx, "crash", nil)
	if !errors.Is(err, worker.ErrWorkerExited) || errors.Is(err, worker.ErrNotDelivered) {
		t.Errorf("call in flight = %v, want ErrWorkerExited only", err)
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("Done not closed after the host closed the session")
	}
	var closed *sessionClosedError
	if !errors.As(a.Err(), &closed) || closed.reason != "uncaught exception: fake" {
		t.Errorf("Err = %v, want the host's reason", a.Err())
	}
	_, err = a.CallTool(ctx, "echo", nil)
	if !errors.Is(err, worker.ErrNotDelivered) {
		t.Errorf("call after = %v, want ErrNotDelivered", err)
	}
	if got, want := callText(t, b, "echo", `{}`), b.Key()+" {}"; got != want {
		t.Errorf("b = %q, want %q", got, want)
	}
}

func TestSessionHostFakeRefusedOpen(t *testing.T) {
	h := startFakeHost(t)
	dir := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := h.Open(ctx, SessionSpec{OutputDir: dir, Endpoint: "refuse"})
	if err == nil {
		t.Fatal("Open succeeded, want the host's refusal")
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("output dir after a refused open: %v", statErr)
	}
	if h.Sessions() != 0 {
		t.Errorf("Sessions = %d after a refused open", h.Sessions())
	}
	// A dir that holds something is refused before the host is asked.
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Open(ctx, SessionSpec{OutputDir: full}); err == nil {
		t.Error("Open on a non-empty output dir succeeded")
	}
	if _, err := os.Stat(filepath.Join(full, "keep")); err != nil {
		t.Errorf("a refused open touched the dir: %v", err)
	}
}

func TestSessionHostFakeHostDies(t *testing.T) {
	for _, how := range []string{"exit", "sigkill"} {
		t.Run(how, func(t *testing.T) {
			h := startFakeHost(t)
			a := openSession(t, h, SessionSpec{})
			b := openSession(t, h, SessionSpec{})
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			hung := hangOn(ctx, t, b)
			if how == "exit" {
				_, _ = a.CallTool(ctx, "die", nil)
			} else if err := syscall.Kill(h.PID(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			for _, s := range []*HostedSession{a, b} {
				select {
				case <-s.Done():
				case <-ctx.Done():
					t.Fatalf("%s: Done not closed after the host died", s.Key())
				}
			}
			if err := <-hung; !errors.Is(err, worker.ErrWorkerExited) {
				t.Errorf("call in flight = %v, want ErrWorkerExited", err)
			}
			_, err := a.CallTool(ctx, "echo", nil)
			if !errors.Is(err, worker.ErrWorkerExited) || !errors.Is(err, worker.ErrNotDelivered) {
				t.Errorf("call after the host died = %v, want ErrWorkerExited and ErrNotDelivered", err)
			}
			if err := b.Ping(ctx); !errors.Is(err, worker.ErrWorkerExited) {
				t.Errorf("Ping = %v, want ErrWorkerExited", err)
			}
			if _, err := h.Ping(ctx); !errors.Is(err, worker.ErrWorkerExited) {
				t.Errorf("host Ping = %v, want ErrWorkerExited", err)
			}
			if _, err := h.Open(ctx, SessionSpec{OutputDir: filepath.Join(t.TempDir(), "out")}); !errors.Is(err, worker.ErrNotDelivered) {
				t.Errorf("Open on a dead host = %v, want ErrNotDelivered", err)
			}
			select {
			case <-h.Done():
			case <-ctx.Done():
				t.Fatal("host not reaped")
			}
		})
	}
}

func TestSessionHostFakeKillSession(t *testing.T) {
	h := startFakeHost(t)
	a := openSession(t, h, SessionSpec{})
	b := openSession(t, h, SessionSpec{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	hung := hangOn(ctx, t, a)
	if err := a.Kill(ctx); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if !isDone(a) {
		t.Error("Done not closed after Kill")
	}
	if err := <-hung; !errors.Is(err, worker.ErrWorkerExited) {
		t.Errorf("call in flight = %v, want ErrWorkerExited", err)
	}
	if got, want := callText(t, b, "echo", `{}`), b.Key()+" {}"; got != want {
		t.Errorf("b after a was killed = %q, want %q", got, want)
	}
	if h.proc.exited() {
		t.Error("killing a session killed its host")
	}
}

func TestSessionHostFakeCloseWithSessionsOpen(t *testing.T) {
	h := startFakeHost(t)
	a := openSession(t, h, SessionSpec{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got := h.proc.signals(); len(got) != 0 {
		t.Errorf("the host needed signals %v to stop on stdin EOF", got)
	}
	if !isDone(a) {
		t.Fatal("the session's Done not closed when its host closed")
	}
	var closed *sessionClosedError
	if !errors.As(a.Err(), &closed) || closed.reason != "host stopping" {
		t.Errorf("Err = %v, want the host's stopping", a.Err())
	}
	if _, err := a.CallTool(ctx, "echo", nil); !errors.Is(err, worker.ErrNotDelivered) {
		t.Errorf("call = %v, want ErrNotDelivered", err)
	}
}
