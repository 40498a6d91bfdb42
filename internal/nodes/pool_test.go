package nodes

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
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
		l, err := p.Place(context.Background(), "")
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
	first, err := p.Place(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Place(context.Background(), "")
	if got := proxy.ErrorCode(err); got != proxy.EMAXSESSIONS {
		t.Fatalf("Place on a full pool: %v (code %s), want %s", err, got, proxy.EMAXSESSIONS)
	}

	// A queued Place takes the room a release makes.
	p.cfg.QueueTimeout = time.Minute
	done := make(chan error, 1)
	go func() {
		l, err := p.Place(context.Background(), "")
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

	fp.set("n1", errRefused)
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
	fp.set("n1", errRefused)
	p.ProbeAll(context.Background())
	_, err := p.Place(context.Background(), "")
	if got := proxy.ErrorCode(err); got != proxy.EUNAVAILABLE {
		t.Fatalf("Place with no node up: %v, want %s", err, proxy.EUNAVAILABLE)
	}

	p.cfg.QueueTimeout = time.Minute
	done := make(chan error, 1)
	go func() {
		_, err := p.Place(context.Background(), "")
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
	if _, err := p.Place(ctx, ""); !errors.Is(err, context.Canceled) {
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

// Probe failures as the HTTP prober returns them.
var (
	errRefused = &url.Error{Op: "Get", URL: "http://n1/pw", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	errTimeout = &url.Error{Op: "Get", URL: "http://n1/pw", Err: context.DeadlineExceeded}
	errReset   = &url.Error{Op: "Get", URL: "http://n1/pw", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}
	errBusy    = errors.New("probe n1: answered 503 Service Unavailable")
)

func TestProbeFailuresInARow(t *testing.T) {
	up, down := proxy.NodeUp, proxy.NodeDown
	tests := []struct {
		name   string
		probes []error // after the first probe, which found the node up
		want   []proxy.NodeState
		downs  int // OnDown calls
	}{
		{"a refused connection is down at once", []error{errRefused}, []proxy.NodeState{down}, 1},
		{"another Playwright version is down at once", []error{ErrVersionMismatch}, []proxy.NodeState{down}, 1},
		{"one timeout leaves it up", []error{errTimeout}, []proxy.NodeState{up}, 0},
		{"three timeouts in a row take it down", []error{errTimeout, errTimeout, errTimeout}, []proxy.NodeState{up, up, down}, 1},
		{"resets and 5xx count as timeouts do", []error{errReset, errBusy, errTimeout}, []proxy.NodeState{up, up, down}, 1},
		{"a success in between starts the count again", []error{errTimeout, errTimeout, nil, errTimeout, errTimeout}, []proxy.NodeState{up, up, up, up, up}, 0},
		{"a refusal after timeouts", []error{errTimeout, errRefused}, []proxy.NodeState{up, down}, 1},
		{"down stays down, and comes back on a success", []error{errRefused, errTimeout, errTimeout, errTimeout, nil}, []proxy.NodeState{down, down, down, down, up}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, fp := newTestPool(t, time.Minute, 1)
			downs := 0
			p.OnDown(func(string) { downs++ })
			var got []proxy.NodeState
			for _, err := range tt.probes {
				fp.set("n1", err)
				p.ProbeAll(context.Background())
				in, _ := p.Get("n1")
				got = append(got, in.State)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("states after each probe (-want +got):\n%s", diff)
			}
			if downs != tt.downs {
				t.Errorf("OnDown called %d times, want %d", downs, tt.downs)
			}
		})
	}
}

func TestSuspectNodeShowsItsErrorAndTakesSessions(t *testing.T) {
	p, fp := newTestPool(t, time.Minute, 1, 1)
	fp.set("n1", errTimeout)
	fp.set("n2", errTimeout)
	p.ProbeAll(context.Background())
	p.ProbeAll(context.Background())
	n, _ := p.Get("n1")
	if n.State != proxy.NodeUp || n.Failures != 2 || n.Error == "" {
		t.Errorf("node after two timeouts = %+v, want up, two failures and the last error", n)
	}
	// Place answers at once: no wait for room, no UPSTREAM_UNAVAILABLE.
	if diff := cmp.Diff([]string{"n1", "n2"}, placeN(t, p, 2)); diff != "" {
		t.Errorf("placement on suspect nodes (-want +got):\n%s", diff)
	}
	fp.set("n1", nil)
	p.ProbeAll(context.Background())
	if n, _ := p.Get("n1"); n.Error != "" {
		t.Errorf("node after a success = %+v, want no error", n)
	}
}

func TestDownAfterIsConfigurable(t *testing.T) {
	fp := &fakeProber{errs: map[string]error{}}
	p, err := New([]Endpoint{{ID: "n1", URL: "ws://n1/pw", Capacity: 1}}, Config{Prober: fp, DownAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	p.ProbeAll(context.Background())
	fp.set("n1", errTimeout)
	p.ProbeAll(context.Background())
	if n, _ := p.Get("n1"); n.State != proxy.NodeDown {
		t.Errorf("DownAfter 1: node after one timeout is %s, want down", n.State)
	}
}

// TestRunProbesEachInterval: Run's probes come on the injected clock, and
// a node needs DownAfter of them failing in a row to go down.
func TestRunProbesEachInterval(t *testing.T) {
	c := clocktest.New()
	fp := &fakeProber{errs: map[string]error{}}
	// Nothing listens on port 1: Run's watch is refused at once (the
	// fake prober says the node is there all the same).
	p, err := New([]Endpoint{{ID: "n1", URL: "ws://127.0.0.1:1/pw", Capacity: 1}}, Config{Prober: fp, Clock: c, Interval: time.Minute, DownAfter: 2})
	if err != nil {
		t.Fatal(err)
	}
	p.ProbeAll(context.Background())
	downs := make(chan string, 1)
	p.OnDown(func(id string) { downs <- id })
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		p.Run(ctx)
	}()
	defer func() { cancel(); <-ran }()

	fp.set("n1", errTimeout)
	c.WaitForTimer(t, time.Minute)
	c.Advance(time.Minute)
	c.WaitForTimer(t, time.Minute) // the first round is over
	if n, _ := p.Get("n1"); n.State != proxy.NodeUp || n.Failures != 1 {
		t.Errorf("after one timed-out probe: %+v, want up with one failure", n)
	}
	c.Advance(time.Minute)
	if id := <-downs; id != "n1" {
		t.Errorf("OnDown(%q), want n1", id)
	}
}

func TestPlaceByBrowserEngine(t *testing.T) {
	eps := []Endpoint{
		{ID: "cr", URL: "ws://cr/pw", Capacity: 5},
		{ID: "ff", URL: "ws://ff/pw", Capacity: 5, Browser: proxy.BrowserFirefox},
		{ID: "ff2", URL: "ws://ff2/pw", Capacity: 1, Browser: proxy.BrowserFirefox},
	}
	p, err := New(eps, Config{Prober: &fakeProber{errs: map[string]error{}}, QueueTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p.ProbeAll(context.Background())

	tests := []struct {
		browser string
		want    string // node, or the error code
	}{
		{"", "cr"},
		{proxy.BrowserChromium, "cr"},
		{proxy.BrowserFirefox, "ff"},
		{proxy.BrowserFirefox, "ff"},
		{proxy.BrowserWebKit, proxy.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.browser, func(t *testing.T) {
			l, err := p.Place(context.Background(), tt.browser)
			got := proxy.ErrorCode(err)
			if err == nil {
				got = l.Node()
			}
			if got != tt.want {
				t.Errorf("Place(%q) = %s (%v), want %s", tt.browser, got, err, tt.want)
			}
		})
	}
	t.Run("unknown engine names the field and the engines served", func(t *testing.T) {
		_, err := p.Place(context.Background(), proxy.BrowserWebKit)
		var e *proxy.Error
		if !errors.As(err, &e) {
			t.Fatalf("Place(webkit) = %v, want a proxy error", err)
		}
		want := map[string]any{"field": "browser", "browser": "webkit", "available": []string{"chromium", "firefox"}}
		if diff := cmp.Diff(want, e.Details); diff != "" {
			t.Errorf("details (-want +got):\n%s", diff)
		}
	})
	t.Run("a full engine waits, then refuses, while another has room", func(t *testing.T) {
		p.mu.Lock()
		for _, n := range p.nodes {
			if n.ep.Engine() == proxy.BrowserFirefox {
				n.leases = n.ep.Capacity
			}
		}
		p.mu.Unlock()
		if _, err := p.Place(context.Background(), proxy.BrowserFirefox); proxy.ErrorCode(err) != proxy.EMAXSESSIONS {
			t.Errorf("Place(firefox) on full firefox nodes = %v, want %s", err, proxy.EMAXSESSIONS)
		}
		if l, err := p.Place(context.Background(), ""); err != nil || l.Node() != "cr" {
			t.Errorf("Place(chromium) = %v, %v; want cr", l, err)
		}
	})
	t.Run("nodes list their engine", func(t *testing.T) {
		var got []string
		for _, n := range p.List() {
			got = append(got, n.ID+"="+n.Browser)
		}
		if diff := cmp.Diff([]string{"cr=chromium", "ff=firefox", "ff2=firefox"}, got); diff != "" {
			t.Errorf("List (-want +got):\n%s", diff)
		}
	})
}
