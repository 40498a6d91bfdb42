package bench

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
)

// IdleConfig configures the idle scenario: does a session get slower when
// other sessions merely exist? One active session navigates while K other
// sessions, each with a page open, sit idle.
type IdleConfig struct {
	Server ServerConfig
	// Levels are the numbers of idle sessions (default 0, 10, 25, 50).
	Levels []int
	// Navigations is the number of timed navigations (and snapshots) of the
	// active session per level (default 20).
	Navigations int
	WarmPool    int
	// Settle is the pause after the idle sessions opened their page.
	Settle         time.Duration
	RequestTimeout time.Duration
}

// IdleResult is the result of the idle scenario.
type IdleResult struct {
	Env         map[string]string `json:"env"`
	Navigations int               `json:"navigations"`
	Levels      []IdleLevel       `json:"levels"`
	Cleanup     StopReport        `json:"cleanup"`
	Interrupted bool              `json:"interrupted,omitempty"`
}

// IdleLevel is one level of the idle scenario.
type IdleLevel struct {
	Idle int `json:"idle_sessions"`
	// Opened is how many idle sessions were created and navigated once.
	Opened   int          `json:"opened"`
	OpenMS   float64      `json:"open_wall_ms"`
	Navigate Summary      `json:"navigate"`
	Snapshot Summary      `json:"snapshot"`
	Errors   []ErrorCount `json:"errors"`
	ErrCount int          `json:"error_count"`
	// Breakdown of the active session's calls (see Breakdown).
	Breakdown    []Breakdown `json:"breakdown"`
	BreakdownErr string      `json:"breakdown_error,omitempty"`
	CPU          CPUUsage    `json:"cpu"`
	Memory       MemSample   `json:"memory"`
}

// RunIdle runs the idle scenario on one proxy-server.
func RunIdle(ctx context.Context, log *slog.Logger, site *Site, cfg IdleConfig) (res *IdleResult, err error) {
	if len(cfg.Levels) == 0 {
		cfg.Levels = []int{0, 10, 25, 50}
	}
	if cfg.Navigations <= 0 {
		cfg.Navigations = 20
	}
	if cfg.Settle <= 0 {
		cfg.Settle = 5 * time.Second
	}
	maxLevel := 0
	for _, l := range cfg.Levels {
		maxLevel = max(maxLevel, l)
	}
	scfg := cfg.Server
	scfg.Env = copyEnv(scfg.Env)
	scfg.Env["PROXY_MAX_SESSIONS"] = strconv.Itoa(maxLevel + 1)
	scfg.Env["PROXY_WARM_POOL"] = strconv.Itoa(cfg.WarmPool)
	res = &IdleResult{Env: scfg.Env, Navigations: cfg.Navigations}
	srv, stop, err := startServer(ctx, log, scfg, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	defer stop()
	c, err := NewClient(srv.URL, cfg.RequestTimeout)
	if err != nil {
		return res, err
	}
	if err := sleepCtx(ctx, cfg.Settle); err != nil {
		return res, err
	}
	startProcs := len(processTree(srv.PID))
	form, table := site.PageURL(Pages["form"]), site.PageURL(Pages["table"])
	for _, k := range cfg.Levels {
		log := log.With("idle", k)
		lvl, err := runIdleLevel(ctx, log, srv, c, form, table, k, startProcs, cfg)
		res.Levels = append(res.Levels, lvl)
		if err != nil {
			return res, fmt.Errorf("%d idle sessions: %w", k, err)
		}
	}
	return res, nil
}

func runIdleLevel(ctx context.Context, log *slog.Logger, srv *Server, c *Client, form, table string, k, startProcs int, cfg IdleConfig) (lvl IdleLevel, err error) {
	lvl.Idle = k
	if _, _, err := srv.settle(ctx, startProcs+1, 3*time.Minute); err != nil {
		return lvl, err
	}
	errs := newErrorLog()
	var ids []string
	var mu sync.Mutex
	defer func() {
		dctx := context.WithoutCancel(ctx)
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() { _ = c.DeleteSession(dctx, id) })
		}
		wg.Wait()
		lvl.Errors, lvl.ErrCount = errs.list(), errs.total()
	}()

	// K idle sessions, each with the form page open; at most 4 at a time so
	// the opening itself does not time out.
	t0 := time.Now()
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for range k {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			s, err := c.CreateSession(ctx)
			if err != nil {
				errs.add("POST /sessions (idle)", err)
				return
			}
			mu.Lock()
			ids = append(ids, s.ID)
			mu.Unlock()
			if _, err := c.Call(ctx, s.ID, "browser_navigate", map[string]any{"url": form}); err != nil {
				errs.add("browser_navigate (idle)", err)
				return
			}
			mu.Lock()
			lvl.Opened++
			mu.Unlock()
		})
	}
	wg.Wait()
	lvl.OpenMS = ms(time.Since(t0))
	log.Info("idle sessions open", "opened", lvl.Opened, "took", time.Since(t0).Round(time.Millisecond))
	if err := ctx.Err(); err != nil {
		return lvl, err
	}

	// The active session: one untimed warm-up navigation, then the timed ones.
	s, err := c.CreateSession(ctx)
	if err != nil {
		errs.add("POST /sessions (active)", err)
		return lvl, fmt.Errorf("creating the active session: %w", err)
	}
	ids = append(ids, s.ID)
	if _, err := c.Call(ctx, s.ID, "browser_navigate", map[string]any{"url": form}); err != nil {
		errs.add("browser_navigate (warm-up)", err)
	}
	if err := sleepCtx(ctx, cfg.Settle); err != nil {
		return lvl, err
	}
	lvl.Memory = srv.Memory(false)
	mark := markCPU(srv.PID)
	var navs, snaps []float64
	var timings []callTiming
	for i := range cfg.Navigations {
		url := table
		if i%2 == 1 {
			url = form
		}
		t := time.Now()
		res, err := c.Call(ctx, s.ID, "browser_navigate", map[string]any{"url": url})
		d := time.Since(t)
		if err != nil {
			errs.add("browser_navigate (active)", err)
		} else {
			navs = append(navs, ms(d))
			timings = append(timings, callTiming{ref: res.RefID, tool: "browser_navigate", page: "table/form", sent: t, received: t.Add(d)})
		}
		t = time.Now()
		res, err = c.Call(ctx, s.ID, "browser_snapshot", nil)
		d = time.Since(t)
		if err != nil {
			errs.add("browser_snapshot (active)", err)
		} else {
			snaps = append(snaps, ms(d))
			timings = append(timings, callTiming{ref: res.RefID, tool: "browser_snapshot", page: "table/form", sent: t, received: t.Add(d)})
		}
		if ctx.Err() != nil {
			return lvl, ctx.Err()
		}
	}
	lvl.CPU = cpuSince(mark, markCPU(srv.PID))
	lvl.Navigate, lvl.Snapshot = Summarize(navs), Summarize(snaps)
	if lvl.Breakdown, err = timeBreakdown(ctx, srv.DBPath, timings); err != nil {
		lvl.BreakdownErr = err.Error()
	}
	log.Info("active session measured", "navigate_p50", fmt.Sprintf("%.0fms", lvl.Navigate.Median), "snapshot_p50", fmt.Sprintf("%.0fms", lvl.Snapshot.Median),
		"cpu", lvl.CPU.String())
	return lvl, nil
}
