package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/logging"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/policy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session/sessiontest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// logBuffer collects log output written from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns what was written since the last take.
func (b *logBuffer) take() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := bytes.Clone(b.buf.Bytes())
	b.buf.Reset()
	return out
}

// logLine is one JSON log record, the fields this test reads.
type logLine struct {
	Msg       string `json:"msg"`
	RequestID string `json:"request_id"`
	SessionID string `json:"session_id"`
	// The split of a forwarded call's time (nanoseconds).
	RequestRow *int64 `json:"request_row"`
	Upstream   *int64 `json:"upstream"`
	Record     *int64 `json:"record"`
}

// loggedServer is the API over the real session manager (fake workers) and
// store, logging to log, with one session created; it returns the session id.
func loggedServer(t *testing.T, log *slog.Logger) (*Server, string) {
	t.Helper()
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
	pid := 1000
	mgr := session.New(db, session.SpawnFunc(func(context.Context) (session.Worker, error) {
		pid++
		return sessiontest.New(pid, t.TempDir()), nil
	}), session.Options{MaxSessions: 2, CallTimeout: 10 * time.Second, Policy: pol, Logger: log})
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = mgr.Shutdown(sctx)
	})
	srv := New(mgr, content.New(db), WithLogger(log))
	sess, err := mgr.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return srv, sess.ID
}

// TestCallLogLinesShareRequestID runs the API over the real session manager
// with one JSON logger (PROXY_LOG_FORMAT=json) and checks that the lines one
// POST /call produces — the API's and the session manager's — carry the
// request id the response names, and that the session manager's lines
// carry the session id.
func TestCallLogLinesShareRequestID(t *testing.T) {
	logs := &logBuffer{}
	srv, sid := loggedServer(t, logging.New(logs, "debug", "json"))

	// entry is a line of the request: its message and session id.
	type entry struct{ Msg, SessionID string }
	tests := []struct {
		name   string
		body   string
		status int
		want   []entry // sorted by Msg
	}{
		{"forwarded call", `{"session_id":"` + sid + `","tool":"browser_snapshot"}`, 200, []entry{
			{"http request", ""},
			{"tool call", sid},
		}},
		{"refused by policy", `{"session_id":"` + sid + `","tool":"browser_snapshot","params":{"url":"https://blocked.example/"}}`, 403, []entry{
			{"http request", ""},
			{"request refused", sid},
			{"tool call", sid},
			{"tool call refused by policy", sid},
		}},
		{"unknown tool", `{"session_id":"` + sid + `","tool":"browser_teleport"}`, 404, []entry{
			{"http request", ""},
			{"request refused", ""},
			{"tool call", sid},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logs.take()
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, newRequest("POST", "/call", strings.NewReader(tc.body)))
			if rec.Code != tc.status {
				t.Fatalf("POST /call = %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			rid := rec.Header().Get("X-Request-Id")
			if rid == "" {
				t.Fatal("no X-Request-Id on the response")
			}
			out := logs.take()
			var got []entry
			dec := json.NewDecoder(bytes.NewReader(out))
			for dec.More() {
				var l logLine
				if err := dec.Decode(&l); err != nil {
					t.Fatalf("log output is not JSON lines: %v\n%s", err, out)
				}
				if l.RequestID == rid {
					got = append(got, entry{l.Msg, l.SessionID})
				}
				if l.RequestID == rid && l.Msg == "tool call" {
					split := l.RequestRow != nil && l.Upstream != nil && l.Record != nil && *l.Upstream > 0
					if forwarded := tc.status == http.StatusOK; split != forwarded {
						t.Errorf("tool call line of a call forwarded=%v has the time split %v: %s", forwarded, split, out)
					}
				}
			}
			sort.Slice(got, func(i, j int) bool { return got[i].Msg < got[j].Msg })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lines with request_id %s (-want +got):\n%s\nlog:\n%s", rid, diff, out)
			}
			// Each line names the request id once: no line is left with
			// two request_id keys (the API's explicit one and the context's).
			for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
				if n := bytes.Count(line, []byte(`"request_id":`)); n > 1 {
					t.Errorf("line has %d request_id keys: %s", n, line)
				}
			}
		})
	}
}

// gatedWriter blocks writes of the API's "http request" lines until open is
// closed.
type gatedWriter struct{ open chan struct{} }

func (g gatedWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"msg":"http request"`)) {
		<-g.open
	}
	return len(p), nil
}

// TestCallAnswerDoesNotWaitForTheLog: a tool call's answer reaches the
// client while the API's log line for it is still being written (a slow
// log — a full pipe, a busy disk — must not delay agents).
func TestCallAnswerDoesNotWaitForTheLog(t *testing.T) {
	gate := gatedWriter{open: make(chan struct{})}
	// Info: the session manager's own lines (debug) stay out of the way;
	// the API logs a POST at info after the handler.
	srv, sid := loggedServer(t, logging.New(gate, "info", "json"))
	hs := httptest.NewServer(srv)
	released := false
	release := func() {
		if !released {
			released = true
			close(gate.open)
		}
	}
	t.Cleanup(hs.Close)
	t.Cleanup(release) // runs before hs.Close: the handler must finish

	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Post(hs.URL+"/call", "application/json",
		strings.NewReader(`{"session_id":"`+sid+`","tool":"browser_snapshot"}`))
	if err != nil {
		t.Fatalf("POST /call while the log is blocked: %v (the answer waits for the log line)", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the answer while the log is blocked: %v (the answer waits for the log line)", err)
	}
	release()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(body)) {
		t.Fatalf("POST /call = %d, Content-Length %d for %d bytes: %s", resp.StatusCode, resp.ContentLength, len(body), body)
	}
	var res struct {
		RefID  string `json:"ref_id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(body, &res); err != nil || res.RefID == "" || res.Status != "success" {
		t.Fatalf("answer %s: %v", body, err)
	}
}
