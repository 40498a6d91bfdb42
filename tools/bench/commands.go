package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/tools/bench/internal/bench"
)

// common are the flags every subcommand has.
type common struct {
	server     string
	root       string
	jsonPath   string
	verbose    bool
	keep       bool
	reqTimeout time.Duration
	env        envFlag
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.server, "server", "bin/proxy-server", "proxy-server binary to start (build it with `make build`)")
	fs.StringVar(&c.root, "root", ".", "project root: the server's working directory, where node_modules is")
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this `file`")
	fs.BoolVar(&c.verbose, "v", false, "debug progress output")
	fs.BoolVar(&c.keep, "keep", false, "keep the server's temp directory (database, log)")
	fs.DurationVar(&c.reqTimeout, "request-timeout", 3*time.Minute, "bound on every HTTP request to proxy-server")
	fs.Var(&c.env, "env", "extra `KEY=VALUE` for proxy-server (repeatable), e.g. -env PROXY_CALL_TIMEOUT=60s")
}

// envFlag collects repeated -env KEY=VALUE.
type envFlag map[string]string

func (e *envFlag) String() string { return fmt.Sprint(map[string]string(*e)) }

func (e *envFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	if *e == nil {
		*e = envFlag{}
	}
	(*e)[k] = v
	return nil
}

// prepareFunc turns a subcommand's parsed flags into its run against a
// started proxy-server. It is called once with a zero ServerConfig before
// anything starts, so that bad flags are refused at once, then with the
// server's.
type prepareFunc func(s bench.ServerConfig) (runFunc, error)

type runFunc func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) error

// setupFunc registers a subcommand's own flags beside the common ones.
type setupFunc func(fs *flag.FlagSet, c *common) prepareFunc

func (m *Main) flagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("bench "+name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	return fs
}

// serverCommand is every subcommand that measures a proxy-server.
func (m *Main) serverCommand(ctx context.Context, name string, args []string, setup setupFunc) error {
	fs := m.flagSet(name)
	var c common
	c.register(fs)
	prepare := setup(fs, &c)
	if err := parse(fs, args); err != nil {
		return err
	}
	if _, err := prepare(bench.ServerConfig{}); err != nil {
		return err
	}
	return c.run(ctx, m, append([]string{name}, args...), prepare)
}

func newLogger(w io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// run is what every subcommand does around its scenarios: prepare, start the
// test site, describe the machine, run, print, write JSON. The report is
// printed even when a scenario fails half-way.
func (c *common) run(ctx context.Context, m *Main, args []string, prepare prepareFunc) error {
	log := newLogger(m.Stderr, c.verbose)
	if err := bench.Prepare(); err != nil {
		return err
	}
	root, err := filepath.Abs(c.root)
	if err != nil {
		return fmt.Errorf("project root: %w", err)
	}
	server := absUnder(root, c.server)
	if _, err := os.Stat(server); err != nil {
		return fmt.Errorf("%s: %w (run `make build` first)", server, err)
	}
	site, err := bench.StartSite()
	if err != nil {
		return err
	}
	defer site.Close()
	log.Info("test site", "url", site.URL)

	rep := &bench.Report{Started: time.Now().UTC(), Command: append([]string{"bench"}, args...)}
	rep.Machine = bench.DescribeMachine(ctx, root, server)
	run, runErr := prepare(bench.ServerConfig{Binary: server, Dir: root, Env: map[string]string(c.env), KeepFiles: c.keep})
	if runErr == nil {
		runErr = run(ctx, log, site, rep)
	}
	if runErr != nil && ctx.Err() != nil {
		runErr = fmt.Errorf("interrupted, the results above are partial: %w", runErr)
	}
	if err := finish(m, log, rep, c.jsonPath, runErr); err != nil {
		return err
	}
	return leakErr(rep)
}

// finish prints the report and writes its JSON; the run's error comes
// first.
func finish(m *Main, log *slog.Logger, rep *bench.Report, jsonPath string, runErr error) error {
	rep.Finished = time.Now().UTC()
	if runErr != nil {
		rep.Error = runErr.Error()
	}
	rep.WriteText(m.Stdout)
	if jsonPath != "" {
		if err := rep.WriteJSON(jsonPath); err != nil {
			return errors.Join(runErr, err)
		}
		log.Info("results written", "json", jsonPath)
	}
	return runErr
}

// leakErr fails the run when a proxy-server left a process behind or had to
// be killed.
func leakErr(rep *bench.Report) error {
	var reports []bench.StopReport
	if rep.Sessions != nil {
		for _, r := range rep.Sessions.Runs {
			reports = append(reports, r.Cleanup)
		}
	}
	if rep.Concurrency != nil {
		reports = append(reports, rep.Concurrency.Cleanup)
	}
	if rep.Idle != nil {
		reports = append(reports, rep.Idle.Cleanup)
	}
	if rep.Soak != nil {
		reports = append(reports, rep.Soak.Cleanup)
	}
	for _, r := range reports {
		if !r.Clean() {
			return fmt.Errorf("unclean proxy-server stop: %s", r.Summary())
		}
	}
	return nil
}

func sessionsCommand(fs *flag.FlagSet, c *common) prepareFunc {
	var f sessionsFlags
	f.register(fs)
	return func(s bench.ServerConfig) (runFunc, error) {
		cfg, err := f.config(s, c.reqTimeout)
		return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) (err error) {
			rep.Sessions, err = bench.RunSessions(ctx, log, site, cfg)
			return err
		}, err
	}
}

func concurrencyCommand(fs *flag.FlagSet, c *common) prepareFunc {
	var f concurrencyFlags
	f.register(fs)
	return func(s bench.ServerConfig) (runFunc, error) {
		cfg, err := f.config(s, c.reqTimeout)
		return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) (err error) {
			rep.Concurrency, err = bench.RunConcurrency(ctx, log, site, cfg)
			return err
		}, err
	}
}

// nodesCommand is the concurrency load on the server's own browser and on
// browser nodes.
func nodesCommand(fs *flag.FlagSet, c *common) prepareFunc {
	var f concurrencyFlags
	f.register(fs)
	counts := fs.String("counts", "0,1,2,3", "numbers of browser nodes to compare (0: the server's own browser)")
	for name, def := range map[string]string{"levels": "6", "duration": "30s"} {
		_ = fs.Set(name, def)
		fs.Lookup(name).DefValue = def
	}
	return func(s bench.ServerConfig) (runFunc, error) {
		ns, err := intList(*counts)
		if err != nil {
			return nil, fmt.Errorf("-counts: %w", err)
		}
		cfg, err := f.config(s, c.reqTimeout)
		return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) (err error) {
			rep.Nodes, err = bench.RunNodes(ctx, log, site, bench.NodesConfig{Concurrency: cfg, Counts: ns})
			return err
		}, err
	}
}

// allCommand is sessions, concurrency, overhead, bytes and tokens.
func allCommand(fs *flag.FlagSet, c *common) prepareFunc {
	var (
		sf sessionsFlags
		cf concurrencyFlags
	)
	sf.register(fs)
	cf.register(fs)
	ocfg := bench.OverheadConfig{StdioCommon: bench.StdioCommon{FlagPrefix: "overhead-"}}
	bcfg := bench.BytesConfig{StdioCommon: bench.StdioCommon{FlagPrefix: "bytes-"}}
	tcfg := bench.TokensConfig{StdioCommon: bench.StdioCommon{FlagPrefix: "tokens-"}}
	ocfg.Flags(fs)
	bcfg.Flags(fs)
	tcfg.Flags(fs)
	return func(s bench.ServerConfig) (runFunc, error) {
		scfg, err1 := sf.config(s, c.reqTimeout)
		ccfg, err2 := cf.config(s, c.reqTimeout)
		ocfg.Server, bcfg.Server, tcfg.Server = s, s, s
		ocfg.CallTimeout, bcfg.CallTimeout, tcfg.CallTimeout = c.reqTimeout, c.reqTimeout, c.reqTimeout
		if err := errors.Join(err1, err2, ocfg.Check(), bcfg.Check(), tcfg.Check()); err != nil {
			return nil, err
		}
		return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) (err error) {
			if rep.Sessions, err = bench.RunSessions(ctx, log, site, scfg); err != nil {
				return err
			}
			if rep.Concurrency, err = bench.RunConcurrency(ctx, log, site, ccfg); err != nil {
				return err
			}
			// Cheap next to the two above (about a minute, half a minute
			// and a minute).
			if rep.Overhead, err = bench.RunOverhead(ctx, log, site, ocfg); err != nil {
				return err
			}
			if rep.Bytes, err = bench.RunBytes(ctx, log, site, bcfg); err != nil {
				return err
			}
			rep.Tokens, err = bench.RunTokens(ctx, log, site, tcfg)
			return err
		}, nil
	}
}

// idleCommand: is one session slower while others sit idle?
func idleCommand(fs *flag.FlagSet, c *common) prepareFunc {
	levels := fs.String("idle", "0,10,25,50", "numbers of idle sessions")
	navs := fs.Int("navigations", 20, "timed navigations (and snapshots) of the active session per level")
	warm := fs.Int("warm-pool", 1, "PROXY_WARM_POOL")
	return func(s bench.ServerConfig) (runFunc, error) {
		ls, err := intList(*levels)
		if err != nil {
			return nil, fmt.Errorf("-idle: %w", err)
		}
		for _, l := range ls {
			if l > 200 {
				return nil, fmt.Errorf("-idle: %d: want at most 200", l)
			}
		}
		if *navs < 1 || *navs > 1000 {
			return nil, fmt.Errorf("-navigations %d: want 1..1000", *navs)
		}
		return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) (err error) {
			rep.Idle, err = bench.RunIdle(ctx, log, site, bench.IdleConfig{Server: s, Levels: ls, Navigations: *navs, WarmPool: *warm, RequestTimeout: c.reqTimeout})
			return err
		}, nil
	}
}

// soakCommand: sessions with mixed traffic and idle suspensions for a long
// time; is there an upward trend in memory or file descriptors?
func soakCommand(fs *flag.FlagSet, c *common) prepareFunc {
	var cfg bench.SoakConfig
	fs.IntVar(&cfg.Sessions, "sessions", 10, "sessions running traffic")
	fs.DurationVar(&cfg.Duration, "duration", 30*time.Minute, "measured time after the warm-up")
	fs.DurationVar(&cfg.Interval, "interval", time.Minute, "time between samples")
	fs.IntVar(&cfg.Readings, "readings", 6, "readings averaged into each sample after the first, spread over the interval before it (1: one instantaneous reading)")
	fs.DurationVar(&cfg.WarmUp, "warmup", time.Minute, "traffic before the first sample (which the trend leaves out)")
	fs.DurationVar(&cfg.IdleTimeout, "idle", 20*time.Second, "PROXY_SESSION_IDLE_TIMEOUT")
	fs.IntVar(&cfg.MaxSessions, "max-sessions", 0, "PROXY_MAX_SESSIONS (at least max(10, -sessions))")
	fs.IntVar(&cfg.WarmPool, "warm-pool", 1, "PROXY_WARM_POOL")
	fs.Float64Var(&cfg.LongPauseProb, "long-pause", 0.2, "probability that the pause after a round is longer than the idle timeout (the session is suspended, then resumed)")
	pages := fs.String("pages", "catalogue,form,table", "pages the sessions navigate to, at random")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the think times")
	return func(s bench.ServerConfig) (runFunc, error) {
		switch {
		case cfg.Sessions < 1 || cfg.Sessions > 100:
			return nil, fmt.Errorf("-sessions %d: want 1..100", cfg.Sessions)
		case cfg.Interval <= 0 || cfg.Duration < cfg.Interval || cfg.Duration > 48*time.Hour:
			return nil, fmt.Errorf("-duration %s, -interval %s: want 0 < interval ≤ duration ≤ 48h", cfg.Duration, cfg.Interval)
		case cfg.Readings < 1 || cfg.Readings > 60 || cfg.Interval/time.Duration(cfg.Readings) < time.Second:
			return nil, fmt.Errorf("-readings %d: want 1..60 and readings at least 1s apart (-interval %s)", cfg.Readings, cfg.Interval)
		case cfg.IdleTimeout < time.Second:
			return nil, fmt.Errorf("-idle %s: want at least 1s", cfg.IdleTimeout)
		case cfg.LongPauseProb < 0 || cfg.LongPauseProb > 1:
			return nil, fmt.Errorf("-long-pause %v: want 0..1", cfg.LongPauseProb)
		}
		ps, err := pageList(*pages)
		if err != nil {
			return nil, fmt.Errorf("-pages: %w", err)
		}
		run := cfg
		run.Pages, run.Server, run.RequestTimeout = ps, s, c.reqTimeout
		return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) (err error) {
			rep.Soak, err = bench.RunSoak(ctx, log, site, run)
			return err
		}, nil
	}
}

// liveCommand: what one viewer of a session's live view gets (frames/s,
// bytes/s, change-to-frame) and costs (CPU).
func liveCommand(fs *flag.FlagSet, c *common) prepareFunc {
	window := fs.Duration("window", 10*time.Second, "how long each viewer watches the still and the busy page")
	changes := fs.Int("changes", 20, "colour flips timed for change-to-frame")
	return func(s bench.ServerConfig) (runFunc, error) {
		if *window < time.Second || *window > 10*time.Minute {
			return nil, fmt.Errorf("-window %s: want 1s..10m", *window)
		}
		if *changes < 1 || *changes > 600 {
			return nil, fmt.Errorf("-changes %d: want 1..600", *changes)
		}
		return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) (err error) {
			rep.Live, err = bench.RunLive(ctx, log, site, bench.LiveConfig{Server: s, Window: *window, Changes: *changes, RequestTimeout: c.reqTimeout})
			return err
		}, nil
	}
}

// stdioScenario is the config of a scenario with stdio children, which
// registers and checks its own flags.
type stdioScenario interface {
	Flags(*flag.FlagSet)
	Check() error
	Common() *bench.StdioCommon
}

// stdioCommand is overhead (what the proxy path adds to a call), bytes
// (bytes to the model for a scripted task) and tokens (what a scripted
// agent's tool results weigh on a task suite).
func stdioCommand[C any, P interface {
	*C
	stdioScenario
}](run func(context.Context, *slog.Logger, *bench.Site, *bench.Report, C) error) setupFunc {
	return func(fs *flag.FlagSet, c *common) prepareFunc {
		var cfg C
		P(&cfg).Flags(fs)
		return func(s bench.ServerConfig) (runFunc, error) {
			P(&cfg).Common().Server, P(&cfg).Common().CallTimeout = s, c.reqTimeout
			return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) error {
				return run(ctx, log, site, rep, cfg)
			}, P(&cfg).Check()
		}
	}
}

func runOverhead(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report, cfg bench.OverheadConfig) (err error) {
	rep.Overhead, err = bench.RunOverhead(ctx, log, site, cfg)
	return err
}

func runBytes(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report, cfg bench.BytesConfig) (err error) {
	rep.Bytes, err = bench.RunBytes(ctx, log, site, cfg)
	return err
}

func runTokens(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report, cfg bench.TokensConfig) (err error) {
	rep.Tokens, err = bench.RunTokens(ctx, log, site, cfg)
	return err
}

// storeCommand is the SQLite record under load, in process (no
// proxy-server, no browser).
func (m *Main) storeCommand(ctx context.Context, args []string) error {
	fs := m.flagSet("store")
	var cfg bench.StoreConfig
	jsonPath := fs.String("json", "", "also write the results as JSON to this `file`")
	verbose := fs.Bool("v", false, "debug progress output")
	fs.DurationVar(&cfg.Duration, "duration", 20*time.Second, "duration of each ingest run (without readers, then with them)")
	fs.IntVar(&cfg.Writers, "writers", 4, "goroutines recording calls")
	fs.IntVar(&cfg.Readers, "readers", 4, "goroutines querying (get_content with search_for, GetResponse) during the second ingest run")
	fs.IntVar(&cfg.SearchIterations, "n", 200, "get_content search iterations on the large snapshot")
	snapKB := fs.Int("snapshot-kb", 100, "page snapshot size of each ingested call, KiB")
	searchKB := fs.Int("search-kb", 1024, "size of the snapshot searched, KiB")
	fs.StringVar(&cfg.SearchTerm, "term", bench.StoreSearchTerm, "search_for term of the search run (the generated snapshot has it in a handful of lines)")
	fs.StringVar(&cfg.Dir, "dir", "", "directory for the temporary databases (default: the system temp directory)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the databases")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case cfg.Duration <= 0 || cfg.Duration > time.Hour:
		return fmt.Errorf("-duration %s: want (0, 1h]", cfg.Duration)
	case cfg.Writers < 1 || cfg.Writers > 64:
		return fmt.Errorf("-writers %d: want 1..64", cfg.Writers)
	case cfg.Readers < 0 || cfg.Readers > 64:
		return fmt.Errorf("-readers %d: want 0..64", cfg.Readers)
	case cfg.SearchIterations < 1 || cfg.SearchIterations > 100000:
		return fmt.Errorf("-n %d: want 1..100000", cfg.SearchIterations)
	case *snapKB < 1 || *snapKB > 64<<10 || *searchKB < 1 || *searchKB > 64<<10:
		return fmt.Errorf("-snapshot-kb and -search-kb: want 1..65536")
	}
	cfg.SnapshotBytes, cfg.SearchSnapshotBytes = *snapKB<<10, *searchKB<<10
	log := newLogger(m.Stderr, *verbose)
	rep := bench.InProcessReport(ctx, append([]string{"bench", "store"}, args...))
	res, runErr := bench.RunStore(ctx, log, cfg)
	rep.Store = res
	if err := finish(m, log, rep, *jsonPath, runErr); err != nil {
		return err
	}
	for _, r := range res.Ingest {
		if r.ErrorCount > 0 {
			return fmt.Errorf("ingest (%s): %d errors, %d of them SQLITE_BUSY/LOCKED", r.Name, r.ErrorCount, r.Busy)
		}
	}
	return nil
}

// chartCommand writes SVG charts from the JSON of `bench concurrency`,
// `bench soak` and `bench tokens`.
func (m *Main) chartCommand(args []string) error {
	fs := m.flagSet("chart")
	sources := []struct {
		flag   string
		path   *string
		charts func(*bench.Report) ([]bench.Chart, error)
	}{
		{flag: "concurrency", charts: func(r *bench.Report) ([]bench.Chart, error) { return bench.ConcurrencyCharts(r.Concurrency) }},
		{flag: "soak", charts: func(r *bench.Report) ([]bench.Chart, error) { return bench.SoakCharts(r.Soak) }},
		{flag: "tokens", charts: func(r *bench.Report) ([]bench.Chart, error) { return bench.TokensCharts(r.Tokens) }},
	}
	for i := range sources {
		sources[i].path = fs.String(sources[i].flag, "", "JSON `file` written by bench "+sources[i].flag+" -json")
	}
	out := fs.String("out", "docs", "directory the SVG files are written to")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *sources[0].path == "" && *sources[1].path == "" && *sources[2].path == "" {
		return fmt.Errorf("give -concurrency FILE, -soak FILE and/or -tokens FILE")
	}
	var charts []bench.Chart
	for _, src := range sources {
		if *src.path == "" {
			continue
		}
		rep, err := bench.ReadReport(*src.path)
		if err != nil {
			return err
		}
		cs, err := src.charts(rep)
		if err != nil {
			return fmt.Errorf("%s: %w", *src.path, err)
		}
		charts = append(charts, cs...)
	}
	paths, err := bench.WriteCharts(*out, charts)
	for _, p := range paths {
		fmt.Fprintln(m.Stdout, p)
	}
	return err
}

// sessionsFlags are the sessions scenario's flags.
type sessionsFlags struct {
	n          int
	refillWait time.Duration
	navPage    string
	pools      string
	startup    time.Duration
	plain      int
	profile    int
	origins    int
	storage    int
}

func (f *sessionsFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.n, "n", 30, "iterations per measurement")
	fs.DurationVar(&f.refillWait, "refill-wait", 2*time.Second, "untimed sleep before each create so the warm pool can refill")
	fs.StringVar(&f.navPage, "nav-page", "table", "page for the navigation timings: form, table or catalogue")
	fs.StringVar(&f.pools, "warm-pools", "1,0", "PROXY_WARM_POOL values to measure")
	fs.DurationVar(&f.startup, "startup-wait", 5*time.Second, "untimed pause after the server listens, before the first create")
	fs.IntVar(&f.plain, "plain-n", 10, "times a plain @playwright/mcp is started and navigated, as the baseline (0: skip)")
	fs.IntVar(&f.profile, "profile-cookies", 50, "cookies of the login profile whose creates are timed beside plain ones (0: skip)")
	fs.IntVar(&f.origins, "profile-origins", 10, "sites the profile's cookies are spread over")
	fs.IntVar(&f.storage, "profile-storage-origins", 0, "of those sites, how many also hold localStorage in the profile (the browser visits each such origin to fill it)")
}

func (f *sessionsFlags) config(s bench.ServerConfig, reqTimeout time.Duration) (bench.SessionsConfig, error) {
	pools, err := intList(f.pools)
	if err != nil {
		return bench.SessionsConfig{}, fmt.Errorf("-warm-pools: %w", err)
	}
	if f.n <= 0 || f.n > 1000 {
		return bench.SessionsConfig{}, fmt.Errorf("-n %d: want 1..1000", f.n)
	}
	if _, ok := bench.Pages[f.navPage]; !ok {
		return bench.SessionsConfig{}, fmt.Errorf("-nav-page %q: want form, table or catalogue", f.navPage)
	}
	return bench.SessionsConfig{Server: s, Iterations: f.n, RefillWait: f.refillWait, WarmPools: pools, NavPage: f.navPage, RequestTimeout: reqTimeout, StartupWait: f.startup,
		PlainStarts: f.plain, PlainRoot: s.Dir, ProfileCookies: f.profile, ProfileOrigins: f.origins, ProfileStorageOrigins: f.storage}, nil
}

// concurrencyFlags are the concurrency scenario's flags.
type concurrencyFlags struct {
	levels      string
	duration    time.Duration
	pages       string
	maxIter     int
	warmPool    int
	maxSessions int
	minAvailMB  int64
	createConc  int
}

func (f *concurrencyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.levels, "levels", "1,10,25,50,100", "numbers of concurrent sessions")
	fs.DurationVar(&f.duration, "duration", 60*time.Second, "load duration per level: no call starts after it (the calls in flight finish; the report gives the measured window)")
	fs.StringVar(&f.pages, "pages", "catalogue,form", "pages the sessions navigate to, in turn: `list` of form, table, catalogue (catalogue,form is the memory scenario on the 1,500-item page; form alone is a light page)")
	fs.IntVar(&f.maxIter, "max-iterations", 10000, "bound on navigate/snapshot/click rounds per session per level")
	fs.IntVar(&f.warmPool, "warm-pool", 1, "PROXY_WARM_POOL")
	fs.IntVar(&f.maxSessions, "max-sessions", 0, "PROXY_MAX_SESSIONS (0: the largest level)")
	fs.IntVar(&f.createConc, "create-concurrency", 10, "sessions created at once at the start of a level (each starts a worker process)")
	fs.Int64Var(&f.minAvailMB, "min-available-mb", 2048, "memory guard: stop a level's load early when MemAvailable falls below this (0: off)")
}

func (f *concurrencyFlags) config(s bench.ServerConfig, reqTimeout time.Duration) (bench.ConcurrencyConfig, error) {
	levels, err := intList(f.levels)
	if err != nil {
		return bench.ConcurrencyConfig{}, fmt.Errorf("-levels: %w", err)
	}
	for _, l := range levels {
		if l < 1 || l > 500 {
			return bench.ConcurrencyConfig{}, fmt.Errorf("-levels: %d: want 1..500", l)
		}
	}
	if f.duration <= 0 || f.duration > time.Hour {
		return bench.ConcurrencyConfig{}, fmt.Errorf("-duration %s: want (0, 1h]", f.duration)
	}
	pages, err := pageList(f.pages)
	if err != nil {
		return bench.ConcurrencyConfig{}, fmt.Errorf("-pages: %w", err)
	}
	return bench.ConcurrencyConfig{
		Server: s, Levels: levels, Duration: f.duration, Pages: pages,
		MaxIterations: f.maxIter, WarmPool: f.warmPool, MaxSessions: f.maxSessions, RequestTimeout: reqTimeout,
		MinAvailableKB: f.minAvailMB * 1024, CreateConcurrency: f.createConc,
	}, nil
}

// pageList parses a comma-separated list of page names (spaces allowed).
func pageList(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		p := strings.TrimSpace(part)
		if _, ok := bench.Pages[p]; !ok {
			return nil, fmt.Errorf("%q: want form, table or catalogue", p)
		}
		out = append(out, p)
	}
	return out, nil
}

func intList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a list of non-negative integers", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s takes no arguments, got %q", fs.Name(), fs.Args())
	}
	return nil
}

// absUnder resolves a relative path against root, as -server is.
func absUnder(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}
