package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// The page, element and network-log reads (proxy.PageService). They run a
// fixed read-only program of toolset in the session's live worker and are
// not recorded: a read is not a call, and the model never gets a ref_id
// for it. They never start a browser (no revive, no restart): reading a
// resource of a suspended session must not cost a worker, and refs of a
// snapshot would not hold in a new one anyway. Nor do they count as
// activity, so a client that polls resources does not keep its sessions
// from idling out. What they answer is masked as a call's answer is.

// errNotLive: the session has no worker to ask.
var errNotLive = errors.New("session has no live browser")

// maxNetworkEntries bounds a network-log read: Playwright keeps a page's
// recent requests only, and a resource is read whole.
const maxNetworkEntries = 500

// ariaRef is the shape of a snapshot ref: e14, or f1e3 inside a frame.
var ariaRef = regexp.MustCompile(`^(f[0-9]{1,6})?e[0-9]{1,9}$`)

// Pages implements proxy.PageService. A session without a live worker has
// one page, its last one as the record holds it (Live false).
func (m *Manager) Pages(ctx context.Context, id string) ([]proxy.Page, error) {
	var out struct {
		Pages []proxy.Page `json:"pages"`
	}
	s, err := m.inspect(ctx, id, toolset.PagesProgram, struct{}{}, &out)
	if errors.Is(err, errNotLive) {
		md := s.PageMetadata()
		return []proxy.Page{{Index: 0, URL: md.LastURL, Title: md.LastTitle, Current: true}}, nil
	}
	if err != nil {
		return nil, err
	}
	return out.Pages, nil
}

// Element implements proxy.PageService.
func (m *Manager) Element(ctx context.Context, id string, page int, ref string) (*proxy.Element, error) {
	if !ariaRef.MatchString(ref) {
		return nil, proxy.Errorf(proxy.EINVALID, "element ref %q is not a snapshot ref (e14, or f1e3 in a frame)", ref)
	}
	var el proxy.Element
	if _, err := m.inspect(ctx, id, toolset.ElementProgram, map[string]any{"page": page, "ref": ref}, &el); err != nil {
		return nil, notLivePage(err, id)
	}
	return &el, nil
}

// NetworkLog implements proxy.PageService.
func (m *Manager) NetworkLog(ctx context.Context, id string, page int) ([]proxy.NetworkEntry, error) {
	var out struct {
		Entries []proxy.NetworkEntry `json:"entries"`
	}
	if _, err := m.inspect(ctx, id, toolset.NetworkProgram, map[string]any{"page": page, "limit": maxNetworkEntries}, &out); err != nil {
		return nil, notLivePage(err, id)
	}
	if out.Entries == nil {
		out.Entries = []proxy.NetworkEntry{}
	}
	return out.Entries, nil
}

// notLivePage says that a session without a live worker has no page to
// read an element or a request of.
func notLivePage(err error, id string) error {
	if !errors.Is(err, errNotLive) {
		return err
	}
	e := proxy.Errorf(proxy.EPAGEMISSING, "session %s has no open page: it is suspended; its next call or resume_session opens its last page again (with new element refs and an empty network log)", id)
	e.Details = map[string]any{"session_id": id}
	return e
}

// inspect runs prog with args in the live worker of session id, for the
// caller of ctx, and decodes its value into out. It returns the session
// as the record holds it, and errNotLive (with the session) when there is
// no worker to ask.
func (m *Manager) inspect(ctx context.Context, id string, prog *toolset.Own, args, out any) (*proxy.Session, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	if err := validID(id); err != nil {
		return nil, err
	}
	s, err := m.session(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := stateErr(s); err != nil {
		return nil, err
	}
	l := m.reg.get(id)
	if l == nil {
		return s, errNotLive
	}
	if err := l.lock(ctx); err != nil {
		return nil, err
	}
	defer l.unlock()
	if l.retired || l.worker == nil || l.crashed {
		return s, errNotLive
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding arguments: %w", prog.Name, err)
	}
	p, err := prog.Build(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prog.Name, err)
	}
	admitted, err := m.admit(ctx, id)
	if err != nil {
		return nil, err
	}
	defer admitted()
	callCtx, cancel := context.WithTimeout(ctx, m.opts.CallTimeout)
	defer cancel()
	res, err := l.worker.CallTool(callCtx, toolset.RunTool, p.Args)
	if err != nil {
		m.log.WarnContext(ctx, "resource read: the worker did not answer", "session_id", id, "program", prog.Name, "err", err)
		e := proxy.Errorf(proxy.EUNAVAILABLE, "the session's browser did not answer the read")
		e.Details = map[string]any{"session_id": id}
		return nil, e
	}
	parsed, err := answer.Parse(res)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prog.Name, err)
	}
	o := toolset.Interpret(parsed.ResultText, errorText(parsed))
	if o.Err != nil {
		if o.Err.Details == nil {
			o.Err.Details = map[string]any{"session_id": id}
		}
		return nil, o.Err
	}
	// Masked as every answer is: a page's URL or an attribute can hold a
	// credential typed through its placeholder, or a policy secret.
	if err := json.Unmarshal(m.redaction().doc(o.Value), out); err != nil {
		return nil, fmt.Errorf("%s: its answer does not decode: %w", prog.Name, err)
	}
	return s, nil
}
