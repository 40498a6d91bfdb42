package content_test

import (
	"context"
	"sync"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// fakeStore is an in-memory content.Store. Unlike the real record, its
// responses can be changed after the fact, which is how tests make a view
// grow or change under a cursor.
type fakeStore struct {
	mu        sync.Mutex
	responses map[string]*proxy.Response
	inFlight  map[string]bool
	console   map[string][]proxy.ConsoleEntry
	images    map[string][]proxy.Image
	cursors   map[string]proxy.DiffCursor
	owners    map[string]proxy.ClientID // by ref; absent: the operator's
	sessions  map[string]*proxy.Session
	calls     map[string][]proxy.Call // by session
	downloads map[string][]proxy.Download
	puts      int
}

func (f *fakeStore) GetSession(_ context.Context, id string) (*proxy.Session, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.sessions[id]; s != nil {
		return s, nil
	}
	return nil, proxy.SessionNotFound(id)
}

func (f *fakeStore) ListSessionEvents(context.Context, string) ([]proxy.SessionEvent, error) {
	return []proxy.SessionEvent{}, nil
}

func (f *fakeStore) ListCalls(_ context.Context, id string) ([]proxy.Call, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[id], nil
}

func newFakeStore() *fakeStore {
	return &fakeStore{
		responses: map[string]*proxy.Response{},
		inFlight:  map[string]bool{},
		console:   map[string][]proxy.ConsoleEntry{},
		images:    map[string][]proxy.Image{},
		cursors:   map[string]proxy.DiffCursor{},
	}
}

func (f *fakeStore) setResponse(r proxy.Response) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.responses[r.RefID] = &r
}

func (f *fakeStore) GetResponse(_ context.Context, refID string) (*proxy.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inFlight[refID] {
		return nil, proxy.Errorf(proxy.EREFMISSING, "ref_id %q is still in flight", refID)
	}
	r, ok := f.responses[refID]
	if !ok {
		return nil, proxy.Errorf(proxy.EREFMISSING, "ref_id %q not found", refID)
	}
	c := *r
	return &c, nil
}

func (f *fakeStore) RefOwner(_ context.Context, refID string) (proxy.ClientID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.responses[refID]; !ok && !f.inFlight[refID] {
		return "", proxy.RefNotFound(refID)
	}
	return f.owners[refID], nil
}

func (f *fakeStore) ListImages(_ context.Context, refID string) ([]proxy.Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]proxy.Image{}, f.images[refID]...), nil
}

func (f *fakeStore) GetDownload(_ context.Context, refID, name string) (*proxy.Download, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, d := range f.downloads[refID] {
		if d.Name == name {
			return &d, nil
		}
	}
	return nil, proxy.Errorf(proxy.EDOWNLOADMISSING, "ref_id %q has no download named %q", refID, name)
}

func (f *fakeStore) ListConsole(_ context.Context, refID string) ([]proxy.ConsoleEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]proxy.ConsoleEntry{}, f.console[refID]...), nil
}

func (f *fakeStore) GetCursor(_ context.Context, refID string) (*proxy.DiffCursor, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.cursors[refID]
	if !ok {
		return nil, nil
	}
	return &c, nil
}

func (f *fakeStore) PutCursor(_ context.Context, c *proxy.DiffCursor) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.responses[c.RefID]; !ok {
		return proxy.Errorf(proxy.EREFMISSING, "ref_id %q has no recorded response", c.RefID)
	}
	f.cursors[c.RefID] = *c
	f.puts++
	return nil
}
