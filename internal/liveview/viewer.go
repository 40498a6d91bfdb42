package liveview

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

// outBuffer bounds the messages other than frames waiting for a viewer:
// a viewer that lets that many pile up is closed rather than queued for.
const outBuffer = 64

// writeTimeout bounds one write to a viewer that stopped reading.
const writeTimeout = 10 * time.Second

// viewer is one live view WebSocket: frames out, input in, bound to one
// session. Only the writer goroutine writes to conn.
type viewer struct {
	cfg    Config
	conn   *websocket.Conn
	id     string
	cancel context.CancelFunc

	// out carries every message but frames, in order; a nil one closes the
	// socket once what was queued before it is sent.
	out chan []byte
	// frame is the newest frame not sent yet: a slow viewer gets the
	// latest, the ones between are dropped.
	frameMu    sync.Mutex
	frame      *Frame
	frameReady chan struct{}

	// switchTo asks the screencast to move to another tab.
	switchTo chan string

	mu       sync.Mutex
	page     Page
	endpoint string
	lease    string

	// sentMu orders the state and tabs messages and keeps the last of each,
	// so that only changes are sent.
	sentMu    sync.Mutex
	lastState []byte
	lastTabs  []byte
	yours     bool

	rec *recorder
}

func newViewer(cfg Config, conn *websocket.Conn, id string, cancel context.CancelFunc) *viewer {
	v := &viewer{cfg: cfg, conn: conn, id: id, cancel: cancel,
		out: make(chan []byte, outBuffer), frameReady: make(chan struct{}, 1), switchTo: make(chan string, 1)}
	v.rec = &recorder{action: v.recordAction}
	return v
}

func (v *viewer) stop() { v.cancel() }

// run serves the viewer until its socket closes, the session's page
// cannot be followed, or the server shuts down.
func (v *viewer) run(ctx context.Context) {
	defer v.conn.CloseNow()
	var wg sync.WaitGroup
	wg.Go(func() { v.write(ctx) })
	defer func() {
		v.cancel()
		// Once the screencast has stopped: it may have moved to another
		// page meanwhile.
		wg.Wait()
		if p := v.currentPage(); p != nil {
			_ = p.Close()
		}
	}()
	page, err := v.attachCurrent(ctx)
	if err != nil {
		v.closeWith(err)
		v.read(ctx) // until the writer has closed the socket
		return
	}
	v.setPage(page)
	v.sendTabs(ctx, true)
	v.sendState(ctx, true)
	wg.Go(func() { v.watch(ctx) })
	wg.Go(func() { v.cast(ctx) })
	v.read(ctx)
	v.cancel()
	// What was typed last is counted even when the viewer just left.
	v.rec.flushTyped(context.WithoutCancel(ctx))
}

// attachCurrent attaches to the session's current page, resuming the
// session when it is suspended.
func (v *viewer) attachCurrent(ctx context.Context) (Page, error) {
	t, err := v.cfg.Sessions.LiveTarget(ctx, v.id)
	if err != nil {
		return nil, err
	}
	var target string
	for _, p := range t.Pages {
		if target == "" || p.Current {
			target = p.TargetID
		}
		if p.Current {
			break
		}
	}
	if target == "" {
		return nil, proxy.Errorf(proxy.EPAGEMISSING, "session %s has no page open", v.id)
	}
	p, err := v.cfg.Attach(ctx, t.Endpoint, target)
	if err != nil {
		// The endpoint is the server's: in its log, never to a viewer.
		v.cfg.Log.WarnContext(ctx, "live view could not attach to the session's page", "session_id", v.id, "err", err)
		return nil, proxy.Errorf(proxy.EUNAVAILABLE, "the live view cannot reach session %s's browser", v.id)
	}
	v.mu.Lock()
	v.endpoint = t.Endpoint
	v.mu.Unlock()
	return p, nil
}

func (v *viewer) currentPage() Page {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.page
}

// setPage makes p the page watched and acted on, closing the one before.
func (v *viewer) setPage(p Page) {
	v.mu.Lock()
	old := v.page
	v.page = p
	v.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
}

func (v *viewer) currentLease() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lease
}

// holds reports whether this viewer's lease is the holder's now.
func (v *viewer) holds() bool {
	l := v.currentLease()
	return l != "" && v.cfg.Sessions.HoldsControl(v.id, l)
}

// cast runs the screencast of the watched page, moving to another tab when
// asked and following the session to its current page when the watched
// one goes.
func (v *viewer) cast(ctx context.Context) {
	for {
		page := v.currentPage()
		sctx, stop := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() { errc <- page.Screencast(sctx, v.cfg.Screencast, v.putFrame) }()
		var err error
		next := ""
		select {
		case err = <-errc:
		case next = <-v.switchTo:
			stop()
			<-errc
		}
		stop()
		if ctx.Err() != nil {
			return
		}
		switch {
		case next != "":
			v.mu.Lock()
			endpoint := v.endpoint
			v.mu.Unlock()
			np, aerr := v.cfg.Attach(ctx, endpoint, next)
			if aerr != nil {
				v.cfg.Log.WarnContext(ctx, "live view could not attach to a tab", "session_id", v.id, "target_id", next, "err", aerr)
				v.sendError(proxy.Errorf(proxy.EUNAVAILABLE, "the live view cannot reach that tab"))
				continue
			}
			v.setPage(np)
			v.sendTabs(ctx, true)
		case err == nil || errors.Is(err, ErrGone):
			np, aerr := v.attachCurrent(ctx)
			if aerr != nil {
				v.closeWith(aerr)
				return
			}
			v.setPage(np)
			v.sendTabs(ctx, true)
		default:
			v.cfg.Log.WarnContext(ctx, "live view screencast stopped", "session_id", v.id, "err", err)
			v.closeWith(proxy.Errorf(proxy.EUNAVAILABLE, "the screencast of session %s stopped", v.id))
			return
		}
	}
}

// putFrame keeps f as the next frame to send, replacing one not sent yet:
// the screencast never waits for a viewer.
func (v *viewer) putFrame(f Frame) {
	v.frameMu.Lock()
	v.frame = &f
	v.frameMu.Unlock()
	select {
	case v.frameReady <- struct{}{}:
	default:
	}
}

func (v *viewer) takeFrame() *Frame {
	v.frameMu.Lock()
	defer v.frameMu.Unlock()
	f := v.frame
	v.frame = nil
	return f
}

// watch looks at the session every Poll: its control state and tabs are
// sent when they change, and a typing pause ends a run of typed text.
func (v *viewer) watch(ctx context.Context) {
	for clock.Sleep(ctx, v.cfg.Clock, v.cfg.Poll) == nil {
		v.rec.tick(ctx)
		v.sendState(ctx, false)
		v.sendTabs(ctx, false)
	}
}

// write sends the queued messages, before any frame, then the newest
// frame, until ctx ends or a write fails.
func (v *viewer) write(ctx context.Context) {
	for {
		var b []byte
		select {
		case b = <-v.out:
		default:
			select {
			case <-ctx.Done():
				return
			case b = <-v.out:
			case <-v.frameReady:
				f := v.takeFrame()
				if f == nil {
					continue
				}
				b = v.frameMessage(f)
			}
		}
		if b == nil {
			_ = v.conn.Close(websocket.StatusPolicyViolation, "the live view ended")
			v.cancel()
			return
		}
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		err := v.conn.Write(wctx, websocket.MessageText, b)
		cancel()
		if err != nil {
			v.cancel()
			return
		}
	}
}

// enqueue queues a message for the writer; a viewer whose queue is full
// is closed.
func (v *viewer) enqueue(b []byte) {
	select {
	case v.out <- b:
	default:
		v.cfg.Log.Info("live view closed: the viewer does not read", "session_id", v.id)
		v.cancel()
	}
}

// closeWith sends err as the viewer's last message, then closes.
func (v *viewer) closeWith(err error) {
	v.sendError(err)
	v.enqueue(nil)
}

func (v *viewer) sendError(err error) {
	e := proxy.AsError(err)
	v.enqueue(mustJSON(errorMessage{Type: "error", Code: e.Code, Message: e.Message}))
}

// sendState sends the session's control state when it changed (or when
// forced), and ends a run of typed text when this viewer's control ended.
func (v *viewer) sendState(ctx context.Context, force bool) {
	v.sentMu.Lock()
	defer v.sentMu.Unlock()
	sess, err := v.cfg.Sessions.GetSession(ctx, v.id)
	if err != nil {
		if code := proxy.ErrorCode(err); code == proxy.ESESSIONMISSING || code == proxy.ESESSIONCLOSED {
			v.closeWith(err)
		}
		return
	}
	yours := v.holds()
	if v.yours && !yours {
		v.rec.flushTyped(ctx)
	}
	v.yours = yours
	b := mustJSON(stateMessage{Type: "state", Control: sess.Control, Waiting: sess.Waiting, Yours: yours})
	if force || !bytes.Equal(b, v.lastState) {
		v.lastState = b
		v.enqueue(b)
	}
}

// sendTabs sends the session's tabs when they changed (or when forced).
func (v *viewer) sendTabs(ctx context.Context, force bool) {
	v.sentMu.Lock()
	defer v.sentMu.Unlock()
	page := v.currentPage()
	tabs, err := page.Tabs(ctx)
	if err != nil {
		return // a page that went is followed by cast
	}
	msg := tabsMessage{Type: "tabs", Tabs: make([]tabEntry, 0, len(tabs))}
	for _, t := range tabs {
		msg.Tabs = append(msg.Tabs, tabEntry{TargetID: t.TargetID, URL: t.URL, Title: t.Title, Current: t.TargetID == page.TargetID()})
	}
	b := mustJSON(msg)
	if force || !bytes.Equal(b, v.lastTabs) {
		v.lastTabs = b
		v.enqueue(b)
	}
}

func (v *viewer) frameMessage(f *Frame) []byte {
	at := f.At
	if at.IsZero() {
		at = v.cfg.Clock.Now()
	}
	return mustJSON(frameMessage{Type: "frame", Data: base64.StdEncoding.EncodeToString(f.Data), Width: f.DeviceWidth, Height: f.DeviceHeight, At: at.UnixMilli()})
}

// recordAction records one of the holder's actions in the session's
// events.
func (v *viewer) recordAction(ctx context.Context, lease, detail string) {
	if err := v.cfg.Sessions.HumanAction(ctx, v.id, lease, detail); err != nil {
		v.cfg.Log.InfoContext(ctx, "a person's action was not recorded", "session_id", v.id, "action", detail, "code", proxy.ErrorCode(err))
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("liveview: a message does not marshal: %v", err))
	}
	return b
}
