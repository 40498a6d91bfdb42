//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// The JSON-RPC messages of a conversation's start, as a client sends them.
const (
	rawInitialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tool-list-bytes","version":"1"}}}`
	rawInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	rawToolsList   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

// stdioToolsList starts an MCP server on stdio, runs initialize and
// tools/list in raw JSON-RPC and returns the tools/list answer exactly as a
// client reads it: the whole line, newline included.
func stdioToolsList(t *testing.T, name string, args, env []string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan []byte, 8)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		// Closing stdin ends a stdio MCP server; the bound is for a hang.
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not exit within 30 s of its stdin closing", name)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}()
	answer := func(id string) []byte {
		t.Helper()
		deadline := time.After(2 * time.Minute)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("%s closed stdout before answering id %s; stderr:\n%s", name, id, &stderr)
				}
				var msg struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(line, &msg) == nil && string(msg.ID) == id {
					return line
				}
			case <-deadline:
				t.Fatalf("%s did not answer id %s within 2 minutes; stderr:\n%s", name, id, &stderr)
			}
		}
	}
	for _, msg := range []string{rawInitialize, rawInitialized, rawToolsList} {
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if msg == rawInitialize {
			answer("1")
		}
	}
	return answer("2")
}

// plainToolsList is plain upstream's answer, started as a user would start
// it, plus extra flags.
func plainToolsList(t *testing.T, extra ...string) []byte {
	t.Helper()
	browser, err := upstream.FindBrowser()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{filepath.Join(projectRoot(t), "node_modules/@playwright/mcp/cli.js"),
		"--headless", "--isolated", "--browser", "chromium", "--executable-path", browser, "--no-sandbox"}, extra...)
	return stdioToolsList(t, "node", args, nil)
}

// bridgeToolsList is a real mcp-bridge's answer on the server at port.
func bridgeToolsList(t *testing.T, port string, args ...string) []byte {
	t.Helper()
	_, bridgeBin := binaries(t)
	return stdioToolsList(t, bridgeBin, args, []string{"MCP_PROXY_URL=http://127.0.0.1:" + port, "MCP_PROXY_AUTOSTART=0"})
}

// httpToolsList is /mcp's answer at url: the body of the tools/list
// response (an SSE event's data if it comes as a stream).
func httpToolsList(t *testing.T, url string) []byte {
	t.Helper()
	post := func(body, session string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode >= 300 {
			t.Fatalf("POST %s %.60s = %d %s", url, body, resp.StatusCode, data)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			for _, line := range bytes.Split(data, []byte("\n")) {
				if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
					data = append(d, '\n')
				}
			}
		}
		return resp, data
	}
	resp, _ := post(rawInitialize, "")
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("initialize returned no Mcp-Session-Id")
	}
	post(rawInitialized, session)
	_, data := post(rawToolsList, session)
	return data
}

// toolNames are the names in a tools/list answer, sorted.
func toolNames(t *testing.T, answer []byte) []string {
	t.Helper()
	var msg struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(answer, &msg); err != nil {
		t.Fatalf("tools/list answer %.200s: %v", answer, err)
	}
	var names []string
	for _, tl := range msg.Result.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// proxyToolNames are the proxy's session and content tools.
var proxyToolNames = []string{catalog.ToolCreateSession, catalog.ToolCloseSession, catalog.ToolResumeSession, catalog.ToolListSessions, catalog.ToolSaveProfile, catalog.ToolListProfiles, catalog.ToolRequestHuman, catalog.ToolGetContent, catalog.ToolGetConsole}

// toolPage is a page every default tool can act on.
const toolPage = `<!doctype html><title>Tool page</title>
<h1>Tool page</h1>
<button id="go" onclick="document.querySelector('h1').textContent='Clicked'">Go</button>
<input id="name" aria-label="Name">
<select id="sel" aria-label="Choice"><option value="a">A</option><option value="b">B</option></select>
<button id="alert" onclick="alert('hi')">Alert</button>
<input id="file" type="file" aria-label="File">
<div id="zone" ondragover="event.preventDefault()" ondrop="event.preventDefault(); this.textContent='Dropped'">Drop here</div>
<script>console.log('tool page ready')</script>`

// TestDefaultToolList: by default a conversation pays no more for the tool
// list than with plain upstream — through mcp-bridge and through /mcp —
// and every tool listed works; --toolsets all (?toolsets=all) lists every
// tool the proxy has, and upstream's storage tools work once their group
// is chosen, and are unknown tools otherwise.
func TestDefaultToolList(t *testing.T) {
	requireBrowser(t)
	port := e2etest.FreePort(t)
	startServer(t, port, filepath.Join(t.TempDir(), "proxy.db"))
	mcpURL := "http://127.0.0.1:" + port + "/mcp"
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, toolPage)
	}))
	t.Cleanup(pages.Close)

	plain := plainToolsList(t)
	plainNames := toolNames(t, plain)

	t.Run("no larger than plain upstream", func(t *testing.T) {
		want := slices.Sorted(slices.Values(append(inPage(plainNames), proxyToolNames...)))
		for _, side := range []struct {
			name   string
			answer []byte
		}{
			{"mcp-bridge", bridgeToolsList(t, port)},
			{"/mcp", httpToolsList(t, mcpURL)},
		} {
			names := toolNames(t, side.answer)
			t.Logf("tools/list: plain upstream %d tools, %d bytes; %s %d tools, %d bytes (%.0f %%)",
				len(plainNames), len(plain), side.name, len(names), len(side.answer), 100*float64(len(side.answer))/float64(len(plain)))
			if len(side.answer) > len(plain) {
				t.Errorf("%s: tools/list is %d bytes, plain upstream's %d", side.name, len(side.answer), len(plain))
			}
			if !slices.Equal(names, want) {
				t.Errorf("%s lists %v, want upstream's default tools and the proxy's %v", side.name, names, want)
			}
		}
	})

	t.Run("every default tool works", func(t *testing.T) {
		m := startBridgeWith(t, "defaults", port)
		listed := toolNames(t, bridgeToolsList(t, port))
		called := map[string]bool{}
		var refs = map[string]string{}
		run := func(name string, args map[string]any) string {
			t.Helper()
			called[name] = true
			text, isErr, err := m.call(name, args)
			if err != nil || isErr {
				t.Errorf("%s %v = %s (%v)", name, args, text, err)
				return text
			}
			if strings.HasPrefix(name, "browser_") {
				res, err := mcpserver.ParseAnswer(text)
				if err != nil || res.Error != "" {
					t.Errorf("%s %v did not succeed: %s", name, args, text)
				}
				refs[name] = res.RefID
			}
			return text
		}
		run("browser_navigate", map[string]any{"url": pages.URL + "/first"})
		run("browser_navigate", map[string]any{"url": pages.URL + "/"})
		run("browser_navigate_back", nil)
		run("browser_snapshot", nil)
		run("browser_find", map[string]any{"text": "Go"})
		run("browser_click", map[string]any{"target": "#go"})
		run("browser_hover", map[string]any{"target": "#go"})
		run("browser_type", map[string]any{"target": "#name", "text": "Ada"})
		run("browser_fill_form", map[string]any{"fields": []map[string]any{{"target": "#name", "name": "Name", "type": "textbox", "value": "Grace"}}})
		run("browser_select_option", map[string]any{"target": "#sel", "values": []string{"b"}})
		run("browser_press_key", map[string]any{"key": "Tab"})
		run("browser_drag", map[string]any{"startTarget": "#go", "endTarget": "#name"})
		run("browser_drop", map[string]any{"target": "#zone", "data": map[string]string{"text/plain": "dropped"}})
		run("browser_evaluate", map[string]any{"function": "() => document.title"})
		run("browser_console_messages", nil)
		run("browser_network_requests", nil)
		run("browser_network_request", map[string]any{"index": 1})
		run("browser_take_screenshot", nil)
		run("browser_resize", map[string]any{"width": 800, "height": 600})
		run("browser_emulate_media", map[string]any{"colorScheme": "dark"})
		run("browser_tabs", map[string]any{"action": "list"})
		run("browser_wait_for", map[string]any{"text": "Clicked"})
		run("browser_click", map[string]any{"target": "#alert"})
		run("browser_handle_dialog", map[string]any{"accept": true})
		run("browser_click", map[string]any{"target": "#file"})
		run("browser_file_upload", nil)
		var created struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(run(catalog.ToolCreateSession, nil)), &created); err != nil || created.SessionID == "" {
			t.Errorf("create_new_session answered no session_id (%v)", err)
		}
		run(catalog.ToolListSessions, nil)
		run(catalog.ToolResumeSession, map[string]any{"session_id": created.SessionID})
		run(catalog.ToolCloseSession, map[string]any{"session_id": created.SessionID})
		if got := run(catalog.ToolGetContent, map[string]any{"ref_id": refs["browser_snapshot"]}); !strings.Contains(got, "Tool page") {
			t.Errorf("get_content of the snapshot = %.300q, want the page", got)
		}
		if got := run(catalog.ToolGetConsole, map[string]any{"ref_id": refs["browser_navigate"]}); !strings.Contains(got, "tool page ready") {
			t.Errorf("get_console_content = %.300q, want the page's log", got)
		}
		if got := run(catalog.ToolSaveProfile, map[string]any{"name": "tool-list"}); !strings.Contains(got, "profile: tool-list version 1") {
			t.Errorf("save_profile = %.300q, want the profile's first version", got)
		}
		if got := run(catalog.ToolListProfiles, nil); !strings.Contains(got, "tool-list: version 1") {
			t.Errorf("list_profiles = %.300q, want the profile saved", got)
		}
		// Nobody takes the browser: the wait ends at its timeout.
		if got := run(catalog.ToolRequestHuman, map[string]any{"reason": "tool list", "timeout": 1}); !strings.Contains(got, "handed_back: no") {
			t.Errorf("request_human = %.300q, want handed_back: no", got)
		}
		run("browser_close", nil)
		for _, name := range listed {
			if !called[name] {
				t.Errorf("%s is listed by default but this test does not call it: add it", name)
			}
		}
	})

	t.Run("all", func(t *testing.T) {
		withStorage := toolNames(t, plainToolsList(t, "--caps=storage"))
		want := slices.Sorted(slices.Values(slices.Concat(inPage(withStorage), toolset.Names(), proxyToolNames)))
		for _, side := range []struct {
			name   string
			answer []byte
		}{
			{"mcp-bridge --toolsets all", bridgeToolsList(t, port, "--toolsets", "all")},
			{"/mcp?toolsets=all", httpToolsList(t, mcpURL+"?toolsets=all")},
		} {
			if names := toolNames(t, side.answer); !slices.Equal(names, want) {
				t.Errorf("%s lists %v, want every tool %v", side.name, names, want)
			}
		}
	})

	// Sessions share this server's browser: the code tools are no client's,
	// whatever groups it names, and calling one says why and what to set.
	t.Run("code tools hidden", func(t *testing.T) {
		clients := []struct {
			name string
			c    *mcpClient
		}{
			{"mcp-bridge", startBridgeWith(t, "code-default", port)},
			{"mcp-bridge --toolsets all", startBridgeWith(t, "code-all", port, "--toolsets", "all")},
			{"mcp-bridge --toolsets all,unsafe", startBridgeWith(t, "code-unsafe", port, "--toolsets", "all,unsafe")},
			{"/mcp", startHTTPClientAt(t, "code-default", mcpURL)},
			{"/mcp?toolsets=all", startHTTPClientAt(t, "code-all", mcpURL+"?toolsets=all")},
			{"/mcp?toolsets=upstream,unsafe", startHTTPClientAt(t, "code-unsafe", mcpURL+"?toolsets=upstream,unsafe")},
		}
		for _, tc := range clients {
			t.Run(tc.name, func(t *testing.T) {
				for _, name := range tc.c.listNames(t) {
					if r, _ := catalog.ReviewOf(name); strings.HasPrefix(name, "browser_") && r.Reach != catalog.InPage {
						t.Errorf("lists %s, which reaches outside the page", name)
					}
				}
				text, isErr, err := tc.c.call("browser_run_code_unsafe", map[string]any{"code": "async (page) => page.context().browser().contexts().length"})
				if err == nil {
					t.Fatalf("browser_run_code_unsafe answered %q (isError %v), want a refusal", text, isErr)
				}
				for _, want := range []string{"not found", "TOOL_NOT_FOUND", "share one browser process", "PROXY_BROWSER_MODE=per-session", "unsafe"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q does not say %q", err, want)
					}
				}
			})
		}
	})

	t.Run("storage", func(t *testing.T) {
		clients := []struct {
			name     string
			chosen   *mcpClient
			defaults *mcpClient
		}{
			{"mcp-bridge", startBridgeWith(t, "storage", port, "--toolsets=upstream,storage,content"), startBridgeWith(t, "no-storage", port)},
			{"/mcp", startHTTPClientAt(t, "storage", mcpURL+"?toolsets=upstream,storage,content"), startHTTPClientAt(t, "no-storage", mcpURL)},
		}
		for _, c := range clients {
			t.Run(c.name, func(t *testing.T) {
				value := "v-" + strings.ReplaceAll(c.name, "/", "")
				c.chosen.mustCall(t, "browser_navigate", map[string]any{"url": pages.URL + "/"}, nil)
				c.chosen.mustCall(t, "browser_localstorage_set", map[string]any{"key": "k", "value": value}, nil)
				got := c.chosen.browser(t, "browser_localstorage_get", map[string]any{"key": "k"})
				if text, _, _ := c.chosen.call(catalog.ToolGetContent, map[string]any{"ref_id": got.RefID}); !strings.Contains(text, value) {
					t.Errorf("browser_localstorage_get read %q, want %q", text, value)
				}
				ev := c.chosen.browser(t, "browser_evaluate", map[string]any{"function": "() => localStorage.getItem('k')"})
				if text, _, _ := c.chosen.call(catalog.ToolGetContent, map[string]any{"ref_id": ev.RefID}); !strings.Contains(text, value) {
					t.Errorf("the page's localStorage holds %q, want %q", text, value)
				}
				// Without the group the tool does not exist for the client:
				// the answer to any unknown tool.
				text, isErr, err := c.defaults.call("browser_localstorage_get", map[string]any{"key": "k"})
				if err == nil || !strings.Contains(err.Error(), "not found") {
					t.Errorf("browser_localstorage_get without the storage group = %q (isError %v), %v; want tool not found", text, isErr, err)
				}
			})
		}
	})
}

// inPage is names without upstream's tools that reach outside the page,
// which a server whose sessions share a browser never offers.
func inPage(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(name string) bool {
		r, _ := catalog.ReviewOf(name)
		return r.Reach != catalog.InPage
	})
}

// An unknown tool group ends the real bridge at start, with an exit code
// and a message naming every group, before it looks for a server.
func TestBridgeUnknownToolsetFailsAtStart(t *testing.T) {
	_, bridgeBin := binaries(t)
	tests := []struct {
		name string
		args []string
		env  string
	}{
		{"flag", []string{"--toolsets=storage,cookies"}, ""},
		{"variable", nil, "MCP_PROXY_TOOLSETS=cookies"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bridgeBin, tt.args...)
			cmd.Env = append(os.Environ(), "MCP_PROXY_URL=http://127.0.0.1:"+e2etest.FreePort(t), "MCP_PROXY_AUTOSTART=0", tt.env)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			e2etest.ExitsNonZero(t, cmd, time.Minute)
			for _, want := range []string{`unknown tool group "cookies"`, strings.Join(toolset.Groups(), ", ")} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, &stderr)
				}
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout, the MCP channel, got %q", &stdout)
			}
		})
	}
}
