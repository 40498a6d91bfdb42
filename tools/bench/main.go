// Command bench measures a real proxy-server: it starts bin/proxy-server as a
// child process (own temp database, port 0, own process group), serves its own
// test pages on 127.0.0.1, drives the HTTP API, prints a table on stdout (and
// JSON with -json), and checks that no node or Chromium process is left.
//
//	bench sessions      POST /sessions latency with and without a warm pool,
//	                    first navigation in a new session vs an existing one
//	bench concurrency   1, 10, 25, 50 sessions looping navigate/snapshot/click
//	bench all           sessions, concurrency, overhead, bytes and tokens
//	bench idle          one active session's latency while K others sit idle
//	bench overhead      per-call latency through mcp-bridge → proxy-server vs
//	                    plain @playwright/mcp, A/B alternated
//	bench bytes         bytes to the model for a scripted task, plain vs proxy
//	bench tokens        tool-result bytes and calls of a scripted agent on a
//	                    task suite: plain with browser_snapshot, plain with
//	                    browser_find, the proxy
//	bench store         the SQLite record in process (no server): ingest rate
//	                    with and without readers, get_content search on 1 MB
//	bench soak          sessions with mixed traffic and idle suspensions for a
//	                    long time: trend of memory and file descriptors
//	bench chart         SVG charts from the JSON of concurrency and soak
//	bench relay         a stdio MCP server behind two minimal Go relays (the
//	                    overhead scenario's side D)
//	bench live          one viewer of a session's live view: frames/s and
//	                    bytes/s on a still and a busy page, its CPU cost,
//	                    change-to-frame latency
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := NewMain(os.Stdout, os.Stderr).Run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		stop()
		os.Exit(1)
	}
}

// Main dispatches subcommands.
type Main struct {
	Stdout, Stderr io.Writer
}

// NewMain returns a Main writing results to stdout and progress to stderr.
func NewMain(stdout, stderr io.Writer) *Main { return &Main{Stdout: stdout, Stderr: stderr} }

// Run runs the subcommand named by args[0].
func (m *Main) Run(ctx context.Context, args []string) error {
	cmd, rest := "", []string(nil)
	if len(args) > 0 {
		cmd, rest = args[0], args[1:]
	}
	servers := map[string]setupFunc{
		"sessions": sessionsCommand, "concurrency": concurrencyCommand, "nodes": nodesCommand, "all": allCommand,
		"idle": idleCommand, "overhead": stdioCommand(runOverhead), "bytes": stdioCommand(runBytes),
		"tokens": stdioCommand(runTokens),
		"soak":   soakCommand, "live": liveCommand,
	}
	if setup, ok := servers[cmd]; ok {
		return m.serverCommand(ctx, cmd, rest, setup)
	}
	switch cmd {
	case "store":
		return m.storeCommand(ctx, rest)
	case "chart":
		return m.chartCommand(rest)
	case "relay":
		return (&RelayCommand{Main: m}).Run(ctx, rest)
	case "", "help", "-h", "--help":
		m.usage()
		return flag.ErrHelp
	default:
		m.usage()
		return fmt.Errorf("unknown command %q", cmd)
	}
}

func (m *Main) usage() {
	fmt.Fprint(m.Stderr, `bench measures a real proxy-server (bin/proxy-server, real Chromium).

Usage:
	bench sessions [flags]      POST /sessions latency, warm pool 1 vs 0; first vs later navigation
	bench concurrency [flags]   N concurrent sessions looping navigate + snapshot + click
	bench nodes [flags]         the same load on the server's own browser and on 1, 2, 3 browser nodes
	bench all [flags]           sessions, concurrency, overhead, bytes and tokens
	bench idle [flags]          one active session while 0, 10, 25, 50 others sit idle
	bench overhead [flags]      per-call latency, mcp-bridge → proxy-server vs plain @playwright/mcp (A/B)
	bench bytes [flags]         bytes to the model for a scripted task, plain @playwright/mcp vs the proxy
	bench tokens [flags]        result bytes and calls of an 8-task suite: plain (snapshot), plain (find), the proxy
	bench store [flags]         the SQLite record in process: ingest with and without readers, search on 1 MB
	bench soak [flags]          10 sessions, mixed traffic and idle suspensions for 30 min: memory and fd trend
	bench chart [flags]         SVG charts from the JSON of concurrency and soak
	bench relay -- CMD [ARGS]   CMD (a stdio MCP server) behind two minimal Go relays, stdio → HTTP → stdio
	bench live [flags]          one live view viewer: frames/s, bytes/s and CPU on a still and a busy page; change-to-frame

Results go to stdout (a table) and to -json FILE; progress goes to stderr.
Run 'bench <command> -h' for the flags.
`)
}
