package session

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// The manager's tests use fake workers; this one, a real @playwright/mcp
// worker with headless Chromium, so the run checks that it leaves no
// process behind.
func TestMain(m *testing.M) { e2etest.Main(m) }

// realManager is a Manager over real workers of a shared headless Chromium.
func realManager(t *testing.T, opts Options) (*Manager, *store.DB) {
	t.Helper()
	e2etest.RequireBrowser(t)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	tmp, err := os.MkdirTemp("", "pwph-") // short: Chromium's sockets live below it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	host := upstream.NewHost(upstream.HostConfig{
		Browser: upstream.BrowserConfig{Headless: true, Logger: log},
		Worker:  upstream.WorkerConfig{Command: upstream.DefaultCommand(e2etest.ProjectRoot(t)), Logger: log},
		TempDir: tmp,
		Logger:  log,
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := host.Start(ctx); err != nil {
		t.Fatalf("starting the browser host: %v", err)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = log
	m := New(db, SpawnFunc(func(ctx context.Context) (Worker, error) {
		w, err := host.Spawn(ctx)
		if err != nil {
			return nil, err
		}
		return realWorker{w}, nil
	}), opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		m.Shutdown(ctx)
		if err := host.Close(ctx); err != nil {
			t.Errorf("closing the browser host: %v", err)
		}
		db.Close()
	})
	return m, db
}

// realWorker is proxy-server's adapter of a real worker, in short: its
// saved state is upstream's, as JSON.
type realWorker struct{ *upstream.Worker }

func (w realWorker) SaveState(ctx context.Context) (json.RawMessage, error) {
	st, err := upstream.SaveState(ctx, w.Worker)
	if err != nil {
		return nil, err
	}
	return json.Marshal(st)
}

func (w realWorker) RestoreState(ctx context.Context, raw json.RawMessage) error {
	var st upstream.SavedState
	if err := json.Unmarshal(raw, &st); err != nil {
		return err
	}
	return upstream.RestoreState(ctx, w.Worker, &st)
}

func TestIntegrationPersonTakesOverAndHandsBack(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><title>Sign in</title><button id="b">Sign in</button>`)
	}))
	t.Cleanup(site.Close)
	clk := clocktest.New()
	m, db := realManager(t, Options{Clock: clk})
	agent := proxy.WithClient(context.Background(), proxy.NewClientID("mcp", "agent"))
	ctx := context.Background()

	s, err := m.CreateSession(agent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(agent, proxy.CallRequest{SessionID: s.ID, Tool: "browser_navigate", Params: json.RawMessage(`{"url":"` + site.URL + `/"}`)}); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		res *proxy.HumanResult
		err error
	}
	wait := make(chan answer, 1)
	go func() {
		res, err := m.RequestHuman(agent, s.ID, "Sign in for me", 0)
		wait <- answer{res, err}
	}()
	clk.WaitForTimer(t, proxy.DefaultHumanTimeout) // the agent waits

	lease, err := m.TakeControl(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(agent, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); proxy.ErrorCode(err) != proxy.EHUMANINCONTROL {
		t.Fatalf("the agent's call while a person holds the browser: %v, want HUMAN_IN_CONTROL", err)
	}
	// The person signs in: here through the worker itself, as the live
	// view's input would reach the same page.
	w := m.reg.get(s.ID).currentWorker()
	if _, err := w.CallTool(ctx, "browser_evaluate", json.RawMessage(`{"function":"() => { document.body.insertAdjacentHTML('beforeend', '<p>Signed in as Ada</p>'); }"}`)); err != nil {
		t.Fatal(err)
	}
	if err := m.HumanAction(ctx, s.ID, lease.Lease, "click on button 'Sign in'"); err != nil {
		t.Fatal(err)
	}
	if err := m.HandBack(ctx, s.ID, lease.Lease); err != nil {
		t.Fatal(err)
	}
	a := <-wait
	if a.err != nil {
		t.Fatal(a.err)
	}
	if !a.res.HandedBack || !cmp.Equal(a.res.Actions, []string{"click on button 'Sign in'"}) {
		t.Errorf("result = %+v, want handed back with the person's click", a.res)
	}
	if r := a.res.Result; r == nil || r.Changes == nil || !strings.Contains(r.Changes.Text, "Signed in as Ada") {
		t.Errorf("the snapshot after the hand-back = %+v, want the person's change in it", r)
	}

	// Two screenshots, PNGs of the page, each a call of the session named
	// by its event.
	calls, err := db.ListCalls(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var shots []string
	for _, c := range calls {
		if c.Request.ToolName != "human_control" {
			continue
		}
		shots = append(shots, c.Request.RefID)
		imgs, err := db.ListImages(ctx, c.Request.RefID)
		if err != nil || len(imgs) != 1 || !bytes.HasPrefix(imgs[0].Data, []byte("\x89PNG")) {
			t.Errorf("images of %s: %d, %v; want one PNG", c.Request.RefID, len(imgs), err)
		}
	}
	if len(shots) != 2 {
		t.Fatalf("human_control calls = %v, want 2", shots)
	}
	evs, err := db.ListSessionEvents(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if e.Kind == proxy.EventControlTaken || e.Kind == proxy.EventControlReturned {
			got = append(got, e.Detail)
		}
	}
	if diff := cmp.Diff([]string{"screenshot: " + shots[0], "screenshot: " + shots[1]}, got, cmpSorted); diff != "" {
		t.Errorf("control events (-want +got):\n%s", diff)
	}
}
