package session

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// fakeDevices is a small device catalogue in Playwright's shape.
type fakeDevices map[string]json.RawMessage

func (f fakeDevices) Devices(context.Context) (map[string]json.RawMessage, error) { return f, nil }

var testDevices = fakeDevices{
	"iPhone 15":      json.RawMessage(`{"userAgent":"iPhone UA","viewport":{"width":393,"height":659},"deviceScaleFactor":3,"isMobile":true,"hasTouch":true,"defaultBrowserType":"webkit"}`),
	"iPhone 15 Pro":  json.RawMessage(`{"userAgent":"iPhone UA","viewport":{"width":393,"height":659},"isMobile":true,"defaultBrowserType":"webkit"}`),
	"Pixel 7":        json.RawMessage(`{"userAgent":"Pixel UA","viewport":{"width":412,"height":839},"isMobile":true,"defaultBrowserType":"chromium"}`),
	"Desktop Chrome": json.RawMessage(`{"userAgent":"Chrome UA","viewport":{"width":1280,"height":720},"isMobile":false,"defaultBrowserType":"chromium"}`),
}

func TestShapeOf(t *testing.T) {
	m, _, _ := newManager(t, Options{Devices: testDevices})
	tests := []struct {
		name    string
		opts    proxy.BrowserOptions
		browser string
		context string // "" for none
	}{
		{"none", proxy.BrowserOptions{}, "", ""},
		{"chromium is the default", proxy.BrowserOptions{Browser: "chromium"}, "", ""},
		{"each field", proxy.BrowserOptions{Viewport: &proxy.Viewport{Width: 800, Height: 600}, UserAgent: "UA/1", Locale: "fr-FR", Timezone: "Asia/Tokyo", ColorScheme: "dark"}, "",
			`{"colorScheme":"dark","locale":"fr-FR","timezoneId":"Asia/Tokyo","userAgent":"UA/1","viewport":{"height":600,"width":800}}`},
		{"a device, its engine preference dropped", proxy.BrowserOptions{Device: "Pixel 7"}, "",
			`{"isMobile":true,"userAgent":"Pixel UA","viewport":{"height":839,"width":412}}`},
		{"explicit fields win over the device's", proxy.BrowserOptions{Device: "iPhone 15", Viewport: &proxy.Viewport{Width: 500, Height: 500}, UserAgent: "mine", Browser: "webkit"}, "webkit",
			`{"deviceScaleFactor":3,"hasTouch":true,"isMobile":true,"userAgent":"mine","viewport":{"height":500,"width":500}}`},
		{"firefox, desktop device", proxy.BrowserOptions{Device: "Desktop Chrome", Browser: "firefox"}, "firefox",
			`{"isMobile":false,"userAgent":"Chrome UA","viewport":{"height":720,"width":1280}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.shapeOf(context.Background(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got.Browser != tt.browser {
				t.Errorf("browser %q, want %q", got.Browser, tt.browser)
			}
			if diff := cmp.Diff(tt.context, string(got.Context)); diff != "" {
				t.Errorf("context options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBadOptionsAreRefusedAndCreateNothing(t *testing.T) {
	m, sp, _ := newManager(t, Options{Devices: testDevices})
	vp := func(w, h int) *proxy.Viewport { return &proxy.Viewport{Width: w, Height: h} }
	tests := []struct {
		name  string
		opts  proxy.BrowserOptions
		field string
	}{
		{"zero width", proxy.BrowserOptions{Viewport: vp(0, 600)}, "viewport.width"},
		{"negative height", proxy.BrowserOptions{Viewport: vp(800, -1)}, "viewport.height"},
		{"huge viewport", proxy.BrowserOptions{Viewport: vp(100000, 600)}, "viewport.width"},
		{"unknown device", proxy.BrowserOptions{Device: "iPhone 99"}, "device"},
		{"mobile device on firefox", proxy.BrowserOptions{Device: "Pixel 7", Browser: "firefox"}, "device"},
		{"control characters in the user agent", proxy.BrowserOptions{UserAgent: "a\r\nX-Evil: 1"}, "user_agent"},
		{"locale", proxy.BrowserOptions{Locale: "not a locale"}, "locale"},
		{"timezone", proxy.BrowserOptions{Timezone: "Mars/Olympus_Mons"}, "timezone"},
		{"timezone Local", proxy.BrowserOptions{Timezone: "Local"}, "timezone"},
		{"timezone path", proxy.BrowserOptions{Timezone: "../../etc/passwd"}, "timezone"},
		{"color scheme", proxy.BrowserOptions{ColorScheme: "sepia"}, "color_scheme"},
		{"browser", proxy.BrowserOptions{Browser: "netscape"}, "browser"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.CreateSession(context.Background(), tt.opts)
			var e *proxy.Error
			if !errors.As(err, &e) || e.Code != proxy.EINVALID || e.Details["field"] != tt.field {
				t.Fatalf("CreateSession = %v, want %s naming %s", err, proxy.EINVALID, tt.field)
			}
		})
	}
	t.Run("an unknown device lists a few, the nearest first", func(t *testing.T) {
		_, err := m.CreateSession(context.Background(), proxy.BrowserOptions{Device: "iPhone 99"})
		var e *proxy.Error
		if !errors.As(err, &e) {
			t.Fatal(err)
		}
		want := []string{"iPhone 15", "iPhone 15 Pro", "Desktop Chrome", "Pixel 7"}
		if diff := cmp.Diff(want, e.Details["examples"]); diff != "" {
			t.Errorf("examples (-want +got):\n%s", diff)
		}
	})
	if ss, err := m.ListSessions(context.Background()); err != nil || len(ss) != 0 {
		t.Errorf("after refusals: %d sessions (%v), want none", len(ss), err)
	}
	if n := len(sp.all()); n != 0 {
		t.Errorf("after refusals: %d workers started, want none", n)
	}
}

func TestOptionsShapeOnlyTheirSessionAndOutliveItsWorkers(t *testing.T) {
	ctx := context.Background()
	m, sp, db := newManager(t, Options{WarmPool: 1, Devices: testDevices})
	waitFor(t, "a warm spare", func() bool { return len(sp.all()) == 1 })
	warm := sp.all()[0]

	opts := proxy.BrowserOptions{Viewport: &proxy.Viewport{Width: 640, Height: 480}, Locale: "de-DE", ColorScheme: "dark"}
	shaped, err := m.CreateSession(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantCtx := `{"colorScheme":"dark","locale":"de-DE","viewport":{"height":480,"width":640}}`
	if w := workerOf(t, m, sp, shaped.ID); w == warm || string(w.shape.Context) != wantCtx {
		t.Errorf("shaped session's worker: warm spare %v, context %s; want a worker of its own with %s", w == warm, w.shape.Context, wantCtx)
	}
	if w := workerOf(t, m, sp, plain.ID); w != warm {
		t.Errorf("a session without options got worker %d, want the warm spare %d", w.pid, warm.pid)
	}
	got, err := m.GetSession(ctx, shaped.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&opts, got.Options); diff != "" {
		t.Errorf("GetSession options (-want +got):\n%s", diff)
	}
	if got, _ := m.GetSession(ctx, plain.ID); got.Options != nil {
		t.Errorf("a session without options shows %+v", got.Options)
	}

	t.Run("a crashed worker is replaced by one of the same shape", func(t *testing.T) {
		workerOf(t, m, sp, shaped.ID).die()
		waitFor(t, "a restart", func() bool { return m.Stats().WorkerRestarts == 1 })
		if _, err := m.Call(ctx, proxy.CallRequest{SessionID: shaped.ID, Tool: "browser_snapshot"}); err != nil {
			t.Fatal(err)
		}
		if w := workerOf(t, m, sp, shaped.ID); string(w.shape.Context) != wantCtx {
			t.Errorf("restarted worker's context %s, want %s", w.shape.Context, wantCtx)
		}
	})

	t.Run("a server restart revives the session with its options", func(t *testing.T) {
		if err := m.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		sp2 := &fakeSpawner{t: t}
		m2 := New(db, sp2, Options{Devices: testDevices, Logger: m.log})
		t.Cleanup(func() { m2.Shutdown(context.Background()) })
		if _, err := m2.Call(ctx, proxy.CallRequest{SessionID: shaped.ID, Tool: "browser_snapshot"}); err != nil {
			t.Fatal(err)
		}
		if w := workerOf(t, m2, sp2, shaped.ID); string(w.shape.Context) != wantCtx {
			t.Errorf("revived worker's context %s, want %s", w.shape.Context, wantCtx)
		}
	})
}
