// Command mcp-bridge is the stdio MCP server a client launches
// (`claude mcp add browser -- mcp-bridge`). It forwards every tool to
// proxy-server over HTTP; each bridge process gets its own default browser
// session, so two conversations never share a browser context. The sessions
// a bridge creates are its own (no other client can name them), and it
// closes them when its client leaves (stdin closed, SIGTERM, SIGINT). When
// proxy-server is down it waits for it (MCP_PROXY_RETRY_TIMEOUT) and, for a
// loopback MCP_PROXY_URL, starts one in the background (MCP_PROXY_AUTOSTART).
// Its stdout carries MCP only; logs go to stderr.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/autostart"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/bridge"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/buildinfo"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/logging"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if n := bridge.Procs(os.Getenv); n > 0 {
		runtime.GOMAXPROCS(n)
	}
	stdin, restore := bridge.PollableInput(os.Stdin, os.Stdout, os.Stderr)
	err := NewMain().Run(ctx, os.Args[1:], stdin, os.Stdout, os.Stderr)
	restore()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-bridge:", err)
		stop()
		os.Exit(1)
	}
}

// usage is what --help prints: an MCP client launches the bridge, a user
// reads this.
const usage = `mcp-bridge is the stdio MCP server of playwright-mcp-proxy: an MCP client
launches it (claude mcp add browser -- mcp-bridge) and it relays every tool to
proxy-server over HTTP, with a browser session of its own.

Usage:
	mcp-bridge                       serve MCP on stdin/stdout
	mcp-bridge --toolsets=LIST       the same, with these tool groups
	mcp-bridge --profile NAME        the same, signed in as login profile NAME
	mcp-bridge version               print the version
	mcp-bridge --help                print this

	--toolsets LIST (or MCP_PROXY_TOOLSETS; the flag wins)
		the tool groups this client lists and may call, instead of the
		server's PROXY_TOOLSETS: a comma list of upstream, storage, session,
		content, navigation, interaction, extraction, state, network,
		elements, or all
	--profile NAME (or MCP_PROXY_PROFILE; the flag wins)
		the login profile (proxy-server profile list) this client's default
		browser session starts from, a copy of its cookies and storage:
		claude mcp add browser -- mcp-bridge --profile github

Environment:
	MCP_PROXY_URL=http://127.0.0.1:34501
		where proxy-server answers
	MCP_PROXY_TOKEN=
		bearer token sent to proxy-server: its PROXY_AUTH_TOKEN, or a client
		token of its PROXY_CLIENT_TOKENS_FILE
	MCP_PROXY_AUTOSTART=1
		start proxy-server serve in the background when nothing answers at a
		loopback MCP_PROXY_URL (0 = off)
	MCP_PROXY_RETRY_TIMEOUT=30s
		how long to wait for a proxy-server that cannot be reached (0 = no wait)
	MCP_PROXY_TOOLSETS=
		this client's tool groups (as --toolsets); empty: the server's
	MCP_PROXY_PROFILE=
		the login profile of this client's default session (as --profile);
		empty: none
	MCP_PROXY_LOG_LEVEL=warn
		debug, info, warn or error; logs go to stderr, which MCP clients show
	PROXY_DATABASE_PATH=$XDG_STATE_HOME/playwright-mcp-proxy/proxy.db
		(else ~/.local/state/playwright-mcp-proxy/proxy.db) the database of an
		autostarted server; its directory holds the server's log and pid files
	GOMAXPROCS=1
		Go's own; one unless set
	PROXY_*
		an autostarted server reads the rest of its configuration from the
		bridge's environment: see proxy-server --help
`

// Main is the bridge program.
type Main struct {
	// Getenv reads configuration; tests replace it.
	Getenv func(string) string
}

// NewMain returns a Main reading the process environment.
func NewMain() *Main { return &Main{Getenv: os.Getenv} }

// Run serves MCP on stdin/stdout until stdin closes or ctx ends.
func (m *Main) Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		fmt.Fprintln(stdout, "mcp-bridge", buildinfo.Version)
		return nil
	}
	if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprint(stdout, usage)
		return nil
	}
	cfg, err := bridge.ConfigFromEnv(m.Getenv)
	if err != nil {
		return err
	}
	if err := parseArgs(args, &cfg); err != nil {
		return err
	}
	log := logging.New(stderr, cfg.LogLevel, "text")
	opts := []bridge.Option{
		bridge.WithVersion(buildinfo.Version),
		bridge.WithLogger(log),
		bridge.WithRetryTimeout(cfg.RetryTimeout),
		bridge.WithToolsets(cfg.Toolsets),
	}
	if cfg.Autostart {
		st, err := autostart.New(autostart.Config{
			URL:          cfg.URL,
			DatabasePath: cfg.DatabasePath,
			Env:          os.Environ(),
			Token:        cfg.Token,
			Logger:       log,
		})
		switch {
		case errors.Is(err, autostart.ErrNotLoopback):
			log.Info("autostart is off: proxy-server is not on this machine", "proxy", cfg.URL)
		case err != nil:
			return err
		default:
			opts = append(opts, bridge.WithStarter(func(ctx context.Context) error {
				err := st.Ensure(ctx)
				if errors.Is(err, autostart.ErrDataDir) || errors.Is(err, autostart.ErrExited) {
					// Waiting will not make the directory writable, nor
					// a server that failed at start-up start.
					return fmt.Errorf("%w: %w", bridge.ErrCannotStart, err)
				}
				return err
			}))
		}
	}
	client, err := bridge.NewClient(cfg.URL, cfg.Token, opts...)
	if err != nil {
		return err
	}
	h, err := waitReady(ctx, client, log, cfg.RetryTimeout)
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(ctx, client, client, mcpserver.WithLogger(log), mcpserver.WithVersion(buildinfo.Version),
		mcpserver.WithProfiles(client), mcpserver.WithDefaultProfile(cfg.Profile))
	if err != nil {
		return err
	}
	log.Debug("mcp-bridge ready", "proxy", cfg.URL, "version", buildinfo.Version, "server_version", h.Version)
	stdio := server.NewStdioServer(srv.MCPServer())
	err = stdio.Listen(ctx, stdin, mcpserver.WithRPCCodes(stdout))
	leave(ctx, client, log)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// parseArgs reads the flags: --toolsets and --profile (also with one
// dash, with their value after = or as the next argument). Everything else
// is configured with MCP_PROXY_* variables.
func parseArgs(args []string, cfg *bridge.Config) error {
	flags := map[string]struct {
		set   func(source, value string) error
		value string // what the value is, for the error of a missing one
	}{
		"toolsets": {cfg.SetToolsets, "a comma list of tool groups, or all"},
		"profile":  {cfg.SetProfile, "the name of a login profile"},
	}
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(args[i], "=")
		f, ok := flags[strings.TrimPrefix(strings.TrimPrefix(name, "-"), "-")]
		if !ok || !strings.HasPrefix(name, "-") {
			return fmt.Errorf("unexpected arguments %q: the only flags are --toolsets and --profile; configure the rest with MCP_PROXY_* variables (see mcp-bridge --help)", args[i:])
		}
		if !inline {
			if i+1 == len(args) {
				return fmt.Errorf("%s needs a value: %s", name, f.value)
			}
			i++
			value = args[i]
		}
		if err := f.set("--"+strings.TrimLeft(name, "-"), value); err != nil {
			return err
		}
	}
	return nil
}

// leaveBudget bounds closing the bridge's sessions once its client is gone.
const leaveBudget = 10 * time.Second

// leave closes the sessions this bridge created, now that its client has
// gone (stdin closed, or SIGTERM/SIGINT): nobody else can reach them, and
// each holds a browser worker until the idle timeout. Their history stays
// readable over the HTTP API. A server that cannot be reached is not
// waited for nor started: it has nothing of this bridge's left to close.
func leave(ctx context.Context, c *bridge.Client, log *slog.Logger) {
	reason := "stdin closed"
	if ctx.Err() != nil {
		reason = "signal"
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveBudget)
	defer cancel()
	n, err := mcpserver.CloseSessions(ctx, c.Once())
	switch {
	case proxy.ErrorCode(err) == proxy.EUNAVAILABLE:
		log.Debug("client left; proxy-server unreachable, no sessions closed", "reason", reason, "err", err)
	case err != nil:
		log.Warn("closing this bridge's sessions", "reason", reason, "closed", n, "err", err)
	default:
		log.Debug("client left; this bridge's sessions are closed", "reason", reason, "closed", n)
	}
}

// notReadyQuiet is how long waitReady waits for a degraded server before
// it warns.
const notReadyQuiet = 10 * time.Second

// waitReady waits, within budget, for proxy-server to answer /health with
// every check passing. The client already waits for a server that cannot be
// reached (and autostarts one); this also waits out a degraded one. What
// waiting cannot change ends it at once: something that is not a
// proxy-server at the URL, a proxy-server refusing us, a server that
// cannot be started.
func waitReady(ctx context.Context, c *bridge.Client, log *slog.Logger, budget time.Duration) (*bridge.Health, error) {
	if budget <= 0 { // no waiting at all: one look
		h, err := c.Health(ctx)
		if err == nil && !h.OK() {
			err = fmt.Errorf("proxy-server is %s: %v", h.Status, h.Checks)
		}
		return h, err
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	delay := 200 * time.Millisecond
	began := time.Now()
	for {
		h, err := c.Health(ctx)
		if err == nil && h.OK() {
			return h, nil
		}
		if bridge.Hopeless(err) {
			return nil, err
		}
		if err == nil {
			err = fmt.Errorf("proxy-server is %s: %v", h.Status, h.Checks)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("proxy-server was not ready within %s (MCP_PROXY_RETRY_TIMEOUT): %w", budget, err)
		}
		// A server just started (autostart) is often not ready at its
		// first answer: only a longer wait is worth a warning.
		level := slog.LevelDebug
		if time.Since(began) > notReadyQuiet {
			level = slog.LevelWarn
		}
		log.Log(ctx, level, "proxy-server not ready yet", "err", err, "retry_in", delay)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("proxy-server was not ready within %s (MCP_PROXY_RETRY_TIMEOUT): %w", budget, err)
		case <-time.After(delay):
		}
		delay = min(delay*2, 3*time.Second)
	}
}
