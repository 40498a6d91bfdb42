// Command bench measures a real proxy-server: it starts bin/proxy-server as a
// child process (own temp database, port 0, own process group), serves its own
// test pages on 127.0.0.1, drives the HTTP API, prints a table on stdout (and
// JSON with -json), and checks that no node or Chromium process is left.
// `bench help` lists the subcommands (the table in commands.go).
package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/tools/bench/internal/bench"
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

type Main struct {
	Stdout, Stderr io.Writer
}

func NewMain(stdout, stderr io.Writer) *Main { return &Main{Stdout: stdout, Stderr: stderr} }

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

// relayCommand is `bench relay -- CMD ARGS…`: a stdio MCP server (CMD)
// behind two minimal Go relays, stdio → HTTP → stdio, the shape of
// mcp-bridge → proxy-server with none of their work (the overhead
// scenario's side D). Without -serve it is the client relay: it starts
// `bench relay -serve -- CMD…` (the server relay, which starts CMD) and
// relays its own stdin and stdout to it over HTTP.
func relayCommand(ctx context.Context, m *Main, args []string) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("bench relay: %w", err)
		}
	}()
	fs := flagSet(m, "relay")
	serve := fs.Bool("serve", false, "be the server relay: start the command and answer POSTs with its replies")
	if err := fs.Parse(args); err != nil {
		return err
	}
	child := fs.Args()
	if len(child) == 0 {
		return errors.New("want -- COMMAND [ARGS…]")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	c := exec.Command(self, append([]string{"relay", "-serve", "--"}, child...)...)
	if *serve {
		c = exec.Command(child[0], child[1:]...)
	}
	// Killed with this process, and in its process group: whoever stops
	// the group stops the whole chain, the MCP server included.
	c.SysProcAttr, c.Stderr = bench.KilledWithParent(), os.Stderr
	in, err := c.StdinPipe()
	if err != nil {
		return err
	}
	out, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", c.Path, err)
	}
	defer func() {
		in.Close() // a stdio MCP server ends at EOF
		if !*serve {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}()
	if *serve {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		fmt.Fprintf(m.Stdout, "http://%s/\n", ln.Addr())
		return bench.RelayServer(ctx, slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), ln, in, out)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("the server relay announced no URL: %w", err)
	}
	return bench.RelayClient(ctx, strings.TrimSpace(line), os.Stdin, os.Stdout)
}
