package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/tools/bench/internal/bench"
)

// scenario is a subcommand's configuration: it registers its own flags,
// with their defaults, and checks them once parsed.
type scenario interface {
	Flags(fs *flag.FlagSet)
	Check() error
}

// env is what a scenario gets besides its own flags: the common flags
// resolved, and the test site.
type env struct {
	server  bench.ServerConfig
	timeout time.Duration // -request-timeout
	bridge  string        // -bridge, absolute
	log     *slog.Logger
	site    *bench.Site
}

type runFunc func(ctx context.Context, e *env, rep *bench.Report) error

// command is one subcommand. Most run a scenario against a started
// proxy-server; local ones run in process; direct ones have their own
// handling.
type command struct {
	name, args, summary string
	local, stdio        bool
	setup               func(fs *flag.FlagSet) (scenario, runFunc)
	direct              func(ctx context.Context, m *Main, args []string) error
}

var commands = []command{
	{name: "sessions", summary: "POST /sessions latency, warm pool 1 vs 0; first vs later navigation", setup: with(bench.RunSessions)},
	{name: "concurrency", summary: "N concurrent sessions looping navigate + snapshot + click", setup: with(bench.RunConcurrency)},
	{name: "nodes", summary: "the same load on the server's own browser and on 1, 2, 3 browser nodes", setup: with(bench.RunNodes)},
	{name: "all", summary: "sessions, concurrency, overhead, bytes and tokens", stdio: true, setup: func(fs *flag.FlagSet) (scenario, runFunc) {
		var c allConfig
		c.Flags(fs)
		runs := []runFunc{result(&c.Sessions, bench.RunSessions), result(&c.Concurrency, bench.RunConcurrency),
			result(&c.Overhead, bench.RunOverhead), result(&c.Bytes, bench.RunBytes), result(&c.Tokens, bench.RunTokens)}
		return &c, func(ctx context.Context, e *env, rep *bench.Report) error {
			for _, run := range runs {
				if err := run(ctx, e, rep); err != nil {
					return err
				}
			}
			return nil
		}
	}},
	{name: "idle", summary: "one active session while 0, 10, 25, 50 others sit idle", setup: with(bench.RunIdle)},
	{name: "overhead", summary: "per-call latency, mcp-bridge → proxy-server vs plain @playwright/mcp (A/B)", stdio: true, setup: with(bench.RunOverhead)},
	{name: "bytes", summary: "bytes to the model for a scripted task, plain @playwright/mcp vs the proxy", stdio: true, setup: with(bench.RunBytes)},
	{name: "tokens", summary: "result bytes and calls of an 8-task suite: plain (snapshot), plain (find), the proxy", stdio: true, setup: with(bench.RunTokens)},
	{name: "store", summary: "the SQLite record in process: ingest with and without readers, search on 1 MB", local: true, setup: with(
		func(ctx context.Context, log *slog.Logger, _ *bench.Site, c bench.StoreConfig) (*bench.StoreResult, error) {
			return bench.RunStore(ctx, log, c)
		})},
	{name: "soak", summary: "10 sessions, mixed traffic and idle suspensions for 30 min: memory and fd trend", setup: with(bench.RunSoak)},
	{name: "chart", summary: "SVG charts from the JSON of concurrency, soak and tokens", direct: chartCommand},
	{name: "relay", args: "-- CMD [ARGS]", summary: "CMD (a stdio MCP server) behind two minimal Go relays, stdio → HTTP → stdio", direct: relayCommand},
	{name: "live", summary: "one live view viewer: frames/s, bytes/s and CPU on a still and a busy page; change-to-frame", setup: with(bench.RunLive)},
}

// with makes a command's setup from its scenario's Run function.
func with[C any, P interface {
	*C
	scenario
}, R any](run func(context.Context, *slog.Logger, *bench.Site, C) (*R, error)) func(*flag.FlagSet) (scenario, runFunc) {
	return func(fs *flag.FlagSet) (scenario, runFunc) {
		c := P(new(C))
		c.Flags(fs)
		return c, result((*C)(c), run)
	}
}

// result runs a scenario on c, once the common flags are set into it, and
// puts what it returns into the Report's field of that type.
func result[C, R any](c *C, run func(context.Context, *slog.Logger, *bench.Site, C) (*R, error)) runFunc {
	return func(ctx context.Context, e *env, rep *bench.Report) error {
		e.fill(reflect.ValueOf(c).Elem())
		res, err := run(ctx, e.log, e.site, *c)
		for v, i := reflect.ValueOf(rep).Elem(), 0; i < v.NumField(); i++ {
			if v.Field(i).Type() == reflect.TypeOf(res) {
				v.Field(i).Set(reflect.ValueOf(res))
			}
		}
		return err
	}
}

// fill sets the fields every scenario configuration has, by name, from
// the common flags (nested configurations too, as the nodes scenario's).
func (e *env) fill(v reflect.Value) {
	common := map[string]any{"Server": e.server, "RequestTimeout": e.timeout, "CallTimeout": e.timeout,
		"Root": e.server.Dir, "PlainRoot": e.server.Dir, "Bridge": e.bridge}
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if x, ok := common[name]; ok && f.Type() == reflect.TypeOf(x) {
			f.Set(reflect.ValueOf(x))
		} else if f.Kind() == reflect.Struct && f.CanSet() {
			e.fill(f)
		}
	}
}

// allConfig is `bench all`: sessions' and concurrency's flags as they are,
// the stdio scenarios' prefixed with their name (-overhead-n, -tokens-tasks).
type allConfig struct {
	Sessions    bench.SessionsConfig
	Concurrency bench.ConcurrencyConfig
	Overhead    bench.OverheadConfig
	Bytes       bench.BytesConfig
	Tokens      bench.TokensConfig
}

func (a *allConfig) Flags(fs *flag.FlagSet) {
	a.Sessions.Flags(fs)
	a.Concurrency.Flags(fs)
	for name, s := range map[string]scenario{"overhead": &a.Overhead, "bytes": &a.Bytes, "tokens": &a.Tokens} {
		own := flag.NewFlagSet(name, flag.ContinueOnError)
		s.Flags(own)
		own.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, name+"-"+f.Name, name+": "+f.Usage) })
	}
}

func (a *allConfig) Check() error {
	for _, s := range []scenario{&a.Sessions, &a.Concurrency, &a.Overhead, &a.Bytes, &a.Tokens} {
		if err := s.Check(); err != nil {
			return err
		}
	}
	return nil
}

// common are the flags every scenario has (a local one only -json and -v).
type common struct {
	server, root, jsonPath, bridge string
	verbose, keep                  bool
	timeout                        time.Duration
	env                            map[string]string
}

func (c *common) register(fs *flag.FlagSet, cmd command) {
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this `file`")
	fs.BoolVar(&c.verbose, "v", false, "debug progress output")
	if cmd.local {
		return
	}
	fs.StringVar(&c.server, "server", "bin/proxy-server", "proxy-server binary to start (build it with `make build`)")
	fs.StringVar(&c.root, "root", ".", "project root: the server's working directory, where node_modules is")
	fs.BoolVar(&c.keep, "keep", false, "keep the server's temp directory (database, log)")
	fs.DurationVar(&c.timeout, "request-timeout", 3*time.Minute, "bound on every HTTP request to proxy-server")
	fs.Func("env", "extra `KEY=VALUE` for proxy-server (repeatable), e.g. -env PROXY_CALL_TIMEOUT=60s", func(s string) error {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fmt.Errorf("want KEY=VALUE, got %q", s)
		}
		if c.env == nil {
			c.env = map[string]string{}
		}
		c.env[k] = v
		return nil
	})
	if cmd.stdio {
		fs.StringVar(&c.bridge, "bridge", "bin/mcp-bridge", "mcp-bridge `binary` for the proxy side (build it with make build)")
	}
}

// resolve resolves the common flags against the project root.
func (c *common) resolve() (*env, error) {
	root, err := filepath.Abs(c.root)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	return &env{server: bench.ServerConfig{Binary: absUnder(root, c.server), Dir: root, Env: c.env, KeepFiles: c.keep},
		timeout: c.timeout, bridge: absUnder(root, c.bridge)}, nil
}

func flagSet(m *Main, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("bench "+name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	return fs
}

// run is what every scenario command does around its scenario: parse and
// check the flags, start the test site, describe the machine, run, print,
// write JSON. The report is printed even when the scenario fails half-way.
func (m *Main) run(ctx context.Context, cmd command, args []string) error {
	fs := flagSet(m, cmd.name)
	var c common
	c.register(fs, cmd)
	cfg, run := cmd.setup(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: map[bool]slog.Level{true: slog.LevelDebug}[c.verbose]}))
	command := append([]string{"bench", cmd.name}, args...)
	var (
		rep    *bench.Report
		runErr error
	)
	if cmd.local {
		rep = bench.InProcessReport(ctx, command)
		runErr = run(ctx, &env{log: log}, rep)
	} else {
		e, err := c.resolve()
		if err != nil {
			return err
		}
		if err := bench.Prepare(); err != nil {
			return err
		}
		if _, err := os.Stat(e.server.Binary); err != nil {
			return fmt.Errorf("%s: %w (run `make build` first)", e.server.Binary, err)
		}
		if e.site, err = bench.StartSite(); err != nil {
			return err
		}
		defer e.site.Close()
		log.Info("test site", "url", e.site.URL)
		e.log = log
		rep = &bench.Report{Started: time.Now().UTC(), Command: command, Machine: bench.DescribeMachine(ctx, e.server.Dir, e.server.Binary)}
		if runErr = run(ctx, e, rep); runErr != nil && ctx.Err() != nil {
			runErr = fmt.Errorf("interrupted, the results above are partial: %w", runErr)
		}
	}
	if err := finish(m, log, rep, c.jsonPath, runErr); err != nil {
		return err
	}
	return failed(rep)
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

// failed fails a run that completed but whose results say it went wrong:
// a proxy-server or a stdio child (plain @playwright/mcp, mcp-bridge) that
// left a process behind or had to be killed, store ingest errors.
func failed(rep *bench.Report) error {
	var servers []bench.StopReport
	var stdio []bench.StdioStopReport
	if rep.Sessions != nil {
		for _, r := range rep.Sessions.Runs {
			servers = append(servers, r.Cleanup)
		}
	}
	if r := rep.Concurrency; r != nil {
		servers = append(servers, r.Cleanup)
	}
	if r := rep.Idle; r != nil {
		servers = append(servers, r.Cleanup)
	}
	if r := rep.Soak; r != nil {
		servers = append(servers, r.Cleanup)
	}
	if r := rep.Overhead; r != nil {
		servers, stdio = append(servers, r.Cleanup), append(stdio, r.Stops...)
	}
	if r := rep.Bytes; r != nil {
		servers, stdio = append(servers, r.Cleanup), append(stdio, r.Stops...)
	}
	if r := rep.Tokens; r != nil {
		servers, stdio = append(servers, r.Cleanup), append(stdio, r.Stops...)
	}
	var errs []error
	for _, r := range servers {
		if r.Signal != "" && !r.Clean() {
			errs = append(errs, fmt.Errorf("unclean proxy-server stop: %s", r.Summary()))
		}
	}
	for _, s := range stdio {
		if !s.Clean() {
			errs = append(errs, fmt.Errorf("unclean stop: %s", s.Summary()))
		}
	}
	if rep.Store != nil {
		for _, r := range rep.Store.Ingest {
			if r.ErrorCount > 0 {
				errs = append(errs, fmt.Errorf("ingest (%s): %d errors, %d of them SQLITE_BUSY/LOCKED", r.Name, r.ErrorCount, r.Busy))
			}
		}
	}
	return errors.Join(errs...)
}

// chartCommand writes SVG charts from the JSON of `bench concurrency`,
// `bench soak` and `bench tokens`.
func chartCommand(_ context.Context, m *Main, args []string) error {
	fs := flagSet(m, "chart")
	sources := []struct {
		flag   string
		path   string
		charts func(*bench.Report) ([]bench.Chart, error)
	}{
		{flag: "concurrency", charts: func(r *bench.Report) ([]bench.Chart, error) { return bench.ConcurrencyCharts(r.Concurrency) }},
		{flag: "soak", charts: func(r *bench.Report) ([]bench.Chart, error) { return bench.SoakCharts(r.Soak) }},
		{flag: "tokens", charts: func(r *bench.Report) ([]bench.Chart, error) { return bench.TokensCharts(r.Tokens) }},
	}
	for i := range sources {
		fs.StringVar(&sources[i].path, sources[i].flag, "", "JSON `file` written by bench "+sources[i].flag+" -json")
	}
	out := fs.String("out", "docs", "directory the SVG files are written to")
	if err := parse(fs, args); err != nil {
		return err
	}
	var charts []bench.Chart
	for _, src := range sources {
		if src.path == "" {
			continue
		}
		rep, err := bench.ReadReport(src.path)
		if err != nil {
			return err
		}
		cs, err := src.charts(rep)
		if err != nil {
			return fmt.Errorf("%s: %w", src.path, err)
		}
		charts = append(charts, cs...)
	}
	if len(charts) == 0 {
		return fmt.Errorf("give -concurrency FILE, -soak FILE and/or -tokens FILE")
	}
	paths, err := bench.WriteCharts(*out, charts)
	for _, p := range paths {
		fmt.Fprintln(m.Stdout, p)
	}
	return err
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
