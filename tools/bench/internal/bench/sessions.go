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
	"strings"
	"time"
)

// SessionsConfig configures the sessions scenario. RefillWait is the
// untimed sleep before each create so the warm pool can refill (the pool is
// not observable through the API); StartupWait the untimed pause after the
// server listens (the pool fills at startup). PlainStarts > 0 also starts a
// plain @playwright/mcp that many times from PlainRoot (default the
// server's directory), the baseline a proxy session replaces.
// ProfileCookies > 0 also times creates from a login profile of that many
// cookies over ProfileOrigins sites, ProfileStorageOrigins of them with
// localStorage, in turn with plain creates.
type SessionsConfig struct {
	Server                                                ServerConfig
	Iterations                                            int
	RefillWait, StartupWait, RequestTimeout               time.Duration
	WarmPools                                             []int
	NavPage                                               string
	PlainStarts                                           int
	PlainRoot                                             string
	ProfileCookies, ProfileOrigins, ProfileStorageOrigins int
}

// Flags registers the scenario's flags with their defaults.
func (c *SessionsConfig) Flags(fs *flag.FlagSet) {
	fs.IntVar(&c.Iterations, "n", 30, "iterations per measurement")
	fs.DurationVar(&c.RefillWait, "refill-wait", 2*time.Second, "untimed sleep before each create so the warm pool can refill")
	fs.StringVar(&c.NavPage, "nav-page", "table", "page for the navigation timings: form, table or catalogue")
	intsVar(fs, &c.WarmPools, "warm-pools", []int{1, 0}, "PROXY_WARM_POOL values to measure")
	fs.DurationVar(&c.StartupWait, "startup-wait", 5*time.Second, "untimed pause after the server listens, before the first create")
	fs.IntVar(&c.PlainStarts, "plain-n", 10, "times a plain @playwright/mcp is started and navigated, as the baseline (0: skip)")
	fs.IntVar(&c.ProfileCookies, "profile-cookies", 50, "cookies of the login profile whose creates are timed beside plain ones (0: skip)")
	fs.IntVar(&c.ProfileOrigins, "profile-origins", 10, "sites the profile's cookies are spread over")
	fs.IntVar(&c.ProfileStorageOrigins, "profile-storage-origins", 0, "of those sites, how many also hold localStorage in the profile (the browser visits each such origin to fill it)")
}

// Check refuses bad flags before anything starts.
func (c *SessionsConfig) Check() error {
	if c.Iterations <= 0 || c.Iterations > 1000 {
		return fmt.Errorf("-n %d: want 1..1000", c.Iterations)
	}
	if _, ok := Pages[c.NavPage]; !ok {
		return fmt.Errorf("-nav-page %q: want form, table or catalogue", c.NavPage)
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

// SessionsRun is the scenario against one proxy-server. Create is POST
// /sessions alone; FirstNav POST /sessions + the first browser_navigate
// timed together (FirstNavCreate and FirstNavNav its parts); ExistingNav a
// navigate in a session that has navigated once. *FromPool count creates
// whose worker existed before the request (from the warm pool).
// ProfileCreate and ProfilePlainCreate are creates from the profile and
// plain ones, in turn.
type SessionsRun struct {
	WarmPool           int               `json:"warm_pool"`
	Env                map[string]string `json:"env"`
	Create             Summary           `json:"create"`
	CreateFromPool     int               `json:"create_from_pool"`
	FirstNavFromPool   int               `json:"first_nav_create_from_pool"`
	FirstNav           Summary           `json:"create_plus_first_navigate"`
	FirstNavCreate     Summary           `json:"first_nav_create_part"`
	FirstNavNav        Summary           `json:"first_nav_navigate_part"`
	ExistingNav        Summary           `json:"navigate_existing_session"`
	Errors             []ErrorCount      `json:"errors"`
	ErrorCount         int               `json:"error_count"`
	Cleanup            StopReport        `json:"cleanup"`
	Breakdown          []Breakdown       `json:"breakdown"`
	BreakdownErr       string            `json:"breakdown_error,omitempty"`
	CPU                CPUUsage          `json:"cpu"`
	ProfileCreate      Summary           `json:"create_from_profile"`
	ProfilePlainCreate Summary           `json:"create_plain_beside_profile"`
	ProfileCookies     int               `json:"profile_cookies,omitempty"`
	ProfileOrigins     int               `json:"profile_origins,omitempty"`
	ProfileStorage     int               `json:"profile_storage_origins,omitempty"`
	ProfileFromPool    int               `json:"create_from_profile_from_pool"`
}

// RunSessions runs the scenario: for each warm-pool size a fresh
// proxy-server, then the creates, the creates with navigations and the
// profile creates, each create after the refill wait.
func RunSessions(ctx context.Context, log *slog.Logger, site *Site, cfg SessionsConfig) (res *SessionsResult, err error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	url := site.PageURL(Pages[cfg.NavPage])
	res = &SessionsResult{Iterations: cfg.Iterations, StartupWaitMS: ms(cfg.StartupWait), RefillWaitMS: ms(cfg.RefillWait), NavPage: cfg.NavPage}
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

// benchProfile is the profile the profile creates start from.
const benchProfile = "bench"

func runSessionsOnce(ctx context.Context, log *slog.Logger, navURL string, run *SessionsRun, cfg SessionsConfig) error {
	scfg := cfg.Server
	scfg.Env = copyEnv(scfg.Env)
	scfg.Env["PROXY_WARM_POOL"] = strconv.Itoa(run.WarmPool)
	run.Env = scfg.Env
	var interrupted bool
	srv, c, stop, err := serve(ctx, log, scfg, cfg.RequestTimeout, &run.Cleanup, &interrupted)
	if err != nil {
		return err
	}
	defer stop()
	errs := newErrorLog()
	defer func() { run.Errors, run.ErrorCount = errs.list(), errs.total() }()
	if err := sleepCtx(ctx, cfg.StartupWait); err != nil {
		return err
	}
	mark := markCPU(srv.PID)
	defer func() { run.CPU = cpuSince(mark, markCPU(srv.PID)) }()
	// create waits for the pool to refill, then times POST /sessions; fromPool
	// says whether the session's worker was running before (a warm one).
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
	// createOnly times a create alone, into lat, and closes the session.
	createOnly := func(lat *[]float64, fromPool *int, opts ...proxy.BrowserOptions) error {
		id, d, err := create(fromPool, opts...)
		if id != "" {
			*lat = append(*lat, ms(d))
			closeSession(id)
		}
		return err
	}
	var create1, first, firstCreate, firstNav, existing []float64
	for i := range cfg.Iterations {
		if err := createOnly(&create1, &run.CreateFromPool); err != nil {
			return err
		}
		log.Info("POST /sessions", "i", fmt.Sprintf("%d/%d", i+1, cfg.Iterations))
	}
	run.Create = Summarize(create1)
	var timings []callTiming
	navigate := func(id, tool string) (time.Duration, bool) {
		t := time.Now()
		res, err := c.Call(ctx, id, "browser_navigate", map[string]any{"url": navURL})
		d := time.Since(t)
		if err != nil {
			errs.add("browser_navigate ("+strings.TrimSuffix(tool, " navigate")+")", err)
			return d, false
		}
		timings = append(timings, callTiming{ref: res.RefID, tool: tool, page: cfg.NavPage, sent: t, received: t.Add(d)})
		return d, true
	}
	for i := range cfg.Iterations {
		id, dc, err := create(&run.FirstNavFromPool)
		if err != nil {
			return err
		} else if id == "" {
			continue
		}
		dn, ok := navigate(id, "first navigate")
		if ok {
			first, firstCreate, firstNav = append(first, ms(dc+dn)), append(firstCreate, ms(dc)), append(firstNav, ms(dn))
		}
		if err := sleepCtx(ctx, cfg.RefillWait); err != nil {
			return err
		}
		de, ok := navigate(id, "existing navigate")
		if ok {
			existing = append(existing, ms(de))
		}
		log.Info("create + first navigate", "i", fmt.Sprintf("%d/%d", i+1, cfg.Iterations), "create", dc.Round(time.Millisecond),
			"first_nav", dn.Round(time.Millisecond), "existing_nav", de.Round(time.Millisecond))
		closeSession(id)
	}
	run.FirstNav, run.FirstNavCreate, run.FirstNavNav = Summarize(first), Summarize(firstCreate), Summarize(firstNav)
	run.ExistingNav = Summarize(existing)
	if cfg.ProfileCookies > 0 {
		// The sessions close without writing back, so every create starts
		// from the same profile.
		origins := max(1, cfg.ProfileOrigins)
		storage := min(cfg.ProfileStorageOrigins, origins)
		if err := c.PutProfile(ctx, benchProfile, profileState(cfg.ProfileCookies, origins, storage)); err != nil {
			return fmt.Errorf("storing the profile: %w", err)
		}
		run.ProfileCookies, run.ProfileOrigins, run.ProfileStorage = cfg.ProfileCookies, origins, storage
		noWrite, plainFromPool := false, 0
		var prof, plain []float64
		for i := range cfg.Iterations {
			if err := createOnly(&prof, &run.ProfileFromPool, proxy.BrowserOptions{Profile: benchProfile, ProfileWrite: &noWrite}); err != nil {
				return err
			}
			if err := createOnly(&plain, &plainFromPool); err != nil {
				return err
			}
			log.Info("create from a profile / plain", "i", fmt.Sprintf("%d/%d", i+1, cfg.Iterations))
		}
		run.ProfileCreate, run.ProfilePlainCreate = Summarize(prof), Summarize(plain)
	}
	if run.Breakdown, err = timeBreakdown(ctx, srv.DBPath, timings); err != nil {
		run.BreakdownErr = err.Error()
	}
	return nil
}

// profileState is a storage state of n cookies over origins sites, the
// first storage of them with a localStorage entry, none of them reachable
// (the browser fills a site's storage without loading it, but visits each
// such origin).
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

// listFlag is a flag holding a comma-separated list, each item parsed by
// parse (spaces around items allowed).
type listFlag[T any] struct {
	p     *[]T
	parse func(string) (T, error)
}

func (f listFlag[T]) String() string {
	if f.p == nil {
		return ""
	}
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(*f.p)), ","), "[]")
}

func (f listFlag[T]) Set(s string) error {
	var out []T
	for _, part := range strings.Split(s, ",") {
		v, err := f.parse(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	*f.p = out
	return nil
}

// intsVar registers a list of non-negative integers.
func intsVar(fs *flag.FlagSet, p *[]int, name string, def []int, usage string) {
	*p = def
	fs.Var(listFlag[int]{p, func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a non-negative integer", s)
		}
		return n, nil
	}}, name, usage)
}

// pagesVar registers a list of page names.
func pagesVar(fs *flag.FlagSet, p *[]string, name string, def []string, usage string) {
	*p = def
	fs.Var(listFlag[string]{p, func(s string) (string, error) {
		if _, ok := Pages[s]; !ok {
			return "", fmt.Errorf("%q: want form, table or catalogue", s)
		}
		return s, nil
	}}, name, usage)
}
