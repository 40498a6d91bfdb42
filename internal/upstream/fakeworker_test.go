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
)

// The test binary doubles as a fake @playwright/mcp worker: with
// PWP_FAKE_WORKER=1 it speaks just enough MCP over stdio to exercise the
// Worker without node or a browser, including the misbehaviours a real one
// can show (dying mid-call, a runaway line, never answering).
func TestMain(m *testing.M) {
	if os.Getenv("PWP_FAKE_WORKER") == "1" {
		os.Exit(fakeWorker())
	}
	os.Exit(m.Run())
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
			switch msg.Params.Name {
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
