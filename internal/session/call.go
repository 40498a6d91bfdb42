package session

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// The path of one tool call, in the order it runs. Call wraps call with the
// metrics and the log line; call checks the call against the catalogue
// (admissible), takes the session (acquire), builds what the worker gets
// (upstreamCall), gives the session a worker and an upstream slot (admit),
// writes the request row, forwards, and records the failure
// (recordFailure) or the answer: buildRecord (record.go) turns it into rows and a
// result, record writes them. Validate is the same refusal without a
// session. The session steps a call shares with resume live with the
// session's lifecycle (acquire, release: lifecycle.go) and its supervision
// (ensureWorker: supervisor.go).

// Call forwards a tool call to the session's worker and records it.
//
// Proxy-level failures come back as *proxy.Error. A tool that ran but failed
// in the browser is not an error here: it is a CallResult with status error.
func (m *Manager) Call(ctx context.Context, req proxy.CallRequest) (*proxy.CallResult, error) {
	start := m.clock.Now()
	var split callSplit
	res, stored, err := m.call(ctx, req, &split)
	d := m.clock.Now().Sub(start)
	status := proxy.ErrorCode(err)
	if res != nil {
		status = string(res.Status)
	}
	if res != nil {
		// The answer's one encoding: the API writes these bytes, and the
		// observer counts them.
		if b, merr := json.Marshal(res); merr == nil {
			res.Encoded = b
		}
	}
	if o := m.opts.Observer; o != nil {
		if stored < 0 {
			o.ObserveRefused(m.toolLabel(req.Tool), status)
		} else {
			returned := 0
			if res != nil {
				returned = len(res.Encoded)
			}
			o.ObserveCall(req.Tool, status, d, stored, returned)
		}
	}
	// Logged with ctx: under the API it carries the HTTP request id, which
	// ties this line to the request's access line.
	if m.log.Enabled(ctx, slog.LevelDebug) {
		attrs := []slog.Attr{slog.String("session_id", req.SessionID), slog.String("tool", req.Tool),
			slog.String("status", status), slog.Bool("forwarded", stored >= 0), slog.Duration("duration", d)}
		if res != nil {
			attrs = append(attrs, slog.String("ref_id", res.RefID))
		}
		if split.upstream > 0 {
			// What a slow call spent where: the worker's share, and the
			// two writes of the record around it.
			attrs = append(attrs, slog.Duration("request_row", split.requestRow), slog.Duration("upstream", split.upstream),
				slog.Duration("record", split.record))
		}
		m.log.LogAttrs(ctx, slog.LevelDebug, "tool call", attrs...)
	}
	return res, err
}

// callSplit is how long a forwarded call spent writing its request row,
// in its worker, and recording the answer.
type callSplit struct{ requestRow, upstream, record time.Duration }

// call is Call; stored is the bytes recorded from upstream's answer, or -1
// when the call was refused before it reached a worker. It fills split as
// far as the call got.
func (m *Manager) call(ctx context.Context, req proxy.CallRequest, split *callSplit) (*proxy.CallResult, int, error) {
	refID := req.RequestID
	if refID == "" {
		refID = NewRefID()
	} else if err := validRef(refID); err != nil {
		return nil, -1, err
	}
	tool, p, err := m.admissible(ctx, req)
	if err != nil {
		return nil, -1, err
	}
	// While a person holds the browser the agent's call is refused at
	// once, unrecorded; checked again once the session is ours, since a
	// person may have taken it while the call waited for it.
	if err := m.gate(ctx, req.SessionID); err != nil {
		return nil, -1, err
	}
	params := p.Raw
	l, err := m.acquire(ctx, req.SessionID)
	if err != nil {
		return nil, -1, err
	}
	defer m.release(l)
	if err := m.gate(ctx, l.id); err != nil {
		return nil, -1, err
	}
	// What goes to the worker: the call itself, or the program of one of
	// the proxy's own tools. Built once the session is known to exist (an
	// unknown session is SESSION_NOT_FOUND whatever the arguments name) and
	// before anything is recorded or a worker started, so a bad call leaves
	// no trace.
	fwd, err := m.upstreamCall(ctx, tool, m.revealCredentials(params))
	if err != nil {
		return nil, -1, err
	}

	if _, err := m.sup.ensureWorker(ctx, l); err != nil {
		return nil, -1, err
	}
	if err := ownFiles(tool, params, l.worker.OutputDir()); err != nil {
		return nil, -1, err
	}
	restored := l.takeRestored()
	admitted, err := m.admit(ctx, l.id)
	if err != nil {
		return nil, -1, err
	}
	defer admitted()

	started := m.clock.Now().UTC()
	// The record is written even when the caller has gone away: the call
	// happened in the browser, so its outcome belongs in history.
	recCtx := context.WithoutCancel(ctx)
	// The record gets the arguments with secrets masked; the worker gets
	// them as they are (it has to type the real password).
	request := &proxy.Request{RefID: refID, SessionID: l.id, ToolName: req.Tool, Params: m.redaction().doc(params), Timestamp: started}
	// The request row is committed before the worker sees the call, on
	// every path: a call the record cannot hold (a full disk) is refused
	// here, having done nothing in the browser, so a caller that retries
	// it never repeats an action.
	if err := m.store.InsertRequest(ctx, request); err != nil {
		return nil, -1, m.requestNotRecorded(ctx, l.id, req.RequestID, err)
	}
	sent := m.clock.Now()
	split.requestRow = sent.Sub(started)

	raw, callErr := m.forward(ctx, l, fwd.tool, fwd.params)
	restored = restored || l.takeRestored()
	if restored {
		l.lastPage.Snapshot = "" // its refs were the old worker's
	}
	finished := m.clock.Now().UTC()
	split.upstream = finished.Sub(sent)
	defer func() { split.record = m.clock.Now().Sub(finished) }()
	if callErr != nil {
		return nil, 0, m.recordFailure(recCtx, l, refID, finished, callErr)
	}
	raw = m.leaveReserved(recCtx, l, raw)
	if !tool.ReadOnly {
		m.sup.markDirty(l)
	}

	res, stored, err := m.record(recCtx, l, refID, req.Tool, fwd, raw, finished, req.Changes)
	if err != nil {
		return nil, 0, err
	}
	res.Metadata.Restored = restored
	return res, stored, nil
}

// requestNotRecorded is the refusal of a call whose request row could not
// be written.
func (m *Manager) requestNotRecorded(ctx context.Context, sessionID, requestID string, err error) error {
	if proxy.ErrorCode(err) == proxy.ESTORAGEFULL {
		e := *proxy.AsError(err)
		e.Message = "the call was not sent to the browser: " + e.Message
		e.Details = map[string]any{"session_id": sessionID, "data_dir": e.Details["data_dir"]}
		m.log.ErrorContext(ctx, "refusing a call the record cannot hold", "session_id", sessionID, "err", err)
		return &e
	}
	if requestID != "" {
		// The caller's own id may be taken already.
		if _, gerr := m.store.GetRequest(ctx, requestID); gerr == nil {
			return proxy.Errorf(proxy.EINVALID, "request_id %s was already used; send a new one or omit it", requestID)
		}
	}
	return fmt.Errorf("recording request: %w", err)
}

// NewRefID returns the id of a stored call: 16 characters of base32, 80
// random bits. Short, because the model reads one in every answer and
// writes it back to read the call; unguessable, though ownership already
// hides one client's refs from every other.
func NewRefID() string {
	return strings.ToLower(rand.Text()[:16])
}

func validRef(ref string) error {
	if len(ref) > 128 {
		return proxy.Errorf(proxy.EINVALID, "request_id is longer than 128 characters")
	}
	if _, err := uuid.Parse(ref); err != nil {
		return proxy.Errorf(proxy.EINVALID, "request_id must be a UUID: %v", err)
	}
	return nil
}

// admissible runs the checks a call must pass before its session is
// touched, so that a refused call wakes no worker and leaves no request
// row: the tool exists and is switched on, its arguments fit its schema,
// the policy allows them. It returns the tool and the arguments, decoded
// once.
func (m *Manager) admissible(ctx context.Context, req proxy.CallRequest) (*catalog.Resolved, catalog.Params, error) {
	if err := m.checkOpen(); err != nil {
		return nil, catalog.Params{}, err
	}
	params, err := catalog.Decode(req.Params)
	if err != nil {
		return nil, params, err
	}
	tool, err := m.catalog.Resolve(ctx, req.Tool)
	if err != nil {
		return nil, params, err
	}
	if err := m.catalog.Check(tool, params); err != nil {
		return nil, params, err
	}
	if err := m.checkPolicy(ctx, req.SessionID, tool, params); err != nil {
		return nil, params, err
	}
	return tool, params, nil
}

// forwarded is what a call sends to its worker, and how to read the answer.
type forwarded struct {
	tool   string
	params json.RawMessage
	ext    *toolset.Own // set for the proxy's own tools
	blob   string       // their encoded arguments, kept out of the record
}

// blobMark stands in the record for a program's encoded arguments: the
// request row holds them once, masked; in the echoed code they would not be.
const blobMark = "(arguments: see the request)"

// imageMark stands in the record for an image a program returned as base64:
// the image itself is stored as an image of the ref.
const imageMark = "(image stored with this ref)"

// upstreamCall is the worker call for a tool call: itself for upstream's
// tools, the tool's program for the proxy's own.
func (m *Manager) upstreamCall(ctx context.Context, r *catalog.Resolved, params json.RawMessage) (forwarded, error) {
	ext := r.Own
	if ext == nil {
		return forwarded{tool: r.Tool.Name, params: params}, nil
	}
	args := params
	if ext.Name == "restore_state" {
		var err error
		if args, err = m.stateArgs(ctx, params); err != nil {
			return forwarded{}, err
		}
	}
	prog, err := ext.Build(args)
	if err != nil {
		return forwarded{}, proxy.Errorf(proxy.EINVALID, "%v", err)
	}
	return forwarded{tool: toolset.RunTool, params: prog.Args, ext: ext, blob: prog.Blob}, nil
}

// stateArgs resolves restore_state's ref_id into the state that save_state
// call recorded, in any session of the caller's; another client's ref is
// REF_NOT_FOUND, as an unknown one.
func (m *Manager) stateArgs(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		State  json.RawMessage `json:"state"`
		RefID  string          `json:"ref_id"`
		Reload *bool           `json:"reload"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, proxy.Errorf(proxy.EINVALID, "params: %v", err)
	}
	if len(p.State) > 0 || p.RefID == "" {
		return params, nil
	}
	invalid := func(format string, a ...any) error {
		e := proxy.Errorf(proxy.EINVALID, format, a...)
		e.Details = map[string]any{"field": "params.ref_id", "ref_id": p.RefID}
		return e
	}
	req, err := m.store.GetRequest(ctx, p.RefID)
	if err != nil {
		return nil, err
	}
	if _, err := m.session(ctx, req.SessionID); err != nil {
		if proxy.ErrorCode(err) == proxy.ESESSIONMISSING {
			return nil, proxy.RefNotFound(p.RefID)
		}
		return nil, err
	}
	if req.ToolName != "save_state" {
		return nil, invalid("ref %s is a %s call; restore_state needs the ref_id of a save_state call", p.RefID, req.ToolName)
	}
	resp, err := m.store.GetResponse(ctx, p.RefID)
	if err != nil {
		return nil, err
	}
	parsed, err := answer.Parse(json.RawMessage(resp.Result))
	if err != nil {
		return nil, invalid("the save_state call %s left no readable state", p.RefID)
	}
	out := toolset.Interpret(parsed.ResultText, errorText(parsed))
	var v struct {
		State json.RawMessage `json:"state"`
	}
	if out.Err != nil || json.Unmarshal(out.Value, &v) != nil || len(v.State) == 0 {
		return nil, invalid("the save_state call %s did not succeed; save the state again", p.RefID)
	}
	return json.Marshal(map[string]any{"state": v.State, "reload": p.Reload == nil || *p.Reload})
}

// admit waits for a slot to call upstream (MaxConcurrentCalls); the
// returned function gives it back.
func (m *Manager) admit(ctx context.Context, id string) (func(), error) {
	if m.upstream == nil {
		return func() {}, nil
	}
	select {
	case m.upstream <- struct{}{}:
		return func() { <-m.upstream }, nil
	case <-ctx.Done():
		return nil, &proxy.Error{Code: proxy.ETIMEOUT, Message: "the call waited too long for the browser: every upstream call slot is busy", Retryable: true,
			Suggestion: "Retry; the server is at PROXY_MAX_CONCURRENT_CALLS.", Details: map[string]any{"session_id": id}}
	}
}

// forward sends one call to l's worker. A worker found dead before the
// request reached it (ErrNotDelivered) is replaced and the call goes to the
// new one: it never ran, so this is not a replay.
func (m *Manager) forward(ctx context.Context, l *live, tool string, params json.RawMessage) (json.RawMessage, error) {
	defer l.workerCalled()
	callCtx, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
	raw, err := l.worker.CallTool(callCtx, tool, params)
	cancel()
	if !errors.Is(err, worker.ErrNotDelivered) {
		return raw, err
	}
	m.log.WarnContext(ctx, "session worker was gone before the call reached it; sending the call to a new worker", "session_id", l.id, "worker_pid", l.worker.PID())
	m.sup.workerLost(l)
	if _, err := m.sup.ensureWorker(ctx, l); err != nil {
		return nil, err
	}
	callCtx, cancel = context.WithTimeout(ctx, m.opts.CallTimeout)
	defer cancel()
	return l.worker.CallTool(callCtx, tool, params)
}

// recordFailure stores a call that got no upstream answer and maps the
// failure to the documented code. The call is never replayed: actions such
// as clicks are not idempotent.
func (m *Manager) recordFailure(ctx context.Context, l *live, refID string, at time.Time, callErr error) error {
	var perr *proxy.Error
	switch {
	case errors.Is(callErr, context.DeadlineExceeded):
		perr = &proxy.Error{Code: proxy.ETIMEOUT, Message: fmt.Sprintf("the tool call did not finish within %s", m.opts.CallTimeout), Retryable: true,
			Suggestion: "Retry, or check that the page responds; the browser state may have changed."}
	case errors.Is(callErr, context.Canceled):
		perr = &proxy.Error{Code: proxy.ETIMEOUT, Message: "the caller cancelled the tool call", Retryable: true}
	case errors.Is(callErr, worker.ErrNodeDown):
		perr = &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "the session's browser node went down during the call; it was not replayed", Retryable: true,
			Suggestion: "Retry: the session comes back on another node with its saved state (element refs will be stale)."}
	case errors.Is(callErr, worker.ErrWorkerExited):
		perr = &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "the browser worker died during the call; it was not replayed", Retryable: true,
			Suggestion: "Retry: the next call starts a fresh worker for this session (element refs will be stale)."}
	case errors.As(callErr, &perr):
		// Already ours (a failed restart, the error state): keep it.
		cp := *perr
		perr = &cp
	default:
		perr = &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "upstream error: " + callErr.Error(), Retryable: true,
			Suggestion: "Retry; if it persists check GET /health."}
	}
	perr.Details = map[string]any{"session_id": l.id, "ref_id": refID}
	if w := l.worker; w != nil {
		dead := errors.Is(callErr, worker.ErrWorkerExited)
		select {
		case <-w.Done():
			dead = true
		default:
		}
		if dead {
			m.sup.workerLost(l)
			m.sup.restartSoon(l)
		}
	}
	// Upstream error text can quote the call's arguments.
	perr.Message = m.redaction().text(perr.Message)
	resp := &proxy.Response{RefID: refID, Status: proxy.StatusError, ErrorMessage: perr.Message, ErrorCode: perr.Code, Timestamp: at}
	if err := m.store.InsertResponse(ctx, resp, nil, nil); err != nil {
		m.log.ErrorContext(ctx, "recording failed call", "session_id", l.id, "ref_id", refID, "err", err)
		// The failure is still this call's, and so is its code; the caller
		// learns too that its ref will read as in flight.
		perr.Details["not_recorded"] = true
	}
	m.log.WarnContext(ctx, "tool call failed", "session_id", l.id, "ref_id", refID, "code", perr.Code, "err", callErr)
	return perr
}

// record turns what the worker returned into the call's record (buildRecord),
// writes it, and moves the session on to the page the call left.
func (m *Manager) record(ctx context.Context, l *live, refID, tool string, fwd forwarded, raw json.RawMessage, at time.Time, changes bool) (*proxy.CallResult, int, error) {
	rec := buildRecord(recordInput{
		refID: refID, sessionID: l.id, tool: tool,
		fwd: fwd, raw: raw, outputDir: l.worker.OutputDir(), at: at,
		lastPage: l.lastPage, changes: changes, pending: l.pendingDownloads,
		redact: m.redaction(), full: m.opts.FullResponses,
		inlineMax: m.opts.InlineResultMax, changesMax: m.changesMax(),
		maxDownload: m.opts.MaxDownloadBytes,
	})
	if rec.parseErr != nil {
		// The bytes are kept anyway; only the metadata is lost.
		m.log.WarnContext(ctx, "unparseable upstream result", "session_id", l.id, "ref_id", refID, "err", rec.parseErr)
	}
	if rec.ingestErr != nil {
		m.log.WarnContext(ctx, "ingesting upstream files", "session_id", l.id, "ref_id", refID, "err", rec.ingestErr)
	}
	// The page moved whether or not the record can say so.
	l.lastPage = rec.lastPage
	l.pendingDownloads = rec.pending
	if err := m.store.RecordResponse(ctx, rec.response, rec.console, rec.images, rec.downloads, rec.activity); err != nil {
		if proxy.ErrorCode(err) != proxy.ESTORAGEFULL {
			return nil, 0, fmt.Errorf("recording response %s: %w", refID, err)
		}
		return m.notRecorded(ctx, l.id, rec, err), 0, nil
	}
	return rec.result, rec.stored, nil
}

// notRecorded is the answer of a call that ran in the browser but whose
// answer the record could not take (space ran out during the call). An
// error would tell the caller the call failed, and a caller that retries a
// click would click twice; so the caller gets the call's own result, marked
// not recorded. The record gets what still fits: a short error row saying
// the call ran, so that its ref reads as answered rather than in flight.
func (m *Manager) notRecorded(ctx context.Context, sessionID string, rec recordOutput, err error) *proxy.CallResult {
	perr := proxy.AsError(err)
	res := rec.result
	res.NotRecorded = true
	res.Warning = fmt.Sprintf("this call ran in the browser, but its answer could not be recorded (%s): get_content cannot read it; %s", perr.Message, perr.Suggestion)
	m.log.ErrorContext(ctx, "a call ran but its answer could not be recorded", "session_id", sessionID, "ref_id", rec.response.RefID, "status", rec.response.Status, "err", err)
	stub := &proxy.Response{RefID: rec.response.RefID, Status: proxy.StatusError, ErrorCode: proxy.ESTORAGEFULL, Timestamp: rec.response.Timestamp,
		ErrorMessage: fmt.Sprintf("the call ran in the browser (status %s), but its answer (%d bytes) could not be recorded: %s", rec.response.Status, rec.stored, perr.Message)}
	if serr := m.store.InsertResponse(ctx, stub, nil, nil); serr != nil {
		m.log.ErrorContext(ctx, "recording that a call's answer was lost", "session_id", sessionID, "ref_id", rec.response.RefID, "err", serr)
	}
	return res
}

// DefaultChangesMax is the byte budget of a call's change summary when
// Options.ChangesMax is 0: a status line, a few added elements or a small
// page fit; a big new page does not and is read by ref.
const DefaultChangesMax = 1000

func (m *Manager) changesMax() int {
	switch n := m.opts.ChangesMax; {
	case n == 0:
		return DefaultChangesMax
	case n < 0:
		return 0
	default:
		return n
	}
}

// Validate refuses a call exactly as Call would before it reaches a
// session, without naming one: a conversation's first call goes to a
// default session created for it, and a call that is refused anyway must
// not cost a session and a worker. A refusal counts as Call's do.
func (m *Manager) Validate(ctx context.Context, tool string, params json.RawMessage) error {
	r, p, err := m.admissible(ctx, proxy.CallRequest{Tool: tool, Params: params})
	if err == nil {
		// The proxy's own tools build their program from the arguments,
		// which can refuse them too.
		_, err = m.upstreamCall(ctx, r, m.revealCredentials(p.Raw))
	}
	if err != nil && m.opts.Observer != nil {
		m.opts.Observer.ObserveRefused(m.toolLabel(tool), proxy.ErrorCode(err))
	}
	return err
}

// toolLabel is name when the server knows the tool (upstream's or one of the
// proxy's own), else "unknown": the metrics' label values stay a fixed set
// whatever names clients send.
func (m *Manager) toolLabel(name string) string {
	if m.catalog.Known(name) {
		return name
	}
	return "unknown"
}
