package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/policy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session/sessiontest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// scrapeText fetches /metrics and parses it as the Prometheus text format.
func scrapeText(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics = %d", rec.Code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	return fams
}

// value finds the metric with the given labels (nil: the only one).
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no metric %s", name)
	}
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		if labels != nil && !cmp.Equal(got, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("no %s with labels %v", name, labels)
	return 0
}

func TestMetricsMoveWithTraffic(t *testing.T) {
	stats := session.Stats{SessionsCreated: 2, WorkerRestarts: 1}
	m := New(Sources{
		Sessions: func(context.Context) ([]*proxy.Session, error) {
			return []*proxy.Session{{State: proxy.SessionActive}, {State: proxy.SessionSuspended}, {State: proxy.SessionActive}}, nil
		},
		Stats:          func() session.Stats { return stats },
		BrowserCrashes: func() int64 { return 1 },
		Breaker:        func(context.Context) error { return errors.New("open") },
		DatabaseBytes:  func(context.Context) (int64, error) { return 4096, nil },
	})
	m.ObserveCall("browser_navigate", "success", 300*time.Millisecond, 50000, 400)
	m.ObserveCall("browser_navigate", "error", 10*time.Millisecond, 100, 300)
	before := scrapeText(t, m)

	m.ObserveCall("browser_navigate", "success", 200*time.Millisecond, 60000, 400)
	stats.SessionsCreated = 3
	after := scrapeText(t, m)

	tests := []struct {
		name   string
		labels map[string]string
		before float64
		after  float64
	}{
		{"pwproxy_tool_calls_total", map[string]string{"tool": "browser_navigate", "status": "success"}, 1, 2},
		{"pwproxy_tool_calls_total", map[string]string{"tool": "browser_navigate", "status": "error"}, 1, 1},
		{"pwproxy_tool_call_duration_seconds", map[string]string{"tool": "browser_navigate"}, 2, 3},
		{"pwproxy_bytes_stored_total", nil, 50100, 110100},
		{"pwproxy_bytes_returned_total", nil, 700, 1100},
		{"pwproxy_sessions", map[string]string{"state": "active"}, 2, 2},
		{"pwproxy_sessions", map[string]string{"state": "suspended"}, 1, 1},
		{"pwproxy_sessions_created_total", nil, 2, 3},
		{"pwproxy_worker_restarts_total", nil, 1, 1},
		{"pwproxy_browser_crashes_total", nil, 1, 1},
		{"pwproxy_circuit_breaker_open", nil, 1, 1},
		{"pwproxy_database_bytes", nil, 4096, 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := value(t, before, tt.name, tt.labels); got != tt.before {
				t.Errorf("before: %s%v = %v, want %v", tt.name, tt.labels, got, tt.before)
			}
			if got := value(t, after, tt.name, tt.labels); got != tt.after {
				t.Errorf("after: %s%v = %v, want %v", tt.name, tt.labels, got, tt.after)
			}
		})
	}
}

// pageAnswer is a navigation's answer: the page, no snapshot.
const pageAnswer = `{"content":[{"type":"text","text":"### Page\n- Page URL: http://127.0.0.1/x\n- Page Title: X\n"}]}`

// callCounts is every pwproxy_tool_calls_total series, by "tool status".
func callCounts(fams map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	f := fams["pwproxy_tool_calls_total"]
	if f == nil {
		return out
	}
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		out[labels["tool"]+" "+labels["status"]] = m.Counter.GetValue()
	}
	return out
}

// TestRefusedCallsAreCounted runs the real session manager (fake workers,
// real store, real policy) with the metrics as its observer: calls refused
// before they reach a worker are counted under their error code, unknown
// tool names all count as "unknown", and only forwarded calls are timed.
func TestRefusedCallsAreCounted(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "proxy.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	pol, err := policy.New(policy.Config{BlockedDomains: []string{"blocked.example"}, EnableScriptEvaluation: true, EnableFileUpload: true})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Sources{})
	pid := 1000
	mgr := session.New(db, session.SpawnFunc(func(context.Context) (session.Worker, error) {
		pid++
		w := sessiontest.New(pid, t.TempDir())
		w.Answer = json.RawMessage(pageAnswer)
		return w, nil
	}), session.Options{MaxSessions: 2, CallTimeout: 10 * time.Second, Observer: m, Policy: pol,
		Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = mgr.Shutdown(sctx)
	})
	sess, err := mgr.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}

	calls := []struct {
		tool, params string
		session      string
		wantCode     string
	}{
		{"browser_navigate", `{"url":"https://blocked.example/"}`, sess.ID, proxy.EDOMAINBLOCKED},
		{"browser_navigate", `{"url":42}`, sess.ID, proxy.EINVALID},
		{"browser_navigate", `{"url":"http://127.0.0.1/x"}`, sess.ID, ""},
		{"browser_snapshot", `{}`, "6f1c1d2e-0000-4000-8000-000000000000", proxy.ESESSIONMISSING},
		{"browser_teleport", `{}`, sess.ID, proxy.ETOOLMISSING},
		{"made_up_1", `{}`, sess.ID, proxy.ETOOLMISSING},
		{"made_up_2", `{}`, sess.ID, proxy.ETOOLMISSING},
	}
	for _, c := range calls {
		_, err := mgr.Call(ctx, proxy.CallRequest{SessionID: c.session, Tool: c.tool, Params: json.RawMessage(c.params)})
		if got := proxy.ErrorCode(err); got != c.wantCode {
			t.Fatalf("%s %s = %v, want code %q", c.tool, c.params, err, c.wantCode)
		}
	}

	fams := scrapeText(t, m)
	want := map[string]float64{
		"browser_navigate DOMAIN_BLOCKED":     1,
		"browser_navigate INVALID_PARAMETERS": 1,
		"browser_navigate success":            1,
		"browser_snapshot SESSION_NOT_FOUND":  1,
		"unknown TOOL_NOT_FOUND":              3,
	}
	if diff := cmp.Diff(want, callCounts(fams)); diff != "" {
		t.Errorf("pwproxy_tool_calls_total (-want +got):\n%s", diff)
	}
	if got := value(t, fams, "pwproxy_tool_call_duration_seconds", map[string]string{"tool": "browser_navigate"}); got != 1 {
		t.Errorf("timed browser_navigate calls = %v, want 1 (only the forwarded one)", got)
	}
}

// TestHandlerMethods checks that /metrics serves GET and HEAD and answers
// any other method with 405 and the documented error body.
func TestHandlerMethods(t *testing.T) {
	h := New(Sources{}).Handler()
	tests := []struct {
		method   string
		status   int
		errCode  string
		wantText bool
	}{
		{"GET", 200, "", true},
		{"HEAD", 200, "", true}, // the recorder keeps what net/http drops for HEAD
		{"POST", 405, proxy.EINVALID, false},
		{"DELETE", 405, proxy.EINVALID, false},
		{"PUT", 405, proxy.EINVALID, false},
	}
	for _, tc := range tests {
		t.Run(tc.method, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/metrics", nil))
			if rec.Code != tc.status {
				t.Fatalf("%s /metrics = %d, want %d: %s", tc.method, rec.Code, tc.status, rec.Body)
			}
			if tc.errCode != "" {
				var body struct {
					Error   string `json:"error"`
					Message string `json:"message"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error != tc.errCode || body.Message == "" {
					t.Errorf("%s /metrics body %q (%v), want error %s with a message", tc.method, rec.Body, err, tc.errCode)
				}
			}
			if got := strings.Contains(rec.Body.String(), "go_goroutines"); got != tc.wantText {
				t.Errorf("%s /metrics carries the metrics = %v, want %v", tc.method, got, tc.wantText)
			}
		})
	}
}

// The SQLite allocator's gauges exist only in a memory.counters build
// (`go test -tags memory.counters ./internal/metrics`), where they count
// what an open database has allocated; elsewhere they are left out rather
// than stuck at 0.
func TestSQLiteAllocatorGauges(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fams := scrapeText(t, New(Sources{}))
	counted := len(sqliteAllocator()) > 0
	for _, name := range []string{"pwproxy_sqlite_allocator_mapped_bytes", "pwproxy_sqlite_allocator_allocations"} {
		if _, ok := fams[name]; ok != counted {
			t.Fatalf("%s present = %v in a build with memory.counters = %v", name, ok, counted)
		}
		if counted {
			if v := value(t, fams, name, nil); v <= 0 {
				t.Errorf("%s = %v with a database open, want > 0", name, v)
			}
		}
	}
}

// Each live session's memory is a gauge per session and kind; sessions
// without a worker (no Memory) have none.
func TestSessionMemoryGauges(t *testing.T) {
	m := New(Sources{Sessions: func(context.Context) ([]*proxy.Session, error) {
		return []*proxy.Session{
			{ID: "live", State: proxy.SessionActive, Memory: &proxy.SessionMemory{WorkerBytes: 100, RendererBytes: 250, TotalBytes: 350, Renderers: 2}},
			{ID: "suspended", State: proxy.SessionSuspended},
		}, nil
	}})
	fams := scrapeText(t, m)
	for _, tt := range []struct {
		kind string
		want float64
	}{{"worker", 100}, {"renderers", 250}, {"total", 350}} {
		if got := value(t, fams, "pwproxy_session_memory_bytes", map[string]string{"session_id": "live", "kind": tt.kind}); got != tt.want {
			t.Errorf("pwproxy_session_memory_bytes{kind=%q} = %v, want %v", tt.kind, got, tt.want)
		}
	}
	if n := len(fams["pwproxy_session_memory_bytes"].GetMetric()); n != 3 {
		t.Errorf("%d session memory gauges, want 3 (the live session's only)", n)
	}
}
