// Command bench measures a real proxy-server: it starts bin/proxy-server as a
// child process (own temp database, port 0, own process group), serves its own
// test pages on 127.0.0.1, drives the HTTP API, prints a table on stdout (and
// JSON with -json), and checks that no node or Chromium process is left.
//
//	bench sessions      POST /sessions latency with and without a warm pool,
//	                    first navigation in a new session vs an existing one
//	bench concurrency   1, 10, 25, 50 sessions looping navigate/snapshot/click
//	bench all           both
//	bench idle          one active session's latency while K others sit idle
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
	switch cmd {
	case "sessions":
		return (&SessionsCommand{Main: m}).Run(ctx, rest)
	case "concurrency":
		return (&ConcurrencyCommand{Main: m}).Run(ctx, rest)
	case "all":
		return (&AllCommand{Main: m}).Run(ctx, rest)
	case "idle":
		return (&IdleCommand{Main: m}).Run(ctx, rest)
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
	bench all [flags]           both
	bench idle [flags]          one active session while 0, 10, 25, 50 others sit idle

Results go to stdout (a table) and to -json FILE; progress goes to stderr.
Run 'bench <command> -h' for the flags.
`)
}
