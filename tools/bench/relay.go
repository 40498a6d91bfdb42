package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/tools/bench/internal/bench"
)

// RelayCommand is `bench relay -- CMD ARGS…`: a stdio MCP server (CMD)
// behind two minimal Go relays, stdio → HTTP → stdio, the shape of
// mcp-bridge → proxy-server with none of their work. The overhead scenario
// runs it as side D. Without -serve it is the client relay: it starts
// `bench relay -serve -- CMD…` as its child (the server relay, which starts
// CMD) and relays its own stdin and stdout to it over HTTP.
type RelayCommand struct {
	Main *Main
}

// Run parses flags and relays until stdin ends.
func (cmd *RelayCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench relay", flag.ContinueOnError)
	fs.SetOutput(cmd.Main.Stderr)
	serve := fs.Bool("serve", false, "be the server relay: start the command and answer POSTs with its replies")
	if err := fs.Parse(args); err != nil {
		return err
	}
	child := fs.Args()
	if len(child) == 0 {
		return errors.New("bench relay: want -- COMMAND [ARGS…]")
	}
	log := slog.New(slog.NewTextHandler(cmd.Main.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if *serve {
		return serveRelay(ctx, log, child)
	}
	return clientRelay(ctx, child)
}

// clientRelay starts the server relay and relays stdin/stdout to it.
func clientRelay(ctx context.Context, child []string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench relay: %w", err)
	}
	srv := exec.Command(self, append([]string{"relay", "-serve", "--"}, child...)...)
	// Same process group as this one: whoever stops the group stops the
	// whole chain, the MCP server included.
	srv.SysProcAttr = bench.KilledWithParent()
	srv.Stderr = os.Stderr
	out, err := srv.StdoutPipe()
	if err != nil {
		return fmt.Errorf("bench relay: %w", err)
	}
	if err := srv.Start(); err != nil {
		return fmt.Errorf("bench relay: starting the server relay: %w", err)
	}
	defer func() {
		_ = srv.Process.Signal(syscall.SIGTERM)
		_ = srv.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("bench relay: the server relay announced no URL: %w", err)
	}
	return bench.RelayClient(ctx, strings.TrimSpace(line), os.Stdin, os.Stdout)
}

// serveRelay starts the MCP server, announces its URL on stdout and serves
// until the server's output ends or a signal comes.
func serveRelay(ctx context.Context, log *slog.Logger, child []string) error {
	c := exec.Command(child[0], child[1:]...)
	c.SysProcAttr = bench.KilledWithParent()
	c.Stderr = os.Stderr
	in, err := c.StdinPipe()
	if err != nil {
		return fmt.Errorf("bench relay: %w", err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		return fmt.Errorf("bench relay: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("bench relay: %w", err)
	}
	if err := c.Start(); err != nil {
		ln.Close()
		return fmt.Errorf("bench relay: starting %s: %w", child[0], err)
	}
	defer func() {
		in.Close() // a stdio MCP server ends at EOF
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}()
	fmt.Printf("http://%s/\n", ln.Addr())
	return bench.RelayServer(ctx, log, ln, in, out)
}
