package bench

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// ConcurrencyConfig configures the concurrency scenario.
type ConcurrencyConfig struct {
	Server ServerConfig
	// Levels are the numbers of concurrent sessions (default 1, 10, 25, 50, 100).
	Levels []int
	// Duration of the load at each level (default 60 s): no call starts
	// after it; the calls in flight then finish and count, so the measured
	// window (LevelResult.WindowMS) is a little longer.
	Duration time.Duration
	// Pages the sessions navigate to, in turn (default catalogue, form:
	// the memory scenario; "form" alone is the light page).
	Pages []string
	// MaxIterations bounds the navigate+snapshot+click rounds of one session
	// at one level, whatever the duration.
	MaxIterations int
	// WarmPool is PROXY_WARM_POOL (default 1, the product default).
	WarmPool int
	// MaxSessions is PROXY_MAX_SESSIONS (default: the largest level).
	MaxSessions int
	// CreateConcurrency bounds the creates in flight (default 10): each
	// starts a worker process, and a hundred Node starts at once on two
	// CPUs take minutes each, past any client's timeout; conversations do
	// not all begin in the same second either.
	CreateConcurrency int
	// Settle is the pause before the 0-session baseline of each level.
	Settle time.Duration
	// SampleEvery is the memory sampling period during the load.
	SampleEvery    time.Duration
	RequestTimeout time.Duration
	// ErrorBackoff is the pause after a failed round (no hot loop against a
	// failing server).
	ErrorBackoff time.Duration
	// MinAvailableKB is the memory guard: when MemAvailable falls below it
	// during a load, that level's load stops early (the machine is shared;
	// there is no swap to fall back on). 0 disables the guard.
	MinAvailableKB int64
	// Nodes, when positive, runs the browsers on that many browser nodes
	// (proxy-server browser-node, on this machine) instead of the
	// server's own; their processes are outside the server's tree, so its
	// memory and CPU figures then leave them out.
	Nodes int
}

// ConcurrencyResult is the result of the concurrency scenario.
type ConcurrencyResult struct {
	Env           map[string]string `json:"env"`
	DurationMS    float64           `json:"duration_ms"`
	Pages         []string          `json:"pages"`
	MaxIterations int               `json:"max_iterations_per_session"`
	Nodes         int               `json:"nodes,omitempty"`
	ClickParam    string            `json:"click_param"`
	StartMemory   MemSample         `json:"start_memory"`
	Levels        []LevelResult     `json:"levels"`
	Cleanup       StopReport        `json:"cleanup"`
	Interrupted   bool              `json:"interrupted,omitempty"`
}

// LevelResult is one level of the concurrency scenario.
type LevelResult struct {
	Level int `json:"level"`
	// Created is the number of sessions actually created.
	Created int `json:"created"`
	// ActiveAfterCreate is what GET /sessions lists as active afterwards.
	ActiveAfterCreate int          `json:"active_after_create"`
	CreateErrors      []ErrorCount `json:"create_errors"`
	Create            Summary      `json:"create"`
	CreateWallMS      float64      `json:"create_wall_ms"`

	// WindowMS is the measured wall time of the load: from its start
	// until the last call in flight at the deadline returned.
	WindowMS float64 `json:"window_ms"`
	// Rounds counts the rounds (navigate + get_content + browser_snapshot
	// + browser_click) in which every call succeeded; RoundsPerSession is
	// how they spread over the sessions, so a session that looped once
	// shows. CutRounds are rounds the deadline stopped part-way (their
	// finished calls count in Calls).
	Rounds           int         `json:"rounds"`
	RoundsPerSession RoundSpread `json:"rounds_per_session"`
	CutRounds        int         `json:"cut_rounds"`
	// Calls counts completed POST /call (success or not); OKCalls the
	// successful ones, CallsPerSec is OKCalls per second of the window.
	Calls       int          `json:"calls"`
	OKCalls     int          `json:"ok_calls"`
	CallsPerSec float64      `json:"ok_calls_per_s"`
	ErrorCount  int          `json:"error_count"`
	Errors      []ErrorCount `json:"errors"`
	Tools       []ToolStat   `json:"tools"`
	// Breakdown splits the latency of successful calls into before / in /
	// after the worker (from the server's record); BreakdownErr says why
	// it is missing.
	Breakdown    []Breakdown `json:"breakdown"`
	BreakdownErr string      `json:"breakdown_error,omitempty"`
	// SettleMS is how long the 0-session baseline waited for the previous
	// level's processes to go; Settled is false when it gave up.
	SettleMS float64 `json:"settle_ms"`
	Settled  bool    `json:"settled"`

	Baseline    MemSample `json:"baseline_memory"`
	Idle        MemSample `json:"idle_memory"`
	End         MemSample `json:"end_of_load_memory"`
	LoadSamples int       `json:"load_samples"`
	LoadMedian  int64     `json:"load_rss_median_kb"`
	LoadMax     int64     `json:"load_rss_max_kb"`
	// PerSession* are (memory − baseline) / Created, in kB: idle (after
	// the creates), load (median of the samples), end of the load (RSS,
	// PSS, RSS by process kind). TotalRSSPerSessionKB is the whole tree's
	// RSS at the end of the load / Created, baseline included.
	PerSessionIdleKB     float64            `json:"per_session_idle_rss_kb"`
	PerSessionKB         float64            `json:"per_session_load_rss_kb"`
	PerSessionRSSKB      float64            `json:"per_session_end_rss_kb"`
	PerSessionPSSKB      float64            `json:"per_session_end_pss_kb"`
	PerSessionByKind     map[string]float64 `json:"per_session_end_rss_kb_by_kind"`
	TotalRSSPerSessionKB float64            `json:"total_end_rss_per_session_kb"`

	// MemoryGuard is set when the load was stopped early because
	// MemAvailable fell below the guard; MinAvailableKB is the lowest
	// MemAvailable seen during the load.
	MemoryGuard    string `json:"memory_guard,omitempty"`
	MinAvailableKB int64  `json:"min_mem_available_kb"`

	// CreateCPU and LoadCPU are the machine's CPU use while the sessions
	// were created and during the load.
	CreateCPU CPUUsage `json:"create_cpu"`
	LoadCPU   CPUUsage `json:"load_cpu"`

	DBBytes     int64   `json:"db_bytes_after"`
	HealthAfter string  `json:"health_after"`
	DeleteMS    float64 `json:"delete_wall_ms"`
	DeleteErrs  int     `json:"delete_errors"`
}

// RoundSpread is how many rounds the sessions of one level completed.
type RoundSpread struct {
	Min    int     `json:"min"`
	Median float64 `json:"median"`
	Max    int     `json:"max"`
}

// spreadOf summarises rounds completed per session.
func spreadOf(perSession []int) RoundSpread {
	if len(perSession) == 0 {
		return RoundSpread{}
	}
	fs := make([]float64, len(perSession))
	sp := RoundSpread{Min: perSession[0], Max: perSession[0]}
	for i, n := range perSession {
		fs[i] = float64(n)
		sp.Min, sp.Max = min(sp.Min, n), max(sp.Max, n)
	}
	sp.Median = Percentile(fs, 50)
	return sp
}

// ToolStat is the latency of one tool on one page at one level (successful
// calls only; failures are counted in Errors).
type ToolStat struct {
	Tool    string  `json:"tool"`
	Page    string  `json:"page,omitempty"`
	OK      int     `json:"ok"`
	Errors  int     `json:"errors"`
	PerSec  float64 `json:"ok_per_s"`
	Latency Summary `json:"latency"`
}

// RunConcurrency runs the concurrency scenario on one proxy-server with
// PROXY_MAX_SESSIONS ≥ the largest level: for each level, create that many
// sessions at once, run the navigate + get_content + browser_snapshot +
// browser_click loop in each for Duration, measure, close them all.
func RunConcurrency(ctx context.Context, log *slog.Logger, site *Site, cfg ConcurrencyConfig) (res *ConcurrencyResult, err error) {
	if len(cfg.Levels) == 0 {
		cfg.Levels = []int{1, 10, 25, 50, 100}
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 60 * time.Second
	}
	if len(cfg.Pages) == 0 {
		cfg.Pages = []string{"catalogue", "form"}
	}
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = 10000
	}
	if cfg.Settle <= 0 {
		cfg.Settle = 5 * time.Second
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = 2 * time.Second
	}
	if cfg.ErrorBackoff <= 0 {
		cfg.ErrorBackoff = 250 * time.Millisecond
	}
	if cfg.CreateConcurrency <= 0 {
		cfg.CreateConcurrency = 10
	}
	maxLevel := 0
	for _, l := range cfg.Levels {
		if l <= 0 {
			return nil, fmt.Errorf("level %d: must be positive", l)
		}
		maxLevel = max(maxLevel, l)
	}
	if cfg.MaxSessions < maxLevel {
		cfg.MaxSessions = maxLevel
	}
	pages := make([]Page, 0, len(cfg.Pages))
	for _, name := range cfg.Pages {
		p, ok := Pages[name]
		if !ok {
			return nil, fmt.Errorf("unknown page %q", name)
		}
		pages = append(pages, p)
	}

	scfg := cfg.Server
	scfg.Env = copyEnv(scfg.Env)
	scfg.Env["PROXY_MAX_SESSIONS"] = strconv.Itoa(cfg.MaxSessions)
	scfg.Env["PROXY_WARM_POOL"] = strconv.Itoa(cfg.WarmPool)
	res = &ConcurrencyResult{Env: scfg.Env, DurationMS: ms(cfg.Duration), Pages: cfg.Pages, MaxIterations: cfg.MaxIterations, Nodes: cfg.Nodes}
	if cfg.Nodes > 0 {
		// Each node can take every session and the spares: placement,
		// not capacity, is what is measured.
		endpoints, stop, err := startNodes(ctx, log, scfg, cfg.Nodes, cfg.MaxSessions+cfg.WarmPool)
		if err != nil {
			return res, err
		}
		defer stop()
		scfg.Env["PROXY_BROWSER_ENDPOINTS"] = endpoints
	}
	srv, stop, err := startServer(ctx, log, scfg, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	defer stop()
	c, err := NewClient(srv.URL, cfg.RequestTimeout)
	if err != nil {
		return res, err
	}
	if res.ClickParam, err = c.ClickTargetParam(ctx); err != nil {
		return res, fmt.Errorf("discovering browser_click's arguments: %w", err)
	}
	if err := sleepCtx(ctx, cfg.Settle); err != nil {
		return res, err
	}
	res.StartMemory = srv.Memory(true)
	startProcs := len(processTree(srv.PID))
	for _, level := range cfg.Levels {
		lr, err := runLevel(ctx, log.With("level", level), srv, c, site, pages, res.ClickParam, level, startProcs, cfg)
		res.Levels = append(res.Levels, lr)
		if err != nil {
			return res, fmt.Errorf("level %d: %w", level, err)
		}
		if srv.Exited() {
			return res, fmt.Errorf("level %d: proxy-server exited during the run; log:\n%s", level, tailFile(srv.LogPath, 30))
		}
	}
	return res, nil
}

type recorder struct {
	mu    sync.Mutex
	lat   map[[2]string][]float64
	errs  map[[2]string]int
	calls int
	ok    int
	// rounds are the rounds completed by each session (by index), cut
	// those the deadline stopped part-way.
	rounds  []int
	cut     int
	errlog  *errorLog
	timings []callTiming
}

func newRecorder(sessions int) *recorder {
	return &recorder{lat: map[[2]string][]float64{}, errs: map[[2]string]int{}, errlog: newErrorLog(), rounds: make([]int, sessions)}
}

// roundEnded records the end of session idx's round: completed when every
// call of it succeeded, cut when the deadline stopped it part-way.
func (r *recorder) roundEnded(idx int, completed, cut bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if completed {
		r.rounds[idx]++
	}
	if cut {
		r.cut++
	}
}

// call runs one POST /call and records it.
func (r *recorder) call(ctx context.Context, c *Client, id, tool, page string, params map[string]any) (proxy.CallResult, error) {
	t := time.Now()
	res, err := c.Call(ctx, id, tool, params)
	done := time.Now()
	r.record(tool, page, done.Sub(t), err)
	if err == nil {
		r.mu.Lock()
		r.timings = append(r.timings, callTiming{ref: res.RefID, tool: tool, page: page, sent: t, received: done})
		r.mu.Unlock()
	}
	return res, err
}

func (r *recorder) record(tool, page string, d time.Duration, err error) {
	k := [2]string{tool, page}
	r.mu.Lock()
	if tool != "get_content" {
		r.calls++
	}
	if err != nil {
		r.errs[k]++
	} else {
		r.lat[k] = append(r.lat[k], ms(d))
		if tool != "get_content" {
			r.ok++
		}
	}
	r.mu.Unlock()
	if err != nil {
		r.errlog.add(tool+" ("+page+")", err)
	}
}

func (r *recorder) counts() (calls, ok, errs int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls, r.ok, r.errlog.total()
}

func runLevel(ctx context.Context, log *slog.Logger, srv *Server, c *Client, site *Site, pages []Page, clickParam string, level, startProcs int, cfg ConcurrencyConfig) (lr LevelResult, err error) {
	lr.Level = level
	if err := sleepCtx(ctx, cfg.Settle); err != nil {
		return lr, err
	}
	settle, settled, err := srv.settle(ctx, startProcs+1, 3*time.Minute)
	lr.SettleMS, lr.Settled = ms(settle), settled
	if err != nil {
		return lr, err
	}
	if !settled {
		log.Warn("the previous level's processes did not all go within 3 minutes: baseline taken anyway", "procs", len(processTree(srv.PID)), "want", startProcs+1)
	}
	lr.Baseline = srv.Memory(true)
	log.Info("baseline (0 sessions)", "rss_mb", mb(lr.Baseline.RSSKB), "procs", lr.Baseline.Procs)

	// Create the sessions, at most CreateConcurrency at a time.
	createErrs := newErrorLog()
	sessions := make([]string, level)
	lat := make([]float64, level)
	var wg sync.WaitGroup
	slots := make(chan struct{}, cfg.CreateConcurrency)
	createMark := markCPU(srv.PID)
	t0 := time.Now()
	for i := range level {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			t := time.Now()
			s, err := c.CreateSession(ctx)
			if err != nil {
				createErrs.add("POST /sessions", err)
				return
			}
			sessions[i], lat[i] = s.ID, ms(time.Since(t))
		})
	}
	wg.Wait()
	lr.CreateWallMS = ms(time.Since(t0))
	lr.CreateCPU = cpuSince(createMark, markCPU(srv.PID))
	var ids []string
	var createLat []float64
	for i, id := range sessions {
		if id != "" {
			ids = append(ids, id)
			createLat = append(createLat, lat[i])
		}
	}
	lr.Created, lr.Create, lr.CreateErrors = len(ids), Summarize(createLat), createErrs.list()
	defer func() {
		// Close every session of this level, whatever happened.
		dctx := context.WithoutCancel(ctx)
		t := time.Now()
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Go(func() {
				if err := c.DeleteSession(dctx, id); err != nil {
					mu.Lock()
					lr.DeleteErrs++
					mu.Unlock()
					log.Warn("DELETE /sessions", "session", id, "err", err)
				}
			})
		}
		wg.Wait()
		lr.DeleteMS = ms(time.Since(t))
		log.Info("sessions closed", "n", len(ids), "took", time.Since(t).Round(time.Millisecond), "errors", lr.DeleteErrs)
	}()
	if list, err := c.ListSessions(ctx); err == nil {
		for _, s := range list {
			if s.State == "active" {
				lr.ActiveAfterCreate++
			}
		}
	}
	log.Info("sessions created", "ok", lr.Created, "failed", level-lr.Created, "wall", time.Duration(lr.CreateWallMS*1e6).Round(time.Millisecond),
		"median", fmt.Sprintf("%.0fms", lr.Create.Median))
	for _, e := range lr.CreateErrors {
		log.Error("create failed", "count", e.Count, "err", e.Message)
	}
	if ctx.Err() != nil {
		return lr, ctx.Err()
	}
	lr.Idle = srv.Memory(false)
	if lr.Created == 0 {
		return lr, fmt.Errorf("no session could be created: %v", firstMessage(lr.CreateErrors))
	}

	// The load.
	rec := newRecorder(len(ids))
	loadCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var samples []int64
	lr.MinAvailableKB, _ = statusKB("/proc/meminfo", "MemAvailable")
	sampleDone := make(chan struct{})
	go func() {
		defer close(sampleDone)
		t := time.NewTicker(cfg.SampleEvery)
		defer t.Stop()
		progress := time.NewTicker(10 * time.Second)
		defer progress.Stop()
		start := time.Now()
		for {
			select {
			case <-loadCtx.Done():
				return
			case <-t.C:
				samples = append(samples, srv.Memory(false).RSSKB)
				if avail, ok := statusKB("/proc/meminfo", "MemAvailable"); ok {
					lr.MinAvailableKB = min(lr.MinAvailableKB, avail)
					if cfg.MinAvailableKB > 0 && avail < cfg.MinAvailableKB {
						lr.MemoryGuard = fmt.Sprintf("MemAvailable fell to %s MB (guard %s MB) %s into the load: load stopped early",
							mb(avail), mb(cfg.MinAvailableKB), time.Since(start).Round(time.Second))
						log.Error("memory guard", "msg", lr.MemoryGuard)
						cancel()
						return
					}
				}
			case <-progress.C:
				calls, ok, errs := rec.counts()
				var rss int64
				if len(samples) > 0 {
					rss = samples[len(samples)-1]
				}
				log.Info("load", "elapsed", time.Since(start).Round(time.Second), "calls", calls, "ok", ok, "errors", errs, "rss_mb", mb(rss))
			}
		}
	}()
	loadMark := markCPU(srv.PID)
	start := time.Now()
	var lw sync.WaitGroup
	for i, id := range ids {
		lw.Go(func() { sessionLoop(ctx, loadCtx, c, site, pages, clickParam, id, i, rec, cfg) })
	}
	lw.Wait()
	cancel()
	<-sampleDone
	window := time.Since(start)
	lr.LoadCPU = cpuSince(loadMark, markCPU(srv.PID))
	lr.End = srv.Memory(true)
	lr.WindowMS = ms(window)

	rec.mu.Lock()
	lr.Calls, lr.OKCalls, lr.CutRounds = rec.calls, rec.ok, rec.cut
	for _, n := range rec.rounds {
		lr.Rounds += n
	}
	lr.RoundsPerSession = spreadOf(rec.rounds)
	keys := map[[2]string]bool{}
	for k := range rec.lat {
		keys[k] = true
	}
	for k := range rec.errs {
		keys[k] = true
	}
	for k := range keys {
		ts := ToolStat{Tool: k[0], Page: k[1], OK: len(rec.lat[k]), Errors: rec.errs[k], Latency: Summarize(rec.lat[k])}
		ts.PerSec = float64(ts.OK) / window.Seconds()
		lr.Tools = append(lr.Tools, ts)
	}
	rec.mu.Unlock()
	slices.SortFunc(lr.Tools, func(a, b ToolStat) int { return byToolPage(a.Tool, a.Page, b.Tool, b.Page) })
	lr.CallsPerSec = float64(lr.OKCalls) / window.Seconds()
	lr.ErrorCount, lr.Errors = rec.errlog.total(), rec.errlog.list()

	lr.LoadSamples = len(samples)
	if len(samples) > 0 {
		fs := make([]float64, len(samples))
		for i, s := range samples {
			fs[i] = float64(s)
			lr.LoadMax = max(lr.LoadMax, s)
		}
		lr.LoadMedian = int64(Percentile(fs, 50))
	} else {
		lr.LoadMedian, lr.LoadMax = lr.End.RSSKB, lr.End.RSSKB
	}
	lr.perSessionMemory()
	if lr.Breakdown, err = timeBreakdown(ctx, srv.DBPath, rec.timings); err != nil {
		lr.BreakdownErr = err.Error()
		log.Warn("time breakdown", "err", err)
	}
	lr.DBBytes = srv.DBBytes()
	if h, err := c.Health(ctx); err == nil {
		lr.HealthAfter = h
	} else {
		lr.HealthAfter = err.Error()
	}
	log.Info("level done", "window", window.Round(time.Millisecond), "ok_calls_per_s", fmt.Sprintf("%.2f", lr.CallsPerSec), "calls", lr.Calls, "errors", lr.ErrorCount,
		"rounds_per_session_min", lr.RoundsPerSession.Min, "rounds_per_session_median", lr.RoundsPerSession.Median, "cut_rounds", lr.CutRounds,
		"rss_per_session_mb", fmt.Sprintf("%.1f", lr.PerSessionRSSKB/1024), "pss_per_session_mb", fmt.Sprintf("%.1f", lr.PerSessionPSSKB/1024), "health", lr.HealthAfter)
	for i, e := range lr.Errors {
		if i == 5 {
			break
		}
		log.Warn("error", "where", e.Where, "count", e.Count, "msg", e.Message)
	}
	return lr, ctx.Err()
}

// perSessionMemory derives the per-session memory figures from the level's
// samples: (memory − 0-session baseline) / sessions created, and the whole
// tree's end-of-load RSS / sessions created.
func (lr *LevelResult) perSessionMemory() {
	if lr.Created <= 0 {
		return
	}
	n := float64(lr.Created)
	lr.PerSessionIdleKB = float64(lr.Idle.RSSKB-lr.Baseline.RSSKB) / n
	lr.PerSessionKB = float64(lr.LoadMedian-lr.Baseline.RSSKB) / n
	lr.PerSessionRSSKB = float64(lr.End.RSSKB-lr.Baseline.RSSKB) / n
	lr.PerSessionPSSKB = float64(lr.End.PSSKB-lr.Baseline.PSSKB) / n
	lr.TotalRSSPerSessionKB = float64(lr.End.RSSKB) / n
	lr.PerSessionByKind = map[string]float64{}
	for _, k := range kinds(lr.Baseline, lr.End) {
		lr.PerSessionByKind[k] = float64(lr.End.ByKind[k].RSSKB-lr.Baseline.ByKind[k].RSSKB) / n
	}
}

// byToolPage orders rows by tool (in a round's order, then by name), then
// by page.
func byToolPage(aTool, aPage, bTool, bPage string) int {
	return cmp.Or(toolOrder(aTool)-toolOrder(bTool), strings.Compare(aTool, bTool), strings.Compare(aPage, bPage))
}

func toolOrder(t string) int {
	switch t {
	case "browser_navigate":
		return 0
	case "get_content":
		return 1
	case "browser_snapshot":
		return 2
	case "browser_click":
		return 3
	}
	return 4
}

// sessionLoop is one session's load: until loadCtx ends (or MaxIterations
// rounds), navigate to the next page, find a button's ref in the navigate's
// snapshot (GET /content with search_for), browser_snapshot, browser_click
// on that ref. No call starts once loadCtx has ended: the round then stops
// part-way and counts as cut. Requests use ctx, not loadCtx: a call in
// flight at the deadline completes and counts, so the load's measured
// window ends with the last of them.
func sessionLoop(ctx, loadCtx context.Context, c *Client, site *Site, pages []Page, clickParam, id string, idx int, rec *recorder, cfg ConcurrencyConfig) {
	rng := rand.New(rand.NewPCG(uint64(idx), 42))
	over := func() bool { return loadCtx.Err() != nil }
	for it := 0; it < cfg.MaxIterations && !over(); it++ {
		page := pages[(idx+it)%len(pages)]
		label := page.Buttons(rng.IntN(1 << 30))
		completed, cut := sessionRound(ctx, over, c, site, page, label, clickParam, id, rec)
		rec.roundEnded(idx, completed, cut)
		if !completed && !cut {
			_ = sleepCtx(loadCtx, cfg.ErrorBackoff) // no hot loop against a failing server
		}
	}
}

// sessionRound runs one round; over tells whether the deadline has passed,
// checked before each call. It reports whether every call succeeded, and
// whether the deadline stopped it part-way.
func sessionRound(ctx context.Context, over func() bool, c *Client, site *Site, page Page, label, clickParam, id string, rec *recorder) (completed, cut bool) {
	nav, err := rec.call(ctx, c, id, "browser_navigate", page.Name, map[string]any{"url": site.PageURL(page)})
	if err != nil {
		return false, false
	}
	if over() {
		return false, true
	}
	t := time.Now()
	text, err := c.Content(ctx, nav.RefID, label)
	rec.record("get_content", page.Name, time.Since(t), err)
	ref, found := "", false
	if err == nil {
		if ref, found = ButtonRef(text, label); !found {
			rec.errlog.add("ref extraction ("+page.Name+")", fmt.Errorf("no button %q with a ref in the navigate snapshot (%d bytes of search result)", label, len(text)))
		}
	}
	if over() {
		return false, true
	}
	_, snapErr := rec.call(ctx, c, id, "browser_snapshot", page.Name, nil)
	if !found {
		return false, false
	}
	if over() {
		return false, true
	}
	_, clickErr := rec.call(ctx, c, id, "browser_click", page.Name, map[string]any{clickParam: ref, "element": label + " button"})
	return snapErr == nil && clickErr == nil, false
}

func firstMessage(es []ErrorCount) string {
	if len(es) == 0 {
		return "no error reported"
	}
	return es[0].Message
}

func mb(kb int64) string { return fmt.Sprintf("%.0f", float64(kb)/1024) }
