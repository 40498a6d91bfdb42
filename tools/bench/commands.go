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
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/tools/bench/internal/bench"
)

// scenario is a subcommand's configuration: it registers its own flags,
// with their defaults, and checks them once parsed.
type scenario interface {
	Flags(fs *flag.FlagSet)
	Check() error
}

// env is what a scenario gets besides its own flags.
type env struct {
	server  bench.ServerConfig
	timeout time.Duration
	bridge  string
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
	{name: "memory", summary: "PSS per added session by part, one node process per session vs many (PROXY_SESSIONS_PER_WORKER)", setup: with(bench.RunMemory)},
	{name: "chart", summary: "SVG charts from the JSON of concurrency, soak, tokens and memory", direct: chartCommand},
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

// result runs a scenario on c, once the common settings are set into it,
// and puts what it returns into the Report's field of that type.
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

// fill sets the fields every scenario configuration has, by name (nested
// configurations too, as the nodes scenario's): one place for what would
// otherwise be a flag in every scenario.
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
	return errors.Join(a.Sessions.Check(), a.Concurrency.Check(), a.Overhead.Check(), a.Bytes.Check(), a.Tokens.Check())
}

// common are the flags every scenario has (a local one only -json and -v).
type common struct {
	root, jsonPath string
	verbose        bool
}

func (c *common) register(fs *flag.FlagSet, cmd command) {
	fs.StringVar(&c.jsonPath, "json", "", "also write the results as JSON to this `file`")
	fs.BoolVar(&c.verbose, "v", false, "debug progress output")
	if !cmd.local {
		fs.StringVar(&c.root, "root", ".", "project root, where bin/proxy-server, bin/mcp-bridge and node_modules are")
	}
}

// resolve makes the environment of the binaries `make build` puts under the
// project root.
func (c *common) resolve() (*env, error) {
	root, err := filepath.Abs(c.root)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	return &env{server: bench.ServerConfig{Binary: filepath.Join(root, "bin/proxy-server"), Dir: root},
		timeout: 3 * time.Minute, bridge: filepath.Join(root, "bin/mcp-bridge")}, nil
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
		e.log = log
		rep = &bench.Report{Started: time.Now().UTC(), Command: command, Machine: bench.DescribeMachine(ctx, e.server.Dir, e.server.Binary)}
		if runErr = run(ctx, e, rep); runErr != nil && ctx.Err() != nil {
			runErr = fmt.Errorf("interrupted, the results above are partial: %w", runErr)
		}
	}
	rep.Finished = time.Now().UTC()
	if runErr != nil {
		rep.Error = runErr.Error()
	}
	rep.WriteText(m.Stdout)
	if c.jsonPath != "" {
		if err := rep.WriteJSON(c.jsonPath); err != nil {
			return errors.Join(runErr, err)
		}
	}
	if runErr != nil {
		return runErr
	}
	return failed(rep)
}

// failed fails a run that completed but whose results say it went wrong:
// a proxy-server or a stdio child (plain @playwright/mcp, mcp-bridge) that
// left a process behind or had to be killed, store ingest errors.
func failed(rep *bench.Report) error {
	var errs []error
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		if v.Kind() == reflect.Pointer {
			if !v.IsNil() {
				walk(v.Elem())
			}
			return
		}
		switch x := v.Interface().(type) {
		case interface {
			Clean() bool
			Summary() string
		}: // a proxy-server's or a stdio child's stop
			if !x.Clean() {
				errs = append(errs, fmt.Errorf("unclean stop: %s", x.Summary()))
			}
			return
		case bench.IngestRun:
			if x.ErrorCount > 0 {
				errs = append(errs, fmt.Errorf("ingest (%s): %d errors, %d of them SQLITE_BUSY/LOCKED", x.Name, x.ErrorCount, x.Busy))
			}
			return
		}
		switch v.Kind() {
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(rep).Elem())
	return errors.Join(errs...)
}

// chartCommand writes SVG charts from the JSON of `bench concurrency`,
// `bench soak`, `bench tokens` and `bench memory`.
func chartCommand(_ context.Context, m *Main, args []string) error {
	fs := flagSet(m, "chart")
	sources := map[string]func(*bench.Report) ([]bench.Chart, error){
		"concurrency": func(r *bench.Report) ([]bench.Chart, error) { return bench.ConcurrencyCharts(r.Concurrency) },
		"soak":        func(r *bench.Report) ([]bench.Chart, error) { return bench.SoakCharts(r.Soak) },
		"tokens":      func(r *bench.Report) ([]bench.Chart, error) { return bench.TokensCharts(r.Tokens) },
		"memory":      func(r *bench.Report) ([]bench.Chart, error) { return bench.MemoryCharts(r.Memory) },
	}
	paths := map[string]*string{}
	for name := range sources {
		paths[name] = fs.String(name, "", "JSON `file` written by bench "+name+" -json")
	}
	out := fs.String("out", "docs", "directory the SVG files are written to")
	if err := parse(fs, args); err != nil {
		return err
	}
	var charts []bench.Chart
	for _, name := range []string{"concurrency", "soak", "tokens", "memory"} {
		if *paths[name] == "" {
			continue
		}
		rep, err := bench.ReadReport(*paths[name])
		if err != nil {
			return err
		}
		cs, err := sources[name](rep)
		if err != nil {
			return fmt.Errorf("%s: %w", *paths[name], err)
		}
		charts = append(charts, cs...)
	}
	if len(charts) == 0 {
		return fmt.Errorf("give -concurrency FILE, -soak FILE, -tokens FILE and/or -memory FILE")
	}
	written, err := bench.WriteCharts(*out, charts)
	for _, p := range written {
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
