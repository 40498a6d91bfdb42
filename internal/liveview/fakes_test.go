package liveview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

const (
	sessionID = "11111111-1111-4111-8111-111111111111"
	goodLease = "lease-a1b2"
	endpoint  = "http://127.0.0.1:9222"
)

// fakeSessions is one session whose control the test sets.
type fakeSessions struct {
	mu      sync.Mutex
	holder  string // the lease holding control, "" for none
	control *proxy.Control
	waiting *proxy.HumanWait
	// current is the target LiveTarget names as the session's page, in
	// the browser at ep (endpoint when "").
	current string
	ep      string
	targets int // LiveTarget calls
	actions []string
	closed  bool
}

func (f *fakeSessions) TakeControl(context.Context, string) (*proxy.ControlLease, error) {
	return nil, errors.New("not in these tests")
}
func (f *fakeSessions) HandBack(context.Context, string, string) error {
	return errors.New("not in these tests")
}
func (f *fakeSessions) RequestHuman(context.Context, string, string, time.Duration) (*proxy.HumanResult, error) {
	return nil, errors.New("not in these tests")
}

func (f *fakeSessions) LiveTarget(_ context.Context, id string) (*proxy.LiveTarget, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.targets++
	if id != sessionID {
		return nil, proxy.Errorf(proxy.ESESSIONMISSING, "no session %s", id)
	}
	if f.closed {
		return nil, proxy.Errorf(proxy.ESESSIONCLOSED, "session %s is closed", id)
	}
	ep := f.ep
	if ep == "" {
		ep = endpoint
	}
	return &proxy.LiveTarget{Endpoint: ep, Pages: []proxy.LivePage{
		{Index: 0, TargetID: "T-other", URL: "https://example.com/"},
		{Index: 1, TargetID: f.current, URL: "https://example.com/login", Current: true},
	}}, nil
}

func (f *fakeSessions) HoldsControl(id, lease string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return id == sessionID && lease != "" && lease == f.holder
}

func (f *fakeSessions) HumanAction(_ context.Context, id, lease, detail string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if lease == "" || lease != f.holder {
		return proxy.Errorf(proxy.ECONTROLHELD, "not the holder's lease")
	}
	f.actions = append(f.actions, detail)
	return nil
}

func (f *fakeSessions) GetSession(_ context.Context, id string) (*proxy.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id != sessionID {
		return nil, proxy.Errorf(proxy.ESESSIONMISSING, "no session %s", id)
	}
	return &proxy.Session{ID: id, State: proxy.SessionActive, Control: f.control, Waiting: f.waiting}, nil
}

func (f *fakeSessions) take(lease string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holder = lease
	f.control = &proxy.Control{Holder: proxy.HolderPerson, Since: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
}

func (f *fakeSessions) handBack() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holder, f.control = "", nil
}

func (f *fakeSessions) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.actions)
}

// fakeBrowser is the pages a test attaches to: each records the input it
// got, and its screencast sends what the test pushes.
type fakeBrowser struct {
	mu       sync.Mutex
	pages    map[string]*fakePage
	attached []string // endpoint and target of each Attach
	// tabs are the page targets of the session's context.
	tabs []Tab
}

func newFakeBrowser(targets ...string) *fakeBrowser {
	b := &fakeBrowser{pages: map[string]*fakePage{}}
	for _, t := range targets {
		b.tabs = append(b.tabs, Tab{TargetID: t, URL: "https://example.com/" + t, Title: t})
	}
	return b
}

func (b *fakeBrowser) attach(_ context.Context, ep, target string) (Page, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attached = append(b.attached, ep+" "+target)
	if target == "T-broken" {
		return nil, fmt.Errorf("dialing %s: connection refused", ep)
	}
	p := &fakePage{browser: b, target: target, frames: make(chan Frame), gone: make(chan struct{}), casting: make(chan struct{})}
	b.pages[target] = p
	return p, nil
}

func (b *fakeBrowser) page(target string) *fakePage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pages[target]
}

func (b *fakeBrowser) attaches() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.attached)
}

type fakePage struct {
	browser *fakeBrowser
	target  string
	frames  chan Frame
	gone    chan struct{}
	// casting is closed once the screencast runs.
	casting   chan struct{}
	castOnce  sync.Once
	mu        sync.Mutex
	input     []string
	failType  bool
	closedCnt int
}

func (p *fakePage) ContextID() string { return "C1" }
func (p *fakePage) TargetID() string  { return p.target }
func (p *fakePage) Tabs(context.Context) ([]Tab, error) {
	p.browser.mu.Lock()
	defer p.browser.mu.Unlock()
	return slices.Clone(p.browser.tabs), nil
}

func (p *fakePage) Screencast(ctx context.Context, _ Options, frame func(Frame)) error {
	p.castOnce.Do(func() { close(p.casting) })
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.gone:
			return fmt.Errorf("target closed: %w", ErrGone)
		case f := <-p.frames:
			frame(f)
		}
	}
}

func (p *fakePage) note(s string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.input = append(p.input, s)
	return nil
}

func (p *fakePage) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.input)
}

func (p *fakePage) Mouse(_ context.Context, m Mouse) error {
	return p.note(fmt.Sprintf("mouse %s %g,%g %s %d", m.Type, m.X, m.Y, m.Button, m.ClickCount))
}

var namedKeys = map[string]bool{"Enter": true, "Tab": true, "Backspace": true}

func (p *fakePage) Key(_ context.Context, key string, _ int) error {
	if !namedKeys[key] {
		return fmt.Errorf("unknown key %q", key)
	}
	return p.note("key " + key)
}

func (p *fakePage) Type(_ context.Context, text string) error {
	p.mu.Lock()
	fail := p.failType
	p.mu.Unlock()
	if fail {
		return fmt.Errorf("typing %q failed", text)
	}
	return p.note("type " + text)
}

func (p *fakePage) Paste(_ context.Context, text string) error { return p.note("paste " + text) }

func (p *fakePage) Describe(_ context.Context, x, y float64) string {
	if x < 100 && y < 100 {
		return "button 'Sign in'"
	}
	return ""
}

func (p *fakePage) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closedCnt++
	return nil
}
