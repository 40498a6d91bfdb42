//go:build unix

package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

func TestMain(m *testing.M) { os.Exit(proctest.RunChecked(m, "go")) }

const testPage = `<!doctype html><meta charset="utf-8"><title>live test</title>
<style>body{margin:0} #name{position:absolute;left:40px;top:40px;width:200px;height:30px}
#b{position:absolute;left:40px;top:120px;width:140px;height:40px} #box{position:absolute;left:300px;top:40px;width:60px;height:60px;background:red}</style>
<form action="/done" method="get"><input id="name" name="name" autocomplete="off"><button id="b" type="submit"><span>Sign in</span></button></form>
<div id="box"></div>
<script>
let running = false;
function tick() { if (!running) return; box.style.left = (300 + (performance.now() / 4) % 200) + 'px'; requestAnimationFrame(tick); }
function start() { running = true; requestAnimationFrame(tick); }
function stop() { running = false; }
</script>`

// fixture is a real headless Chromium (launched the way the proxy launches
// one, in its own process group) and a page server on 127.0.0.1.
type fixture struct {
	endpoint  string
	browser   *conn // browser-level CDP: creating contexts and targets
	site      *httptest.Server
	submitted chan string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test with real Chromium: skipped under -short")
	}
	if _, err := upstream.FindBrowser(); err != nil {
		t.Skipf("Chromium is not installed (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := upstream.LaunchBrowser(ctx, upstream.BrowserConfig{Headless: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(stopCtx); err != nil {
			t.Errorf("closing the browser: %v", err)
		}
	})
	f := &fixture{endpoint: b.CDPEndpoint(), submitted: make(chan string, 4)}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, testPage)
	})
	mux.HandleFunc("/done", func(w http.ResponseWriter, r *http.Request) {
		f.submitted <- r.URL.Query().Get("name")
		fmt.Fprint(w, "<title>done</title>done")
	})
	f.site = httptest.NewServer(mux)
	t.Cleanup(f.site.Close)
	f.browser, err = dial(ctx, f.endpoint, func(cdpMessage) {})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.browser.close)
	return f
}

// newContext creates an isolated browser context, as each session has.
func (f *fixture) newContext(t testing.TB) string {
	t.Helper()
	var r struct {
		BrowserContextID string `json:"browserContextId"`
	}
	if err := f.browser.call(t.Context(), "", "Target.createBrowserContext", map[string]any{}, &r); err != nil {
		t.Fatal(err)
	}
	return r.BrowserContextID
}

// newPage opens the test page in browser context bc and waits for it to load.
func (f *fixture) newPage(t testing.TB, bc string) string {
	t.Helper()
	var r struct {
		TargetID string `json:"targetId"`
	}
	if err := f.browser.call(t.Context(), "", "Target.createTarget", map[string]any{"url": f.site.URL + "/", "browserContextId": bc}, &r); err != nil {
		t.Fatal(err)
	}
	return r.TargetID
}

func attach(t testing.TB, f *fixture, target string) *Page {
	t.Helper()
	p, err := Attach(t.Context(), f.endpoint, target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	// The page may still be loading: wait for its script.
	eventually(t, func() bool {
		return eval[bool](t, p, `typeof start === 'function' && document.readyState === 'complete'`)
	})
	return p
}

// eval runs expression in the page through the attached session.
func eval[T any](t testing.TB, p *Page, expression string) T {
	t.Helper()
	var r struct {
		Result struct {
			Value T `json:"value"`
		} `json:"result"`
	}
	if err := p.call(t.Context(), "Runtime.evaluate", map[string]any{"expression": expression, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		t.Fatal(err)
	}
	return r.Result.Value
}

// eventually polls cond until it holds; the bound is generous because the
// machine is shared, and nothing here measures speed.
func eventually(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type rect struct{ X, Y, W, H float64 }

func centre(t testing.TB, p *Page, sel string) (float64, float64) {
	t.Helper()
	r := eval[rect](t, p, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, sel))
	return r.X + r.W/2, r.Y + r.H/2
}

func TestScreencastFollowsChanges(t *testing.T) {
	f := newFixture(t)
	p := attach(t, f, f.newPage(t, f.newContext(t)))

	var mu sync.Mutex
	var frames []Frame
	var arrived []time.Time
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(frames) }
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	const maxFPS = 20
	go func() {
		done <- p.Screencast(ctx, Options{MaxFPS: maxFPS}, func(fr Frame) {
			mu.Lock()
			frames = append(frames, fr)
			arrived = append(arrived, time.Now())
			mu.Unlock()
		})
	}()
	// The first frame comes whether or not the page changes.
	eventually(t, func() bool { return count() >= 1 })

	eval[any](t, p, `start()`)
	before := count()
	eventually(t, func() bool { return count() >= before+10 })

	// However busy the page, frames come at most maxFPS a second: the next
	// is captured only once the last one's time is up. The median gap is
	// checked: one frame's delivery delayed by a busy machine brings the
	// next one's arrival closer, which says nothing about the pacing.
	mu.Lock()
	var gaps []time.Duration
	for i := before + 1; i < len(arrived); i++ {
		gaps = append(gaps, arrived[i].Sub(arrived[i-1]))
	}
	mu.Unlock()
	slices.Sort(gaps)
	if med := gaps[len(gaps)/2]; med < time.Second/maxFPS-5*time.Millisecond {
		t.Errorf("frames came a median %v apart (gaps %v), under 1/%d s", med, gaps, maxFPS)
	}

	eval[any](t, p, `stop()`)
	// Once the animation stops the stream goes quiet: some half second
	// passes without a frame.
	eventually(t, func() bool {
		n := count()
		time.Sleep(500 * time.Millisecond)
		return count() == n
	})

	mu.Lock()
	last := frames[len(frames)-1]
	mu.Unlock()
	if !bytes.HasPrefix(last.Data, []byte{0xFF, 0xD8, 0xFF}) {
		t.Errorf("frame is not a JPEG: % x", last.Data[:min(8, len(last.Data))])
	}
	vw := eval[float64](t, p, `innerWidth`)
	vh := eval[float64](t, p, `innerHeight`)
	if diff := cmp.Diff([2]float64{vw, vh}, [2]float64{last.DeviceWidth, last.DeviceHeight}); diff != "" {
		t.Errorf("frame size is not the viewport in CSS px (-want +got):\n%s", diff)
	}
	if last.At.IsZero() {
		t.Error("frame has no time")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Screencast after cancel = %v, want context.Canceled", err)
	}
}

func TestInputReachesThePage(t *testing.T) {
	f := newFixture(t)
	p := attach(t, f, f.newPage(t, f.newContext(t)))
	ctx := t.Context()

	x, y := centre(t, p, "#name")
	for _, typ := range []string{"moved", "pressed", "released"} {
		if err := p.Mouse(ctx, Mouse{Type: typ, X: x, Y: y, Button: "left", ClickCount: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if got := eval[string](t, p, `document.activeElement.id`); got != "name" {
		t.Fatalf("focused element after a click on the input = %q, want name", got)
	}
	if err := p.Type(ctx, "hello wörld"); err != nil {
		t.Fatal(err)
	}
	if err := p.Key(ctx, "Backspace", 0); err != nil {
		t.Fatal(err)
	}
	if err := p.Paste(ctx, "D!"); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, p, `document.querySelector('#name').value`); got != "hello wörlD!" {
		t.Fatalf("input value = %q, want %q", got, "hello wörlD!")
	}
	if err := p.Key(ctx, "Enter", 0); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-f.submitted:
		if got != "hello wörlD!" {
			t.Errorf("submitted name = %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Enter did not submit the form")
	}
	if err := p.Key(ctx, "F13", 0); err == nil {
		t.Error("Key accepted a key it does not know")
	}
	if err := p.Mouse(ctx, Mouse{Type: "dragged"}); err == nil {
		t.Error("Mouse accepted an unknown event")
	}
}

func TestScrollAndDescribe(t *testing.T) {
	f := newFixture(t)
	p := attach(t, f, f.newPage(t, f.newContext(t)))
	ctx := t.Context()

	eval[any](t, p, `document.body.style.height = '5000px'`)
	if err := p.Mouse(ctx, Mouse{Type: "wheel", X: 100, Y: 100, DeltaY: 300}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { return eval[float64](t, p, `scrollY`) > 0 })
	eval[any](t, p, `scrollTo(0, 0)`)
	eventually(t, func() bool { return eval[float64](t, p, `scrollY`) == 0 })

	bx, by := centre(t, p, "#b span")
	ix, iy := centre(t, p, "#name")
	eval[any](t, p, `document.querySelector('#name').setAttribute('aria-label', 'Your name ' + 'x'.repeat(80))`)
	for _, tc := range []struct {
		name string
		x, y float64
		want string
	}{
		{"text inside a button names the button", bx, by, "button 'Sign in'"},
		{"long names are cut", ix, iy, "textbox 'Your name " + string(bytes.Repeat([]byte("x"), 49)) + "…'"},
		{"nothing there", 700, 500, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.Describe(ctx, tc.x, tc.y); got != tc.want {
				t.Errorf("Describe(%v, %v) = %q, want %q", tc.x, tc.y, got, tc.want)
			}
		})
	}
}

func TestTabsAreTheContextsOnly(t *testing.T) {
	f := newFixture(t)
	mine := f.newContext(t)
	first := f.newPage(t, mine)
	second := f.newPage(t, mine)
	other := f.newPage(t, f.newContext(t))
	p := attach(t, f, first)

	if p.TargetID() != first || p.ContextID() != mine {
		t.Errorf("TargetID, ContextID = %s, %s; want %s, %s", p.TargetID(), p.ContextID(), first, mine)
	}
	tabs, err := p.Tabs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tab := range tabs {
		got = append(got, tab.TargetID)
		if tab.TargetID == other {
			t.Errorf("another context's page %s is listed", other)
		}
	}
	want := []string{first, second}
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tabs (-want +got):\n%s", diff)
	}
}

func TestScreenshotIsPNG(t *testing.T) {
	f := newFixture(t)
	p := attach(t, f, f.newPage(t, f.newContext(t)))
	png, err := p.Screenshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot is not a PNG: % x", png[:min(8, len(png))])
	}
}

func TestGoneWhenTheTargetCloses(t *testing.T) {
	f := newFixture(t)
	target := f.newPage(t, f.newContext(t))
	p := attach(t, f, target)
	done := make(chan error, 1)
	go func() { done <- p.Screencast(t.Context(), Options{Quality: 30}, func(Frame) {}) }()
	if err := f.browser.call(t.Context(), "", "Target.closeTarget", map[string]any{"targetId": target}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, ErrGone) {
			t.Errorf("Screencast after the target closed = %v, want ErrGone", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Screencast still running after its target closed")
	}
	if err := p.Mouse(t.Context(), Mouse{Type: "moved"}); !errors.Is(err, ErrGone) {
		t.Errorf("Mouse on a gone page = %v, want ErrGone", err)
	}
	if _, err := Attach(t.Context(), f.endpoint, target); err == nil {
		t.Error("Attach to a closed target succeeded")
	}
}

// liveGoroutines counts the goroutines this package started. The total
// would also count the page server's connection goroutines, which come
// and go as Chromium opens and drops keep-alive connections.
func liveGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return bytes.Count(buf, []byte("created by github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/live."))
}

func TestCloseLeavesNoGoroutine(t *testing.T) {
	f := newFixture(t)
	target := f.newPage(t, f.newContext(t))
	// Loaded first, so the page server's goroutines are already counted.
	if err := attach(t, f, target).Close(); err != nil {
		t.Fatal(err)
	}
	before := liveGoroutines()
	for range 3 {
		p, err := Attach(t.Context(), f.endpoint, target)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- p.Screencast(ctx, Options{}, func(Frame) {}) }()
		if _, err := p.Screenshot(t.Context()); err != nil {
			t.Fatal(err)
		}
		cancel()
		<-done
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for liveGoroutines() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := liveGoroutines(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines started by this package after, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	// The page itself stays open: detaching is not closing.
	var r struct {
		TargetInfo targetInfo `json:"targetInfo"`
	}
	if err := f.browser.call(t.Context(), "", "Target.getTargetInfo", map[string]any{"targetId": target}, &r); err != nil {
		t.Fatalf("the page closed with the live view: %v", err)
	}
}

func TestAttachRefusesBadInput(t *testing.T) {
	for _, tc := range []struct{ name, endpoint, target string }{
		{"no target", "http://127.0.0.1:1", ""},
		{"not an endpoint", "127.0.0.1:9222", "x"},
		{"unknown scheme", "ftp://127.0.0.1:9222", "x"},
		{"nothing listening", "http://127.0.0.1:1", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if p, err := Attach(t.Context(), tc.endpoint, tc.target); err == nil {
				_ = p.Close()
				t.Errorf("Attach(%q, %q) succeeded", tc.endpoint, tc.target)
			}
		})
	}
}

// BenchmarkScreencast measures the live view's two figures on a real
// Chromium: how long from a change of the page to the frame showing it
// (per op), and how many frames a second arrive while the page animates.
func BenchmarkScreencast(b *testing.B) {
	f := newFixture(b)
	p := attach(b, f, f.newPage(b, f.newContext(b)))
	arrived := make(chan time.Time, 4096)
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() {
		done <- p.Screencast(ctx, Options{}, func(Frame) {
			select {
			case arrived <- time.Now():
			default:
			}
		})
	}()
	defer func() { cancel(); <-done }()
	drain := func() {
		for {
			select {
			case <-arrived:
			default:
				return
			}
		}
	}
	<-arrived

	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		drain()
		start := time.Now()
		eval[any](b, p, fmt.Sprintf(`document.body.style.background = 'hsl(%d, 60%%, 50%%)'`, (i*37)%360+1))
		<-arrived
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-change-to-frame-median")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "ms-change-to-frame-p95")

	eval[any](b, p, `start()`)
	drain()
	const window = 3 * time.Second
	n, end := 0, time.After(window)
	for counting := true; counting; {
		select {
		case <-arrived:
			n++
		case <-end:
			counting = false
		}
	}
	eval[any](b, p, `stop()`)
	b.ReportMetric(float64(n)/window.Seconds(), "frames/s-animating")
}
