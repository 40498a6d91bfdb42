// Package sessiontest holds a fake session.Worker for the tests of the
// packages built on the session manager (api, metrics): a real Manager and
// store over a worker that answers at once, with no node or browser. It is
// for tests only and must never be imported by production code.
package sessiontest

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// SnapshotAnswer is a tools/call result shaped like @playwright/mcp's: the
// page, then a one-button snapshot.
const SnapshotAnswer = `{"content":[{"type":"text","text":"### Page\n- Page URL: http://127.0.0.1/x\n- Page Title: X\n### Snapshot\n` + "```yaml\\n- button \\\"Go\\\" [ref=e1]\\n```" + `"}]}`

// DefaultTools are browser_snapshot (read-only) and browser_navigate.
func DefaultTools() []proxy.Tool {
	return []proxy.Tool{
		{Name: "browser_snapshot", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`{"readOnlyHint":true}`)},
		{Name: "browser_navigate", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`)},
	}
}

// Worker is a session.Worker that answers every call with Answer.
type Worker struct {
	PIDValue int
	Dir      string
	// ToolList is what tools/list gave; nil means DefaultTools.
	ToolList []proxy.Tool
	// Answer is every call's result; nil means SnapshotAnswer.
	Answer json.RawMessage
	// Busy is how long each call takes "in the browser"; Spent, if set,
	// adds up the time calls actually took.
	Busy  time.Duration
	Spent *atomic.Int64

	once sync.Once
	done chan struct{}
}

// New returns a live Worker with pid and output directory dir.
func New(pid int, dir string) *Worker {
	return &Worker{PIDValue: pid, Dir: dir, done: make(chan struct{})}
}

func (w *Worker) Tools() []proxy.Tool {
	if w.ToolList != nil {
		return w.ToolList
	}
	return DefaultTools()
}

func (w *Worker) CallTool(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	if w.Busy > 0 {
		start := time.Now()
		time.Sleep(w.Busy)
		if w.Spent != nil {
			w.Spent.Add(int64(time.Since(start)))
		}
	}
	if w.Answer != nil {
		return w.Answer, nil
	}
	return json.RawMessage(SnapshotAnswer), nil
}

func (w *Worker) Ping(context.Context) error { return nil }
func (w *Worker) PID() int                   { return w.PIDValue }
func (w *Worker) OutputDir() string          { return w.Dir }
func (w *Worker) Done() <-chan struct{}      { return w.done }

// Kill ends the worker as Close does.
func (w *Worker) Kill(ctx context.Context) error { return w.Close(ctx) }

// Close ends the worker; Done is closed after it.
func (w *Worker) Close(context.Context) error {
	w.once.Do(func() { close(w.done) })
	return nil
}

// SaveState answers what a real worker saves for a browser that holds
// nothing: a blank page and an empty storage state (which a login profile
// can be saved from).
func (w *Worker) SaveState(context.Context) (json.RawMessage, error) {
	return json.RawMessage(`{"url":"","storage_state":{"cookies":[],"origins":[]}}`), nil
}
func (w *Worker) RestoreState(context.Context, json.RawMessage) error { return nil }
func (w *Worker) RSS() int64                                          { return 1 << 20 }
