// Package proxyserver owns the wiring of `proxy-server serve`: it builds the
// store, the browser host, the session manager and the HTTP server from a
// Config, runs them until its context ends, and shuts them down in order.
// Its own logic is what one server process needs of its host: the claim on
// its data directory (a pid file, locked, that refuses a second live server
// and, on Linux, reaps a dead one's leftover workers and browsers and its
// temp directory: pidfile*.go), and the HTTP shutdown that does not wait
// on silent connections (httpshutdown.go).
package proxyserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/api"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/buildinfo"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/config"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/liveview"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/metrics"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/policy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/ui"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// ShutdownBudget bounds a graceful shutdown, from the signal to the last
// worker stopped: calls in flight, then each session's browser_close, state
// save and worker stop share it.
const ShutdownBudget = 8 * time.Second

// Options are the parts of a run that are not configuration.
type Options struct {
	Logger *slog.Logger
	// OnListen is called with the bound address once the server accepts
	// connections (tests use port 0).
	OnListen func(addr string)
	// Root is where node_modules is found when PROXY_PLAYWRIGHT_MCP_COMMAND
	// is empty, and what relative paths in it are relative to; "" means next
	// to the executable, then the working directory.
	Root string
}

// Serve runs proxy-server until ctx is cancelled, then shuts down gracefully.
func Serve(ctx context.Context, cfg config.Config, opts Options) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	// Before anything starts: a file that changed since Validate fails here.
	clientTokens, err := cfg.ClientTokens()
	if err != nil {
		return fmt.Errorf("%w: PROXY_CLIENT_TOKENS_FILE: %w", config.ErrInvalid, err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}

	// The port first: a busy one fails at once, before a browser or a
	// worker starts. Connections that arrive meanwhile wait in the
	// listen queue and are served once everything is up.
	ln, err := net.Listen("tcp", cfg.Addr())
	if err != nil {
		return fmt.Errorf("listening on %s (PROXY_HOST, PROXY_PORT): %w", cfg.Addr(), err)
	}
	defer ln.Close() // on an early return; Shutdown closes it otherwise

	// Everything the browser and the workers write goes below tempDir:
	// removed at the end, and by the next server on this data directory
	// after a SIGKILL.
	tempDir, err := newTempDir()
	if err != nil {
		return err
	}
	// Before the database: a live server on the same directory must not
	// have its sessions suspended by this one.
	instance, release, err := claimDataDirOf(ctx, cfg.DatabasePath, tempDir, log)
	if err != nil {
		_ = os.RemoveAll(tempDir)
		return err
	}
	defer release()
	defer func() {
		if err := os.RemoveAll(tempDir); err != nil {
			log.Warn("removing the temp directory", "dir", tempDir, "err", err)
		}
	}()

	db, err := OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if err := db.Close(); err != nil {
			log.Error("closing database", "err", err)
		}
	}()

	if err := db.CheckStateKey(ctx); err != nil {
		log.Warn("what the database holds sealed does not open with the state key: suspended sessions resume blank and profiles cannot be read until the key that sealed them is back (PROXY_STATE_KEY, or the key file beside the database)",
			"key_from", keySource(cfg), "err", err)
	}

	// Sessions a crashed or stopped server left active have no worker now;
	// they resume on their next call.
	if n, err := db.SetSessionsState(ctx, proxy.SessionActive, proxy.SessionSuspended); err != nil {
		return fmt.Errorf("recovering sessions: %w", err)
	} else if n > 0 {
		log.Info("sessions left active by an earlier run are now suspended", "count", n)
	}

	pol, err := policy.FromConfig(cfg, reservedAddrs(cfg, ln.Addr().String())...)
	if err != nil {
		return err
	}
	if cfg.EnableFileURLs {
		log.Warn("PROXY_ENABLE_FILE_URLS=true: sessions may open file:// URLs and name any file the server can read (the database and other sessions' files included); use it only for a single trusted client")
	}
	groups, err := toolset.Select(cfg.Toolsets)
	if err != nil {
		return fmt.Errorf("PROXY_TOOLSETS: %w", err)
	}
	if groups.Has(toolset.GroupUnsafe) { // Validate allowed it: a browser per session
		log.Warn("tool group unsafe is on: MCP clients that choose it may run code in their session's worker process with Playwright's objects (browser_run_code_unsafe); "+
			"each session has a browser process of its own, but that code runs as this server's user on this machine",
			"tools", "browser_run_code_unsafe, browser_get_config", "PROXY_TOOLSETS", groups.String())
	}
	command, err := workerCommand(cfg, opts.Root)
	if err != nil {
		return err
	}
	pool, err := startNodes(ctx, cfg, command, log)
	if err != nil {
		return err
	}
	if pool != nil {
		pctx, stopProbes := context.WithCancel(context.WithoutCancel(ctx))
		probing := make(chan struct{})
		go func() {
			defer close(probing)
			pool.Run(pctx)
		}()
		defer func() { stopProbes(); <-probing }()
	}
	perHost, whyOne := cfg.SessionsPerHost()
	if whyOne != "" {
		log.Info("one node process per session: sessions share node processes only on a Playwright browser server: the browser this server runs, or browser nodes",
			"reason", whyOne, "PROXY_SESSIONS_PER_WORKER", cfg.SessionsPerWorker)
	} else if perHost > 1 {
		log.Info("sessions share node processes (session hosts)", "sessions_per_worker", perHost)
	}
	host := upstream.NewHost(upstream.HostConfig{
		Browser: upstream.BrowserConfig{
			Executable:     cfg.BrowserExecutable,
			Headless:       cfg.Headless,
			OptimizeMemory: cfg.BrowserOptimizeMemory,
			Logger:         log,
		},
		RemoteCDPEndpoint: cfg.BrowserCDPEndpoint,
		PerSession:        cfg.BrowserMode == config.BrowserModePerSession,
		Nodes:             pool,
		Worker: upstream.WorkerConfig{
			Command:   command,
			ExtraArgs: append(cfg.PlaywrightExtraArgs(), pol.UpstreamArgs()...),
			Logger:    log,
		},
		InstanceID: instance,
		TempDir:    tempDir,
		// The CDP port of each browser the host starts, for as long as it runs.
		Reserve:           pol.Reserve,
		Logger:            log,
		SessionsPerWorker: perHost,
		PingInterval:      cfg.PingInterval,
	})
	if err := host.Start(ctx); err != nil {
		return fmt.Errorf("starting the browser host: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), ShutdownBudget)
		defer cancel()
		if err := host.Close(cctx); err != nil {
			log.Error("stopping the browser", "err", err)
		}
	}()

	// One worker before serving: a command that cannot start fails serve
	// here, with what the worker said, instead of leaving a server whose
	// every session fails. The manager gets it as its first worker.
	spawn, err := startFirstWorker(ctx, host, command, cfg.BrowserCDPEndpoint != "" || pool != nil, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil // asked to stop while starting
		}
		return err
	}
	defer spawn.close() // after the manager's Shutdown, before the host's Close

	// The metrics read the manager on each scrape; the manager reports
	// calls to them as they end.
	var mgr *session.Manager
	met := metrics.New(metrics.Sources{
		Sessions:       func(ctx context.Context) ([]*proxy.Session, error) { return mgr.ListSessions(ctx) },
		Stats:          func() session.Stats { return mgr.Stats() },
		BrowserCrashes: host.BrowserCrashes,
		Breaker:        host.CheckCircuitBreaker,
		DatabaseBytes:  db.SizeBytes,
		Nodes:          poolList(pool),
	})
	mgr = session.New(db, spawn, session.Options{
		MaxSessions:        cfg.MaxSessions,
		IdleTimeout:        cfg.SessionIdleTimeout,
		WarmPool:           cfg.WarmPool,
		CallTimeout:        cfg.CallTimeout,
		PingInterval:       cfg.PingInterval,
		MaxConcurrentCalls: cfg.ConcurrentCalls(),
		MaxSessionMemory:   cfg.MaxSessionMemory,
		FullResponses:      cfg.ResponseMode == config.ResponseModeFull,
		InlineResultMax:    cfg.InlineResultMax,
		ChangesMax:         changesMax(cfg.ChangesMax),
		MaxDownloadBytes:   cfg.MaxDownloadBytes,
		Observer:           met,
		Policy:             pol,
		Toolset:            groups,
		OwnBrowsers:        cfg.SharedBrowser() == "",
		Logger:             log,
		Devices:            upstream.NewDevices(command),
		Profiles:           cfg.Profiles,
		MaxProfileBytes:    cfg.ProfileMaxBytes,
		ControlIdleTimeout: cfg.ControlIdleTimeout,
		LiveURL:            liveURL(ln.Addr().String()),
	})
	// Whatever happens below, no worker outlives Serve: by the shutdown's
	// deadline once one began, else within a budget of its own.
	var stopBy time.Time
	defer func() {
		deadline := stopBy
		if deadline.IsZero() {
			deadline = time.Now().Add(ShutdownBudget)
		}
		cctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		if err := mgr.Shutdown(cctx); err != nil {
			log.Error("stopping sessions", "err", err)
		}
	}()

	// One record reader for both surfaces: it serialises diff-cursor reads.
	reader := content.New(db)
	// /mcp: the bridge's tool surface in-process; each MCP session gets its
	// own default browser session, and the sessions it creates close when
	// it ends.
	// /ws serves the same MCP server over WebSocket, one client per
	// connection; a message is bounded as a request body is.
	// The session manager serves the login profiles to both surfaces.
	mcpOpts := []mcpserver.Option{mcpserver.WithVersion(buildinfo.Version), mcpserver.WithProfiles(mgr)}
	mcpHTTP := mcpserver.NewHTTPHandler(mgr, reader, mcpserver.HTTPConfig{Logger: log, Toolsets: groups, MaxBodyBytes: cfg.MaxBodyBytes, Options: mcpOpts})
	apiOpts := []api.Option{
		api.WithLogger(log),
		api.WithVersion(buildinfo.Version),
		api.WithMaxBodyBytes(cfg.MaxBodyBytes),
		api.WithHealthCheck("database", db.Ping),
		api.WithHealthCheck("browser", host.Check),
		api.WithHealthCheck("upstream", func(ctx context.Context) error { _, err := mgr.Tools(ctx); return err }),
		api.WithHealthCheck("sessions", mgr.Check),
		api.WithHealthCheck("workers", mgr.CheckWorkers),
		api.WithHealthCheck("circuit_breaker", host.CheckCircuitBreaker),
		api.WithCounters(func() any { return mgr.Stats() }),
		api.WithHealthRestartsLeft(mgr.RestartsLeft),
		api.WithAuthToken(cfg.AuthToken),
		api.WithAllowedOrigins(cfg.AllowedOrigins),
		api.WithAllowedHosts(cfg.Host),
		api.WithMount("/metrics", met.Handler()),
		api.WithClientMount("/mcp", mcpHTTP),
		api.WithWebSocket(mcpHTTP.WebSocket()),
		api.WithUI(ui.Handler("/ui/")),
		api.WithProfiles(mgr),
		api.WithMaxProfileBytes(cfg.ProfileMaxBytes),
	}
	// A person's control of a session and its live view.
	liveView := liveview.New(liveview.Config{Sessions: mgr, Attach: liveview.Attach, Log: log})
	apiOpts = append(apiOpts, api.WithHuman(mgr), api.WithLiveView(liveView))
	if cfg.MinFreeMemory > 0 {
		apiOpts = append(apiOpts, api.WithHealthCheck("host_memory", upstream.HostMemoryCheck(cfg.MinFreeMemory, upstream.AvailableMemory)))
	}
	if pool != nil {
		apiOpts = append(apiOpts,
			api.WithNodes(nodes.Service{Pool: pool, Mover: mgr}),
			api.WithHealthNodes(pool.List))
	}
	if cfg.ClientTokensFile != "" {
		grants, names := apiTokens(clientTokens)
		apiOpts = append(apiOpts, api.WithClientTokens(grants...))
		log.Info("client tokens open /mcp, /ws and the MCP client calls, never the operator's views", "file", cfg.ClientTokensFile, "names", names)
	}
	handler := api.New(mgr, reader, apiOpts...)
	if cfg.ClientTokensFile != "" {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		done := make(chan struct{})
		defer close(done)
		go reloadClientTokens(done, hup, cfg, handler, log)
	}

	silent := newSilentConns()
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ConnState: silent.track}
	// Open GET streams on /mcp would hold Shutdown for its whole budget;
	// ending the MCP sessions (browser sessions kept) releases them, and
	// closes the connections of /ws, which Shutdown does not see.
	srv.RegisterOnShutdown(func() { _ = mcpHTTP.Close(context.Background()) })
	srv.RegisterOnShutdown(silent.closeAll)
	// The live view's sockets are hijacked connections too.
	srv.RegisterOnShutdown(liveView.Close)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("proxy-server listening", "addr", ln.Addr().String(), "database", cfg.DatabasePath, "version", buildinfo.Version)
	if opts.OnListen != nil {
		opts.OnListen(ln.Addr().String())
	}

	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("http server stopped: %w", err)
	}
	log.Info("shutting down")
	stopBy = time.Now().Add(ShutdownBudget)
	sctx, cancel := context.WithDeadline(context.Background(), stopBy.Add(-session.ShutdownStopReserve))
	defer cancel()
	// Stop accepting first; calls in flight get the budget less what
	// stopping the workers needs to finish, then the deferred Shutdown/Close calls stop
	// workers (by stopBy), browser and database.
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("http shutdown", "err", err)
	}
	return nil
}

// OpenStore opens the database of cfg with its state key: PROXY_STATE_KEY,
// else the key file beside the database. Every command that opens the
// database (serve, migrate, profile) opens it here, so all of them seal and
// open with the same key.
func OpenStore(ctx context.Context, cfg config.Config) (*store.DB, error) {
	key, err := cfg.StateKeyBytes()
	if err != nil {
		return nil, err
	}
	var opts []store.Option
	if key != nil {
		opts = append(opts, store.WithStateKey(key))
	}
	db, err := store.Open(ctx, cfg.DatabasePath, opts...)
	if err != nil {
		return nil, fmt.Errorf("opening database %s: %w", cfg.DatabasePath, err)
	}
	return db, nil
}

// keySource names where the state key comes from, for the log: never the
// key itself.
func keySource(cfg config.Config) string {
	if cfg.StateKey != "" {
		return "PROXY_STATE_KEY"
	}
	return store.KeyFilePath(cfg.DatabasePath)
}

// apiTokens are the client tokens as the API takes them, and their names.
func apiTokens(toks []config.ClientToken) ([]api.ClientToken, []string) {
	grants := make([]api.ClientToken, len(toks))
	names := make([]string, len(toks))
	for i, t := range toks {
		grants[i], names[i] = api.ClientToken{Name: t.Name, Token: t.Token}, t.Name
	}
	return grants, names
}

// reloadClientTokens reads PROXY_CLIENT_TOKENS_FILE again on each SIGHUP,
// until done. A file that fails to load changes nothing: the tokens served
// stay, and the error (naming the line, never a token) is logged.
func reloadClientTokens(done <-chan struct{}, hup <-chan os.Signal, cfg config.Config, h *api.Server, log *slog.Logger) {
	for {
		select {
		case <-done:
			return
		case <-hup:
		}
		toks, err := cfg.ClientTokens()
		if err != nil {
			log.Error("reloading the client tokens failed; the tokens served stay", "err", err)
			continue
		}
		grants, names := apiTokens(toks)
		h.SetClientTokens(grants...)
		log.Info("client tokens reloaded", "file", cfg.ClientTokensFile, "names", names)
	}
}

// firstWorkerLimit bounds the start of the first worker: a command that
// never answers MCP must not hold serve forever.
const firstWorkerLimit = time.Minute

// startFirstWorker starts one worker with command, and returns the spawner
// that hands it out first. A remote browser that does not answer yet is no
// reason not to serve: the server starts degraded (/health says why) and
// recovers when the browser comes; workers that cannot start are.
func startFirstWorker(ctx context.Context, host *upstream.Host, command []string, remote bool, log *slog.Logger) (*spawner, error) {
	sctx, cancel := context.WithTimeout(ctx, firstWorkerLimit)
	defer cancel()
	w, err := host.SpawnSession(sctx)
	switch {
	case err != nil && remote && (errors.Is(err, upstream.ErrNoBrowser) || proxy.ErrorCode(err) == proxy.EUNAVAILABLE):
		log.Warn("the remote browser (PROXY_BROWSER_CDP_ENDPOINT or PROXY_BROWSER_ENDPOINTS) does not answer; serving degraded until it does", "err", err)
		return &spawner{host: host, log: log}, nil
	case err != nil:
		return nil, fmt.Errorf("the @playwright/mcp worker command %q (PROXY_PLAYWRIGHT_MCP_COMMAND) did not start: %w", strings.Join(command, " "), err)
	}
	return &spawner{host: host, log: log, first: w}, nil
}

// workerCommand is PROXY_PLAYWRIGHT_MCP_COMMAND split on spaces, or node on
// the pinned package in node_modules.
//
// Workers run in a directory of their own, so a relative path in the
// command would be looked up there and never found: each one that names a
// file in the project directory (else in the working directory) is made
// absolute, as the default command's path is.
func workerCommand(cfg config.Config, root string) ([]string, error) {
	dir, candidates := projectDir(root)
	if cfg.PlaywrightMCPCommand != "" {
		bases := []string{}
		if dir != "" {
			bases = append(bases, dir)
		}
		if wd, err := os.Getwd(); err == nil {
			bases = append(bases, wd)
		}
		return absolutePaths(strings.Fields(cfg.PlaywrightMCPCommand), bases), nil
	}
	if dir == "" {
		return nil, fmt.Errorf("@playwright/mcp not found in node_modules of %v: run `npm ci` in the project directory or set PROXY_PLAYWRIGHT_MCP_COMMAND", candidates)
	}
	return upstream.DefaultCommand(dir), nil
}

// projectDir is the directory whose node_modules holds the pinned
// @playwright/mcp, "" when none is found; candidates are where it looked.
func projectDir(root string) (dir string, candidates []string) {
	for _, r := range []string{root, buildinfo.ProjectRoot} {
		if r != "" {
			candidates = append(candidates, r)
		}
	}
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		candidates = append(candidates, dir, filepath.Dir(dir))
	}
	if wd, err := os.Getwd(); err == nil {
		candidates = append(candidates, wd)
	}
	// Walk up from each candidate: binaries run from bin/ or a subdirectory
	// (tests run in their package directory) still find the project's modules.
	for _, start := range candidates {
		for dir := start; ; dir = filepath.Dir(dir) {
			cmd := upstream.DefaultCommand(dir)
			if _, err := os.Stat(cmd[len(cmd)-1]); err == nil {
				return dir, candidates
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return "", candidates
}

// absolutePaths returns command with each relative path that names an
// existing file below one of bases (the first that has it) made absolute.
// Flags, and anything that is no file there ("-e", a package name, inline
// code), are left as they are; so is a program name without a slash, which
// is looked up in PATH.
func absolutePaths(command, bases []string) []string {
	out := slices.Clone(command)
	for i, f := range out {
		if f == "" || strings.HasPrefix(f, "-") || filepath.IsAbs(f) {
			continue
		}
		if i == 0 && !strings.ContainsRune(f, filepath.Separator) {
			continue
		}
		for _, base := range bases {
			p := filepath.Join(base, f)
			if _, err := os.Stat(p); err == nil {
				out[i] = p
				break
			}
		}
	}
	return out
}

// changesMax maps PROXY_CHANGES_MAX (0: counts only) onto the manager's
// option, whose zero value is its default.
func changesMax(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// startNodes builds the pool of browser nodes of PROXY_BROWSER_ENDPOINTS
// (nil without any) and probes them once, so that the first worker is
// placed on a node known to answer.
func startNodes(ctx context.Context, cfg config.Config, command []string, log *slog.Logger) (*nodes.Pool, error) {
	eps, err := cfg.Nodes()
	if err != nil || len(eps) == 0 {
		return nil, err
	}
	from, err := upstream.PlaywrightFrom(command)
	if err != nil {
		return nil, fmt.Errorf("PROXY_BROWSER_ENDPOINTS: the workers' Playwright version is checked against each node's: %w", err)
	}
	version, err := upstream.PlaywrightVersion(from)
	if err != nil {
		return nil, fmt.Errorf("PROXY_BROWSER_ENDPOINTS: %w", err)
	}
	pool, err := nodes.New(eps, nodes.Config{
		Prober:       nodes.HTTPProber{Version: version},
		Interval:     cfg.NodeProbeInterval,
		QueueTimeout: cfg.NodeQueueTimeout,
		DownAfter:    cfg.NodeProbeFailures,
		Logger:       log,
	})
	if err != nil {
		return nil, err
	}
	pool.ProbeAll(ctx)
	up := 0
	for _, n := range pool.List() {
		if n.State == proxy.NodeUp {
			up++
		}
	}
	log.Info("browser nodes", "configured", len(eps), "up", up, "playwright", version)
	return pool, nil
}

// liveURL is the address of a session's live view in /ui, from the address
// the server listens on (127.0.0.1 for an unspecified one: the address a
// person on this machine opens).
func liveURL(listen string) func(id string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(host, port) + "/ui/sessions/"
	return func(id string) string { return base + id + "/live" }
}

// reservedAddrs are the addresses of the services sessions must never open
// in their browsers: this server's own (API, /mcp, inspector), a remote
// CDP browser's (its /json lists every session's pages) and the browser
// nodes'. The local browser server has no address a page could use without
// its secret path; the CDP ports of the browsers the host starts are
// reserved as they start (HostConfig.Reserve).
func reservedAddrs(cfg config.Config, listen string) []string {
	out := policy.ReservedAddrs(listen)
	if a := nodes.Addr(cfg.BrowserCDPEndpoint); a != "" {
		out = append(out, a)
	}
	if eps, err := cfg.Nodes(); err == nil {
		for _, e := range eps {
			if a := nodes.Addr(e.URL); a != "" {
				out = append(out, a)
			}
		}
	}
	return out
}

// poolList is pool.List, or nil without a pool.
func poolList(pool *nodes.Pool) func() []proxy.Node {
	if pool == nil {
		return nil
	}
	return pool.List
}

// The store keeps the manager's login profiles: the manager finds them by
// asking its store, so a mismatch would only show at run time.
var _ session.ProfileStore = (*store.DB)(nil)
