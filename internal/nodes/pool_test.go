package nodes

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// fakeProber answers each node's probe with what the test set.
type fakeProber struct {
	mu   sync.Mutex
	errs map[string]error
}

func (f *fakeProber) set(id string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[id] = err
}

func (f *fakeProber) Probe(_ context.Context, ep Endpoint) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.errs[ep.ID]
}

// newTestPool returns a pool of nodes with the given capacities, named
// n1, n2, …, all probed up.
func newTestPool(t *testing.T, queue time.Duration, capacity ...int) (*Pool, *fakeProber) {
	t.Helper()
	var eps []Endpoint
	for i, c := range capacity {
		id := "n" + string(rune('1'+i))
		eps = append(eps, Endpoint{ID: id, URL: "ws://" + id + "/pw", Capacity: c})
	}
	fp := &fakeProber{errs: map[string]error{}}
	p, err := New(eps, Config{Prober: fp, QueueTimeout: queue})
	if err != nil {
		t.Fatal(err)
	}
	p.ProbeAll(context.Background())
	return p, fp
}

func placeN(t *testing.T, p *Pool, n int) []string {
	t.Helper()
	var got []string
	for range n {
		l, err := p.Place(context.Background())
		if err != nil {
			t.Fatalf("Place: %v", err)
		}
		got = append(got, l.Node())
	}
	return got
}

func TestPlaceSpreadsByFreeCapacity(t *testing.T) {
	p, _ := newTestPool(t, time.Second, 2, 4, 2)
	got := placeN(t, p, 8)
	want := []string{"n2", "n2", "n1", "n2", "n3", "n1", "n2", "n3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
	for _, in := range p.List() {
		if in.Sessions != in.Capacity {
			t.Errorf("node %s holds %d of %d", in.ID, in.Sessions, in.Capacity)
		}
	}
}

func TestPlaceFullPoolQueuesThenRefuses(t *testing.T) {
	p, _ := newTestPool(t, 20*time.Millisecond, 1)
	first, err := p.Place(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Place(context.Background())
	if got := proxy.ErrorCode(err); got != proxy.EMAXSESSIONS {
		t.Fatalf("Place on a full pool: %v (code %s), want %s", err, got, proxy.EMAXSESSIONS)
	}

	// A queued Place takes the room a release makes.
	p.cfg.QueueTimeout = time.Minute
	done := make(chan error, 1)
	go func() {
		l, err := p.Place(context.Background())
		if err == nil && l.Node() != "n1" {
			err = errors.New("placed on " + l.Node())
		}
		done <- err
	}()
	first.Release()
	first.Release() // a second release gives nothing back twice
	if err := <-done; err != nil {
		t.Fatalf("queued Place: %v", err)
	}
	if in, _ := p.Get("n1"); in.Sessions != 1 {
		t.Errorf("n1 holds %d sessions, want 1", in.Sessions)
	}
}

func TestPlaceSkipsDownAndDrainingNodes(t *testing.T) {
	p, fp := newTestPool(t, 20*time.Millisecond, 5, 5, 5)
	var downs []string
	var mu sync.Mutex
	p.OnDown(func(id string) { mu.Lock(); downs = append(downs, id); mu.Unlock() })

	fp.set("n1", errors.New("connection refused"))
	p.ProbeAll(context.Background())
	if _, err := p.SetDraining("n2", true); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"n3", "n3"}, placeN(t, p, 2)); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
	mu.Lock()
	if diff := cmp.Diff([]string{"n1"}, downs); diff != "" {
		t.Errorf("OnDown calls (-want +got):\n%s", diff)
	}
	mu.Unlock()

	states := map[string]proxy.NodeState{}
	for _, in := range p.List() {
		states[in.ID] = in.State
	}
	if diff := cmp.Diff(map[string]proxy.NodeState{"n1": proxy.NodeDown, "n2": proxy.NodeDraining, "n3": proxy.NodeUp}, states); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if in, _ := p.Get("n1"); in.Error == "" || in.Failures != 1 {
		t.Errorf("down node info = %+v, want its error and one failure", in)
	}

	// Back in placement: undrained, and up again.
	fp.set("n1", nil)
	p.ProbeAll(context.Background())
	if _, err := p.SetDraining("n2", false); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"n1", "n2"}, placeN(t, p, 2)); diff != "" {
		t.Errorf("placement after recovery (-want +got):\n%s", diff)
	}
}

func TestPlaceWaitsForANodeToComeUp(t *testing.T) {
	p, fp := newTestPool(t, 20*time.Millisecond, 1)
	fp.set("n1", errors.New("connection refused"))
	p.ProbeAll(context.Background())
	_, err := p.Place(context.Background())
	if got := proxy.ErrorCode(err); got != proxy.EUNAVAILABLE {
		t.Fatalf("Place with no node up: %v, want %s", err, proxy.EUNAVAILABLE)
	}

	p.cfg.QueueTimeout = time.Minute
	done := make(chan error, 1)
	go func() {
		_, err := p.Place(context.Background())
		done <- err
	}()
	fp.set("n1", nil)
	p.ProbeAll(context.Background())
	if err := <-done; err != nil {
		t.Fatalf("Place once the node is up: %v", err)
	}
}

func TestPlaceHonoursContext(t *testing.T) {
	p, _ := newTestPool(t, time.Minute, 1)
	placeN(t, p, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Place(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Place with a cancelled context: %v", err)
	}
}

func TestUnknownNode(t *testing.T) {
	p, _ := newTestPool(t, time.Second, 1)
	if _, err := p.Get("nope"); proxy.ErrorCode(err) != proxy.ENODEMISSING {
		t.Errorf("Get: %v", err)
	}
	if _, err := p.SetDraining("nope", true); proxy.ErrorCode(err) != proxy.ENODEMISSING {
		t.Errorf("SetDraining: %v", err)
	}
	if err := p.Check(context.Background(), "nope"); proxy.ErrorCode(err) != proxy.ENODEMISSING {
		t.Errorf("Check: %v", err)
	}
}
