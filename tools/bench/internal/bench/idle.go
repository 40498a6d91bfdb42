package bench

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"
)

// IdleConfig configures the idle scenario: does a session get slower when
// other sessions merely exist? One active session navigates (Navigations
// times, with a snapshot each) while K others, each with a page open, sit
// idle, for each K of Levels.
type IdleConfig struct {
	Server         ServerConfig
	Levels         []int
	Navigations    int
	RequestTimeout time.Duration
}

func (c *IdleConfig) Flags(fs *flag.FlagSet) {
	c.Levels = []int{0, 10, 25, 50}
	fs.Var((*IntList)(&c.Levels), "idle", "numbers of idle sessions")
	fs.IntVar(&c.Navigations, "navigations", 20, "timed navigations (and snapshots) of the active session per level")
}

func (c *IdleConfig) Check() error {
	if len(c.Levels) == 0 || slices.Max(c.Levels) > 200 {
		return fmt.Errorf("-idle %v: want numbers up to 200", c.Levels)
	}
	if c.Navigations < 1 || c.Navigations > 1000 {
		return fmt.Errorf("-navigations %d: want 1..1000", c.Navigations)
	}
	return nil
}

type IdleResult struct {
	Env         map[string]string `json:"env"`
	Navigations int               `json:"navigations"`
	Levels      []IdleLevel       `json:"levels"`
	Cleanup     StopReport        `json:"cleanup"`
	Interrupted bool              `json:"interrupted,omitempty"`
}

// IdleLevel is one level; Opened counts the idle sessions that navigated.
type IdleLevel struct {
	Idle     int          `json:"idle_sessions"`
	Opened   int          `json:"opened"`
	Navigate Summary      `json:"navigate"`
	Snapshot Summary      `json:"snapshot"`
	Errors   []ErrorCount `json:"errors"`
	ErrCount int          `json:"error_count"`
}

func RunIdle(ctx context.Context, log *slog.Logger, site *Site, cfg IdleConfig) (res *IdleResult, err error) {
	scfg := cfg.Server
	scfg.Env = copyEnv(scfg.Env)
	scfg.Env["PROXY_MAX_SESSIONS"] = strconv.Itoa(slices.Max(cfg.Levels) + 1)
	scfg.Env["PROXY_WARM_POOL"] = "1"
	res = &IdleResult{Env: scfg.Env, Navigations: cfg.Navigations}
	srv, c, stop, err := serve(ctx, log, scfg, cfg.RequestTimeout, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	defer stop()
	if err := sleepCtx(ctx, settlePause); err != nil {
		return res, err
	}
	startProcs := len(processTree(srv.PID))
	urls := []string{site.PageURL(Pages["table"]), site.PageURL(Pages["form"])}
	for _, k := range cfg.Levels {
		lvl, err := runIdleLevel(ctx, log.With("idle", k), srv, c, urls, k, startProcs, cfg)
		if res.Levels = append(res.Levels, lvl); err != nil {
			return res, fmt.Errorf("%d idle sessions: %w", k, err)
		}
	}
	return res, nil
}

func runIdleLevel(ctx context.Context, log *slog.Logger, srv *Server, c *Client, urls []string, k, startProcs int, cfg IdleConfig) (lvl IdleLevel, err error) {
	lvl.Idle = k
	if _, _, err := srv.settle(ctx, startProcs+1, 3*time.Minute); err != nil {
		return lvl, err
	}
	rec := newRecorder(1)
	errs := rec.errlog
	var ids []string
	var mu sync.Mutex
	defer func() {
		closeAll(ctx, log, c, ids)
		lvl.Errors, lvl.ErrCount = errs.list(), errs.total()
	}()
	open := func(what string) (string, bool) {
		s, err := c.CreateSession(ctx)
		if err != nil {
			errs.add("POST /sessions ("+what+")", err)
			return "", false
		}
		mu.Lock()
		ids = append(ids, s.ID)
		mu.Unlock()
		if _, err := c.Call(ctx, s.ID, "browser_navigate", map[string]any{"url": urls[1]}); err != nil {
			errs.add("browser_navigate ("+what+")", err)
			return s.ID, false
		}
		return s.ID, true
	}
	// At most 4 at a time, so that the opening itself does not time out.
	parallel(k, 4, func(int) {
		if _, ok := open("idle"); ok {
			mu.Lock()
			lvl.Opened++
			mu.Unlock()
		}
	})
	if err := ctx.Err(); err != nil {
		return lvl, err
	}
	// The active session's first navigation is an untimed warm-up.
	id, _ := open("active")
	if id == "" {
		return lvl, fmt.Errorf("creating the active session: %s", firstMessage(errs.list()))
	}
	if err := sleepCtx(ctx, settlePause); err != nil {
		return lvl, err
	}
	for i := range cfg.Navigations {
		_, _ = rec.call(ctx, c, id, "browser_navigate", "active", map[string]any{"url": urls[i%2]})
		_, _ = rec.call(ctx, c, id, "browser_snapshot", "active", nil)
		if ctx.Err() != nil {
			return lvl, ctx.Err()
		}
	}
	lvl.Navigate, lvl.Snapshot = Summarize(rec.latencies("browser_navigate", "active")), Summarize(rec.latencies("browser_snapshot", "active"))
	return lvl, nil
}
