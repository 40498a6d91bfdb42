// Command bench measures a real proxy-server: it starts bin/proxy-server as a
// child process (own temp database, port 0, own process group), serves its own
// test pages on 127.0.0.1, drives the HTTP API, prints a table on stdout (and
// JSON with -json), and checks that no node or Chromium process is left.
// `bench help` lists the subcommands (the table in commands.go).
package main

import (
	"cmp"
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
	name, rest := "", []string(nil)
	if len(args) > 0 {
		name, rest = args[0], args[1:]
	}
	for _, c := range commands {
		switch {
		case c.name != name:
		case c.direct != nil:
			return c.direct(ctx, m, rest)
		default:
			return m.run(ctx, c, rest)
		}
	}
	fmt.Fprint(m.Stderr, "bench measures a real proxy-server (bin/proxy-server, real Chromium).\n\nUsage:\n")
	for _, c := range commands {
		fmt.Fprintf(m.Stderr, "\tbench %-26s %s\n", c.name+" "+cmp.Or(c.args, "[flags]"), c.summary)
	}
	fmt.Fprint(m.Stderr, "\nResults go to stdout (a table) and to -json FILE; progress goes to stderr.\nRun 'bench <command> -h' for the flags.\n")
	if name == "" || name == "help" || name == "-h" || name == "--help" {
		return flag.ErrHelp
	}
	return fmt.Errorf("unknown command %q", name)
}
