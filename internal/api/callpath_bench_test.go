package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session/sessiontest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// callPathTools are the tools the call-path benchmark calls.
func callPathTools() []proxy.Tool {
	return []proxy.Tool{
		{Name: "browser_evaluate", InputSchema: json.RawMessage(`{"type":"object","properties":{"function":{"type":"string"}},"required":["function"]}`)},
		{Name: "browser_snapshot", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`{"readOnlyHint":true}`)},
	}
}

// upstreamAnswer is a tools/call result shaped like @playwright/mcp's: a
// result section, then (when snapshotLines > 0) the page and its snapshot.
func upstreamAnswer(snapshotLines int) json.RawMessage {
	text := "### Result\n\"Table\"\n### Ran Playwright code\n```js\nawait page.evaluate('() => document.title');\n```"
	if snapshotLines > 0 {
		var sb strings.Builder
		for i := range snapshotLines {
			fmt.Fprintf(&sb, "  - row \"item %d cell %d\" [ref=e%d]\n", i, i, i)
		}
		text = "### Page\n- Page URL: http://127.0.0.1/table\n- Page Title: Table\n### Snapshot\n```yaml\n- table [ref=e1]:\n" + sb.String() + "```"
	}
	b, err := json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": text}}})
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkCallPath is POST /call over loopback HTTP, as mcp-bridge sends
// it: the part of the per-call overhead (docs/BENCHMARKS.md §1) that is
// proxy-server's own. The worker answers at once, or after a 5 ms "browser"
// (what the proxy can do while the worker runs is then off the call's
// path); proxy-ns/op is the time per call minus the worker's.
func BenchmarkCallPath(b *testing.B) {
	for _, bc := range []struct {
		name   string
		tool   string
		params string
		lines  int
		busy   time.Duration
	}{
		{"evaluate", "browser_evaluate", `{"function":"() => document.title"}`, 0, 0},
		{"evaluate_worker_5ms", "browser_evaluate", `{"function":"() => document.title"}`, 0, 5 * time.Millisecond},
		{"snapshot_43KB", "browser_snapshot", `{}`, 1000, 0},
		{"snapshot_43KB_worker_5ms", "browser_snapshot", `{}`, 1000, 5 * time.Millisecond},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := store.Open(ctx, filepath.Join(b.TempDir(), "proxy.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			quiet := slog.New(slog.DiscardHandler)
			answer := upstreamAnswer(bc.lines)
			var spent atomic.Int64
			pid := 1000
			mgr := session.New(db, session.SpawnFunc(func(context.Context) (session.Worker, error) {
				pid++
				w := sessiontest.New(pid, b.TempDir())
				w.ToolList, w.Answer, w.Busy, w.Spent = callPathTools(), answer, bc.busy, &spent
				return w, nil
			}), session.Options{MaxSessions: 4, CallTimeout: 10 * time.Second, Logger: quiet})
			defer func() {
				sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = mgr.Shutdown(sctx)
			}()
			ts := httptest.NewServer(New(mgr, content.New(db), WithLogger(quiet)))
			defer ts.Close()
			s, err := mgr.CreateSession(ctx)
			if err != nil {
				b.Fatal(err)
			}
			body := []byte(fmt.Sprintf(`{"session_id":%q,"tool":%q,"params":%s}`, s.ID, bc.tool, bc.params))
			client := ts.Client()
			b.ReportAllocs()
			spent.Store(0)
			start := time.Now()
			n := 0
			for b.Loop() {
				n++
				resp, err := client.Post(ts.URL+"/call", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("POST /call: %d %s", resp.StatusCode, out)
				}
			}
			if n > 0 {
				b.ReportMetric(float64(time.Since(start).Nanoseconds()-spent.Load())/float64(n), "proxy-ns/op")
			}
		})
	}
}
