package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// SessionsConfig configures the sessions scenario.
type SessionsConfig struct {
	Server ServerConfig
	// Iterations per measurement (default 30).
	Iterations int
	// RefillWait is the untimed sleep before each create, so the warm pool
	// can refill: the pool is not observable through the API.
	RefillWait time.Duration
	// WarmPools are the PROXY_WARM_POOL values to measure (default 1, 0).
	WarmPools []int
	// NavPage is the page navigated to (default "table").
	NavPage string
	// RequestTimeout bounds every HTTP request.
	RequestTimeout time.Duration
	// StartupWait is the untimed pause after the server listens, before the
	// first create (the warm pool fills at startup).
	StartupWait time.Duration
	// PlainStarts, if > 0, also starts a plain @playwright/mcp that many
	// times (from PlainRoot) as the baseline a proxy session replaces.
	PlainStarts int
	PlainRoot   string
	// ProfileCookies, if > 0, also times creates from a login profile of
	// that many cookies spread over ProfileOrigins sites, the first
	// ProfileStorageOrigins of them with a localStorage entry too,
	// interleaved with plain creates.
	ProfileCookies        int
	ProfileOrigins        int
	ProfileStorageOrigins int
}

// SessionsResult is the result of the sessions scenario.
type SessionsResult struct {
	Iterations    int           `json:"iterations"`
	StartupWaitMS float64       `json:"startup_wait_ms"`
	RefillWaitMS  float64       `json:"refill_wait_ms"`
	NavPage       string        `json:"nav_page"`
	Runs          []SessionsRun `json:"runs"`
	// Plain is the baseline: a plain @playwright/mcp per conversation.
	Plain       *PlainStartResult `json:"plain,omitempty"`
	Interrupted bool              `json:"interrupted,omitempty"`
}

// SessionsRun is the sessions scenario against one proxy-server.
type SessionsRun struct {
	WarmPool int               `json:"warm_pool"`
	Env      map[string]string `json:"env"`
	// Create is POST /sessions alone (then an untimed DELETE).
	Create Summary `json:"create"`
	// CreateFromPool counts creates whose worker process already existed
	// before the request was sent (it came from the warm pool).
	CreateFromPool int `json:"create_from_pool"`
	// FirstNavFromPool is the same for the creates of FirstNav.
	FirstNavFromPool int `json:"first_nav_create_from_pool"`
	// FirstNav is POST /sessions + the first browser_navigate, timed
	// together; FirstNavCreate and FirstNavNav are its two parts.
	FirstNav       Summary `json:"create_plus_first_navigate"`
	FirstNavCreate Summary `json:"first_nav_create_part"`
	FirstNavNav    Summary `json:"first_nav_navigate_part"`
	// ExistingNav is browser_navigate (same page) in a session that has
	// navigated once already.
	ExistingNav Summary      `json:"navigate_existing_session"`
	Errors      []ErrorCount `json:"errors"`
	ErrorCount  int          `json:"error_count"`
	Cleanup     StopReport   `json:"cleanup"`
	// Breakdown splits the navigations' latency into before / in / after
	// the worker (see Breakdown).
	Breakdown    []Breakdown `json:"breakdown"`
	BreakdownErr string      `json:"breakdown_error,omitempty"`
	// CPU is the machine's CPU use from the first create to the end.
	CPU CPUUsage `json:"cpu"`
	// ProfileCreate is POST /sessions {"profile"} and ProfilePlainCreate
	// a plain POST /sessions, taken in turn in the same phase; the
	// profile's cookies and origins are ProfileCookies and ProfileOrigins.
	ProfileCreate      Summary `json:"create_from_profile"`
	ProfilePlainCreate Summary `json:"create_plain_beside_profile"`
	ProfileCookies     int     `json:"profile_cookies,omitempty"`
	ProfileOrigins     int     `json:"profile_origins,omitempty"`
	ProfileStorage     int     `json:"profile_storage_origins,omitempty"`
	ProfileFromPool    int     `json:"create_from_profile_from_pool"`
}

// RunSessions runs the sessions scenario: for each warm-pool size, a fresh
// proxy-server, then Iterations × (sleep RefillWait, time POST /sessions,
// DELETE), then Iterations × (sleep, time POST /sessions + first navigate,
// sleep, time a second navigate, DELETE).
func RunSessions(ctx context.Context, log *slog.Logger, site *Site, cfg SessionsConfig) (*SessionsResult, error) {
	if cfg.Iterations <= 0 {
		cfg.Iterations = 30
	}
	if cfg.WarmPools == nil {
		cfg.WarmPools = []int{1, 0}
	}
	if cfg.NavPage == "" {
		cfg.NavPage = "table"
	}
	page, ok := Pages[cfg.NavPage]
	if !ok {
		return nil, fmt.Errorf("unknown page %q", cfg.NavPage)
	}
	res := &SessionsResult{Iterations: cfg.Iterations, StartupWaitMS: ms(cfg.StartupWait), RefillWaitMS: ms(cfg.RefillWait), NavPage: cfg.NavPage}
	for _, pool := range cfg.WarmPools {
		run, err := runSessionsOnce(ctx, log, site.PageURL(page), pool, cfg)
		if run != nil {
			res.Runs = append(res.Runs, *run)
		}
		if err != nil {
			res.Interrupted = ctx.Err() != nil
			return res, fmt.Errorf("sessions, warm pool %d: %w", pool, err)
		}
	}
	if cfg.PlainStarts > 0 {
		var err error
		if res.Plain, err = RunPlainStart(ctx, log, cfg.PlainRoot, site.PageURL(page), cfg.PlainStarts); err != nil {
			res.Interrupted = ctx.Err() != nil
			return res, fmt.Errorf("sessions, plain baseline: %w", err)
		}
	}
	return res, nil
}

func runSessionsOnce(ctx context.Context, log *slog.Logger, navURL string, pool int, cfg SessionsConfig) (run *SessionsRun, err error) {
	scfg := cfg.Server
	scfg.Env = copyEnv(scfg.Env)
	scfg.Env["PROXY_WARM_POOL"] = strconv.Itoa(pool)
	run = &SessionsRun{WarmPool: pool, Env: scfg.Env}
	srv, err := StartServer(ctx, log, scfg)
	if err != nil {
		return run, err
	}
	defer func() { run.Cleanup = srv.Stop(context.WithoutCancel(ctx)) }()
	c, err := NewClient(srv.URL, cfg.RequestTimeout)
	if err != nil {
		return run, err
	}
	errs := newErrorLog()
	defer func() { run.Errors, run.ErrorCount = errs.list(), errs.total() }()
	n := cfg.Iterations
	plog := log.With("warm_pool", pool)

	if err := sleepCtx(ctx, cfg.StartupWait); err != nil {
		return run, err
	}
	mark := markCPU(srv.PID)
	defer func() { run.CPU = cpuSince(mark, markCPU(srv.PID)) }()
	// 1. POST /sessions alone.
	var create []float64
	for i := range n {
		s, d, fromPool, err := timedCreate(ctx, c, srv.PID, cfg.RefillWait)
		if err != nil {
			if ctx.Err() != nil {
				return run, ctx.Err()
			}
			errs.add("POST /sessions", err)
			plog.Warn("create failed", "i", i+1, "err", err)
			continue
		}
		create = append(create, ms(d))
		if fromPool {
			run.CreateFromPool++
		}
		plog.Info("POST /sessions", "i", fmt.Sprintf("%d/%d", i+1, n), "took", d.Round(time.Millisecond), "from_pool", fromPool)
		if err := c.DeleteSession(ctx, s.ID); err != nil {
			errs.add("DELETE /sessions", err)
		}
	}
	run.Create = Summarize(create)

	// 2. Create + first navigate, then a navigate in the existing session.
	var first, firstCreate, firstNav, existing []float64
	var timings []callTiming
	// navigate times one navigation and keeps its timing for the breakdown.
	navigate := func(id, tool, what string) (time.Duration, error) {
		t := time.Now()
		res, err := c.Call(ctx, id, "browser_navigate", map[string]any{"url": navURL})
		d := time.Since(t)
		if err != nil {
			errs.add(what, err)
			return d, err
		}
		timings = append(timings, callTiming{ref: res.RefID, tool: tool, page: cfg.NavPage, sent: t, received: t.Add(d)})
		return d, nil
	}
	for i := range n {
		s, dc, fromPool, err := timedCreate(ctx, c, srv.PID, cfg.RefillWait)
		if err != nil {
			if ctx.Err() != nil {
				return run, ctx.Err()
			}
			errs.add("POST /sessions", err)
			continue
		}
		if fromPool {
			run.FirstNavFromPool++
		}
		dn, err := navigate(s.ID, "first navigate", "browser_navigate (first)")
		if err == nil {
			first = append(first, ms(dc+dn))
			firstCreate = append(firstCreate, ms(dc))
			firstNav = append(firstNav, ms(dn))
		}
		if err := sleepCtx(ctx, cfg.RefillWait); err != nil {
			return run, err
		}
		de, err := navigate(s.ID, "existing navigate", "browser_navigate (existing)")
		if err == nil {
			existing = append(existing, ms(de))
		}
		plog.Info("create + first navigate", "i", fmt.Sprintf("%d/%d", i+1, n), "create", dc.Round(time.Millisecond),
			"first_nav", dn.Round(time.Millisecond), "existing_nav", de.Round(time.Millisecond))
		if err := c.DeleteSession(ctx, s.ID); err != nil {
			errs.add("DELETE /sessions", err)
		}
	}
	run.FirstNav, run.FirstNavCreate, run.FirstNavNav = Summarize(first), Summarize(firstCreate), Summarize(firstNav)
	run.ExistingNav = Summarize(existing)
	if cfg.ProfileCookies > 0 {
		if err := timeProfileCreates(ctx, plog, c, srv.PID, run, errs, cfg); err != nil {
			return run, err
		}
	}
	if run.Breakdown, err = timeBreakdown(ctx, srv.DBPath, timings); err != nil {
		run.BreakdownErr = err.Error()
	}
	return run, nil
}

// timedCreate waits refill (for the warm pool), then times POST /sessions;
// fromPool says whether the session's worker was running before (a warm
// one).
func timedCreate(ctx context.Context, c *Client, server int, refill time.Duration) (s *proxy.Session, d time.Duration, fromPool bool, err error) {
	if err := sleepCtx(ctx, refill); err != nil {
		return nil, 0, false, err
	}
	before := workerPIDs(server)
	t := time.Now()
	s, err = c.CreateSession(ctx)
	d = time.Since(t)
	if err != nil {
		return nil, d, false, err
	}
	return s, d, s.WorkerPID != 0 && before[s.WorkerPID], nil
}

// benchProfile is the profile the profile creates start from.
const benchProfile = "bench"

// timeProfileCreates stores a profile of cfg.ProfileCookies cookies over
// cfg.ProfileOrigins origins, then times creates from it and plain
// creates in turn, each after the refill wait. The sessions are closed
// without writing back, so every create starts from the same profile.
func timeProfileCreates(ctx context.Context, log *slog.Logger, c *Client, server int, run *SessionsRun, errs *errorLog, cfg SessionsConfig) error {
	origins := max(1, cfg.ProfileOrigins)
	storage := min(cfg.ProfileStorageOrigins, origins)
	if err := c.PutProfile(ctx, benchProfile, profileState(cfg.ProfileCookies, origins, storage)); err != nil {
		return fmt.Errorf("storing the profile: %w", err)
	}
	run.ProfileCookies, run.ProfileOrigins, run.ProfileStorage = cfg.ProfileCookies, origins, storage
	noWrite := false
	var plain, prof []float64
	for i := range cfg.Iterations {
		for _, withProfile := range []bool{true, false} {
			if err := sleepCtx(ctx, cfg.RefillWait); err != nil {
				return err
			}
			var opts []proxy.BrowserOptions
			if withProfile {
				opts = append(opts, proxy.BrowserOptions{Profile: benchProfile, ProfileWrite: &noWrite})
			}
			before := workerPIDs(server)
			t0 := time.Now()
			s, err := c.CreateSession(ctx, opts...)
			d := time.Since(t0)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				errs.add("POST /sessions (profile pairs)", err)
				continue
			}
			if withProfile {
				prof = append(prof, ms(d))
				if before[s.WorkerPID] {
					run.ProfileFromPool++
				}
			} else {
				plain = append(plain, ms(d))
			}
			if err := c.DeleteSession(ctx, s.ID); err != nil {
				errs.add("DELETE /sessions", err)
			}
		}
		log.Info("create from a profile / plain", "i", fmt.Sprintf("%d/%d", i+1, cfg.Iterations))
	}
	run.ProfileCreate, run.ProfilePlainCreate = Summarize(prof), Summarize(plain)
	return nil
}

// profileState is a storage state of n cookies over origins sites, the
// first storage of them with a localStorage entry, none of them reachable
// (the browser fills a site's storage without loading it, but visits
// each such origin).
func profileState(n, origins, storage int) json.RawMessage {
	type cookie struct {
		Name     string  `json:"name"`
		Value    string  `json:"value"`
		Domain   string  `json:"domain"`
		Path     string  `json:"path"`
		Expires  float64 `json:"expires"`
		HTTPOnly bool    `json:"httpOnly"`
		Secure   bool    `json:"secure"`
		SameSite string  `json:"sameSite"`
	}
	type kv struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	type origin struct {
		Origin       string `json:"origin"`
		LocalStorage []kv   `json:"localStorage"`
	}
	st := struct {
		Cookies []cookie `json:"cookies"`
		Origins []origin `json:"origins"`
	}{Cookies: []cookie{}, Origins: []origin{}}
	expires := float64(time.Now().Add(30 * 24 * time.Hour).Unix())
	for i := range n {
		site := fmt.Sprintf("site%d.bench.test", i%origins)
		st.Cookies = append(st.Cookies, cookie{Name: fmt.Sprintf("c%d", i), Value: fmt.Sprintf("%032x", i*7919), Domain: "." + site, Path: "/",
			Expires: expires, HTTPOnly: i%2 == 0, Secure: true, SameSite: "Lax"})
	}
	for i := range storage {
		st.Origins = append(st.Origins, origin{Origin: fmt.Sprintf("https://site%d.bench.test", i), LocalStorage: []kv{{Name: "token", Value: fmt.Sprintf("%064x", i)}}})
	}
	raw, _ := json.Marshal(st) // plain structs always encode
	return raw
}

// workerPIDs is the set of processes in the server's tree: a create whose
// worker_pid is in the set taken before the request got a pre-started worker.
func workerPIDs(server int) map[int]bool {
	out := map[int]bool{}
	for _, p := range processTree(server) {
		out[p.PID] = true
	}
	return out
}

func copyEnv(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
