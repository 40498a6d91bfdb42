package session

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// A person in the loop (proxy.HumanService, proxy.LiveViewService): a
// person takes a session's browser with a control lease, acts in the live
// view, and hands it back; an agent meanwhile has its actions refused
// (HUMAN_IN_CONTROL) or waits for the hand-back (RequestHuman). Controls
// and waits live in this process only, keyed by session id rather than on
// the live handle, so that a worker restart under the session keeps them;
// a close ends them, and so does a server restart.

// DefaultControlIdleTimeout is how long a control lasts without a sign of
// its holder when Options.ControlIdleTimeout is 0.
const DefaultControlIdleTimeout = 10 * time.Minute

// Bounds of what the record keeps of a person's part.
const (
	maxHumanReason  = 500 // runes of request_human's reason
	eventReasonMax  = 200 // runes of it in the human_requested event
	maxActionDetail = 200 // runes of one human_action event
	maxActions      = 200 // actions a hand-back reports; the events keep all
)

// humans is every session's control and waits.
type humans struct {
	mu       sync.Mutex
	sessions map[string]*humanSession
}

// humanSession is one session's person-in-the-loop state. An entry exists
// only while something is held or awaited.
type humanSession struct {
	ctrl  *control
	waits []*proxy.HumanWait // oldest first
	// next is what the waits end on: the next hand-back.
	next *handback
}

// control is a held lease.
type control struct {
	proxy.Control
	lease   string
	touched time.Time // the holder's last sign (input, a lease check)
	actions []string
	ended   chan struct{} // closed when the control ends: its idle watch stops
}

// handback is the end of a control as its waiters learn it, once done is
// closed.
type handback struct {
	done    chan struct{}
	actions []string
	closed  bool // the session was closed: nothing to go on with

	// snapshot is the one recorded after the hand-back, shared by every
	// wait it ends: each would otherwise measure its changes against the
	// one before.
	snapOnce sync.Once
	snap     *proxy.CallResult
	snapErr  error
}

func (h *humans) entry(id string) *humanSession {
	if h.sessions == nil {
		h.sessions = make(map[string]*humanSession)
	}
	hs := h.sessions[id]
	if hs == nil {
		hs = &humanSession{next: &handback{done: make(chan struct{})}}
		h.sessions[id] = hs
	}
	return hs
}

// tidy drops id's entry once nothing is held or awaited. The caller holds
// h.mu.
func (h *humans) tidy(id string) {
	if hs := h.sessions[id]; hs != nil && hs.ctrl == nil && len(hs.waits) == 0 {
		delete(h.sessions, id)
	}
}

// state is id's control and oldest wait, as GET /sessions shows them.
func (h *humans) state(id string) (*proxy.Control, *proxy.HumanWait) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hs := h.sessions[id]
	if hs == nil {
		return nil, nil
	}
	var c *proxy.Control
	if hs.ctrl != nil {
		cp := hs.ctrl.Control
		c = &cp
	}
	var w *proxy.HumanWait
	if len(hs.waits) > 0 {
		cp := *hs.waits[0]
		w = &cp
	}
	return c, w
}

// engaged reports whether a person holds id's browser or an agent waits
// for one: such a session is neither suspended nor restarted under them.
func (h *humans) engaged(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id] != nil
}

// holder is id's control when a person holds it.
func (h *humans) holder(id string) (proxy.Control, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if hs := h.sessions[id]; hs != nil && hs.ctrl != nil {
		return hs.ctrl.Control, true
	}
	return proxy.Control{}, false
}

// end ends hs's control (if any) and wakes its waiters. The caller holds
// h.mu.
func (h *humans) end(id string, hs *humanSession, closed bool) {
	hb := hs.next
	if c := hs.ctrl; c != nil {
		hb.actions = c.actions
		close(c.ended)
		hs.ctrl = nil
	}
	hb.closed = closed
	hs.next = &handback{done: make(chan struct{})}
	close(hb.done)
	h.tidy(id)
}

// sameLease compares in constant time: a viewer must not learn the lease
// by timing its guesses.
func sameLease(c *control, lease string) bool {
	return c != nil && subtle.ConstantTimeCompare([]byte(c.lease), []byte(lease)) == 1
}

func controlHeld(id, msg string) error {
	e := proxy.Errorf(proxy.ECONTROLHELD, "%s", msg)
	e.Details = map[string]any{"session_id": id}
	return e
}

// humanInControl refuses an agent's action while a person holds the
// browser.
func (m *Manager) humanInControl(id string, c proxy.Control) error {
	e := proxy.Errorf(proxy.EHUMANINCONTROL, "a person has held session %s's browser since %s; the action was not sent", id, c.Since.UTC().Format(time.RFC3339))
	e.Details = map[string]any{"session_id": id}
	if u := m.liveURL(id); u != "" {
		e.Details["live_url"] = u
	}
	return e
}

// gate refuses an agent's action on session id while a person holds it.
// Another client's session is not found, held or not.
func (m *Manager) gate(ctx context.Context, id string) error {
	c, held := m.human.holder(id)
	if !held {
		return nil
	}
	if _, err := m.session(ctx, id); err != nil {
		return err
	}
	return m.humanInControl(id, c)
}

func (m *Manager) liveURL(id string) string {
	if m.opts.LiveURL == nil {
		return ""
	}
	return m.opts.LiveURL(id)
}

// TakeControl implements proxy.HumanService. It waits for the agent's call
// in flight, so the person gets the browser as that call left it.
func (m *Manager) TakeControl(ctx context.Context, id string) (*proxy.ControlLease, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	if err := validID(id); err != nil {
		return nil, err
	}
	if _, held := m.human.holder(id); held {
		if _, err := m.session(ctx, id); err != nil {
			return nil, err // another client's session is not found, held or not
		}
		return nil, controlHeld(id, "a person already holds this session's browser")
	}
	l, err := m.acquire(ctx, id)
	if err != nil {
		return nil, err
	}
	defer m.release(l)
	if _, err := m.sup.ensureWorker(ctx, l); err != nil {
		return nil, err
	}
	now := m.clock.Now().UTC()
	c := &control{Control: proxy.Control{Holder: proxy.HolderPerson, Since: now}, lease: rand.Text(), touched: now, ended: make(chan struct{})}
	m.human.mu.Lock()
	hs := m.human.entry(id)
	if hs.ctrl != nil {
		m.human.mu.Unlock()
		return nil, controlHeld(id, "a person already holds this session's browser")
	}
	hs.ctrl = c
	m.human.mu.Unlock()
	if !m.sup.goTask(func() { m.watchHolder(id, c) }) {
		m.human.mu.Lock()
		m.human.end(id, hs, false)
		m.human.mu.Unlock()
		return nil, errShuttingDown()
	}
	m.log.Info("a person took control of a session", "session_id", id)
	recordEvent(m.store, m.log, m.clock.Now(), id, proxy.EventControlTaken, m.controlScreenshot(ctx, l))
	return &proxy.ControlLease{Control: c.Control, Lease: c.lease}, nil
}

// HandBack implements proxy.HumanService. The screenshot of the hand-back
// is taken before the agent can act again.
func (m *Manager) HandBack(ctx context.Context, id, lease string) error {
	if err := validID(id); err != nil {
		return err
	}
	if err := m.checkLease(ctx, id, lease); err != nil {
		return err
	}
	// A session that cannot be had (it failed meanwhile) is handed back
	// all the same, without a screenshot: the person is done with it.
	l, err := m.acquire(ctx, id)
	switch {
	case err == nil:
		defer m.release(l)
	case proxy.ErrorCode(err) == proxy.ETIMEOUT:
		return err
	default:
		m.log.Warn("handing back a session that cannot be resumed", "session_id", id, "err", err)
		l = nil
	}
	m.human.mu.Lock()
	hs := m.human.sessions[id]
	if hs == nil || hs.ctrl == nil {
		m.human.mu.Unlock()
		return nobodyHolds(id)
	}
	if !sameLease(hs.ctrl, lease) {
		m.human.mu.Unlock()
		return controlHeld(id, "this lease does not hold the session's browser")
	}
	m.human.mu.Unlock()
	shot := "screenshot: none"
	if l != nil {
		shot = m.controlScreenshot(ctx, l)
	}
	m.human.mu.Lock()
	if hs := m.human.sessions[id]; hs != nil && sameLease(hs.ctrl, lease) {
		m.human.end(id, hs, false)
	}
	m.human.mu.Unlock()
	m.log.Info("a person handed a session back", "session_id", id)
	recordEvent(m.store, m.log, m.clock.Now(), id, proxy.EventControlReturned, shot)
	return nil
}

func nobodyHolds(id string) error {
	e := proxy.Errorf(proxy.EINVALID, "nobody holds session %s's browser", id)
	e.Details = map[string]any{"session_id": id}
	return e
}

// checkLease is HandBack's refusals, before it waits for the session: the
// session is the caller's to see, someone holds it, and lease is theirs.
func (m *Manager) checkLease(ctx context.Context, id, lease string) error {
	if _, err := m.session(ctx, id); err != nil {
		return err
	}
	m.human.mu.Lock()
	defer m.human.mu.Unlock()
	hs := m.human.sessions[id]
	switch {
	case hs == nil || hs.ctrl == nil:
		return nobodyHolds(id)
	case !sameLease(hs.ctrl, lease):
		return controlHeld(id, "this lease does not hold the session's browser")
	}
	return nil
}

// HoldsControl implements proxy.LiveViewService; a yes counts as a sign of
// the holder.
func (m *Manager) HoldsControl(id, lease string) bool {
	m.human.mu.Lock()
	defer m.human.mu.Unlock()
	hs := m.human.sessions[id]
	if hs == nil || !sameLease(hs.ctrl, lease) {
		return false
	}
	hs.ctrl.touched = m.clock.Now()
	return true
}

// HumanAction implements proxy.LiveViewService.
func (m *Manager) HumanAction(ctx context.Context, id, lease, detail string) error {
	detail = clipRunes(strings.TrimSpace(detail), maxActionDetail)
	m.human.mu.Lock()
	hs := m.human.sessions[id]
	if hs == nil || !sameLease(hs.ctrl, lease) {
		m.human.mu.Unlock()
		return controlHeld(id, "this lease does not hold the session's browser")
	}
	hs.ctrl.touched = m.clock.Now()
	if detail != "" && len(hs.ctrl.actions) < maxActions {
		hs.ctrl.actions = append(hs.ctrl.actions, detail)
	}
	m.human.mu.Unlock()
	if detail != "" {
		recordEvent(m.store, m.log, m.clock.Now(), id, proxy.EventHumanAction, detail)
	}
	return nil
}

// watchHolder ends c when its holder gives no sign for the control idle
// timeout: a person who closed the live view's tab never hands back.
func (m *Manager) watchHolder(id string, c *control) {
	idle := m.opts.ControlIdleTimeout
	wait := idle
	for {
		t := m.clock.NewTimer(wait)
		select {
		case <-c.ended:
			t.Stop()
			return
		case <-m.done:
			t.Stop()
			return
		case <-t.C():
		}
		m.human.mu.Lock()
		hs := m.human.sessions[id]
		if hs == nil || hs.ctrl != c {
			m.human.mu.Unlock()
			return
		}
		if left := idle - m.clock.Now().Sub(c.touched); left > 0 {
			m.human.mu.Unlock()
			wait = left
			continue
		}
		m.human.end(id, hs, false)
		m.human.mu.Unlock()
		m.log.Info("a person's control of a session ended: their live view went quiet", "session_id", id, "after", idle)
		recordEvent(m.store, m.log, m.clock.Now(), id, proxy.EventControlReturned, "released: the person left")
		return
	}
}

// endHuman ends id's control and waits as the session closes.
func (m *Manager) endHuman(id string) {
	m.human.mu.Lock()
	hs := m.human.sessions[id]
	held := hs != nil && hs.ctrl != nil
	if hs != nil {
		m.human.end(id, hs, true)
	}
	m.human.mu.Unlock()
	if held {
		recordEvent(m.store, m.log, m.clock.Now(), id, proxy.EventControlReturned, "ended: the session was closed")
	}
}

// controlScreenshot records a screenshot of l's current page as a call of
// the session (tool human_control), and returns the event detail naming
// it. The agent's changes are still measured against its own last
// snapshot: the call leaves l.lastPage as it was. The caller holds l's
// lock. A failure is logged and named in the detail: the control goes on.
func (m *Manager) controlScreenshot(ctx context.Context, l *live) string {
	ctx = context.WithoutCancel(ctx) // a control taken is recorded
	refID, err := m.recordProgram(ctx, l, toolset.ControlScreenshotProgram)
	if err != nil {
		m.log.Warn("taking the screenshot of a control", "session_id", l.id, "err", err)
		if refID == "" {
			return "screenshot: none"
		}
	}
	return "screenshot: " + refID
}

// recordProgram runs prog (no arguments) in l's worker as a recorded call
// of the session that does not move its last page. The caller holds l's
// lock. It returns the call's ref once a request row exists.
func (m *Manager) recordProgram(ctx context.Context, l *live, prog *toolset.Own) (string, error) {
	if l.worker == nil {
		return "", fmt.Errorf("%s: the session has no worker", prog.Name)
	}
	p, err := prog.Build(nil)
	if err != nil {
		return "", err
	}
	admitted, err := m.admit(ctx, l.id)
	if err != nil {
		return "", err
	}
	defer admitted()
	refID := NewRefID()
	req := &proxy.Request{RefID: refID, SessionID: l.id, ToolName: prog.Name, Params: json.RawMessage(`{}`), Timestamp: m.clock.Now().UTC()}
	if err := m.store.InsertRequest(ctx, req); err != nil {
		return "", fmt.Errorf("recording %s: %w", prog.Name, err)
	}
	raw, callErr := m.forward(ctx, l, toolset.RunTool, p.Args)
	at := m.clock.Now().UTC()
	if callErr != nil {
		return refID, m.recordFailure(ctx, l, refID, at, callErr)
	}
	kept := l.lastPage
	defer func() { l.lastPage = kept }()
	res, _, err := m.record(ctx, l, refID, prog.Name, forwarded{tool: toolset.RunTool, params: p.Args, ext: prog, blob: p.Blob}, raw, at, false)
	if err != nil {
		return refID, err
	}
	if res.Status != proxy.StatusSuccess {
		return refID, fmt.Errorf("%s: %s", prog.Name, res.Error)
	}
	return refID, nil
}

// RequestHuman implements proxy.HumanService. The wait holds nothing of
// the session: a person's take and hand-back, and reads, go on meanwhile.
func (m *Manager) RequestHuman(ctx context.Context, id, reason string, timeout time.Duration) (*proxy.HumanResult, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	if err := validID(id); err != nil {
		return nil, err
	}
	reason = strings.TrimSpace(reason)
	switch n := utf8.RuneCountInString(reason); {
	case n == 0:
		return nil, invalidField("reason", "reason is required: say what the person should do")
	case n > maxHumanReason:
		return nil, invalidField("reason", fmt.Sprintf("reason is %d characters; at most %d", n, maxHumanReason))
	}
	switch {
	case timeout == 0:
		timeout = proxy.DefaultHumanTimeout
	case timeout < 0 || timeout > proxy.MaxHumanTimeout:
		return nil, invalidField("timeout", fmt.Sprintf("timeout must be between 0 (the default, %s) and %s", proxy.DefaultHumanTimeout, proxy.MaxHumanTimeout))
	}
	s, err := m.session(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := stateErr(s); err != nil {
		return nil, err
	}
	since := m.clock.Now().UTC()
	w := &proxy.HumanWait{Reason: reason, Since: since, Until: since.Add(timeout)}
	m.human.mu.Lock()
	hs := m.human.entry(id)
	hs.waits = append(hs.waits, w)
	hb := hs.next
	m.human.mu.Unlock()
	m.log.Info("an agent asks for a person", "session_id", id, "timeout", timeout)
	recordEvent(m.store, m.log, since, id, proxy.EventHumanRequested, clipRunes(reason, eventReasonMax))

	t := m.clock.NewTimer(timeout)
	var waitErr error
	select {
	case <-hb.done:
	case <-t.C():
	case <-ctx.Done():
		waitErr = &proxy.Error{Code: proxy.ETIMEOUT, Message: "the caller stopped waiting for a person", Retryable: true, Details: map[string]any{"session_id": id}}
	case <-m.done:
		waitErr = errShuttingDown()
	}
	t.Stop()
	m.human.mu.Lock()
	if hs := m.human.sessions[id]; hs != nil {
		for i, x := range hs.waits {
			if x == w {
				hs.waits = append(hs.waits[:i:i], hs.waits[i+1:]...)
				break
			}
		}
		m.human.tidy(id)
	}
	m.human.mu.Unlock()
	if waitErr != nil {
		return nil, waitErr
	}
	res := &proxy.HumanResult{SessionID: id, LiveURL: m.liveURL(id)}
	select {
	case <-hb.done:
	default:
		res.Waited = m.clock.Now().Sub(since)
		if c, held := m.human.holder(id); held {
			res.Control = &c
		}
		return res, nil
	}
	if hb.closed {
		e := proxy.Errorf(proxy.ESESSIONCLOSED, "session %s was closed while the agent waited for a person", id)
		e.Details = map[string]any{"session_id": id}
		return nil, e
	}
	res.HandedBack = true
	res.Actions = hb.actions
	// What changed on the page while the person had it, against the
	// agent's own last snapshot, as a recorded call the agent can read.
	hb.snapOnce.Do(func() {
		hb.snap, hb.snapErr = m.Call(ctx, proxy.CallRequest{SessionID: id, Tool: "browser_snapshot", Params: json.RawMessage(`{}`), Changes: true})
	})
	if snap, err := hb.snap, hb.snapErr; err != nil {
		m.log.Warn("the snapshot after a hand-back failed", "session_id", id, "err", err)
		if c, held := m.human.holder(id); held {
			res.Control = &c // taken again at once
		}
	} else {
		res.Result = snap
	}
	res.Waited = m.clock.Now().Sub(since)
	return res, nil
}

func invalidField(field, msg string) error {
	e := proxy.Errorf(proxy.EINVALID, "%s", msg)
	e.Details = map[string]any{"field": field}
	return e
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// debugWorker is a worker whose browser the proxy can reach over CDP.
type debugWorker interface {
	DebugEndpoint() string
}

// LiveTarget implements proxy.LiveViewService.
func (m *Manager) LiveTarget(ctx context.Context, id string) (*proxy.LiveTarget, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	l, err := m.acquire(ctx, id)
	if err != nil {
		return nil, err
	}
	_, err = m.sup.ensureWorker(ctx, l)
	w := l.worker
	m.release(l)
	if err != nil {
		return nil, err
	}
	var endpoint string
	if dw, ok := w.(debugWorker); ok {
		endpoint = dw.DebugEndpoint()
	}
	if endpoint == "" {
		e := proxy.Errorf(proxy.EUNAVAILABLE, "this session's browser offers no live view (only a Chromium the server reaches over CDP does: not a Playwright-protocol browser node)")
		e.Retryable = false
		e.Suggestion = "Follow this session through its calls' snapshots; a live view needs a Chromium the server reaches over CDP."
		e.Details = map[string]any{"session_id": id}
		return nil, e
	}
	var out struct {
		Pages []proxy.LivePage `json:"pages"`
	}
	if _, err := m.inspect(ctx, id, toolset.TargetsProgram, struct{}{}, &out); err != nil {
		return nil, notLivePage(err, id)
	}
	return &proxy.LiveTarget{Endpoint: endpoint, Pages: out.Pages}, nil
}

var _ proxy.LiveViewService = (*Manager)(nil)
