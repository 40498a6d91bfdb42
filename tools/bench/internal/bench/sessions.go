package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"log/slog"
	"maps"
	"strconv"
	"time"
)

// The sessions scenario's fixed shape: navigations to the table page; an
// untimed pause after the server listens, because the pool fills at
// startup; a login profile of 50 cookies over 10 sites.
const (
	sessionsNavPage = "table"
	sessionsStartup = 5 * time.Second
	profileCookies  = 50
	profileOrigins  = 10
	benchProfile    = "bench"
)

// SessionsConfig configures the sessions scenario. RefillWait is the
// untimed sleep before each create so the warm pool can refill (the pool is
// not observable through the API). PlainStarts > 0 also starts a plain
// @playwright/mcp that many times from PlainRoot, the baseline a proxy
// session replaces.
type SessionsConfig struct {
	Server                ServerConfig
	Iterations            int
	RefillWait            time.Duration
	RequestTimeout        time.Duration
	WarmPools             []int
	PlainStarts           int
	PlainRoot             string
	ProfileStorageOrigins int
}

func (c *SessionsConfig) Flags(fs *flag.FlagSet) {
	fs.IntVar(&c.Iterations, "n", 30, "iterations per measurement")
	fs.DurationVar(&c.RefillWait, "refill-wait", 2*time.Second, "untimed sleep before each create so the warm pool can refill")
	c.WarmPools = []int{1, 0}
	fs.Var((*IntList)(&c.WarmPools), "warm-pools", "PROXY_WARM_POOL values to measure")
	fs.IntVar(&c.PlainStarts, "plain-n", 10, "times a plain @playwright/mcp is started and navigated, as the baseline (0: skip)")
	fs.IntVar(&c.ProfileStorageOrigins, "profile-storage-origins", 0, "of the login profile's 10 sites, how many also hold localStorage (the browser visits each such origin to fill it)")
}

func (c *SessionsConfig) Check() error {
	if c.Iterations <= 0 || c.Iterations > 1000 {
		return fmt.Errorf("-n %d: want 1..1000", c.Iterations)
	}
	return nil
}

// SessionsResult is the result of the sessions scenario; Plain is the
// baseline, a plain @playwright/mcp per conversation.
type SessionsResult struct {
	Iterations    int               `json:"iterations"`
	StartupWaitMS float64           `json:"startup_wait_ms"`
	RefillWaitMS  float64           `json:"refill_wait_ms"`
	NavPage       string            `json:"nav_page"`
	Runs          []SessionsRun     `json:"runs"`
	Plain         *PlainStartResult `json:"plain,omitempty"`
	Interrupted   bool              `json:"interrupted,omitempty"`
}

// SessionsRun is the scenario against one proxy-server. FirstNav is POST
// /sessions + the first browser_navigate timed together; ExistingNav a
// navigate in a session that has navigated once. *FromPool count creates
// whose worker existed before the request (from the warm pool).
// ProfileCreate and ProfilePlainCreate are creates from the profile and
// plain ones, in turn.
type SessionsRun struct {
	WarmPool           int               `json:"warm_pool"`
	Env                map[string]string `json:"env"`
	Create             Summary           `json:"create"`
	CreateFromPool     int               `json:"create_from_pool"`
	FirstNav           Summary           `json:"create_plus_first_navigate"`
	ExistingNav        Summary           `json:"navigate_existing_session"`
	Errors             []ErrorCount      `json:"errors"`
	ErrorCount         int               `json:"error_count"`
	Cleanup            StopReport        `json:"cleanup"`
	ProfileCreate      Summary           `json:"create_from_profile"`
	ProfilePlainCreate Summary           `json:"create_plain_beside_profile"`
	ProfileCookies     int               `json:"profile_cookies,omitempty"`
	ProfileOrigins     int               `json:"profile_origins,omitempty"`
	ProfileStorage     int               `json:"profile_storage_origins,omitempty"`
	ProfileFromPool    int               `json:"create_from_profile_from_pool"`
}

// RunSessions runs the scenario on a fresh proxy-server per warm-pool size.
func RunSessions(ctx context.Context, log *slog.Logger, site *Site, cfg SessionsConfig) (res *SessionsResult, err error) {
	url := site.PageURL(Pages[sessionsNavPage])
	res = &SessionsResult{Iterations: cfg.Iterations, StartupWaitMS: ms(sessionsStartup), RefillWaitMS: ms(cfg.RefillWait), NavPage: sessionsNavPage}
	defer func() { res.Interrupted = err != nil && ctx.Err() != nil }()
	for _, pool := range cfg.WarmPools {
		run := SessionsRun{WarmPool: pool}
		err := runSessionsOnce(ctx, log.With("warm_pool", pool), url, &run, cfg)
		if res.Runs = append(res.Runs, run); err != nil {
			return res, fmt.Errorf("sessions, warm pool %d: %w", pool, err)
		}
	}
	if cfg.PlainStarts > 0 {
		if res.Plain, err = RunPlainStart(ctx, log, cmp.Or(cfg.PlainRoot, cfg.Server.Dir), url, cfg.PlainStarts); err != nil {
			return res, fmt.Errorf("sessions, plain baseline: %w", err)
		}
	}
	return res, nil
}

func runSessionsOnce(ctx context.Context, log *slog.Logger, navURL string, run *SessionsRun, cfg SessionsConfig) error {
	srv, c, stop, err := serveRun(ctx, log, cfg.Server, map[string]string{"PROXY_WARM_POOL": strconv.Itoa(run.WarmPool)}, cfg.RequestTimeout, &run.Env, &run.Cleanup)
	if err != nil {
		return err
	}
	defer stop()
	errs := newErrorLog()
	defer func() { run.Errors, run.ErrorCount = errs.list(), errs.total() }()
	if err := sleepCtx(ctx, sessionsStartup); err != nil {
		return err
	}
	// create waits for the pool to refill, then times POST /sessions; a
	// worker that ran before the request came from the warm pool.
	create := func(fromPool *int, opts ...proxy.BrowserOptions) (string, time.Duration, error) {
		if err := sleepCtx(ctx, cfg.RefillWait); err != nil {
			return "", 0, err
		}
		before := map[int]bool{}
		for _, p := range processTree(srv.PID) {
			before[p.PID] = true
		}
		t := time.Now()
		s, err := c.CreateSession(ctx, opts...)
		if err != nil {
			errs.add("POST /sessions", err)
			return "", 0, ctx.Err()
		}
		if before[s.WorkerPID] && s.WorkerPID != 0 {
			*fromPool++
		}
		return s.ID, time.Since(t), nil
	}
	closeSession := func(id string) {
		if err := c.DeleteSession(ctx, id); err != nil {
			errs.add("DELETE /sessions", err)
		}
	}
	createOnly := func(lat *[]float64, fromPool *int, opts ...proxy.BrowserOptions) error {
		id, d, err := create(fromPool, opts...)
		if id != "" {
			*lat = append(*lat, ms(d))
			closeSession(id)
		}
		return err
	}
	navigate := func(id string) (time.Duration, bool) {
		t := time.Now()
		_, err := c.Call(ctx, id, "browser_navigate", map[string]any{"url": navURL})
		if err != nil {
			errs.add("browser_navigate", err)
		}
		return time.Since(t), err == nil
	}
	var create1, first, existing []float64
	for range cfg.Iterations {
		if err := createOnly(&create1, &run.CreateFromPool); err != nil {
			return err
		}
	}
	run.Create = Summarize(create1)
	unused := 0
	for range cfg.Iterations {
		id, dc, err := create(&unused)
		if err != nil {
			return err
		} else if id == "" {
			continue
		}
		if dn, ok := navigate(id); ok {
			first = append(first, ms(dc+dn))
		}
		if err := sleepCtx(ctx, cfg.RefillWait); err != nil {
			return err
		}
		if de, ok := navigate(id); ok {
			existing = append(existing, ms(de))
		}
		closeSession(id)
	}
	run.FirstNav, run.ExistingNav = Summarize(first), Summarize(existing)
	// The sessions close without writing back, so every create starts from
	// the same profile.
	storage := min(cfg.ProfileStorageOrigins, profileOrigins)
	if err := c.PutProfile(ctx, benchProfile, profileState(profileCookies, profileOrigins, storage)); err != nil {
		return fmt.Errorf("storing the profile: %w", err)
	}
	run.ProfileCookies, run.ProfileOrigins, run.ProfileStorage = profileCookies, profileOrigins, storage
	noWrite := false
	var prof, plain []float64
	for range cfg.Iterations {
		if err := createOnly(&prof, &run.ProfileFromPool, proxy.BrowserOptions{Profile: benchProfile, ProfileWrite: &noWrite}); err != nil {
			return err
		}
		if err := createOnly(&plain, &unused); err != nil {
			return err
		}
	}
	run.ProfileCreate, run.ProfilePlainCreate = Summarize(prof), Summarize(plain)
	return nil
}

// profileState is a storage state of n cookies over origins sites, the
// first storage of them with a localStorage entry; none is reachable: the
// browser fills a site's cookies without loading it.
func profileState(n, origins, storage int) json.RawMessage {
	expires := float64(time.Now().Add(30 * 24 * time.Hour).Unix())
	cookies, sites := []map[string]any{}, []map[string]any{}
	for i := range n {
		cookies = append(cookies, map[string]any{"name": fmt.Sprintf("c%d", i), "value": fmt.Sprintf("%032x", i*7919), "domain": fmt.Sprintf(".site%d.bench.test", i%origins),
			"path": "/", "expires": expires, "httpOnly": i%2 == 0, "secure": true, "sameSite": "Lax"})
	}
	for i := range storage {
		sites = append(sites, map[string]any{"origin": fmt.Sprintf("https://site%d.bench.test", i), "localStorage": []map[string]string{{"name": "token", "value": fmt.Sprintf("%064x", i)}}})
	}
	raw, _ := json.Marshal(map[string]any{"cookies": cookies, "origins": sites}) // maps of plain values always encode
	return raw
}

func copyEnv(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+2)
	maps.Copy(out, m)
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
