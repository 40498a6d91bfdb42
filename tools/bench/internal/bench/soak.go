package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// SoakConfig configures the soak scenario: sessions run mixed traffic with
// think-time pauses, some longer than the idle timeout, for a long time, and
// the process tree's memory and descriptors are sampled for a trend.
type SoakConfig struct {
	Server ServerConfig
	// Sessions run the traffic (default 10).
	Sessions int
	// Duration is the measured time after the warm-up (default 30 min).
	Duration time.Duration
	// Interval between samples (default 1 min).
	Interval time.Duration
	// Readings is how many readings, Interval/Readings apart, each sample
	// after the first is the mean of (default 6; 1 takes every sample at
	// one instant). An instant catches transients that are no leak: a
	// worker starting or stopping, a burst of connections, which page each
	// session happens to be on.
	Readings int
	// WarmUp is traffic before the first sample (default 1 min; at least
	// one round per session).
	WarmUp time.Duration
	// IdleTimeout is PROXY_SESSION_IDLE_TIMEOUT (default 20 s).
	IdleTimeout time.Duration
	// MaxSessions is PROXY_MAX_SESSIONS (at least max(10, Sessions)).
	MaxSessions int
	// WarmPool is PROXY_WARM_POOL (default 1).
	WarmPool int
	// LongPauseProb is the probability that the pause after a round is
	// longer than the idle timeout (default 0.2).
	LongPauseProb float64
	// Pages the sessions navigate to, at random (default catalogue, form,
	// table).
	Pages          []string
	RequestTimeout time.Duration
	// PollEvery is how often GET /sessions is polled to see suspensions
	// (default 5 s).
	PollEvery time.Duration
	// Seed makes the think times reproducible.
	Seed uint64
}

// SoakResult is the result of the soak scenario.
type SoakResult struct {
	Env        map[string]string `json:"env"`
	Sessions   int               `json:"sessions"`
	DurationMS float64           `json:"duration_ms"`
	IntervalMS float64           `json:"interval_ms"`
	// Readings is SoakConfig.Readings: every sample after the first is the
	// mean of that many readings taken over the interval before it.
	Readings int     `json:"readings_per_sample"`
	WarmUpMS float64 `json:"warm_up_ms"`
	// WarmUpTookMS is the warm-up as it happened: from the first creation
	// to the first sample.
	WarmUpTookMS  float64      `json:"warm_up_took_ms"`
	IdleTimeoutMS float64      `json:"idle_timeout_ms"`
	LongPauseProb float64      `json:"long_pause_probability"`
	Pages         []string     `json:"pages"`
	ClickParam    string       `json:"click_param"`
	Created       int          `json:"created"`
	CreateErrors  []ErrorCount `json:"create_errors"`

	Samples []SoakSample `json:"samples"`
	// Trend is one line per metric over the samples after the first
	// (warm-up) one; Verdict sums them up and VerdictRule says how.
	Trend       []TrendLine `json:"trend"`
	Verdict     string      `json:"verdict"`
	VerdictRule string      `json:"verdict_rule"`

	// Ops counts every request of the traffic (POST /call, GET /content,
	// GET /console); ErrorCount the failed ones.
	Ops        int          `json:"ops"`
	Rounds     int          `json:"rounds"`
	ErrorCount int          `json:"error_count"`
	Errors     []ErrorCount `json:"errors"`
	Tools      []ToolStat   `json:"tools"`
	// LongPauses counts pauses longer than the idle timeout; Restored the
	// calls whose metadata said "restored": true, and RestoredAfterPause
	// those that were the first call after a long pause.
	LongPauses         int `json:"long_pauses"`
	Restored           int `json:"restored_calls"`
	RestoredAfterPause int `json:"restored_after_long_pause"`
	// ResumeURLKept / ResumeURLLost: the first call after a long pause (a
	// browser_snapshot) was / was not on the page the session was on.
	ResumeURLKept int `json:"resume_url_kept"`
	ResumeURLLost int `json:"resume_url_lost"`
	// SuspensionsSeen counts active → suspended transitions seen by
	// polling GET /sessions.
	SuspensionsSeen int        `json:"suspensions_seen"`
	Cleanup         StopReport `json:"cleanup"`
	Interrupted     bool       `json:"interrupted,omitempty"`
}

// SoakSample is one sample of the soak scenario.
type SoakSample struct {
	// ElapsedS is the time since the first sample.
	ElapsedS float64   `json:"elapsed_s"`
	At       time.Time `json:"at"`
	// Memory is the whole process tree (RSS, PSS, by process kind).
	Memory      MemSample `json:"memory"`
	ServerRSSKB int64     `json:"server_rss_kb"`
	// ServerRSSAnonKB and ServerRSSFileKB split ServerRSSKB: anonymous
	// memory (heaps: Go's and SQLite's) and file-backed pages (the binary's
	// code as paths first run, mapped files), so growth can be placed.
	ServerRSSAnonKB int64 `json:"server_rss_anon_kb"`
	ServerRSSFileKB int64 `json:"server_rss_file_kb"`
	// ServerFDs and TreeFDs count /proc/PID/fd of proxy-server and of every
	// process of its tree; FDUnreadable the processes whose fds could not
	// be read.
	ServerFDs    int `json:"server_fds"`
	TreeFDs      int `json:"tree_fds"`
	FDUnreadable int `json:"fd_unreadable,omitempty"`
	// Active and Suspended are the benchmark's sessions in those states
	// (GET /sessions), rounded means of the readings; ActiveMean is the
	// unrounded mean that the trend's fit uses.
	Active     int     `json:"active"`
	Suspended  int     `json:"suspended"`
	ActiveMean float64 `json:"active_mean,omitempty"`
	// Readings is how many readings this sample is the mean of (0 in
	// results from before readings were averaged: one).
	Readings int `json:"readings,omitempty"`
	// Ops, Errors and Restored are cumulative since the sessions started.
	Ops      int `json:"ops"`
	Errors   int `json:"errors"`
	Restored int `json:"restored"`
	// Goroutines and HeapInuseKB of proxy-server from /metrics; -1 when
	// unavailable.
	Goroutines  int   `json:"goroutines"`
	HeapInuseKB int64 `json:"heap_inuse_kb"`
	// HeapRetainedKB is Go heap memory free but not yet returned to the
	// OS (heap idle − heap released): resident, and not a leak. With
	// HeapInuseKB it tells Go's part of the anonymous RSS from SQLite's
	// (modernc.org/libc allocates outside the Go heap). -1 when unavailable.
	HeapRetainedKB int64 `json:"heap_retained_kb"`
	// GoHeldKB is all the memory Go's runtime holds from the OS (heap,
	// stacks, its own metadata: sys − heap released). The anonymous RSS
	// beyond it is memory allocated outside Go's runtime, in proxy-server
	// that is SQLite's (modernc.org/libc maps its own). It counts mapped
	// pages never touched too, so it is compared with the anonymous RSS by
	// trend, not subtracted. -1 when unavailable.
	GoHeldKB int64 `json:"go_held_kb"`
	// SQLiteMappedKB is what SQLite's allocator (modernc.org/libc) has
	// mapped from the OS; only a server built with -tags memory.counters
	// reports it, else -1.
	SQLiteMappedKB int64 `json:"sqlite_mapped_kb"`
	DBBytes        int64 `json:"db_bytes"`
}

// TrendLine is the trend of one metric over the samples after warm-up.
type TrendLine struct {
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"`
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	First  float64 `json:"first"`
	Last   float64 `json:"last"`
	// RawSlopePerHour is the plain least-squares slope; SlopePerHour the
	// slope with the active-session count as a second regressor when
	// Adjusted (then PerActive is that regressor's coefficient).
	RawSlopePerHour float64 `json:"raw_slope_per_h"`
	SlopePerHour    float64 `json:"slope_per_h"`
	Adjusted        bool    `json:"adjusted_for_active_sessions"`
	PerActive       float64 `json:"per_active_session,omitempty"`
	// WindowH is the time the fit spans; Projected = SlopePerHour × WindowH.
	WindowH   float64 `json:"window_h"`
	Projected float64 `json:"projected_growth"`
	Band      float64 `json:"band"`
	BandRule  string  `json:"band_rule"`
	// Checked metrics decide the verdict; the others are shown for context.
	Checked bool   `json:"checked"`
	Verdict string `json:"verdict"`
	// HalfSlopesPerHour are the same fit over the first and the second half
	// of the samples (with at least 6): a leak keeps its slope, a warm-up's
	// flattens. Shown, not part of the verdict.
	HalfSlopesPerHour []float64 `json:"half_slopes_per_h,omitempty"`
}

const (
	verdictFlat   = "no upward trend"
	verdictUp     = "UPWARD TREND"
	verdictTooFew = "not enough samples"
)

// soakRun is the state shared by the sessions of one soak run.
type soakRun struct {
	cfg        SoakConfig
	c          *Client
	site       *Site
	pages      []Page
	clickParam string
	rec        *recorder

	mu                 sync.Mutex
	ids                []string
	ops                int
	rounds             map[string]int // by session
	longPauses         int
	restored           int
	restoredAfterPause int
	urlKept, urlLost   int
}

func (s *soakRun) op() {
	s.mu.Lock()
	s.ops++
	s.mu.Unlock()
}

// call is one POST /call, counted and timed.
func (s *soakRun) call(ctx context.Context, id, tool, page string, params map[string]any) (proxy.CallResult, bool, error) {
	res, err := s.rec.call(ctx, s.c, id, tool, page, params)
	s.op()
	restored := res.Metadata.Restored
	if restored {
		s.mu.Lock()
		s.restored++
		s.mu.Unlock()
	}
	return res, restored, err
}

// RunSoak runs the soak scenario on one proxy-server.
func RunSoak(ctx context.Context, log *slog.Logger, site *Site, cfg SoakConfig) (res *SoakResult, err error) {
	if cfg.Sessions <= 0 {
		cfg.Sessions = 10
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 30 * time.Minute
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	if cfg.Readings <= 0 {
		cfg.Readings = 6
	}
	if cfg.WarmUp < 0 {
		cfg.WarmUp = 0
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 20 * time.Second
	}
	cfg.MaxSessions = max(cfg.MaxSessions, 10, cfg.Sessions)
	if cfg.LongPauseProb < 0 || cfg.LongPauseProb > 1 {
		return nil, fmt.Errorf("long pause probability %v: want [0, 1]", cfg.LongPauseProb)
	}
	if len(cfg.Pages) == 0 {
		cfg.Pages = []string{"catalogue", "form", "table"}
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 5 * time.Second
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
	scfg.Env["PROXY_SESSION_IDLE_TIMEOUT"] = cfg.IdleTimeout.String()
	scfg.Env["PROXY_MAX_SESSIONS"] = strconv.Itoa(cfg.MaxSessions)
	scfg.Env["PROXY_WARM_POOL"] = strconv.Itoa(cfg.WarmPool)
	res = &SoakResult{Env: scfg.Env, Sessions: cfg.Sessions, DurationMS: ms(cfg.Duration), IntervalMS: ms(cfg.Interval), Readings: cfg.Readings,
		WarmUpMS: ms(cfg.WarmUp), IdleTimeoutMS: ms(cfg.IdleTimeout), LongPauseProb: cfg.LongPauseProb, Pages: cfg.Pages}

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
	run := &soakRun{cfg: cfg, c: c, site: site, pages: pages, clickParam: res.ClickParam,
		rec:    &recorder{lat: map[[2]string][]float64{}, errs: map[[2]string]int{}, errlog: newErrorLog()},
		rounds: map[string]int{}}
	defer func() {
		dctx := context.WithoutCancel(ctx)
		var wg sync.WaitGroup
		for _, id := range run.sessionIDs() {
			wg.Go(func() {
				if err := c.DeleteSession(dctx, id); err != nil {
					log.Warn("DELETE /sessions", "session", id, "err", err)
				}
			})
		}
		wg.Wait()
	}()

	// Each session starts its traffic as soon as it exists: one created
	// early would otherwise sit idle, and be suspended, while the others
	// are created. Two creations at a time: all at once on 2 CPUs only
	// makes each one slower.
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	createErrs := newErrorLog()
	sem := make(chan struct{}, 2)
	var created, wg sync.WaitGroup
	for i := range cfg.Sessions {
		created.Add(1)
		wg.Go(func() {
			sem <- struct{}{}
			s, err := c.CreateSession(ctx)
			<-sem
			if err != nil {
				createErrs.add("POST /sessions", err)
				created.Done()
				return
			}
			run.addSession(s.ID)
			created.Done()
			run.sessionLoop(ctx, loadCtx, s.ID, i)
		})
	}
	pollDone := make(chan int, 1)
	go func() { pollDone <- pollSuspensions(loadCtx, c, run.sessionIDs, cfg.PollEvery) }()
	// finish ends the traffic and sums up, also when the soak ends early:
	// the samples taken so far still say something.
	finish := func() {
		stopLoad()
		wg.Wait()
		res.SuspensionsSeen = <-pollDone
		run.fill(res)
		res.Trend, res.Verdict, res.VerdictRule = soakTrend(res.Samples)
	}
	warmStart := time.Now()
	created.Wait()
	ids := run.sessionIDs()
	res.Created, res.CreateErrors = len(ids), createErrs.list()
	log.Info("sessions created", "ok", len(ids), "failed", cfg.Sessions-len(ids), "took", time.Since(warmStart).Round(time.Millisecond))
	if len(ids) == 0 {
		finish()
		return res, fmt.Errorf("no session could be created: %v", firstMessage(res.CreateErrors))
	}

	// Warm-up: WarmUp of traffic from the first creation on, and every
	// session through one round (bounded: a session that keeps failing
	// must not stall the soak).
	if err := sleepCtx(ctx, cfg.WarmUp-time.Since(warmStart)); err != nil {
		finish()
		return res, err
	}
	for !run.allRounds() && time.Since(warmStart) < cfg.WarmUp+5*time.Minute {
		if err := sleepCtx(ctx, time.Second); err != nil {
			finish()
			return res, err
		}
	}
	res.WarmUpTookMS = ms(time.Since(warmStart))
	log.Info("warm-up done", "took", time.Since(warmStart).Round(time.Second))

	t0 := time.Now()
	n := int(cfg.Duration / cfg.Interval)
	for k := 0; k <= n; k++ {
		// Sample 0 is one reading at t0 (the trend leaves it out); sample
		// k the mean of the readings over the interval that ends at it.
		at := []time.Time{t0}
		if k > 0 {
			at = readingTimes(t0.Add(time.Duration(k-1)*cfg.Interval), cfg.Interval, cfg.Readings)
		}
		readings := make([]SoakSample, 0, len(at))
		for _, when := range at {
			if err := sleepCtx(ctx, time.Until(when)); err != nil {
				finish()
				return res, err
			}
			readings = append(readings, run.sample(ctx, srv, ids, t0))
			if srv.Exited() {
				finish()
				return res, fmt.Errorf("proxy-server exited during the soak; log:\n%s", tailFile(srv.LogPath, 30))
			}
		}
		smp := meanSample(readings)
		res.Samples = append(res.Samples, smp)
		log.Info("sample", "n", k, "elapsed", time.Duration(smp.ElapsedS*float64(time.Second)).Round(time.Second), "readings", smp.Readings,
			"rss_mb", mb(smp.Memory.RSSKB), "pss_mb", mb(smp.Memory.PSSKB), "server_rss_mb", mb(smp.ServerRSSKB),
			"server_fds", smp.ServerFDs, "tree_fds", smp.TreeFDs, "procs", smp.Memory.Procs,
			"active", math.Round(smp.ActiveMean*100)/100, "suspended", smp.Suspended, "ops", smp.Ops, "errors", smp.Errors, "restored", smp.Restored)
	}
	finish()
	log.Info("soak done", "verdict", res.Verdict, "ops", res.Ops, "errors", res.ErrorCount, "restored", res.Restored, "long_pauses", res.LongPauses)
	return res, nil
}

func (s *soakRun) addSession(id string) {
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.rounds[id] = 0
	s.mu.Unlock()
}

func (s *soakRun) sessionIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ids)
}

func (s *soakRun) allRounds() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rounds {
		if r == 0 {
			return false
		}
	}
	return true
}

// sessionLoop is one session's traffic until loadCtx ends. A round:
// browser_navigate to a random page, get_content with search_for (a
// button's label) to find its ref, browser_snapshot, browser_click on it,
// get_console_content of the click, each after a short think time. After a
// round a short pause, or (with LongPauseProb) one longer than the idle
// timeout: the session is then suspended, and the next round starts with a
// browser_snapshot that must resume it on the page it was on. Requests use
// ctx, not loadCtx, so one in flight at the end completes and counts.
func (s *soakRun) sessionLoop(ctx, loadCtx context.Context, id string, idx int) {
	rng := rand.New(rand.NewPCG(s.cfg.Seed, uint64(idx)))
	think := func() { _ = sleepCtx(loadCtx, randDur(rng, 200*time.Millisecond, 1500*time.Millisecond)) }
	lastURL, afterLong := "", false
	for loadCtx.Err() == nil {
		if afterLong {
			res, restored, err := s.call(ctx, id, "browser_snapshot", "after long pause", nil)
			if err == nil {
				url := res.Metadata.PageURL
				s.mu.Lock()
				if restored {
					s.restoredAfterPause++
				}
				if lastURL != "" && url == lastURL {
					s.urlKept++
				} else if lastURL != "" {
					s.urlLost++
					s.rec.errlog.add("resume", fmt.Errorf("after a long pause the page is %q, was %q", url, lastURL))
				}
				s.mu.Unlock()
			}
			afterLong = false
			think()
		}
		page := s.pages[rng.IntN(len(s.pages))]
		nav, _, err := s.call(ctx, id, "browser_navigate", page.Name, map[string]any{"url": s.site.PageURL(page)})
		if err != nil {
			_ = sleepCtx(loadCtx, time.Second)
			continue
		}
		if u := nav.Metadata.PageURL; u != "" {
			lastURL = u
		}
		think()
		label := page.Buttons(rng.IntN(1 << 30))
		t := time.Now()
		text, err := s.c.Content(ctx, nav.RefID, label)
		s.rec.record("get_content", page.Name, time.Since(t), err)
		s.op()
		ref, found := "", false
		if err == nil {
			if ref, found = ButtonRef(text, label); !found {
				s.rec.errlog.add("ref extraction ("+page.Name+")", fmt.Errorf("no button %q with a ref in the navigate snapshot (%d bytes of search result)", label, len(text)))
			}
		}
		think()
		_, _, _ = s.call(ctx, id, "browser_snapshot", page.Name, nil)
		consoleRef := nav.RefID
		if found {
			think()
			if click, _, err := s.call(ctx, id, "browser_click", page.Name, map[string]any{s.clickParam: ref, "element": label + " button"}); err == nil {
				consoleRef = click.RefID
			}
		}
		think()
		t = time.Now()
		_, err = s.c.Console(ctx, consoleRef, "")
		s.rec.record("get_console_content", page.Name, time.Since(t), err)
		s.op()

		s.mu.Lock()
		s.rounds[id]++
		long := rng.Float64() < s.cfg.LongPauseProb
		if long {
			s.longPauses++
		}
		s.mu.Unlock()
		if long {
			// The sweep runs every idle/4: by 1.25 × idle the session is
			// suspended; 1.5–2 × idle leaves room for the suspension itself.
			afterLong = true
			_ = sleepCtx(loadCtx, randDur(rng, s.cfg.IdleTimeout*3/2, s.cfg.IdleTimeout*2))
		} else {
			_ = sleepCtx(loadCtx, randDur(rng, time.Second, 6*time.Second))
		}
	}
}

func randDur(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(rng.Int64N(int64(hi-lo)))
}

// pollSuspensions polls GET /sessions until ctx ends and counts the
// active → suspended transitions of the sessions ids() returns.
func pollSuspensions(ctx context.Context, c *Client, ids func() []string, every time.Duration) int {
	ours := map[string]string{}
	n := 0
	for sleepCtx(ctx, every) == nil {
		for _, id := range ids() {
			if _, ok := ours[id]; !ok {
				ours[id] = "active"
			}
		}
		list, err := c.ListSessions(ctx)
		if err != nil {
			continue
		}
		for _, s := range list {
			prev, ok := ours[s.ID]
			if !ok {
				continue
			}
			if prev == "active" && s.State == "suspended" {
				n++
			}
			ours[s.ID] = string(s.State)
		}
	}
	return n
}

// sample measures the server's process tree and the sessions' states.
func (s *soakRun) sample(ctx context.Context, srv *Server, ids []string, t0 time.Time) SoakSample {
	now := time.Now()
	smp := SoakSample{ElapsedS: now.Sub(t0).Seconds(), At: now.UTC(), Goroutines: -1, HeapInuseKB: -1, HeapRetainedKB: -1, GoHeldKB: -1, SQLiteMappedKB: -1}
	smp.Memory = srv.Memory(true)
	status := filepath.Join("/proc", strconv.Itoa(srv.PID), "status")
	smp.ServerRSSKB, _ = statusKB(status, "VmRSS")
	smp.ServerRSSAnonKB, _ = statusKB(status, "RssAnon")
	smp.ServerRSSFileKB, _ = statusKB(status, "RssFile")
	smp.ServerFDs, _ = countFDs(srv.PID)
	self := os.Getpid()
	for _, p := range processTree(self) {
		if p.PID == self {
			continue
		}
		if n, ok := countFDs(p.PID); ok {
			smp.TreeFDs += n
		} else {
			smp.FDUnreadable++
		}
	}
	if list, err := s.c.ListSessions(ctx); err == nil {
		ours := map[string]bool{}
		for _, id := range ids {
			ours[id] = true
		}
		for _, x := range list {
			switch {
			case !ours[x.ID]:
			case x.State == "active":
				smp.Active++
			case x.State == "suspended":
				smp.Suspended++
			}
		}
	}
	if m, err := s.c.metrics(ctx); err == nil {
		if v, ok := m["go_goroutines"]; ok {
			smp.Goroutines = int(v)
		}
		if v, ok := m["go_memstats_heap_inuse_bytes"]; ok {
			smp.HeapInuseKB = int64(v / 1024)
		}
		idle, ok1 := m["go_memstats_heap_idle_bytes"]
		released, ok2 := m["go_memstats_heap_released_bytes"]
		if ok1 && ok2 {
			smp.HeapRetainedKB = int64((idle - released) / 1024)
		}
		if sys, ok := m["go_memstats_sys_bytes"]; ok && ok2 {
			smp.GoHeldKB = int64((sys - released) / 1024)
		}
		if v, ok := m["pwproxy_sqlite_allocator_mapped_bytes"]; ok {
			smp.SQLiteMappedKB = int64(v / 1024)
		}
	}
	smp.DBBytes = srv.DBBytes()
	s.mu.Lock()
	smp.Ops, smp.Restored = s.ops, s.restored
	s.mu.Unlock()
	smp.Errors = s.rec.errlog.total()
	return smp
}

// activeSessions is the active-session count the trend is adjusted for.
func (s SoakSample) activeSessions() float64 {
	if s.Readings > 0 {
		return s.ActiveMean
	}
	return float64(s.Active)
}

// readingTimes spreads n readings over the interval that starts at from:
// interval/n apart, the last one at its end.
func readingTimes(from time.Time, interval time.Duration, n int) []time.Time {
	out := make([]time.Time, n)
	for j := range out {
		out[j] = from.Add(interval * time.Duration(j+1) / time.Duration(n))
	}
	return out
}

// meanSample is one sample from readings: memory, descriptors, session
// counts and the server's gauges are their means (a gauge -1 in a reading
// is left out of its mean; -1 when no reading has it), ElapsedS the mean
// time; the cumulative counters, the database size and At are the last
// reading's.
func meanSample(readings []SoakSample) SoakSample {
	out := readings[len(readings)-1]
	n := len(readings)
	out.Readings = n
	mean := func(get func(SoakSample) int64) int64 {
		var sum, k int64
		for _, r := range readings {
			if x := get(r); x >= 0 {
				sum, k = sum+x, k+1
			}
		}
		if k == 0 {
			return -1
		}
		return (sum + k/2) / k
	}
	for _, field := range []func(*SoakSample) *int64{
		func(s *SoakSample) *int64 { return &s.ServerRSSKB },
		func(s *SoakSample) *int64 { return &s.ServerRSSAnonKB },
		func(s *SoakSample) *int64 { return &s.ServerRSSFileKB },
		func(s *SoakSample) *int64 { return &s.HeapInuseKB },
		func(s *SoakSample) *int64 { return &s.HeapRetainedKB },
		func(s *SoakSample) *int64 { return &s.GoHeldKB },
		func(s *SoakSample) *int64 { return &s.SQLiteMappedKB },
	} {
		*field(&out) = mean(func(s SoakSample) int64 { return *field(&s) })
	}
	for _, field := range []func(*SoakSample) *int{
		func(s *SoakSample) *int { return &s.Suspended },
		func(s *SoakSample) *int { return &s.ServerFDs },
		func(s *SoakSample) *int { return &s.TreeFDs },
		func(s *SoakSample) *int { return &s.FDUnreadable },
		func(s *SoakSample) *int { return &s.Goroutines },
	} {
		*field(&out) = int(mean(func(s SoakSample) int64 { return int64(*field(&s)) }))
	}
	var elapsed, active float64
	for _, r := range readings {
		elapsed += r.ElapsedS
		active += float64(r.Active)
	}
	out.ElapsedS, out.ActiveMean = elapsed/float64(n), active/float64(n)
	out.Active = int(math.Round(out.ActiveMean))
	mems := make([]MemSample, n)
	for i, r := range readings {
		mems[i] = r.Memory
	}
	out.Memory = meanMemory(mems)
	return out
}

// meanMemory is the mean of memory readings, kind by kind (a kind absent
// from a reading counts as no process and no memory there).
func meanMemory(ms []MemSample) MemSample {
	n := int64(len(ms))
	round := func(sum int64) int64 { return (sum + n/2) / n }
	var out MemSample
	var procs int64
	byKind := map[string][3]int64{}
	for _, m := range ms {
		procs += int64(m.Procs)
		out.RSSKB += m.RSSKB
		out.PSSKB += m.PSSKB
		for k, km := range m.ByKind {
			v := byKind[k]
			byKind[k] = [3]int64{v[0] + int64(km.Procs), v[1] + km.RSSKB, v[2] + km.PSSKB}
		}
	}
	out.Procs, out.RSSKB, out.PSSKB = int(round(procs)), round(out.RSSKB), round(out.PSSKB)
	out.ByKind = make(map[string]KindMem, len(byKind))
	for k, v := range byKind {
		out.ByKind[k] = KindMem{Procs: int(round(v[0])), RSSKB: round(v[1]), PSSKB: round(v[2])}
	}
	return out
}

// fill copies the counters into res.
func (s *soakRun) fill(res *SoakResult) {
	s.mu.Lock()
	res.Ops, res.LongPauses, res.Restored, res.RestoredAfterPause = s.ops, s.longPauses, s.restored, s.restoredAfterPause
	res.ResumeURLKept, res.ResumeURLLost = s.urlKept, s.urlLost
	for _, r := range s.rounds {
		res.Rounds += r
	}
	s.mu.Unlock()
	res.ErrorCount, res.Errors = s.rec.errlog.total(), s.rec.errlog.list()
	var window time.Duration
	if n := len(res.Samples); n > 0 {
		window = time.Duration(res.Samples[n-1].ElapsedS * float64(time.Second))
	}
	res.Tools = toolStats(s.rec, window)
}

// toolStats is the latency of every (tool, page) the recorder saw; PerSec
// is over window (0 when it is not known).
func toolStats(rec *recorder, window time.Duration) []ToolStat {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	keys := map[[2]string]bool{}
	for k := range rec.lat {
		keys[k] = true
	}
	for k := range rec.errs {
		keys[k] = true
	}
	out := make([]ToolStat, 0, len(keys))
	for k := range keys {
		ts := ToolStat{Tool: k[0], Page: k[1], OK: len(rec.lat[k]), Errors: rec.errs[k], Latency: Summarize(rec.lat[k])}
		if window > 0 {
			ts.PerSec = float64(ts.OK) / window.Seconds()
		}
		out = append(out, ts)
	}
	slices.SortFunc(out, func(a, b ToolStat) int { return byToolPage(a.Tool, a.Page, b.Tool, b.Page) })
	return out
}

// countFDs counts the open file descriptors of pid.
func countFDs(pid int) (int, bool) {
	es, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return 0, false
	}
	return len(es), true
}

// Console is GET /console/{ref_id}?level=… (get_console_content).
func (c *Client) Console(ctx context.Context, ref, level string) (string, error) {
	return c.api.Console(ctx, ref, level)
}

// metrics reads GET /metrics and returns its unlabelled samples by name.
func (c *Client) metrics(ctx context.Context) (map[string]float64, error) {
	text, err := c.get(ctx, "/metrics")
	if err != nil {
		return nil, err
	}
	return parseMetrics(text), nil
}

// parseMetrics returns the unlabelled samples of a Prometheus text
// exposition by name (labelled ones are skipped: the soak needs none).
func parseMetrics(text string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || strings.ContainsRune(line, '{') {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// soakMetric is one metric the trend looks at.
type soakMetric struct {
	name, unit string
	value      func(SoakSample) float64
	// band is the noise band for a series with this mean; nil means the
	// metric is shown, not checked.
	band     func(mean float64) float64
	bandRule string
}

func fivePercent(mean float64) float64 { return 0.05 * math.Abs(mean) }

var soakMetrics = []soakMetric{
	{"process tree RSS", "MB", func(s SoakSample) float64 { return float64(s.Memory.RSSKB) / 1024 }, fivePercent, "5 % of mean"},
	{"process tree PSS", "MB", func(s SoakSample) float64 { return float64(s.Memory.PSSKB) / 1024 }, fivePercent, "5 % of mean"},
	{"proxy-server RSS", "MB", func(s SoakSample) float64 { return float64(s.ServerRSSKB) / 1024 }, fivePercent, "5 % of mean"},
	{"proxy-server RSS, anonymous", "MB", func(s SoakSample) float64 { return float64(s.ServerRSSAnonKB) / 1024 }, nil, "shown only (part of proxy-server RSS)"},
	{"proxy-server RSS, file-backed", "MB", func(s SoakSample) float64 { return float64(s.ServerRSSFileKB) / 1024 }, nil, "shown only (part of proxy-server RSS)"},
	{"proxy-server fds", "fds", func(s SoakSample) float64 { return float64(s.ServerFDs) }, func(float64) float64 { return 2 }, "2 descriptors"},
	{"process tree fds", "fds", func(s SoakSample) float64 { return float64(s.TreeFDs) }, fivePercent, "5 % of mean"},
	{"proxy-server goroutines", "", func(s SoakSample) float64 { return float64(s.Goroutines) }, fivePercent, "5 % of mean"},
	{"processes in the tree", "", func(s SoakSample) float64 { return float64(s.Memory.Procs) }, nil, "shown only"},
	{"proxy-server Go heap in use", "MB", func(s SoakSample) float64 { return float64(s.HeapInuseKB) / 1024 }, nil, "shown only (GC-driven)"},
	{"proxy-server Go heap retained", "MB", func(s SoakSample) float64 { return float64(s.HeapRetainedKB) / 1024 }, nil, "shown only (free, not yet returned to the OS)"},
	{"proxy-server Go runtime, held", "MB", func(s SoakSample) float64 { return float64(s.GoHeldKB) / 1024 }, nil, "shown only (sys − released: heap, stacks, metadata)"},
	{"proxy-server SQLite allocator, mapped", "MB", func(s SoakSample) float64 { return float64(s.SQLiteMappedKB) / 1024 }, nil, "shown only (-tags memory.counters builds)"},
	{"database", "MB", func(s SoakSample) float64 { return float64(s.DBBytes) / 1e6 }, nil, "shown only (grows by design)"},
}

// soakVerdictRule explains soakTrend's verdict.
const soakVerdictRule = "every sample after the first is the mean of the readings taken over the minute (the interval) before it; " +
	"least-squares fit over the samples after the first (warm-up) one of y = a + b·t + c·(sessions active at the sample, mean of its readings), " +
	"so that the memory and descriptors of the sessions that happen to be live (not suspended) when a sample is taken are not mistaken for growth " +
	"(with fewer than 5 samples, or when the active count does not vary, c is dropped: y = a + b·t); b is the slope per hour; " +
	"projected growth = b × the time the samples span. A checked metric has no upward trend when its projected growth is below its noise band " +
	"(5 % of its mean for memory, tree fds and goroutines; 2 descriptors for proxy-server fds); the verdict is \"no upward trend\" when every checked metric passes. " +
	"last − first compares the last sample with the first one after warm-up."

// soakTrend fits every metric over samples[1:] and gives the verdict.
func soakTrend(samples []SoakSample) ([]TrendLine, string, string) {
	if len(samples) < 4 {
		return nil, fmt.Sprintf("%s (%d after warm-up; a trend needs at least 3)", verdictTooFew, max(0, len(samples)-1)), soakVerdictRule
	}
	after := samples[1:]
	ts := make([]float64, len(after))
	act := make([]float64, len(after))
	for i, s := range after {
		ts[i] = s.ElapsedS / 3600
		act[i] = s.activeSessions()
	}
	var up []string
	var lines []TrendLine
	for _, m := range soakMetrics {
		ys := make([]float64, len(after))
		missing := false
		for i, s := range after {
			ys[i] = m.value(s)
			if ys[i] < 0 {
				missing = true // -1: not available from /metrics
			}
		}
		if missing {
			continue
		}
		tl := trendLine(m.name, m.unit, ts, act, ys)
		tl.BandRule = m.bandRule
		if m.band != nil {
			tl.Checked = true
			tl.Band = m.band(tl.Mean)
			tl.Verdict = verdictFlat
			if tl.Projected >= tl.Band {
				tl.Verdict = verdictUp
				up = append(up, m.name)
			}
		}
		lines = append(lines, tl)
	}
	if len(up) > 0 {
		return lines, verdictUp + ": " + strings.Join(up, ", "), soakVerdictRule
	}
	return lines, verdictFlat, soakVerdictRule
}

// trendLine fits ys over ts (hours), with the active-session counts act as
// a second regressor when there are enough samples and they vary.
func trendLine(name, unit string, ts, act, ys []float64) TrendLine {
	n := len(ys)
	tl := TrendLine{Metric: name, Unit: unit, N: n, First: ys[0], Last: ys[n-1], WindowH: ts[n-1] - ts[0]}
	tl.Mean = mean(ys)
	b, c, adjusted := fitTrend(ts, act, ys)
	tl.RawSlopePerHour, _, _ = fitTrend(ts, nil, ys)
	tl.SlopePerHour, tl.Adjusted = b, adjusted
	if adjusted {
		tl.PerActive = c
	}
	tl.Projected = tl.SlopePerHour * tl.WindowH
	if h := n / 2; h >= 3 {
		first, _, _ := fitTrend(ts[:h], act[:h], ys[:h])
		second, _, _ := fitTrend(ts[n-h:], act[n-h:], ys[n-h:])
		tl.HalfSlopesPerHour = []float64{first, second}
	}
	return tl
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// fitTrend is the least-squares fit y = a + b·t + c·x on centred data; x is
// dropped (adjusted false) when it is nil, when there are fewer than 5
// points, when it does not vary, or when it is collinear with t.
func fitTrend(t, x, y []float64) (b, c float64, adjusted bool) {
	n := len(y)
	if n < 2 {
		return 0, 0, false
	}
	mt, my := mean(t), mean(y)
	var stt, sty float64
	for i := range y {
		stt += (t[i] - mt) * (t[i] - mt)
		sty += (t[i] - mt) * (y[i] - my)
	}
	if stt == 0 {
		return 0, 0, false
	}
	plain := sty / stt
	if x == nil || n < 5 {
		return plain, 0, false
	}
	mx := mean(x)
	var sxx, stx, sxy float64
	for i := range y {
		sxx += (x[i] - mx) * (x[i] - mx)
		stx += (t[i] - mt) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
	}
	det := stt*sxx - stx*stx
	if sxx == 0 || det <= 1e-9*stt*sxx {
		return plain, 0, false
	}
	return (sty*sxx - sxy*stx) / det, (stt*sxy - stx*sty) / det, true
}

func (r *SoakResult) readingsText() string {
	if r.Readings <= 1 {
		return "one reading each"
	}
	return fmt.Sprintf("after the first, each the mean of %d readings %.0f s apart", r.Readings, r.IntervalMS/1000/float64(r.Readings))
}

func (r *SoakResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== soak: %d sessions (%d created), %.0f min after a warm-up (at least %.0f s and one round per session; took %.0f s), a sample every %.0f s (%s); env %v\n",
		r.Sessions, r.Created, r.DurationMS/60000, r.WarmUpMS/1000, r.WarmUpTookMS/1000, r.IntervalMS/1000, r.readingsText(), r.Env)
	fmt.Fprintf(w, "   each round: browser_navigate (%s, at random) + get_content(search_for a button) + browser_snapshot + browser_click + get_console_content, 0.2–1.5 s think time before each; "+
		"then a 1–6 s pause, or with probability %.2f a pause of 1.5–2 × the idle timeout (%.0f s): the session is suspended, and the next round starts with a browser_snapshot that resumes it\n",
		strings.Join(r.Pages, ", "), r.LongPauseProb, r.IdleTimeoutMS/1000)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "t min\tprocs\tnode\tRSS MB\tPSS MB\tserver RSS MB\tserver fds\ttree fds\tgoroutines\theap MB\tactive\tsuspended\tops\terrors\trestored\tDB MB\t")
	for _, s := range r.Samples {
		fmt.Fprintf(tw, "%.1f\t%d\t%d\t%s\t%s\t%.1f\t%d\t%d\t%d\t%.1f\t%.1f\t%d\t%d\t%d\t%d\t%.1f\t\n",
			s.ElapsedS/60, s.Memory.Procs, s.Memory.ByKind["node"].Procs, mb(s.Memory.RSSKB), mb(s.Memory.PSSKB), float64(s.ServerRSSKB)/1024,
			s.ServerFDs, s.TreeFDs, s.Goroutines, float64(s.HeapInuseKB)/1024, s.activeSessions(), s.Suspended, s.Ops, s.Errors, s.Restored, float64(s.DBBytes)/1e6)
	}
	tw.Flush()
	if len(r.Trend) > 0 {
		fmt.Fprintln(w, "trend over the samples after the first (warm-up) one:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "metric\tunit\tn\tmean\tfirst\tlast\tlast − first\tslope/h raw\tslope/h adjusted\tper active session\tprojected over window\tband\tverdict\tslope/h 1st half → 2nd half\t")
		for _, t := range r.Trend {
			adj, per := "—", "—"
			if t.Adjusted {
				adj, per = fmt.Sprintf("%.2f", t.SlopePerHour), fmt.Sprintf("%.2f", t.PerActive)
			}
			band, verdict := t.BandRule, "(shown only)"
			if t.Checked {
				band, verdict = fmt.Sprintf("%.2f (%s)", t.Band, t.BandRule), t.Verdict
			}
			halves := "—"
			if len(t.HalfSlopesPerHour) == 2 {
				halves = fmt.Sprintf("%.2f → %.2f", t.HalfSlopesPerHour[0], t.HalfSlopesPerHour[1])
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%+.1f\t%.2f\t%s\t%s\t%+.2f\t%s\t%s\t%s\t\n",
				t.Metric, t.Unit, t.N, t.Mean, t.First, t.Last, t.Last-t.First, t.RawSlopePerHour, adj, per, t.Projected, band, verdict, halves)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "verdict: %s\nrule: %s\n", r.Verdict, r.VerdictRule)
	fmt.Fprintf(w, "traffic: %d requests in %d rounds, %d errors; %d long pauses, %d calls answered \"restored\": true (%d of them the first call after a long pause); "+
		"page after resume: %d kept, %d lost; %d active → suspended transitions seen by polling GET /sessions\n",
		r.Ops, r.Rounds, r.ErrorCount, r.LongPauses, r.Restored, r.RestoredAfterPause, r.ResumeURLKept, r.ResumeURLLost, r.SuspensionsSeen)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tpage\tok\terrors\tp50 ms\tp95 ms\tmax ms\t")
	for _, t := range r.Tools {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t\n", t.Tool, t.Page, t.OK, t.Errors, f0(t.Latency.Median), f0(t.Latency.P95), f0(t.Latency.Max))
	}
	tw.Flush()
	writeErrors(w, "create errors", len(r.CreateErrors), r.CreateErrors)
	writeErrors(w, "errors", r.ErrorCount, r.Errors)
	writeCleanup(w, r.Cleanup)
	fmt.Fprintln(w)
}
