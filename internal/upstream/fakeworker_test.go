//go:build unix

package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// The test binary doubles as a fake @playwright/mcp worker: with
// PWP_FAKE_WORKER=1 it speaks just enough MCP over stdio to exercise the
// Worker without node or a browser, including the misbehaviours a real one
// can show (dying mid-call, a runaway line, never answering).
//
// Otherwise it runs the tests as e2etest.Main does (which this package
// cannot import: e2etest imports upstream): as a child subreaper, so that
// orphans of the workers, browsers and fakes the tests start re-parent to
// the test process and are found, and a run that leaves any process behind
// fails.
func TestMain(m *testing.M) {
	if os.Getenv("PWP_FAKE_WORKER") == "1" {
		os.Exit(fakeWorker())
	}
	if os.Getenv("PWP_FAKE_HOST") == "1" {
		os.Exit(fakeHost())
	}
	os.Exit(proctest.RunChecked(m))
}

// fakeWorkerConfig runs this test binary as a worker.
func fakeWorkerConfig(t *testing.T, env ...string) WorkerConfig {
	t.Helper()
	tools, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return WorkerConfig{
		Command:     []string{os.Args[0]},
		OutputDir:   t.TempDir() + "/out",
		CDPEndpoint: "http://127.0.0.1:1",
		Logger:      testLogger(t),
		Env:         append([]string{"PWP_FAKE_WORKER=1", "PWP_FAKE_TOOLS=" + tools + "/testdata/tools.json"}, env...),
	}
}

// testLogger logs Info and above into the test's output. Debug (the
// children's stderr, read by background goroutines) is left out: it may
// arrive after the test ended.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// echoResult is what the fake answers to the "echo" tool, spacing and all:
// CallTool must hand it back byte for byte.
const echoResult = `{"content":[{"type":"text","text":"### Result\nID"}],  "extra": 1.50 }`

func fakeWorker() int {
	if os.Getenv("PWP_FAKE_CHILD") == "1" {
		// A grandchild in the worker's process group, as node's own helpers
		// would be: Close must take it down too.
		child := exec.Command("sleep", "300")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "fake: start child:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "fake: child %d\n", child.Process.Pid)
	}
	if os.Getenv("PWP_FAKE_IGNORE_TERM") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintln(os.Stderr, "fake: args", strings.Join(os.Args[1:], " "))
	if f := os.Getenv("PWP_FAKE_PIDFILE"); f != "" {
		if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return 1
		}
	}
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	send := func(s string) {
		out.WriteString(s)
		out.WriteString("\n")
		out.Flush()
	}
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			if os.Getenv("PWP_FAKE_HANG_ON_EOF") == "1" {
				time.Sleep(time.Hour)
			}
			return 0
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil {
			continue
		}
		id := string(msg.ID)
		reply := func(result string) { send(`{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}`) }
		switch msg.Method {
		case "initialize":
			if os.Getenv("PWP_FAKE_SILENT") == "1" {
				continue
			}
			reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fake","version":"1"}}`)
		case "notifications/cancelled":
			fmt.Fprintf(os.Stderr, "fake: cancelled %s\n", msg.Params.RequestID)
		case "ping":
			reply(`{}`)
		case "tools/list":
			b, err := os.ReadFile(os.Getenv("PWP_FAKE_TOOLS"))
			if err != nil {
				fmt.Fprintln(os.Stderr, "fake:", err)
				return 1
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, b); err != nil {
				fmt.Fprintln(os.Stderr, "fake:", err)
				return 1
			}
			reply(compact.String())
		case "tools/call":
			name := msg.Params.Name
			if stateTools[name] {
				if r, ok := fakeStateTool(name, msg.Params.Arguments); ok {
					reply(r)
				}
				continue
			}
			switch name {
			case "echo":
				text, _ := json.Marshal("### Result\n" + id + " " + string(msg.Params.Arguments))
				reply(strings.Replace(echoResult, `"### Result\nID"`, string(text), 1))
			case "fail":
				send(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"Tool \"fail\" not found"}}`)
			case "sleep":
				// Never answers.
			case "exit":
				return 3
			case "huge":
				// A line that never ends.
				chunk := strings.Repeat("x", 64<<10)
				for {
					if _, err := out.WriteString(chunk); err != nil {
						return 1
					}
				}
			}
		}
	}
}

// stateTools are the tools SaveState and RestoreState call; the fake plays
// them like @playwright/mcp 0.0.83 does, files in the output dir included.
var stateTools = map[string]bool{
	"browser_storage_state": true, "browser_set_storage_state": true, "browser_tabs": true, "browser_navigate": true,
	"browser_run_code_unsafe": true,
}

// fakeStateTool answers one state tool; ok is false when it must not answer
// (PWP_FAKE_HANG names it). Every call is appended to PWP_FAKE_RECORD as a
// fakeCall JSON line, so a test can check what reached the worker.
// PWP_FAKE_FAIL names a tool that reports isError; PWP_FAKE_STORAGE is the
// storage state written ("big" makes one over Ingest's limit);
// PWP_FAKE_PAGE is a ### Page section body added to browser_storage_state;
// PWP_FAKE_TABS is browser_tabs' result; PWP_FAKE_RUN is what
// browser_run_code_unsafe returns (unset: it refuses, as upstream does
// while a dialog is open).
func fakeStateTool(name string, args json.RawMessage) (string, bool) {
	rec := fakeCall{Tool: name, Args: args}
	var a struct {
		Filename string `json:"filename"`
		URL      string `json:"url"`
	}
	_ = json.Unmarshal(args, &a)
	if name == "browser_set_storage_state" {
		if b, err := os.ReadFile(a.Filename); err == nil {
			rec.File = string(b)
		} else {
			rec.File = "ERROR: " + err.Error()
		}
	}
	if f := os.Getenv("PWP_FAKE_RECORD"); f != "" {
		line, _ := json.Marshal(rec)
		if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			fh.Write(append(line, '\n'))
			fh.Close()
		}
	}
	if os.Getenv("PWP_FAKE_HANG") == name {
		return "", false
	}
	text := func(s string) string {
		b, _ := json.Marshal(s)
		return `{"content":[{"type":"text","text":` + string(b) + `}]}`
	}
	if os.Getenv("PWP_FAKE_FAIL") == name {
		b, _ := json.Marshal("### Error\nError: boom from " + name)
		return `{"content":[{"type":"text","text":` + string(b) + `}],"isError":true}`, true
	}
	out := fakeOutputDir()
	switch name {
	case "browser_storage_state":
		state := os.Getenv("PWP_FAKE_STORAGE")
		switch state {
		case "":
			state = "{\n  \"cookies\": [],\n  \"origins\": []\n}"
		case "big":
			state = "{" + strings.Repeat(" ", 17<<20) + "}"
		}
		file := out + "/storage-state-2026-01-02T03-04-05-678Z.json"
		if err := os.WriteFile(file, []byte(state), 0o600); err != nil {
			return text("### Error\n" + err.Error()), true
		}
		t := "### Result\n- [Storage state](" + file + ")\n### Ran Playwright code\n```js\nawait page.context().storageState({ path: '" + file + "' });\n```"
		if page := os.Getenv("PWP_FAKE_PAGE"); page != "" {
			t += "\n### Page\n" + page
		}
		return text(t), true
	case "browser_set_storage_state":
		return text("### Result\nStorage state restored from " + a.Filename), true
	case "browser_tabs":
		return text("### Result\n" + os.Getenv("PWP_FAKE_TABS")), true
	case "browser_run_code_unsafe":
		run, ok := os.LookupEnv("PWP_FAKE_RUN")
		if !ok {
			b, _ := json.Marshal("### Error\nError: Tool \"browser_run_code_unsafe\" does not handle the modal state.")
			return `{"content":[{"type":"text","text":` + string(b) + `}],"isError":true}`, true
		}
		return text("### Result\n" + run + "\n### Ran Playwright code\n```js\nawait (async (page) => {})(page);\n```"), true
	case "browser_navigate":
		file := out + "/page-2026-01-02T03-04-05-678Z.yml"
		if err := os.WriteFile(file, []byte("- generic [ref=e1]\n"), 0o600); err != nil {
			return text("### Error\n" + err.Error()), true
		}
		return text("### Ran Playwright code\n```js\nawait page.goto('" + a.URL + "');\n```\n### Page\n- Page URL: " + a.URL +
			"\n### Snapshot\n- [Snapshot](" + file + ")"), true
	}
	return text("### Error\nunknown"), true
}

// fakeCall is one call the fake recorded.
type fakeCall struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
	// File is what the storage state file named in Args held when the call
	// arrived (browser_set_storage_state only).
	File string `json:"file,omitempty"`
}

// fakeOutputDir is the --output-dir the worker was started with.
func fakeOutputDir() string {
	for i, a := range os.Args {
		if a == "--output-dir" && i+1 < len(os.Args) {
			return os.Args[i+1]
		}
	}
	return "."
}
