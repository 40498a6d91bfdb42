// Package worker is the contract between the session layer and whatever
// runs @playwright/mcp processes: the Worker interface, the errors its
// calls wrap and the worker flag the configuration checks. It lives apart
// from both so that neither the session layer nor the configuration links
// the process code to name them.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Worker is one @playwright/mcp process as the session layer drives it
// (real: *upstream.Worker, adapted by proxyserver for the saved state).
// A call that fails because the process or its browser node is gone wraps
// the errors below.
type Worker interface {
	Tools() []proxy.Tool
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
	Ping(ctx context.Context) error
	PID() int
	OutputDir() string
	Done() <-chan struct{}
	Close(ctx context.Context) error
	// Kill stops the worker at once, without Close's polite steps: for a
	// worker that answers nothing. Like Close it reaps the process and
	// removes OutputDir.
	Kill(ctx context.Context) error
	// SaveState captures what the session needs to come back in another
	// worker (URL, cookies, localStorage) as opaque JSON.
	SaveState(ctx context.Context) (json.RawMessage, error)
	// RestoreState puts a saved state into this (fresh) worker.
	RestoreState(ctx context.Context, state json.RawMessage) error
	// RSS is the resident memory of the worker's process group, in bytes.
	RSS() int64
}

// ErrWorkerExited is returned (wrapped) by calls on a worker whose process is
// gone or whose stdio is closed.
var ErrWorkerExited = errors.New("upstream worker exited")

// ErrNotDelivered is returned (wrapped, with ErrWorkerExited) when the worker
// was already gone before the request could reach it: the request certainly
// did not run, so sending it to another worker is safe. Without it, a call
// that fails with ErrWorkerExited may have run.
var ErrNotDelivered = errors.New("request not delivered")

// ErrNodeDown is returned (wrapped, with ErrWorkerExited) by a call whose
// worker lost its browser node. With ErrNotDelivered too, the node was
// known gone before the call was sent: it never reached a browser, and the
// session runs it on a worker placed elsewhere. Without, the call was in
// flight when the node went and may have run: it is not replayed. Either
// way the worker is stopped and its session restored on another node.
var ErrNodeDown = fmt.Errorf("%w: its browser node went down", ErrWorkerExited)

// IdleTimeoutFlag is upstream's idle timeout, which every worker gets
// switched off unless its extra arguments set it. It is here, not with the
// code that starts workers, because the configuration refuses it among the
// operator's arguments and must not link that code to do so.
const IdleTimeoutFlag = "--idle-timeout"
