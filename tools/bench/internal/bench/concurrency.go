package bench

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The concurrency scenario's fixed setup. Creates start a worker process
// each: a hundred Node starts at once on two CPUs take minutes each, past any
// client's timeout. The machine is shared and has no swap: a level's load
// stops early when MemAvailable falls below minAvailableKB.
const (
	createConcurrency = 10
	minAvailableKB    = 2048 << 10
	maxIterations     = 10000
	// errorBackoff is the pause after a failed round: no hot loop against a
	// failing server.
	errorBackoff = 250 * time.Millisecond
	// settlePause lets a server's startup or the previous level's closing
	// quieten before a baseline.
	settlePause = 5 * time.Second
)

// ConcurrencyConfig configures the concurrency scenario: at each level, that
// many sessions loop navigate + get_content + browser_snapshot +
// browser_click for Duration. Nodes > 0 runs the browsers on that many local
// browser nodes; their processes are then outside the server's tree and its
// figures.
type ConcurrencyConfig struct {
	Server         ServerConfig
	Levels         []int
	Duration       time.Duration
	Pages          []string
	Nodes          int
	RequestTimeout time.Duration
	MaxIterations  int // rounds per session per level; 0: maxIterations
}

func (c *ConcurrencyConfig) Flags(fs *flag.FlagSet) {
	c.Levels, c.Pages = []int{1, 10, 25, 50, 100}, []string{"catalogue", "form"}
	fs.Var((*IntList)(&c.Levels), "levels", "numbers of concurrent sessions")
	fs.DurationVar(&c.Duration, "duration", 60*time.Second, "load duration per level: no call starts after it (the calls in flight finish; the report gives the measured window)")
	fs.Var((*PageList)(&c.Pages), "pages", "pages the sessions navigate to, in turn: `list` of form, table, catalogue")
}

func (c *ConcurrencyConfig) Check() error {
	for _, l := range c.Levels {
		if l < 1 || l > 500 {
			return fmt.Errorf("-levels: %d: want 1..500", l)
		}
	}
	if c.Duration <= 0 || c.Duration > time.Hour {
		return fmt.Errorf("-duration %s: want (0, 1h]", c.Duration)
	}
	if len(c.Levels) == 0 || len(c.Pages) == 0 {
		return fmt.Errorf("-levels, -pages: none")
	}
	return nil
}

type ConcurrencyResult struct {
	Env         map[string]string `json:"env"`
	DurationMS  float64           `json:"duration_ms"`
	Pages       []string          `json:"pages"`
	Nodes       int               `json:"nodes,omitempty"`
	ClickParam  string            `json:"click_param"`
	Levels      []LevelResult     `json:"levels"`
	Cleanup     StopReport        `json:"cleanup"`
	Interrupted bool              `json:"interrupted,omitempty"`
}

// LevelResult is one level. The calls in flight at the deadline finish and
// count, so WindowMS (the measured load) is a little longer than the
// duration. A round counts in Rounds when every call of it succeeded, in
// CutRounds when the deadline stopped it part-way. PerSession* are (memory −
// 0-session baseline) / Created in kB.
type LevelResult struct {
	Level            int                `json:"level"`
	Created          int                `json:"created"`
	CreateErrors     []ErrorCount       `json:"create_errors"`
	Create           Summary            `json:"create"`
	CreateWallMS     float64            `json:"create_wall_ms"`
	WindowMS         float64            `json:"window_ms"`
	Rounds           int                `json:"rounds"`
	CutRounds        int                `json:"cut_rounds"`
	Calls            int                `json:"calls"`
	OKCalls          int                `json:"ok_calls"`
	CallsPerSec      float64            `json:"ok_calls_per_s"`
	ErrorCount       int                `json:"error_count"`
	Errors           []ErrorCount       `json:"errors"`
	Tools            []ToolStat         `json:"tools"`
	Breakdown        []Breakdown        `json:"breakdown"`
	BreakdownErr     string             `json:"breakdown_error,omitempty"`
	Settled          bool               `json:"settled"` // false: the previous level's processes had not gone, the baseline is too high
	Baseline         MemSample          `json:"baseline_memory"`
	End              MemSample          `json:"end_of_load_memory"`
	PerSessionRSSKB  float64            `json:"per_session_end_rss_kb"`
	PerSessionPSSKB  float64            `json:"per_session_end_pss_kb"`
	PerSessionByKind map[string]float64 `json:"per_session_end_rss_kb_by_kind"`
	MemoryGuard      string             `json:"memory_guard,omitempty"`
	LoadCPU          CPUUsage           `json:"load_cpu"`
}

type ToolStat struct {
	Tool    string  `json:"tool"`
	Page    string  `json:"page,omitempty"`
	OK      int     `json:"ok"`
	Errors  int     `json:"errors"`
	PerSec  float64 `json:"ok_per_s"`
	Latency Summary `json:"latency"`
}

func RunConcurrency(ctx context.Context, log *slog.Logger, site *Site, cfg ConcurrencyConfig) (res *ConcurrencyResult, err error) {
	maxSessions := slices.Max(cfg.Levels)
	scfg := cfg.Server
	scfg.Env = copyEnv(scfg.Env)
	scfg.Env["PROXY_MAX_SESSIONS"] = strconv.Itoa(maxSessions)
	scfg.Env["PROXY_WARM_POOL"] = "1"
	res = &ConcurrencyResult{Env: scfg.Env, DurationMS: ms(cfg.Duration), Pages: cfg.Pages, Nodes: cfg.Nodes}
	if cfg.Nodes > 0 {
		// Each node can take every session and the spare: placement, not
		// capacity, is what is measured.
		endpoints, pids, stop, err := startNodes(ctx, log, scfg, cfg.Nodes, maxSessions+1)
		if err != nil {
			return res, err
		}
		defer stop()
		scfg.Env["PROXY_BROWSER_ENDPOINTS"] = endpoints
		scfg.Beside = pids
	}
	srv, c, stop, err := serve(ctx, log, scfg, cfg.RequestTimeout, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	defer stop()
	if res.ClickParam, err = c.ClickTargetParam(ctx); err != nil {
		return res, fmt.Errorf("discovering browser_click's arguments: %w", err)
	}
	if err := sleepCtx(ctx, settlePause); err != nil {
		return res, err
	}
	startProcs := len(processTree(srv.PID))
	l := &loop{c: c, site: site, clickParam: res.ClickParam}
	for _, level := range cfg.Levels {
		lr, err := runLevel(ctx, log.With("level", level), srv, l, level, startProcs, cfg)
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

func runLevel(ctx context.Context, log *slog.Logger, srv *Server, l *loop, level, startProcs int, cfg ConcurrencyConfig) (lr LevelResult, err error) {
	lr.Level = level
	if err := sleepCtx(ctx, settlePause); err != nil {
		return lr, err
	}
	if _, lr.Settled, err = srv.settle(ctx, startProcs+1, 3*time.Minute); err != nil {
		return lr, err
	}
	lr.Baseline = srv.Memory(true)
	createErrs := newErrorLog()
	var mu sync.Mutex
	var ids []string
	var createLat []float64
	t0 := time.Now()
	parallel(level, createConcurrency, func(int) {
		t := time.Now()
		s, err := l.c.CreateSession(ctx)
		if err != nil {
			createErrs.add("POST /sessions", err)
			return
		}
		mu.Lock()
		ids, createLat = append(ids, s.ID), append(createLat, ms(time.Since(t)))
		mu.Unlock()
	})
	lr.CreateWallMS = ms(time.Since(t0))
	lr.Created, lr.Create, lr.CreateErrors = len(ids), Summarize(createLat), createErrs.list()
	defer closeAll(ctx, log, l.c, ids)
	log.Info("sessions created", "ok", lr.Created, "failed", level-lr.Created, "wall", time.Since(t0).Round(time.Millisecond))
	if ctx.Err() != nil {
		return lr, ctx.Err()
	} else if lr.Created == 0 {
		return lr, fmt.Errorf("no session could be created: %v", firstMessage(lr.CreateErrors))
	}
	l.rec = newRecorder(len(ids))
	loadCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	guardDone := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(guardDone)
		for sleepCtx(loadCtx, 2*time.Second) == nil {
			if avail, ok := statusKB("/proc/meminfo", "MemAvailable"); ok && avail < minAvailableKB {
				lr.MemoryGuard = fmt.Sprintf("MemAvailable fell to %s MB (guard %s MB) %s into the load: load stopped early",
					mb(avail), mb(minAvailableKB), time.Since(start).Round(time.Second))
				log.Error("memory guard", "msg", lr.MemoryGuard)
				cancel()
			}
		}
	}()
	loadMark := markCPU(srv.PID)
	var lw sync.WaitGroup
	for i, id := range ids {
		lw.Go(func() { l.sessionLoop(ctx, loadCtx, id, i, cfg) })
	}
	lw.Wait()
	cancel()
	<-guardDone
	window := time.Since(start)
	lr.LoadCPU, lr.End, lr.WindowMS = cpuSince(loadMark, markCPU(srv.PID)), srv.Memory(true), ms(window)
	rec := l.rec
	rec.mu.Lock()
	lr.Calls, lr.OKCalls, lr.CutRounds = rec.calls, rec.ok, rec.cut
	for _, n := range rec.rounds {
		lr.Rounds += n
	}
	rec.mu.Unlock()
	lr.Tools = rec.toolStats(window)
	lr.CallsPerSec = float64(lr.OKCalls) / window.Seconds()
	lr.ErrorCount, lr.Errors = rec.errlog.total(), rec.errlog.list()
	lr.perSessionMemory()
	if lr.Breakdown, err = timeBreakdown(ctx, srv.DBPath, rec.timings); err != nil {
		lr.BreakdownErr = err.Error()
	}
	log.Info("level done", "window", window.Round(time.Millisecond), "ok_calls_per_s", fmt.Sprintf("%.2f", lr.CallsPerSec), "errors", lr.ErrorCount)
	return lr, ctx.Err()
}

func (lr *LevelResult) perSessionMemory() {
	if lr.Created <= 0 {
		return
	}
	n := float64(lr.Created)
	lr.PerSessionRSSKB = float64(lr.End.RSSKB-lr.Baseline.RSSKB) / n
	lr.PerSessionPSSKB = float64(lr.End.PSSKB-lr.Baseline.PSSKB) / n
	lr.PerSessionByKind = map[string]float64{}
	for _, k := range kinds(lr.Baseline, lr.End) {
		lr.PerSessionByKind[k] = float64(lr.End.ByKind[k].RSSKB-lr.Baseline.ByKind[k].RSSKB) / n
	}
}

type recorder struct {
	mu        sync.Mutex
	tools     map[[2]string]*toolTally
	calls, ok int // POST /call only
	ops       int // every request
	rounds    []int
	cut       int
	errlog    *errorLog
	timings   []callTiming
}

type toolTally struct {
	lat  []float64
	errs int
}

func newRecorder(sessions int) *recorder {
	return &recorder{tools: map[[2]string]*toolTally{}, errlog: newErrorLog(), rounds: make([]int, sessions)}
}

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

func (r *recorder) call(ctx context.Context, c *Client, id, tool, page string, params map[string]any) (proxy.CallResult, error) {
	t := time.Now()
	res, err := c.Call(ctx, id, tool, params)
	done := time.Now()
	r.record(tool, page, t, err)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if err == nil {
		r.ok++
		r.timings = append(r.timings, callTiming{ref: res.RefID, tool: tool, page: page, sent: t, received: done})
	}
	return res, err
}

func (r *recorder) record(tool, page string, t time.Time, err error) {
	d := ms(time.Since(t))
	r.mu.Lock()
	r.ops++
	tt := r.tools[[2]string{tool, page}]
	if tt == nil {
		tt = &toolTally{}
		r.tools[[2]string{tool, page}] = tt
	}
	if err != nil {
		tt.errs++
	} else {
		tt.lat = append(tt.lat, d)
	}
	r.mu.Unlock()
	if err != nil {
		r.errlog.add(tool+" ("+page+")", err)
	}
}

func (r *recorder) latencies(tool, page string) []float64 {
	if tt := r.tools[[2]string{tool, page}]; tt != nil {
		return tt.lat
	}
	return nil
}

// toolStats is the latency of every (tool, page) seen; PerSec is over window.
func (r *recorder) toolStats(window time.Duration) []ToolStat {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ToolStat
	for k, tt := range r.tools {
		out = append(out, ToolStat{Tool: k[0], Page: k[1], OK: len(tt.lat), Errors: tt.errs, Latency: Summarize(tt.lat), PerSec: float64(len(tt.lat)) / window.Seconds()})
	}
	slices.SortFunc(out, func(a, b ToolStat) int { return byToolPage(a.Tool, a.Page, b.Tool, b.Page) })
	return out
}

// byToolPage orders rows by tool, in a round's order, then by page.
func byToolPage(aTool, aPage, bTool, bPage string) int {
	order := func(t string) int {
		if i := slices.Index([]string{"browser_navigate", "get_content", "browser_snapshot", "browser_click"}, t); i >= 0 {
			return i
		}
		return 4
	}
	return cmp.Or(order(aTool)-order(bTool), strings.Compare(aTool, bTool), strings.Compare(aPage, bPage))
}

// loop is the traffic the concurrency and soak scenarios put on sessions.
type loop struct {
	c          *Client
	site       *Site
	clickParam string
	rec        *recorder
}

// sessionLoop is one session's concurrency load: until loadCtx ends (or
// MaxIterations rounds), a round on the next page. Requests use ctx, not
// loadCtx: a call in flight at the deadline completes and counts, so the
// measured window ends with the last of them.
func (l *loop) sessionLoop(ctx, loadCtx context.Context, id string, idx int, cfg ConcurrencyConfig) {
	rng := rand.New(rand.NewPCG(uint64(idx), 42))
	goOn := func() bool { return loadCtx.Err() == nil }
	for it := 0; it < cmp.Or(cfg.MaxIterations, maxIterations) && goOn(); it++ {
		page := cfg.Pages[(idx+it)%len(cfg.Pages)]
		_, _, completed, cut := l.round(ctx, id, Pages[page], page, rng, goOn)
		l.rec.roundEnded(idx, completed, cut)
		if !completed && !cut {
			_ = sleepCtx(loadCtx, errorBackoff)
		}
	}
}

// round is browser_navigate to page, get_content searching a button's label
// for its ref, browser_snapshot, browser_click on the ref. Before each call
// after the first, next says whether to go on: no, and the round is cut.
// It returns the navigate's and the click's answers (zero when they
// failed) and whether every call succeeded.
func (l *loop) round(ctx context.Context, id string, page Page, name string, rng *rand.Rand, next func() bool) (nav, click proxy.CallResult, completed, cut bool) {
	nav, err := l.rec.call(ctx, l.c, id, "browser_navigate", name, map[string]any{"url": l.site.PageURL(page)})
	if err != nil {
		return proxy.CallResult{}, click, false, false
	}
	if !next() {
		return nav, click, false, true
	}
	label := page.Buttons(rng.IntN(1 << 30))
	t := time.Now()
	text, err := l.c.Content(ctx, nav.RefID, label)
	l.rec.record("get_content", name, t, err)
	ref, found := "", false
	if err == nil {
		if ref, found = ButtonRef(text, label); !found {
			l.rec.errlog.add("ref extraction ("+name+")", fmt.Errorf("no button %q with a ref in the navigate snapshot (%d bytes of search result)", label, len(text)))
		}
	}
	if !next() {
		return nav, click, false, true
	}
	_, snapErr := l.rec.call(ctx, l.c, id, "browser_snapshot", name, nil)
	if !found {
		return nav, click, false, false
	}
	if !next() {
		return nav, click, false, true
	}
	click, err = l.rec.call(ctx, l.c, id, "browser_click", name, map[string]any{l.clickParam: ref, "element": label + " button"})
	return nav, click, snapErr == nil && err == nil, false
}

func serve(ctx context.Context, log *slog.Logger, scfg ServerConfig, timeout time.Duration, cleanup *StopReport, interrupted *bool) (*Server, *Client, func(), error) {
	srv, stop, err := startServer(ctx, log, scfg, cleanup, interrupted)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := NewClient(srv.URL, timeout)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	return srv, c, stop, nil
}

func parallel(n, k int, f func(i int)) {
	slots := make(chan struct{}, k)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			f(i)
		})
	}
	wg.Wait()
}

// closeAll deletes the sessions, whatever happened to ctx.
func closeAll(ctx context.Context, log *slog.Logger, c *Client, ids []string) {
	parallel(len(ids), len(ids)+1, func(i int) {
		if err := c.DeleteSession(context.WithoutCancel(ctx), ids[i]); err != nil {
			log.Warn("DELETE /sessions", "session", ids[i], "err", err)
		}
	})
}

func firstMessage(es []ErrorCount) string {
	if len(es) == 0 {
		return "no error reported"
	}
	return es[0].Message
}

func mb(kb int64) string { return fmt.Sprintf("%.0f", float64(kb)/1024) }
