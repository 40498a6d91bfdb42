//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// seen is what a page reports of its browser context in its title.
type seen struct {
	Width, Height  int
	Language, Zone string
	Scheme         string
	Touch          int
	UserAgent      string
}

// probeSite serves a page whose title is what it sees of its browser
// context, separated by '|' (the user agent last: it has spaces). It asks
// for the device's width, as mobile pages do: without, a mobile browser
// lays the page out 980 pixels wide whatever its screen.
func probeSite(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><meta name="viewport" content="width=device-width, initial-scale=1"><title>probe</title><script>
document.title = [innerWidth, innerHeight, navigator.language,
  Intl.DateTimeFormat().resolvedOptions().timeZone,
  matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light',
  navigator.maxTouchPoints, navigator.userAgent].join('|');
</script><p>probe</p>`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/probe.html"
}

func parseSeen(t *testing.T, title string) seen {
	t.Helper()
	f := strings.SplitN(title, "|", 7)
	if len(f) != 7 {
		t.Fatalf("probe title %q", title)
	}
	w, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	touch, err3 := strconv.Atoi(f[5])
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("probe title %q", title)
	}
	return seen{Width: w, Height: h, Language: f[2], Zone: f[3], Scheme: f[4], Touch: touch, UserAgent: f[6]}
}

// look navigates session id to the probe page over the HTTP API and
// returns what the page saw.
func (s *server) look(t *testing.T, id, probe string) seen {
	t.Helper()
	res := s.call(t, id, "browser_navigate", map[string]string{"url": probe})
	if res.Status != proxy.StatusSuccess {
		t.Fatalf("navigate: %+v", res)
	}
	return parseSeen(t, res.Metadata.PageTitle)
}

// workerPIDs are the @playwright/mcp workers this test process's server
// runs (in-process, so they are its children).
func workerPIDs(t *testing.T) []int {
	t.Helper()
	var pids []int
	for _, p := range proctest.Descendants(os.Getpid()) {
		if p.PPID != os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
		if err == nil && strings.Contains(string(cmd), "@playwright/mcp") {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

func createWith(t *testing.T, s *server, body any) (int, proxy.Session, wire.ErrorBody) {
	t.Helper()
	var raw string
	code := do(t, "POST", s.URL+"/sessions", body, &raw)
	var sess proxy.Session
	var e wire.ErrorBody
	if code == http.StatusCreated {
		if err := json.Unmarshal([]byte(raw), &sess); err != nil {
			t.Fatal(err)
		}
	} else if err := json.Unmarshal([]byte(raw), &e); err != nil {
		t.Fatalf("POST /sessions = %d %q", code, raw)
	}
	return code, sess, e
}

// TestBrowserOptionsPerSession shapes sessions' browser contexts through
// POST /sessions and /mcp's create_new_session on real Chromium: only the
// session asking is shaped, the warm spare still serves sessions without
// options, bad values are refused by field, and a session keeps its shape
// through a worker crash and a server restart.
func TestBrowserOptionsPerSession(t *testing.T) {
	// Which worker serves a session is told here by its process id: a
	// process per session. Per-session context options in one session host
	// are upstream's integration tests'.
	env := map[string]string{"PROXY_WARM_POOL": "1", "PROXY_SESSIONS_PER_WORKER": "1"}
	s := startServer(t, "", env)
	probe := probeSite(t)

	var spare int
	deadline := time.Now().Add(2 * time.Minute)
	for spare == 0 {
		if pids := workerPIDs(t); len(pids) == 1 {
			spare = pids[0]
		} else if time.Now().After(deadline) {
			t.Fatalf("no single warm spare worker: %v", pids)
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}

	want := proxy.BrowserOptions{Viewport: &proxy.Viewport{Width: 640, Height: 480}, UserAgent: "OptionsProbe/1.0 (e2e)",
		Locale: "fr-FR", Timezone: "Asia/Tokyo", ColorScheme: "dark"}
	// Created at the same time: neither may take the other's shape.
	var shaped, plain proxy.Session
	var wg sync.WaitGroup
	var codes [2]int
	wg.Add(2)
	go func() { defer wg.Done(); codes[0], shaped, _ = createWith(t, s, want) }()
	go func() { defer wg.Done(); codes[1], plain, _ = createWith(t, s, nil) }()
	wg.Wait()
	if codes != [2]int{http.StatusCreated, http.StatusCreated} {
		t.Fatalf("POST /sessions = %v", codes)
	}
	shapedSees := s.look(t, shaped.ID, probe)

	t.Run("only the session with options is shaped", func(t *testing.T) {
		wantSees := seen{Width: 640, Height: 480, Language: "fr-FR", Zone: "Asia/Tokyo", Scheme: "dark", UserAgent: want.UserAgent}
		if diff := cmp.Diff(wantSees, shapedSees); diff != "" {
			t.Errorf("shaped session sees (-want +got):\n%s", diff)
		}
		got := s.look(t, plain.ID, probe)
		if got.Width == 640 || got.Language == "fr-FR" || got.Zone == "Asia/Tokyo" || got.Scheme == "dark" || got.UserAgent == want.UserAgent {
			t.Errorf("the session without options sees %+v: shaped like the other", got)
		}
	})

	t.Run("the warm spare serves the session without options", func(t *testing.T) {
		p, sh := s.getSession(t, plain.ID), s.getSession(t, shaped.ID)
		if p.WorkerPID != spare || sh.WorkerPID == spare {
			t.Errorf("spare %d; worker of the plain session %d, of the shaped one %d", spare, p.WorkerPID, sh.WorkerPID)
		}
	})

	t.Run("options are shown with the session", func(t *testing.T) {
		if diff := cmp.Diff(&want, s.getSession(t, shaped.ID).Options); diff != "" {
			t.Errorf("GET /sessions/{id} options (-want +got):\n%s", diff)
		}
		if o := s.getSession(t, plain.ID).Options; o != nil {
			t.Errorf("GET /sessions/{id} of the plain session shows options %+v", o)
		}
		var list struct{ Sessions []proxy.Session }
		do(t, "GET", s.URL+"/sessions", nil, &list)
		for _, x := range list.Sessions {
			if x.ID == shaped.ID && !cmp.Equal(&want, x.Options) {
				t.Errorf("GET /sessions shows options %+v", x.Options)
			}
		}
	})

	t.Run("bad values are refused by field and create nothing", func(t *testing.T) {
		var before struct{ Sessions []proxy.Session }
		do(t, "GET", s.URL+"/sessions", nil, &before)
		workers := len(workerPIDs(t))
		for _, tc := range []struct {
			body  string
			field string
		}{
			{`{"device":"Nokia 3310"}`, "device"},
			{`{"viewport":{"width":0,"height":600}}`, "viewport.width"},
			{`{"viewport":{"width":800,"height":1000000}}`, "viewport.height"},
			{`{"viewport":{"width":"800","height":600}}`, "viewport.width"},
			{`{"viewport":"800x600"}`, "viewport"},
			{`{"locale":42}`, "locale"},
			{`{"timezone":"Europe/Atlantis"}`, "timezone"},
			{`{"color_scheme":"sepia"}`, "color_scheme"},
			{`{"browser":"firefox"}`, "browser"},
			{`{"zoom":2}`, "zoom"},
		} {
			code, _, e := createWith(t, s, tc.body)
			if code != http.StatusBadRequest || e.Error != proxy.EINVALID || e.Details["field"] != tc.field {
				t.Errorf("POST /sessions %s = %d %+v; want 400 %s naming %s", tc.body, code, e, proxy.EINVALID, tc.field)
			}
		}
		var after struct{ Sessions []proxy.Session }
		do(t, "GET", s.URL+"/sessions", nil, &after)
		if len(after.Sessions) != len(before.Sessions) || len(workerPIDs(t)) > workers {
			t.Errorf("refusals left %d sessions (was %d) and %d workers (was %d)", len(after.Sessions), len(before.Sessions), len(workerPIDs(t)), workers)
		}
	})

	t.Run("through MCP: a device, and list_sessions", func(t *testing.T) {
		iphone := device(t, "iPhone 15")
		m := dialMCP(t, s.URL+"/mcp")
		var created struct {
			SessionID string               `json:"session_id"`
			Options   proxy.BrowserOptions `json:"options"`
		}
		text := m.callText("create_new_session", map[string]any{"device": "iPhone 15", "locale": "ja-JP"})
		if err := json.Unmarshal([]byte(text), &created); err != nil || created.SessionID == "" || created.Options.Device != "iPhone 15" {
			t.Fatalf("create_new_session = %s (%v)", text, err)
		}
		page := m.browser("browser_navigate", map[string]any{"url": probe, "session_id": created.SessionID})
		got := parseSeen(t, page.PageTitle)
		if got.Width != iphone.Viewport.Width || got.Height != iphone.Viewport.Height || got.UserAgent != iphone.UserAgent || got.Touch == 0 || got.Language != "ja-JP" {
			t.Errorf("an iPhone 15 session sees %+v; want %+v with touch and ja-JP", got, iphone)
		}
		if list := m.callText("list_sessions", nil); !strings.Contains(list, `"device":"iPhone 15"`) {
			t.Errorf("list_sessions does not show the options: %s", list)
		}

		ctx, cancel := m.ctx()
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = "create_new_session"
		req.Params.Arguments = map[string]any{"device": "iPhone 99"}
		res, err := m.c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		var answer string
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(mcp.TextContent); ok {
				answer = tc.Text
			}
		}
		// Over MCP a refusal is the compact answer: the code, and a message
		// that names the field and lists devices that exist.
		refused, err := mcpserver.ParseAnswer(answer)
		if !res.IsError || err != nil || refused.ErrorCode != proxy.EINVALID || !strings.Contains(refused.ErrorMessage, "device") || !strings.Contains(refused.ErrorMessage, "iPhone") {
			t.Errorf("create_new_session with an unknown device = %q (isError=%v)", answer, res.IsError)
		}
	})

	t.Run("a crashed worker comes back shaped the same", func(t *testing.T) {
		old := s.getSession(t, shaped.ID).WorkerPID
		if err := syscall.Kill(-old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		s.waitWorker(t, shaped.ID, old, 2*time.Minute)
		if diff := cmp.Diff(shapedSees, s.look(t, shaped.ID, probe)); diff != "" {
			t.Errorf("after a crash the session sees (-want +got):\n%s", diff)
		}
	})

	t.Run("a server restart brings it back shaped the same", func(t *testing.T) {
		s.stop()
		s2 := startServer(t, s.DBPath, env)
		if diff := cmp.Diff(shapedSees, s2.look(t, shaped.ID, probe)); diff != "" {
			t.Errorf("after a restart the session sees (-want +got):\n%s", diff)
		}
		if got := s2.look(t, plain.ID, probe); got.Language == "fr-FR" || got.Width == 640 {
			t.Errorf("after a restart the plain session sees %+v", got)
		}
	})
}

// deviceSpec is what a test checks of a device descriptor.
type deviceSpec struct {
	UserAgent string         `json:"userAgent"`
	Viewport  proxy.Viewport `json:"viewport"`
}

// device is the descriptor of the named device in the pinned Playwright.
func device(t *testing.T, name string) deviceSpec {
	t.Helper()
	devs, err := upstream.NewDevices(upstream.DefaultCommand(projectRoot(t))).Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var d deviceSpec
	if err := json.Unmarshal(devs[name], &d); err != nil {
		t.Fatalf("device %q: %v", name, err)
	}
	return d
}
