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
	var f bench.SessionsConfig
	f.Flags(fs)
	return func(s bench.ServerConfig) (runFunc, error) {
		cfg, err := f, f.Check()
		cfg.Server, cfg.RequestTimeout = s, c.reqTimeout
		return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) (err error) {
			rep.Sessions, err = bench.RunSessions(ctx, log, site, cfg)
			return err
		}, err
	}
}

func concurrencyCommand(fs *flag.FlagSet, c *common) prepareFunc {
	var f bench.ConcurrencyConfig
	f.Flags(fs)
	return func(s bench.ServerConfig) (runFunc, error) {
		cfg, err := f, f.Check()
		cfg.Server, cfg.RequestTimeout = s, c.reqTimeout
		return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) (err error) {
			rep.Concurrency, err = bench.RunConcurrency(ctx, log, site, cfg)
			return err
		}, err
	}
}

// nodesCommand is the concurrency load on the server's own browser and on
// browser nodes.
func nodesCommand(fs *flag.FlagSet, c *common) prepareFunc {
	var f bench.ConcurrencyConfig
	f.Flags(fs)
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
		cfg, err := f, f.Check()
		cfg.Server, cfg.RequestTimeout = s, c.reqTimeout
		return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) (err error) {
			rep.Nodes, err = bench.RunNodes(ctx, log, site, bench.NodesConfig{Concurrency: cfg, Counts: ns})
			return err
		}, err
	}
}

// allCommand is sessions, concurrency, overhead, bytes and tokens.
func allCommand(fs *flag.FlagSet, c *common) prepareFunc {
	var (
		sf bench.SessionsConfig
		cf bench.ConcurrencyConfig
		of overheadFlags
		bf bytesFlags
		tf tokensFlags
	)
	sf.Flags(fs)
	cf.Flags(fs)
	bridge := registerBridge(fs)
	of.register(fs, "overhead-")
	bf.register(fs, "bytes-")
	tf.register(fs, "tokens-")
	return func(s bench.ServerConfig) (runFunc, error) {
		scfg, err1 := sf, sf.Check()
		ccfg, err2 := cf, cf.Check()
		scfg.Server, scfg.RequestTimeout, ccfg.Server, ccfg.RequestTimeout = s, c.reqTimeout, s, c.reqTimeout
		ocfg, err3 := of.config(s, *bridge, c.reqTimeout)
		bcfg, err4 := bf.config(s, *bridge, c.reqTimeout)
		tcfg, err5 := tf.config(s, *bridge, c.reqTimeout)
		for _, err := range []error{err1, err2, err3, err4, err5} {
			if err != nil {
				return nil, err
			}
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
			if err := runOverhead(ctx, log, site, rep, ocfg); err != nil {
				return err
			}
			if err := runBytes(ctx, log, site, rep, bcfg); err != nil {
				return err
			}
			return runTokens(ctx, log, site, rep, tcfg)
		}, nil
	}
}

// scenario is a subcommand whose config registers its own flags.
func scenario[C any, P interface {
	*C
	Flags(*flag.FlagSet)
	Check() error
}](set func(cfg *C, s bench.ServerConfig, reqTimeout time.Duration), run func(context.Context, *slog.Logger, *bench.Site, C, *bench.Report) error) setupFunc {
	return func(fs *flag.FlagSet, c *common) prepareFunc {
		var cfg C
		P(&cfg).Flags(fs)
		return func(s bench.ServerConfig) (runFunc, error) {
			set(&cfg, s, c.reqTimeout)
			return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) error {
				return run(ctx, log, site, cfg, rep)
			}, P(&cfg).Check()
		}
	}
}

var (
	idleCommand = scenario(func(cfg *bench.IdleConfig, s bench.ServerConfig, t time.Duration) {
		cfg.Server, cfg.RequestTimeout = s, t
	},
		func(ctx context.Context, log *slog.Logger, site *bench.Site, cfg bench.IdleConfig, rep *bench.Report) (err error) {
			rep.Idle, err = bench.RunIdle(ctx, log, site, cfg)
			return err
		})
	soakCommand = scenario(func(cfg *bench.SoakConfig, s bench.ServerConfig, t time.Duration) {
		cfg.Server, cfg.RequestTimeout = s, t
	},
		func(ctx context.Context, log *slog.Logger, site *bench.Site, cfg bench.SoakConfig, rep *bench.Report) (err error) {
			rep.Soak, err = bench.RunSoak(ctx, log, site, cfg)
			return err
		})
	liveCommand = scenario(func(cfg *bench.LiveConfig, s bench.ServerConfig, t time.Duration) {
		cfg.Server, cfg.RequestTimeout = s, t
	},
		func(ctx context.Context, log *slog.Logger, site *bench.Site, cfg bench.LiveConfig, rep *bench.Report) (err error) {
			rep.Live, err = bench.RunLive(ctx, log, site, cfg)
			return err
		})
)

// stdioFlags are the flags of a scenario that compares plain
// @playwright/mcp with the proxy through mcp-bridge.
type stdioFlags[C any] interface {
	register(fs *flag.FlagSet, prefix string)
	config(s bench.ServerConfig, bridge string, callTimeout time.Duration) (C, error)
}

// stdioCommand is overhead (what the proxy path adds to a call), bytes
// (bytes to the model for a scripted task) and tokens (what a scripted
// agent's tool results weigh on a task suite).
func stdioCommand[C any](f stdioFlags[C], run func(context.Context, *slog.Logger, *bench.Site, *bench.Report, C) error) setupFunc {
	return func(fs *flag.FlagSet, c *common) prepareFunc {
		bridge := registerBridge(fs)
		f.register(fs, "")
		return func(s bench.ServerConfig) (runFunc, error) {
			cfg, err := f.config(s, *bridge, c.reqTimeout)
			return func(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report) error {
				return run(ctx, log, site, rep, cfg)
			}, err
		}
	}
}

// runOverhead, runBytes and runTokens run a scenario with stdio children
// into rep; a child left behind fails it.
func runOverhead(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report, cfg bench.OverheadConfig) error {
	res, err := bench.RunOverhead(ctx, log, site, cfg)
	if rep.Overhead = res; res != nil {
		err = errors.Join(err, stdioLeakErr(res.Cleanup, res.Stops))
	}
	return err
}

func runBytes(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report, cfg bench.BytesConfig) error {
	res, err := bench.RunBytes(ctx, log, site, cfg)
	if rep.Bytes = res; res != nil {
		err = errors.Join(err, stdioLeakErr(res.Cleanup, res.Stops))
	}
	return err
}

func runTokens(ctx context.Context, log *slog.Logger, site *bench.Site, rep *bench.Report, cfg bench.TokensConfig) error {
	res, err := bench.RunTokens(ctx, log, site, cfg)
	if rep.Tokens = res; res != nil {
		err = errors.Join(err, stdioLeakErr(res.Cleanup, res.Stops))
	}
	return err
}

// storeCommand is the SQLite record under load, in process (no
// proxy-server, no browser).
func (m *Main) storeCommand(ctx context.Context, args []string) error {
	fs := m.flagSet("store")
	var cfg bench.StoreConfig
	jsonPath := fs.String("json", "", "also write the results as JSON to this `file`")
	verbose := fs.Bool("v", false, "debug progress output")
	cfg.Flags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := cfg.Check(); err != nil {
		return err
	}
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

// overheadFlags are the overhead scenario's flags; prefix keeps them apart
// from other scenarios' flags in `bench all`.
type overheadFlags struct {
	n, warmup, settle  int
	page, otherBridge  string
	strict, hop, relay bool
	direct             bool
}

func (f *overheadFlags) register(fs *flag.FlagSet, prefix string) {
	fs.IntVar(&f.n, prefix+"n", 200, "overhead: timed A/B pairs per call kind (browser_evaluate, browser_snapshot)")
	fs.IntVar(&f.warmup, prefix+"warmup", 20, "overhead: untimed A/B rounds before the timed ones")
	fs.StringVar(&f.page, prefix+"page", "table", "overhead: page both sides sit on: form, table or catalogue")
	fs.IntVar(&f.settle, prefix+"timeout-settle", 0, "overhead: @playwright/mcp --timeout-settle in ms on both sides (-1: upstream's default, 500 ms)")
	fs.BoolVar(&f.strict, prefix+"strict-order", false, "overhead: A before B in every pair (default: the order flips every round, AB, BA, …)")
	fs.BoolVar(&f.hop, prefix+"hop", true, "overhead: also a side C, plain @playwright/mcp on a browser server launched like the proxy's shared browser, splitting B − A into the shared browser's hop and the proxy's own part")
	fs.BoolVar(&f.direct, prefix+"http", false, "overhead: also a side F, the same client straight to proxy-server's Streamable HTTP endpoint (/mcp) with no mcp-bridge, splitting B − A into what a client that speaks HTTP pays and what the bridge adds")
	fs.StringVar(&f.otherBridge, prefix+"other-bridge", "", "overhead: also a side E, the proxy path through this other mcp-bridge `binary` on the same server, compared with B call by call in the same rounds")
	fs.BoolVar(&f.relay, prefix+"relay", true, "overhead: with -hop, also a side D, side C's upstream behind two minimal Go relays (`bench relay`), splitting the proxy's own part into the floor of such a path and the proxy's work above it")
}

func (f *overheadFlags) config(s bench.ServerConfig, bridge string, callTimeout time.Duration) (bench.OverheadConfig, error) {
	switch {
	case f.n < 1 || f.n > 100000:
		return bench.OverheadConfig{}, fmt.Errorf("-n %d: want 1..100000", f.n)
	case f.warmup < 0 || f.warmup > 10000:
		return bench.OverheadConfig{}, fmt.Errorf("-warmup %d: want 0..10000", f.warmup)
	case f.settle < -1 || f.settle > 60000:
		return bench.OverheadConfig{}, fmt.Errorf("-timeout-settle %d: want -1..60000", f.settle)
	}
	if _, ok := bench.Pages[f.page]; !ok {
		return bench.OverheadConfig{}, fmt.Errorf("-page %q: want form, table or catalogue", f.page)
	}
	var other string
	if f.otherBridge != "" {
		other = absUnder(s.Dir, f.otherBridge)
		if _, err := os.Stat(other); err != nil {
			return bench.OverheadConfig{}, fmt.Errorf("-other-bridge: %w", err)
		}
	}
	var relay []string
	if f.hop && f.relay {
		self, err := os.Executable()
		if err != nil {
			return bench.OverheadConfig{}, fmt.Errorf("-relay: this program's path: %w", err)
		}
		relay = []string{self, "relay", "--"}
	}
	return bench.OverheadConfig{Server: s, Root: s.Dir, Bridge: absUnder(s.Dir, bridge), Iterations: f.n, Warmup: f.warmup,
		Page: f.page, SettleMS: f.settle, CallTimeout: callTimeout, StrictOrder: f.strict, Hop: f.hop, Relay: relay, OtherBridge: other, Direct: f.direct}, nil
}

// bytesFlags are the bytes scenario's flags.
type bytesFlags struct {
	item int
	find bool
}

func (f *bytesFlags) register(fs *flag.FlagSet, prefix string) {
	fs.IntVar(&f.item, prefix+"item", 742, "bytes: catalogue item whose button the task clicks")
	fs.BoolVar(&f.find, prefix+"find", true, "bytes: also run the plain side with upstream's browser_find instead of browser_snapshot on the catalogue")
}

func (f *bytesFlags) config(s bench.ServerConfig, bridge string, callTimeout time.Duration) (bench.BytesConfig, error) {
	if f.item < 1 || f.item > bench.CatalogueItems {
		return bench.BytesConfig{}, fmt.Errorf("-item %d: want 1..%d", f.item, bench.CatalogueItems)
	}
	return bench.BytesConfig{Server: s, Root: s.Dir, Bridge: absUnder(s.Dir, bridge), Item: f.item, WithFind: f.find, CallTimeout: callTimeout}, nil
}

func registerBridge(fs *flag.FlagSet) *string {
	return fs.String("bridge", "bin/mcp-bridge", "mcp-bridge `binary` for the proxy side (build it with make build)")
}

// absUnder resolves a relative path against root, as -server is.
func absUnder(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// stdioLeakErr fails a run whose proxy-server or stdio children (plain
// @playwright/mcp, mcp-bridge) left a process behind.
func stdioLeakErr(cleanup bench.StopReport, stops []bench.StdioStopReport) error {
	var errs []error
	if cleanup.Signal != "" && !cleanup.Clean() {
		errs = append(errs, fmt.Errorf("unclean proxy-server stop: %s", cleanup.Summary()))
	}
	for _, s := range stops {
		if !s.Clean() {
			errs = append(errs, fmt.Errorf("unclean stop: %s", s.Summary()))
		}
	}
	return errors.Join(errs...)
}

// tokensFlags are the tokens scenario's flags.
type tokensFlags struct {
	tasks string
}

func (f *tokensFlags) register(fs *flag.FlagSet, prefix string) {
	fs.StringVar(&f.tasks, prefix+"tasks", "", "tokens: comma-separated `list` of tasks to run (default all: "+strings.Join(bench.TokensTaskNames(), ",")+")")
}

func (f *tokensFlags) config(s bench.ServerConfig, bridge string, callTimeout time.Duration) (bench.TokensConfig, error) {
	var tasks []string
	if strings.TrimSpace(f.tasks) != "" {
		for _, t := range strings.Split(f.tasks, ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				return bench.TokensConfig{}, fmt.Errorf("-tasks %q: an empty task name", f.tasks)
			}
			tasks = append(tasks, t)
		}
	}
	cfg := bench.TokensConfig{Server: s, Root: s.Dir, Bridge: absUnder(s.Dir, bridge), Tasks: tasks, CallTimeout: callTimeout}
	if err := cfg.Check(); err != nil {
		return bench.TokensConfig{}, fmt.Errorf("-tasks: %w", err)
	}
	return cfg, nil
}
