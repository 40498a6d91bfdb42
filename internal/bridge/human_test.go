package bridge

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/api"
)

// humanService is the server's side of request_human and the control
// routes: what each request asked, and a wait that lasts until released.
type humanService struct {
	mu      sync.Mutex
	asked   []string
	clients []bool
	// release, when set, is what a wait blocks on (or its ctx).
	release chan struct{}
	waiting chan struct{}
}

func (h *humanService) note(ctx context.Context, what string) {
	_, client := proxy.ClientFrom(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, what)
	h.clients = append(h.clients, client)
}

func (h *humanService) TakeControl(ctx context.Context, id string) (*proxy.ControlLease, error) {
	h.note(ctx, "take "+id)
	return &proxy.ControlLease{Control: proxy.Control{Holder: proxy.HolderPerson, Since: updated}, Lease: "l1"}, nil
}

func (h *humanService) HandBack(ctx context.Context, id, lease string) error {
	h.note(ctx, "hand back "+id+" "+lease)
	if lease != "l1" {
		return proxy.Errorf(proxy.ECONTROLHELD, "not the holder's lease")
	}
	return nil
}

func (h *humanService) RequestHuman(ctx context.Context, id, reason string, timeout time.Duration) (*proxy.HumanResult, error) {
	h.note(ctx, "human "+id+" "+reason+" "+timeout.String())
	if reason == "held" {
		return nil, proxy.Errorf(proxy.EHUMANINCONTROL, "a person holds session %s", id)
	}
	if h.release != nil {
		close(h.waiting)
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &proxy.HumanResult{SessionID: id, HandedBack: true, Actions: []string{"click on button 'Verify'", "typed 6 characters"},
		Waited: 42 * time.Second, Result: &proxy.CallResult{RefID: "r9", SessionID: id, Status: proxy.StatusSuccess}, LiveURL: "http://127.0.0.1:1/ui/sessions/" + id + "/live"}, nil
}

// TestClientHuman: request_human and the control lease over HTTP, as the
// bridge's client, with the answers and codes intact.
func TestClientHuman(t *testing.T) {
	svc := &humanService{}
	srv := httptest.NewServer(api.New(nil, nil, api.WithHuman(svc), api.WithLogger(slog.New(slog.DiscardHandler))))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, "", WithRetryTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const id = "11111111-1111-4111-8111-111111111111"

	res, err := c.RequestHuman(ctx, id, "enter the 2FA code", 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := &proxy.HumanResult{SessionID: id, HandedBack: true, Actions: []string{"click on button 'Verify'", "typed 6 characters"},
		Waited: 42 * time.Second, Result: &proxy.CallResult{RefID: "r9", SessionID: id, Status: proxy.StatusSuccess}, LiveURL: "http://127.0.0.1:1/ui/sessions/" + id + "/live"}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("RequestHuman (-want +got):\n%s", diff)
	}
	lease, err := c.TakeControl(ctx, id)
	if err != nil || lease.Lease != "l1" || lease.Holder != proxy.HolderPerson {
		t.Errorf("TakeControl = %+v, %v", lease, err)
	}
	codes := map[string]string{
		"hand back":         proxy.ErrorCode(c.HandBack(ctx, id, "l1")),
		"hand back another": proxy.ErrorCode(c.HandBack(ctx, id, "l2")),
	}
	_, err = c.RequestHuman(ctx, id, "held", 0)
	codes["held"] = proxy.ErrorCode(err)
	if pe := proxy.AsError(err); !pe.Retryable {
		t.Errorf("HUMAN_IN_CONTROL came back not retryable: %+v", pe)
	}
	_, err = c.RequestHuman(ctx, id, "too long", proxy.MaxHumanTimeout+time.Millisecond)
	codes["too long"] = proxy.ErrorCode(err)
	wantCodes := map[string]string{"hand back": "", "hand back another": proxy.ECONTROLHELD, "held": proxy.EHUMANINCONTROL, "too long": proxy.EINVALID}
	if diff := cmp.Diff(wantCodes, codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	wantAsked := []string{"human " + id + " enter the 2FA code 1m30s", "take " + id, "hand back " + id + " l1", "hand back " + id + " l2", "human " + id + " held 0s"}
	if diff := cmp.Diff(wantAsked, svc.asked); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	for i, client := range svc.clients {
		if !client {
			t.Errorf("%s acted as the operator, want as the bridge's client", svc.asked[i])
		}
	}
}

// TestClientHumanWaitEndsWithContext: the wait holds the request open
// until the server answers; only the caller's context ends it early.
func TestClientHumanWaitEndsWithContext(t *testing.T) {
	svc := &humanService{release: make(chan struct{}), waiting: make(chan struct{})}
	srv := httptest.NewServer(api.New(nil, nil, api.WithHuman(svc), api.WithLogger(slog.New(slog.DiscardHandler))))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, "", WithRetryTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.RequestHuman(ctx, "s1", "CAPTCHA", 0)
		done <- err
	}()
	<-svc.waiting
	select {
	case err := <-done:
		t.Fatalf("RequestHuman returned %v while the server still waited", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("RequestHuman after cancel = %v, want context.Canceled", err)
	}
}
