//go:build unix

package liveview

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

func TestMain(m *testing.M) { os.Exit(proctest.RunChecked(m, "go")) }

const signInPage = `<!doctype html><meta charset="utf-8"><title>sign in</title>
<style>body{margin:0} #code{position:absolute;left:40px;top:40px;width:200px;height:30px}
#b{position:absolute;left:40px;top:120px;width:140px;height:40px}</style>
<form action="/done" method="get"><input id="code" name="code" aria-label="Code" autocomplete="off"><button id="b" type="submit">Sign in</button></form>`

// TestLiveViewWithChromium: a viewer of a real headless Chromium's page
// gets its frames, and the holder's click, typing and Enter reach the
// page (the form is submitted with what was typed), recorded as what the
// person did and never what they typed.
func TestLiveViewWithChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test with real Chromium: skipped under -short")
	}
	if _, err := upstream.FindBrowser(); err != nil {
		t.Skipf("Chromium is not installed (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := upstream.LaunchBrowser(ctx, upstream.BrowserConfig{Headless: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(stopCtx); err != nil {
			t.Errorf("closing the browser: %v", err)
		}
	})
	submitted := make(chan string, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/done" {
			submitted <- r.URL.Query().Get("code")
			fmt.Fprint(w, "<title>done</title>done")
			return
		}
		fmt.Fprint(w, signInPage)
	}))
	t.Cleanup(site.Close)
	target := newTarget(t, b.CDPEndpoint(), site.URL+"/")

	sessions := &fakeSessions{current: target, ep: b.CDPEndpoint()}
	logs := &e2etest.SyncBuffer{}
	h := New(Config{Sessions: sessions, Attach: Attach, Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeLive(w, r, sessionID) }))
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(16 << 20)
	defer c.CloseNow()
	v := &viewerConn{t: t, conn: c}

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	})
	f := v.next("frame")
	data, _ := base64.StdEncoding.DecodeString(f["data"].(string))
	if len(data) < 3 || data[0] != 0xFF || data[1] != 0xD8 {
		t.Errorf("the frame is not a JPEG")
	}
	if f["width"].(float64) <= 0 || f["height"].(float64) <= 0 {
		t.Errorf("frame viewport %v x %v", f["width"], f["height"])
	}

	sessions.take(goodLease)
	v.sync(goodLease)
	const code = "493817"
	for _, m := range []map[string]any{
		{"type": "mouse", "event": "pressed", "x": 140, "y": 55, "button": "left", "clicks": 1},
		{"type": "mouse", "event": "released", "x": 140, "y": 55, "button": "left", "clicks": 1},
		{"type": "text", "text": code},
		{"type": "key", "key": "Enter"},
	} {
		v.send(m)
	}
	select {
	case got := <-submitted:
		if got != code {
			t.Errorf("the form was submitted with %q, want what was typed", got)
		}
	case <-ctx.Done():
		t.Fatal("the form was never submitted")
	}
	v.sync(goodLease)
	want := []string{"click on textbox 'Code'", "typed 6 characters", "pressed Enter"}
	got := sessions.recorded()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("actions %q, want %q", got, want)
	}
	if strings.Contains(logs.String(), code) {
		t.Errorf("the log holds what was typed:\n%s", logs.String())
	}
}

// newTarget opens url in a new page of the browser at endpoint and
// returns its target id.
func newTarget(t *testing.T, endpoint, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, endpoint+"/json/new?"+url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var tgt struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &tgt); err != nil || tgt.ID == "" {
		t.Fatalf("opening a page: %s (%v)", body, err)
	}
	return tgt.ID
}
