package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/bench"
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

// run is what every subcommand does around its scenarios: prepare, start the
// test site, describe the machine, run, print, write JSON. The report is
// printed even when a scenario fails half-way.
func (c *common) run(ctx context.Context, m *Main, args []string, scenarios func(context.Context, *slog.Logger, *bench.Site, bench.ServerConfig, *bench.Report) error) error {
	level := slog.LevelInfo
	if c.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: level}))
	if err := bench.Prepare(); err != nil {
		return err
	}
	root, err := filepath.Abs(c.root)
	if err != nil {
		return fmt.Errorf("project root: %w", err)
	}
	server := c.server
	if !filepath.IsAbs(server) {
		server = filepath.Join(root, server)
	}
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
	scfg := bench.ServerConfig{Binary: server, Dir: root, Env: map[string]string(c.env), KeepFiles: c.keep}
	runErr := scenarios(ctx, log, site, scfg, rep)
	rep.Finished = time.Now().UTC()
	if runErr != nil {
		rep.Error = runErr.Error()
		if ctx.Err() != nil {
			rep.Error = "interrupted, the results above are partial: " + rep.Error
		}
	}
	rep.WriteText(m.Stdout)
	if c.jsonPath != "" {
		if err := rep.WriteJSON(c.jsonPath); err != nil {
			return errors.Join(runErr, err)
		}
		log.Info("results written", "json", c.jsonPath)
	}
	if runErr != nil {
		return runErr
	}
	return leakErr(rep)
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
	for _, r := range reports {
		if !r.Clean() {
			return fmt.Errorf("unclean proxy-server stop: %s", r.Summary())
		}
	}
	return nil
}

// sessionsFlags are the sessions scenario's flags.
type sessionsFlags struct {
	n          int
	refillWait time.Duration
	navPage    string
	pools      string
	startup    time.Duration
}

func (f *sessionsFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.n, "n", 30, "iterations per measurement")
	fs.DurationVar(&f.refillWait, "refill-wait", 2*time.Second, "untimed sleep before each create so the warm pool can refill")
	fs.StringVar(&f.navPage, "nav-page", "table", "page for the navigation timings: form, table or catalogue")
	fs.StringVar(&f.pools, "warm-pools", "1,0", "PROXY_WARM_POOL values to measure")
	fs.DurationVar(&f.startup, "startup-wait", 5*time.Second, "untimed pause after the server listens, before the first create")
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
	return bench.SessionsConfig{Server: s, Iterations: f.n, RefillWait: f.refillWait, WarmPools: pools, NavPage: f.navPage, RequestTimeout: reqTimeout, StartupWait: f.startup}, nil
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
}

func (f *concurrencyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.levels, "levels", "1,10,25,50", "numbers of concurrent sessions")
	fs.DurationVar(&f.duration, "duration", 60*time.Second, "load duration per level")
	fs.StringVar(&f.pages, "pages", "catalogue,form", "pages the sessions navigate to, in turn")
	fs.IntVar(&f.maxIter, "max-iterations", 10000, "bound on navigate/snapshot/click rounds per session per level")
	fs.IntVar(&f.warmPool, "warm-pool", 1, "PROXY_WARM_POOL")
	fs.IntVar(&f.maxSessions, "max-sessions", 0, "PROXY_MAX_SESSIONS (0: the largest level)")
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
	for _, p := range strings.Split(f.pages, ",") {
		if _, ok := bench.Pages[p]; !ok {
			return bench.ConcurrencyConfig{}, fmt.Errorf("-pages: %q: want form, table or catalogue", p)
		}
	}
	return bench.ConcurrencyConfig{
		Server: s, Levels: levels, Duration: f.duration, Pages: strings.Split(f.pages, ","),
		MaxIterations: f.maxIter, WarmPool: f.warmPool, MaxSessions: f.maxSessions, RequestTimeout: reqTimeout,
		MinAvailableKB: f.minAvailMB * 1024,
	}, nil
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

// SessionsCommand is `bench sessions`.
type SessionsCommand struct {
	Main *Main
	c    common
	f    sessionsFlags
}

// Run parses flags and runs the sessions scenario.
func (cmd *SessionsCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench sessions", flag.ContinueOnError)
	fs.SetOutput(cmd.Main.Stderr)
	cmd.c.register(fs)
	cmd.f.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if _, err := cmd.f.config(bench.ServerConfig{}, 0); err != nil {
		return err
	}
	return cmd.c.run(ctx, cmd.Main, append([]string{"sessions"}, args...), func(ctx context.Context, log *slog.Logger, site *bench.Site, s bench.ServerConfig, rep *bench.Report) error {
		cfg, err := cmd.f.config(s, cmd.c.reqTimeout)
		if err != nil {
			return err
		}
		rep.Sessions, err = bench.RunSessions(ctx, log, site, cfg)
		return err
	})
}

// ConcurrencyCommand is `bench concurrency`.
type ConcurrencyCommand struct {
	Main *Main
	c    common
	f    concurrencyFlags
}

// Run parses flags and runs the concurrency scenario.
func (cmd *ConcurrencyCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench concurrency", flag.ContinueOnError)
	fs.SetOutput(cmd.Main.Stderr)
	cmd.c.register(fs)
	cmd.f.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if _, err := cmd.f.config(bench.ServerConfig{}, 0); err != nil {
		return err
	}
	return cmd.c.run(ctx, cmd.Main, append([]string{"concurrency"}, args...), func(ctx context.Context, log *slog.Logger, site *bench.Site, s bench.ServerConfig, rep *bench.Report) error {
		cfg, err := cmd.f.config(s, cmd.c.reqTimeout)
		if err != nil {
			return err
		}
		rep.Concurrency, err = bench.RunConcurrency(ctx, log, site, cfg)
		return err
	})
}

// AllCommand is `bench all`: sessions, then concurrency.
type AllCommand struct {
	Main *Main
	c    common
	s    sessionsFlags
	f    concurrencyFlags
}

// Run parses flags and runs both scenarios.
func (cmd *AllCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench all", flag.ContinueOnError)
	fs.SetOutput(cmd.Main.Stderr)
	cmd.c.register(fs)
	cmd.s.register(fs)
	cmd.f.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if _, err := cmd.s.config(bench.ServerConfig{}, 0); err != nil {
		return err
	}
	if _, err := cmd.f.config(bench.ServerConfig{}, 0); err != nil {
		return err
	}
	return cmd.c.run(ctx, cmd.Main, append([]string{"all"}, args...), func(ctx context.Context, log *slog.Logger, site *bench.Site, s bench.ServerConfig, rep *bench.Report) error {
		scfg, err := cmd.s.config(s, cmd.c.reqTimeout)
		if err != nil {
			return err
		}
		ccfg, err := cmd.f.config(s, cmd.c.reqTimeout)
		if err != nil {
			return err
		}
		if rep.Sessions, err = bench.RunSessions(ctx, log, site, scfg); err != nil {
			return err
		}
		rep.Concurrency, err = bench.RunConcurrency(ctx, log, site, ccfg)
		return err
	})
}

// IdleCommand is `bench idle`: is one session slower while others sit idle?
type IdleCommand struct {
	Main *Main
	c    common
}

// Run parses flags and runs the idle scenario.
func (cmd *IdleCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench idle", flag.ContinueOnError)
	fs.SetOutput(cmd.Main.Stderr)
	cmd.c.register(fs)
	levels := fs.String("idle", "0,10,25,50", "numbers of idle sessions")
	navs := fs.Int("navigations", 20, "timed navigations (and snapshots) of the active session per level")
	warm := fs.Int("warm-pool", 1, "PROXY_WARM_POOL")
	if err := parse(fs, args); err != nil {
		return err
	}
	ls, err := intList(*levels)
	if err != nil {
		return fmt.Errorf("-idle: %w", err)
	}
	for _, l := range ls {
		if l > 200 {
			return fmt.Errorf("-idle: %d: want at most 200", l)
		}
	}
	if *navs < 1 || *navs > 1000 {
		return fmt.Errorf("-navigations %d: want 1..1000", *navs)
	}
	return cmd.c.run(ctx, cmd.Main, append([]string{"idle"}, args...), func(ctx context.Context, log *slog.Logger, site *bench.Site, s bench.ServerConfig, rep *bench.Report) error {
		var err error
		rep.Idle, err = bench.RunIdle(ctx, log, site, bench.IdleConfig{Server: s, Levels: ls, Navigations: *navs, WarmPool: *warm, RequestTimeout: cmd.c.reqTimeout})
		return err
	})
}
