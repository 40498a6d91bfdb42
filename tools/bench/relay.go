package main

import (
	"bufio"
	"context"
	"errors"
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
