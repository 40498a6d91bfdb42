//go:build unix

package upstream

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// fakeHost speaks worker-host.js's protocol with just enough MCP to drive a
// HostedSession without node or a browser (PWP_FAKE_HOST=1). Its sessions
// know three tools: "echo" answers with the session's key and the
// arguments, "hang" never answers, and "crash" ends the session the way the
// real host ends one after an uncaught exception: the call in flight gets
// the host's error, then the session is reported closed. "die" ends the
// whole host at once; "orphan" too, leaving a child that holds its stdout.
// PWP_FAKE_HOST_HEAP is the heap its pongs report.
func fakeHost() int {
	var mu sync.Mutex
	out := json.NewEncoder(os.Stdout)
	send := func(v any) {
		mu.Lock()
		defer mu.Unlock()
		_ = out.Encode(v)
	}
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	type envelope struct {
		S     string          `json:"s"`
		Open  json.RawMessage `json:"open"`
		Close bool            `json:"close"`
		M     *msg            `json:"m"`
		Ping  json.RawMessage `json:"ping"`
	}
	open := map[string][]json.RawMessage{} // key: ids of calls in flight
	answer := func(key string, id json.RawMessage, result any) {
		send(map[string]any{"s": key, "m": map[string]any{"jsonrpc": "2.0", "id": id, "result": result}})
	}
	closeSession := func(key, reason string) {
		for _, id := range open[key] {
			send(map[string]any{"s": key, "m": map[string]any{"jsonrpc": "2.0", "id": id,
				"error": map[string]any{"code": -32000, "message": "session " + key + " closed: " + reason}}})
		}
		delete(open, key)
		send(map[string]any{"s": key, "closed": map[string]string{"reason": reason}})
	}
	ready := map[string]any{"pid": os.Getpid(), "version": "fake"}
	var conf struct {
		Browser json.RawMessage `json:"browser"`
	}
	if json.Unmarshal([]byte(os.Getenv(workerHostEnv)), &conf) == nil && conf.Browser != nil {
		// Asked for a browser of its own: one that no session connects to.
		ready["browser"] = map[string]any{"endpoint": "ws://127.0.0.1:1/fake", "pid": os.Getpid(), "cdp": ""}
	}
	send(map[string]any{"ready": ready})
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var env envelope
		if err := json.Unmarshal(sc.Bytes(), &env); err != nil {
			send(map[string]string{"error": err.Error()})
			continue
		}
		_, isOpen := open[env.S]
		switch {
		case env.Ping != nil:
			heap, _ := strconv.ParseInt(os.Getenv("PWP_FAKE_HOST_HEAP"), 10, 64)
			send(map[string]any{"pong": env.Ping, "sessions": len(open), "heapUsed": max(heap, 1), "rss": 2})
		case env.Open != nil:
			var spec struct {
				Endpoint string `json:"endpoint"`
			}
			_ = json.Unmarshal(env.Open, &spec)
			if isOpen || spec.Endpoint == "refuse" {
				send(map[string]any{"s": env.S, "refused": "refused by the fake"})
				continue
			}
			open[env.S] = nil
			send(map[string]any{"s": env.S, "opened": map[string]int{"ms": 1}})
		case env.Close:
			if isOpen {
				closeSession(env.S, "closed")
			} else {
				send(map[string]any{"s": env.S, "closed": map[string]string{"reason": "not open"}})
			}
		case env.M != nil && !isOpen:
			if env.M.ID != nil {
				send(map[string]any{"s": env.S, "m": map[string]any{"jsonrpc": "2.0", "id": env.M.ID,
					"error": map[string]any{"code": -32000, "message": "session " + env.S + " is not open"}}})
			}
		case env.M != nil && env.M.ID == nil: // a notification
		case env.M.Method == "initialize":
			answer(env.S, env.M.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]string{"name": "fake-host", "version": "1"}})
		case env.M.Method == "tools/list":
			answer(env.S, env.M.ID, map[string]any{"tools": []map[string]any{{"name": "echo", "inputSchema": map[string]string{"type": "object"}}}})
		case env.M.Method == "ping":
			answer(env.S, env.M.ID, map[string]any{})
		case env.M.Params.Name == "echo":
			text := fmt.Sprintf("%s %s", env.S, env.M.Params.Arguments)
			answer(env.S, env.M.ID, map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
		case env.M.Params.Name == "hang":
			open[env.S] = append(open[env.S], env.M.ID)
			fmt.Fprintf(os.Stderr, "session %s: hanging\n", env.S)
		case env.M.Params.Name == "crash":
			open[env.S] = append(open[env.S], env.M.ID)
			closeSession(env.S, "uncaught exception: fake")
		case env.M.Params.Name == "die":
			return 3
		case env.M.Params.Name == "orphan":
			// A child in a group of its own keeps the host's stdout open
			// after the host has exited and been reaped.
			cmd := exec.Command("sleep", "60")
			cmd.Stdout = os.Stdout
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				fmt.Fprintf(os.Stderr, "host: orphan: %v\n", err)
				return 4
			}
			fmt.Fprintf(os.Stderr, "host: orphan %d\n", cmd.Process.Pid)
			return 3
		default:
			answer(env.S, env.M.ID, map[string]any{"isError": true, "content": []map[string]string{{"type": "text", "text": "unknown tool"}}})
		}
	}
	for key := range open {
		closeSession(key, "host stopping")
	}
	return 0
}
