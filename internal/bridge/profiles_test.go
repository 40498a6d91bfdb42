package bridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/api"
)

// profileService is the server's side of the profile routes: what each
// request asked and for which client, and the answers a manager gives.
type profileService struct {
	mu      sync.Mutex
	asked   []string
	clients []bool // whether each request acted for a client
}

var updated = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func (p *profileService) note(ctx context.Context, what string) bool {
	_, client := proxy.ClientFrom(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, what)
	p.clients = append(p.clients, client)
	return client
}

func (p *profileService) SaveProfile(ctx context.Context, name, sessionID string) (*proxy.Profile, error) {
	p.note(ctx, "save "+name+" "+sessionID)
	return &proxy.Profile{Name: name, Version: 2, Origins: []string{"github.com"}, UpdatedAt: updated}, nil
}

func (p *profileService) ListProfiles(ctx context.Context) ([]*proxy.Profile, error) {
	p.note(ctx, "list")
	return []*proxy.Profile{{Name: "github", Version: 2, Origins: []string{"github.com"}, UpdatedAt: updated, Sessions: []string{"s1"}}}, nil
}

func (p *profileService) GetProfile(ctx context.Context, name string) (*proxy.Profile, error) {
	p.note(ctx, "get "+name)
	if name != "github" {
		return nil, proxy.ProfileNotFound(name)
	}
	return &proxy.Profile{Name: name, Version: 2, UpdatedAt: updated}, nil
}

// The operator's operations are refused to a client, as the manager does.
func (p *profileService) PutProfile(ctx context.Context, name string, _ json.RawMessage) (*proxy.Profile, error) {
	if p.note(ctx, "put "+name) {
		return nil, proxy.Errorf(proxy.EFORBIDDEN, "storing a profile is the operator's")
	}
	return &proxy.Profile{Name: name, Version: 1}, nil
}

func (p *profileService) ProfileState(ctx context.Context, name string) (json.RawMessage, error) {
	if p.note(ctx, "state "+name) {
		return nil, proxy.Errorf(proxy.EFORBIDDEN, "a profile's state is the operator's")
	}
	return json.RawMessage(`{"cookies":[],"origins":[]}`), nil
}

func (p *profileService) DeleteProfile(ctx context.Context, name string) error {
	if p.note(ctx, "delete "+name) {
		return proxy.Errorf(proxy.EFORBIDDEN, "deleting a profile is the operator's")
	}
	return nil
}

// TestClientProfiles: the bridge's client reaches proxy-server's profile
// routes as the bridge's client, the answers and codes come back intact,
// and the operator's operations are refused to it.
func TestClientProfiles(t *testing.T) {
	svc := &profileService{}
	srv := httptest.NewServer(api.New(nil, nil, api.WithProfiles(svc), api.WithLogger(slog.New(slog.DiscardHandler))))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, "", WithRetryTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	saved, err := c.SaveProfile(ctx, "github", "11111111-1111-4111-8111-111111111111")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&proxy.Profile{Name: "github", Version: 2, Origins: []string{"github.com"}, UpdatedAt: updated}, saved); diff != "" {
		t.Errorf("SaveProfile (-want +got):\n%s", diff)
	}
	list, err := c.ListProfiles(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "github" || len(list[0].Sessions) != 1 {
		t.Errorf("ListProfiles = %+v, %v", list, err)
	}
	if p, err := c.GetProfile(ctx, "github"); err != nil || p.Version != 2 {
		t.Errorf("GetProfile = %+v, %v", p, err)
	}
	codes := map[string]string{}
	_, err = c.GetProfile(ctx, "gone")
	codes["get unknown"] = proxy.ErrorCode(err)
	_, err = c.GetProfile(ctx, "Bad Name")
	codes["get bad name"] = proxy.ErrorCode(err)
	_, err = c.PutProfile(ctx, "github", json.RawMessage(`{"cookies":[],"origins":[]}`))
	codes["put"] = proxy.ErrorCode(err)
	_, err = c.ProfileState(ctx, "github")
	codes["state"] = proxy.ErrorCode(err)
	codes["delete"] = proxy.ErrorCode(c.DeleteProfile(ctx, "github"))
	wantCodes := map[string]string{
		"get unknown":  proxy.EPROFILEMISSING,
		"get bad name": proxy.EINVALID,
		"put":          proxy.EFORBIDDEN,
		"state":        proxy.EFORBIDDEN,
		"delete":       proxy.EFORBIDDEN,
	}
	if diff := cmp.Diff(wantCodes, codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	wantAsked := []string{"save github 11111111-1111-4111-8111-111111111111", "list", "get github", "get gone", "put github", "state github", "delete github"}
	if diff := cmp.Diff(wantAsked, svc.asked); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	for i, client := range svc.clients {
		if !client {
			t.Errorf("%s acted as the operator, want as the bridge's client", svc.asked[i])
		}
	}
}
