// Command proxy-server is the HTTP service of playwright-mcp-proxy: it owns
// the browser, one @playwright/mcp worker per session and the SQLite record.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/buildinfo"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/config"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/logging"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proxyserver"
)

func main() {
	// Nothing here reads heap profiles (no pprof endpoint), yet a linked
	// dependency keeps Go's sampling on, and its records are never freed: a
	// long-running server would keep adding to them (docs/BENCHMARKS.md §6).
	runtime.MemProfileRate = 0
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	m := NewMain(os.Stdout, os.Stderr)
	if err := m.Run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "proxy-server:", err)
		}
		stop()
		os.Exit(1)
	}
}

// Main dispatches subcommands.
type Main struct {
	Stdout, Stderr io.Writer
	// OnListen, when set, receives the address serve bound (tests use port 0).
	OnListen func(addr string)
	// Stdin is what `profile import NAME -` reads; nil is os.Stdin.
	Stdin io.Reader
}

// stdin is Stdin, or the process's own.
func (m *Main) stdin() io.Reader {
	if m.Stdin == nil {
		return os.Stdin
	}
	return m.Stdin
}

// NewMain returns a Main writing to the given streams.
func NewMain(stdout, stderr io.Writer) *Main { return &Main{Stdout: stdout, Stderr: stderr} }

// Run runs the subcommand named by args[0].
func (m *Main) Run(ctx context.Context, args []string) error {
	cmd, rest := "", []string(nil)
	if len(args) > 0 {
		cmd, rest = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return (&ServeCommand{Main: m, OnListen: m.OnListen}).Run(ctx, rest)
	case "migrate":
		return (&MigrateCommand{Main: m}).Run(ctx, rest)
	case "browser-node":
		return (&BrowserNodeCommand{Main: m}).Run(ctx, rest)
	case "profile":
		return (&ProfileCommand{Main: m}).Run(ctx, rest)
	case "version":
		fmt.Fprintln(m.Stdout, "proxy-server", buildinfo.Version)
		return nil
	case "help", "-h", "-help", "--help":
		m.usage(m.Stdout)
		return nil
	case "":
		m.usage(m.Stderr)
		return flag.ErrHelp
	default:
		m.usage(m.Stderr)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

func (m *Main) usage(w io.Writer) {
	fmt.Fprint(w, `proxy-server runs the playwright-mcp-proxy HTTP service.

Usage:
	proxy-server serve [flags]     start the service (configured by PROXY_* variables)
	proxy-server migrate [flags]   apply database migrations and exit
	proxy-server browser-node [flags]
	                               run a browser node on this machine's Chromium
	                               (for another server's PROXY_BROWSER_ENDPOINTS)
	proxy-server version           print the version
	proxy-server profile list|import|export|delete
	                               manage login profiles in the database
	                               ('proxy-server profile help')

Run 'proxy-server serve -h' for the flags.
`)
	printEnvironment(w)
}

// printEnvironment lists the PROXY_* variables with their defaults.
func printEnvironment(w io.Writer) {
	fmt.Fprintln(w, "\nEnvironment (defaults shown; .env.example and docs/CONFIGURATION.md say what each does):")
	for _, v := range config.DefaultConfig(os.Getenv).Variables() {
		if v.Unset != "" && (v.Value == "" || v.Value == "0") {
			fmt.Fprintf(w, "\t%s=%s\t(%s)\n", v.Name, v.Value, v.Unset)
			continue
		}
		fmt.Fprintf(w, "\t%s=%s\n", v.Name, v.Value)
	}
}

// parseFlags parses args into fs. On -h it prints the usage, the flags and
// the environment on stdout and returns help true: asked for, help is not
// an error. Parse errors are returned, not printed.
func (m *Main) parseFlags(fs *flag.FlagSet, args []string, usage string) (help bool, err error) {
	fs.SetOutput(io.Discard)
	err = fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(m.Stdout, "Usage: %s [flags]\n\n%s\n\nFlags:\n", fs.Name(), usage)
		fs.SetOutput(m.Stdout)
		fs.PrintDefaults()
		printEnvironment(m.Stdout)
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w (run '%s -h' for the flags)", err, fs.Name())
	}
	return false, nil
}

// ServeCommand is `proxy-server serve`.
type ServeCommand struct {
	Main *Main
	// OnListen, when set, receives the bound address (tests use port 0).
	OnListen func(addr string)
}

// Run parses flags over the PROXY_* environment and serves until ctx ends.
func (c *ServeCommand) Run(ctx context.Context, args []string) error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("proxy-server serve", flag.ContinueOnError)
	fs.StringVar(&cfg.Host, "host", cfg.Host, "listen address (PROXY_HOST)")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "listen port, 0 picks one (PROXY_PORT)")
	fs.StringVar(&cfg.DatabasePath, "db", cfg.DatabasePath, "SQLite database path (PROXY_DATABASE_PATH)")
	fs.IntVar(&cfg.MaxSessions, "max-sessions", cfg.MaxSessions, "live session limit (PROXY_MAX_SESSIONS)")
	fs.IntVar(&cfg.WarmPool, "warm-pool", cfg.WarmPool, "spare workers kept ready (PROXY_WARM_POOL)")
	fs.StringVar(&cfg.ResponseMode, "response-mode", cfg.ResponseMode, "ref or full (PROXY_RESPONSE_MODE)")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info, warn, error (PROXY_LOG_LEVEL)")
	fs.StringVar(&cfg.LogFile, "log-file", cfg.LogFile, "write the log to this file, reopened on SIGHUP, instead of stderr (PROXY_LOG_FILE)")
	if help, err := c.Main.parseFlags(fs, args, "Starts the service until SIGINT or SIGTERM. Flags override the PROXY_* environment."); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	// A bad configuration is told on stderr, before any log file is made.
	if err := cfg.Validate(); err != nil {
		return err
	}
	log, closeLog, err := c.Main.openLog(cfg)
	if err != nil {
		return err
	}
	defer closeLog()
	err = proxyserver.Serve(ctx, cfg, proxyserver.Options{Logger: log, OnListen: c.OnListen})
	if err != nil && cfg.LogFile != "" {
		// main prints it on stderr too; the file is where an operator who
		// set it looks first.
		log.Error("proxy-server stopped", "err", err)
	}
	return err
}

// MigrateCommand is `proxy-server migrate`.
type MigrateCommand struct{ Main *Main }

// Run applies the embedded migrations to the database and exits.
func (c *MigrateCommand) Run(ctx context.Context, args []string) error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("proxy-server migrate", flag.ContinueOnError)
	fs.StringVar(&cfg.DatabasePath, "db", cfg.DatabasePath, "SQLite database path (PROXY_DATABASE_PATH)")
	if help, err := c.Main.parseFlags(fs, args, "Applies the database migrations and exits."); help || err != nil {
		return err
	}
	db, err := proxyserver.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("closing database: %w", err)
	}
	fmt.Fprintln(c.Main.Stdout, "database", cfg.DatabasePath, "is migrated")
	return nil
}

// BrowserNodeCommand is `proxy-server browser-node`.
type BrowserNodeCommand struct{ Main *Main }

// Run serves one Playwright browser server on this machine's Chromium until
// ctx ends.
func (c *BrowserNodeCommand) Run(ctx context.Context, args []string) error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	opts := proxyserver.NodeOptions{}
	fs := flag.NewFlagSet("proxy-server browser-node", flag.ContinueOnError)
	fs.StringVar(&opts.Addr, "listen", "127.0.0.1:0", "host:port to listen on (0.0.0.0:3000 for other machines; no token guards it, so keep it on a private network)")
	fs.StringVar(&opts.Path, "path", "", "the endpoint's path, e.g. /playwright; empty makes a random one")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info, warn, error (PROXY_LOG_LEVEL)")
	fs.StringVar(&cfg.LogFile, "log-file", cfg.LogFile, "write the log to this file, reopened on SIGHUP, instead of stderr (PROXY_LOG_FILE)")
	if help, err := c.Main.parseFlags(fs, args, "Runs a Playwright browser server on this machine's Chromium (PROXY_BROWSER_EXECUTABLE, PROXY_HEADLESS) until SIGINT or SIGTERM, and prints the endpoint to list in another proxy-server's PROXY_BROWSER_ENDPOINTS."); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("browser-node takes no arguments, got %q", fs.Args())
	}
	log, closeLog, err := c.Main.openLog(cfg)
	if err != nil {
		return err
	}
	defer closeLog()
	opts.Logger = log
	opts.OnListen = func(endpoint string) { fmt.Fprintln(c.Main.Stdout, endpoint) }
	return proxyserver.RunBrowserNode(ctx, cfg, opts)
}

// openLog builds the logger of cfg: on stderr, or in the file PROXY_LOG_FILE
// names, which every SIGHUP reopens at its path (logrotate renames the file,
// then signals). closeLog stops the reopening and closes the file.
func (m *Main) openLog(cfg config.Config) (log *slog.Logger, closeLog func(), err error) {
	if cfg.LogFile == "" {
		return logging.New(m.Stderr, cfg.LogLevel, cfg.LogFormat), func() {}, nil
	}
	f, err := logging.OpenFile(cfg.LogFile)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: PROXY_LOG_FILE: %w", config.ErrInvalid, err)
	}
	log = logging.New(f, cfg.LogLevel, cfg.LogFormat)
	// serve's client tokens reload listens to the same signal: one SIGHUP
	// does both.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-hup:
			}
			if err := f.Reopen(); err != nil {
				log.Error("reopening the log file failed; the log goes on to the file open so far", "file", f.Path(), "err", err)
				continue
			}
			log.Info("log file reopened", "file", f.Path())
		}
	}()
	return log, func() {
		signal.Stop(hup)
		close(done)
		<-stopped
		_ = f.Close()
	}, nil
}
