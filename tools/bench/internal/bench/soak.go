package bench

import (
	"cmp"
	"context"
	"flag"
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
	"time"
)

// SoakConfig configures the soak scenario: sessions run mixed traffic with
// think-time pauses, some longer than the idle timeout, for a long time, and
// the process tree's memory and descriptors are sampled for a trend. Every
// sample after the first is the mean of Readings readings over the interval
// before it: an instant catches transients that are no leak (a worker
// starting, a burst of connections, the page each session is on).
type SoakConfig struct {
	Server                      ServerConfig
	Sessions, Readings          int
	Duration, Interval, WarmUp  time.Duration
	IdleTimeout, RequestTimeout time.Duration
	LongPauseProb               float64
	Pages                       []string
}

func (c *SoakConfig) Flags(fs *flag.FlagSet) {
	fs.IntVar(&c.Sessions, "sessions", 10, "sessions running traffic")
	fs.DurationVar(&c.Duration, "duration", 30*time.Minute, "measured time after the warm-up")
	fs.DurationVar(&c.Interval, "interval", time.Minute, "time between samples")
	fs.IntVar(&c.Readings, "readings", 6, "readings averaged into each sample after the first, spread over the interval before it")
	fs.DurationVar(&c.WarmUp, "warmup", time.Minute, "traffic before the first sample (which the trend leaves out)")
	fs.DurationVar(&c.IdleTimeout, "idle", 20*time.Second, "PROXY_SESSION_IDLE_TIMEOUT")
	fs.Float64Var(&c.LongPauseProb, "long-pause", 0.2, "probability that the pause after a round is longer than the idle timeout (the session is suspended, then resumed)")
	c.Pages = []string{"catalogue", "form", "table"}
	fs.Var((*PageList)(&c.Pages), "pages", "pages the sessions navigate to, at random")
}

func (c *SoakConfig) Check() error {
	switch {
	case c.Sessions < 1 || c.Sessions > 100:
		return fmt.Errorf("-sessions %d: want 1..100", c.Sessions)
	case c.Interval <= 0 || c.Duration < c.Interval || c.Duration > 48*time.Hour:
		return fmt.Errorf("-duration %s, -interval %s: want 0 < interval ≤ duration ≤ 48h", c.Duration, c.Interval)
	case c.Readings < 1 || c.Readings > 60 || c.Interval/time.Duration(c.Readings) < time.Second:
		return fmt.Errorf("-readings %d: want 1..60 and readings at least 1s apart (-interval %s)", c.Readings, c.Interval)
	case c.IdleTimeout < time.Second:
		return fmt.Errorf("-idle %s: want at least 1s", c.IdleTimeout)
	case c.LongPauseProb < 0 || c.LongPauseProb > 1:
		return fmt.Errorf("-long-pause %v: want 0..1", c.LongPauseProb)
	case len(c.Pages) == 0:
		return fmt.Errorf("-pages: none")
	}
	return nil
}

// SoakResult is the result of the soak scenario. ResumeURLKept/Lost say
// whether the first call after a long pause found the page the session was
// on.
type SoakResult struct {
	Env           map[string]string `json:"env"`
	Sessions      int               `json:"sessions"`
	DurationMS    float64           `json:"duration_ms"`
	IntervalMS    float64           `json:"interval_ms"`
	Readings      int               `json:"readings_per_sample"`
	WarmUpMS      float64           `json:"warm_up_ms"`
	IdleTimeoutMS float64           `json:"idle_timeout_ms"`
	LongPauseProb float64           `json:"long_pause_probability"`
	Pages         []string          `json:"pages"`
	Created       int               `json:"created"`
	Samples       []SoakSample      `json:"samples"`
	Trend         []TrendLine       `json:"trend"`
	Verdict       string            `json:"verdict"`
	VerdictRule   string            `json:"verdict_rule"`
	Ops           int               `json:"ops"`
	Rounds        int               `json:"rounds"`
	ErrorCount    int               `json:"error_count"`
	Errors        []ErrorCount      `json:"errors"`
	LongPauses    int               `json:"long_pauses"`
	ResumeURLKept int               `json:"resume_url_kept"`
	ResumeURLLost int               `json:"resume_url_lost"`
	Cleanup       StopReport        `json:"cleanup"`
	Interrupted   bool              `json:"interrupted,omitempty"`
}

// SoakSample is one sample. Go's gauges come from /metrics (-1 when
// unavailable); SQLiteMappedKB only a server built with -tags
// memory.counters reports. Active is rounded, ActiveMean the mean of the
// readings that the fit uses; Ops and Errors are cumulative.
type SoakSample struct {
	ElapsedS       float64   `json:"elapsed_s"`
	At             time.Time `json:"at"`
	Memory         MemSample `json:"memory"`
	ServerRSSKB    int64     `json:"server_rss_kb"`
	ServerFDs      int       `json:"server_fds"`
	TreeFDs        int       `json:"tree_fds"`
	Active         int       `json:"active"`
	Suspended      int       `json:"suspended"`
	ActiveMean     float64   `json:"active_mean,omitempty"`
	Readings       int       `json:"readings,omitempty"`
	Ops            int       `json:"ops"`
	Errors         int       `json:"errors"`
	Goroutines     int       `json:"goroutines"`
	HeapInuseKB    int64     `json:"heap_inuse_kb"`
	SQLiteMappedKB int64     `json:"sqlite_mapped_kb"`
	DBBytes        int64     `json:"db_bytes"`
}

// TrendLine is the trend of one metric over the samples after warm-up:
// RawSlopePerHour the plain fit, SlopePerHour the one adjusted for the
// active sessions when Adjusted; Projected = SlopePerHour × WindowH. The
// halves' slopes are shown, not judged: a leak keeps its slope, a warm-up's
// flattens.
type TrendLine struct {
	Metric            string    `json:"metric"`
	Unit              string    `json:"unit"`
	N                 int       `json:"n"`
	Mean              float64   `json:"mean"`
	First             float64   `json:"first"`
	Last              float64   `json:"last"`
	RawSlopePerHour   float64   `json:"raw_slope_per_h"`
	SlopePerHour      float64   `json:"slope_per_h"`
	Adjusted          bool      `json:"adjusted_for_active_sessions"`
	PerActive         float64   `json:"per_active_session,omitempty"`
	WindowH           float64   `json:"window_h"`
	Projected         float64   `json:"projected_growth"`
	Band              float64   `json:"band"`
	BandRule          string    `json:"band_rule"`
	Checked           bool      `json:"checked"`
	Verdict           string    `json:"verdict"`
	HalfSlopesPerHour []float64 `json:"half_slopes_per_h,omitempty"`
}

const (
	verdictFlat   = "no upward trend"
	verdictUp     = "UPWARD TREND"
	verdictTooFew = "not enough samples"
)

// soakRun is the state shared by the sessions of one soak run, under
// rec.mu.
type soakRun struct {
	loop
	cfg                          SoakConfig
	longPauses, urlKept, urlLost int
}

// RunSoak runs the soak scenario on one proxy-server.
func RunSoak(ctx context.Context, log *slog.Logger, site *Site, cfg SoakConfig) (res *SoakResult, err error) {
	scfg := cfg.Server
	scfg.Env = copyEnv(scfg.Env)
	scfg.Env["PROXY_SESSION_IDLE_TIMEOUT"] = cfg.IdleTimeout.String()
	scfg.Env["PROXY_MAX_SESSIONS"] = strconv.Itoa(max(10, cfg.Sessions))
	scfg.Env["PROXY_WARM_POOL"] = "1"
	res = &SoakResult{Env: scfg.Env, Sessions: cfg.Sessions, DurationMS: ms(cfg.Duration), IntervalMS: ms(cfg.Interval), Readings: cfg.Readings,
		WarmUpMS: ms(cfg.WarmUp), IdleTimeoutMS: ms(cfg.IdleTimeout), LongPauseProb: cfg.LongPauseProb, Pages: cfg.Pages}
	srv, c, stop, err := serve(ctx, log, scfg, cfg.RequestTimeout, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	defer stop()
	clickParam, err := c.ClickTargetParam(ctx)
	if err != nil {
		return res, fmt.Errorf("discovering browser_click's arguments: %w", err)
	}
	s := &soakRun{loop: loop{c: c, site: site, clickParam: clickParam, rec: newRecorder(cfg.Sessions)}, cfg: cfg}
	var ids []string
	defer func() { closeAll(ctx, log, c, ids) }()
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var wg sync.WaitGroup
	// finish ends the traffic and sums up, also when the soak ends early:
	// the samples taken so far still say something.
	finish := func(err error) (*SoakResult, error) {
		stopLoad()
		wg.Wait()
		s.fill(res)
		res.Trend, res.Verdict, res.VerdictRule = soakTrend(res.Samples)
		return res, err
	}
	// Each session starts its traffic as soon as it exists: one created
	// early would otherwise sit idle, and be suspended, while the others
	// are created. Two creations at a time: more on 2 CPUs only makes each
	// one slower.
	warmStart := time.Now()
	parallel(cfg.Sessions, 2, func(i int) {
		sess, err := c.CreateSession(ctx)
		if err != nil {
			s.rec.errlog.add("POST /sessions", err)
			return
		}
		s.rec.mu.Lock()
		ids = append(ids, sess.ID)
		s.rec.mu.Unlock()
		wg.Go(func() { s.sessionLoop(ctx, loadCtx, sess.ID, i) })
	})
	if res.Created = len(ids); len(ids) == 0 {
		return finish(fmt.Errorf("no session could be created: %v", firstMessage(s.rec.errlog.list())))
	}
	if err := sleepCtx(ctx, cfg.WarmUp-time.Since(warmStart)); err != nil {
		return finish(err)
	}
	t0 := time.Now()
	for k := 0; k <= int(cfg.Duration/cfg.Interval); k++ {
		// Sample 0 is one reading at t0 (the trend leaves it out); sample k
		// the mean of the readings over the interval that ends at it.
		at := []time.Time{t0}
		if k > 0 {
			at = readingTimes(t0.Add(time.Duration(k-1)*cfg.Interval), cfg.Interval, cfg.Readings)
		}
		var readings []SoakSample
		for _, when := range at {
			if err := sleepCtx(ctx, time.Until(when)); err != nil {
				return finish(err)
			}
			readings = append(readings, s.sample(ctx, srv, ids, t0))
			if srv.Exited() {
				return finish(fmt.Errorf("proxy-server exited during the soak; log:\n%s", tailFile(srv.LogPath, 30)))
			}
		}
		smp := meanSample(readings)
		res.Samples = append(res.Samples, smp)
		log.Info("sample", "n", k, "rss_mb", mb(smp.Memory.RSSKB), "server_rss_mb", mb(smp.ServerRSSKB), "server_fds", smp.ServerFDs, "errors", smp.Errors)
	}
	return finish(nil)
}

// sessionLoop is one session's traffic until loadCtx ends: a round on a
// random page with a think time before each call, then
// get_console_content of the click. After a round a short pause, or (with
// LongPauseProb) one longer than the idle timeout: the session is then
// suspended, and the next round starts with a browser_snapshot that must
// resume it on the page it was on. Requests use ctx, not loadCtx, so one in
// flight at the end completes and counts.
func (s *soakRun) sessionLoop(ctx, loadCtx context.Context, id string, idx int) {
	rng := rand.New(rand.NewPCG(1, uint64(idx)))
	pause := func(lo, hi time.Duration) { _ = sleepCtx(loadCtx, lo+time.Duration(rng.Int64N(int64(hi-lo)+1))) }
	think := func() bool { pause(200*time.Millisecond, 1500*time.Millisecond); return true }
	lastURL, afterLong := "", false
	for loadCtx.Err() == nil {
		if afterLong {
			if snap, err := s.rec.call(ctx, s.c, id, "browser_snapshot", "after long pause", nil); err == nil && lastURL != "" {
				s.rec.mu.Lock()
				if url := snap.Metadata.PageURL; url == lastURL {
					s.urlKept++
				} else {
					s.urlLost++
					s.rec.errlog.add("resume", fmt.Errorf("after a long pause the page is %q, was %q", url, lastURL))
				}
				s.rec.mu.Unlock()
			}
			afterLong = false
			think()
		}
		name := s.cfg.Pages[rng.IntN(len(s.cfg.Pages))]
		nav, click, _, _ := s.round(ctx, id, Pages[name], name, rng, think)
		if nav.RefID == "" {
			_ = sleepCtx(loadCtx, time.Second)
			continue
		}
		lastURL = cmp.Or(nav.Metadata.PageURL, lastURL)
		think()
		t := time.Now()
		_, err := s.c.Console(ctx, cmp.Or(click.RefID, nav.RefID), "")
		s.rec.record("get_console_content", name, t, err)
		s.rec.roundEnded(idx, true, false)
		if afterLong = rng.Float64() < s.cfg.LongPauseProb; afterLong {
			s.rec.mu.Lock()
			s.longPauses++
			s.rec.mu.Unlock()
			// The sweep runs every idle/4: by 1.25 × idle the session is
			// suspended; 1.5–2 × idle leaves room for the suspension itself.
			pause(s.cfg.IdleTimeout*3/2, s.cfg.IdleTimeout*2)
		} else {
			pause(time.Second, 6*time.Second)
		}
	}
}

func (s *soakRun) fill(res *SoakResult) {
	s.rec.mu.Lock()
	res.LongPauses, res.ResumeURLKept, res.ResumeURLLost, res.Ops = s.longPauses, s.urlKept, s.urlLost, s.rec.ops
	for _, n := range s.rec.rounds {
		res.Rounds += n
	}
	s.rec.mu.Unlock()
	res.ErrorCount, res.Errors = s.rec.errlog.total(), s.rec.errlog.list()
}

func (s *soakRun) sample(ctx context.Context, srv *Server, ids []string, t0 time.Time) SoakSample {
	now := time.Now()
	smp := SoakSample{ElapsedS: now.Sub(t0).Seconds(), At: now.UTC(), Memory: srv.Memory(true), DBBytes: srv.DBBytes(),
		Goroutines: -1, HeapInuseKB: -1, SQLiteMappedKB: -1}
	smp.ServerRSSKB, _ = statusKB(filepath.Join("/proc", strconv.Itoa(srv.PID), "status"), "VmRSS")
	smp.ServerFDs = countFDs(srv.PID)
	for _, p := range processTree(os.Getpid()) {
		if p.PID != os.Getpid() {
			smp.TreeFDs += countFDs(p.PID)
		}
	}
	if list, err := s.c.ListSessions(ctx); err == nil {
		for _, x := range list {
			if slices.Contains(ids, x.ID) && x.State == "active" {
				smp.Active++
			} else if slices.Contains(ids, x.ID) && x.State == "suspended" {
				smp.Suspended++
			}
		}
	}
	if text, err := s.c.get(ctx, "/metrics"); err == nil {
		m := parseMetrics(text)
		for p, name := range map[*int64]string{&smp.HeapInuseKB: "go_memstats_heap_inuse_bytes", &smp.SQLiteMappedKB: "pwproxy_sqlite_allocator_mapped_bytes"} {
			if v, ok := m[name]; ok {
				*p = int64(v / 1024)
			}
		}
		if v, ok := m["go_goroutines"]; ok {
			smp.Goroutines = int(v)
		}
	}
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	smp.Ops, smp.Errors = s.rec.ops, s.rec.errlog.total()
	return smp
}

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
// counts and the server's gauges are their rounded means (a gauge -1 in a
// reading is left out; -1 when no reading has it); the cumulative counters,
// the database size and At are the last reading's.
func meanSample(readings []SoakSample) SoakSample {
	out, n := readings[len(readings)-1], float64(len(readings))
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
	out.ServerRSSKB = mean(func(r SoakSample) int64 { return r.ServerRSSKB })
	out.HeapInuseKB = mean(func(r SoakSample) int64 { return r.HeapInuseKB })
	out.SQLiteMappedKB = mean(func(r SoakSample) int64 { return r.SQLiteMappedKB })
	out.Suspended = int(mean(func(r SoakSample) int64 { return int64(r.Suspended) }))
	out.ServerFDs = int(mean(func(r SoakSample) int64 { return int64(r.ServerFDs) }))
	out.TreeFDs = int(mean(func(r SoakSample) int64 { return int64(r.TreeFDs) }))
	out.Goroutines = int(mean(func(r SoakSample) int64 { return int64(r.Goroutines) }))
	out.Memory = MemSample{Procs: int(mean(func(r SoakSample) int64 { return int64(r.Memory.Procs) })),
		RSSKB: mean(func(r SoakSample) int64 { return r.Memory.RSSKB }), PSSKB: mean(func(r SoakSample) int64 { return r.Memory.PSSKB })}
	out.ElapsedS, out.ActiveMean = 0, 0
	for _, r := range readings {
		out.ElapsedS += r.ElapsedS / n
		out.ActiveMean += float64(r.Active) / n
	}
	out.Readings, out.Active = len(readings), int(math.Round(out.ActiveMean))
	return out
}

func countFDs(pid int) int {
	es, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	return len(es)
}

// Console is GET /console/{ref_id}?level=… (get_console_content).
func (c *Client) Console(ctx context.Context, ref, level string) (string, error) {
	return c.api.Console(ctx, ref, level)
}

// parseMetrics returns the unlabelled samples of a Prometheus text
// exposition by name (the soak needs no labelled one).
func parseMetrics(text string) map[string]float64 {
	out := map[string]float64{}
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") || strings.ContainsRune(f[0], '{') {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

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
	{"proxy-server fds", "fds", func(s SoakSample) float64 { return float64(s.ServerFDs) }, func(float64) float64 { return 2 }, "2 descriptors"},
	{"process tree fds", "fds", func(s SoakSample) float64 { return float64(s.TreeFDs) }, fivePercent, "5 % of mean"},
	{"proxy-server goroutines", "", func(s SoakSample) float64 { return float64(s.Goroutines) }, fivePercent, "5 % of mean"},
	{"processes in the tree", "", func(s SoakSample) float64 { return float64(s.Memory.Procs) }, nil, "shown only"},
	{"proxy-server Go heap in use", "MB", func(s SoakSample) float64 { return float64(s.HeapInuseKB) / 1024 }, nil, "shown only (GC-driven)"},
	{"proxy-server SQLite allocator, mapped", "MB", func(s SoakSample) float64 { return float64(s.SQLiteMappedKB) / 1024 }, nil, "shown only (-tags memory.counters builds)"},
	{"database", "MB", func(s SoakSample) float64 { return float64(s.DBBytes) / 1e6 }, nil, "shown only (grows by design)"},
}

const soakVerdictRule = "every sample after the first is the mean of the readings taken over the minute (the interval) before it; " +
	"least-squares fit over the samples after the first (warm-up) one of y = a + b·t + c·(sessions active at the sample, mean of its readings), " +
	"so that the memory and descriptors of the sessions that happen to be live (not suspended) when a sample is taken are not mistaken for growth " +
	"(with fewer than 5 samples, or when the active count does not vary, c is dropped: y = a + b·t); b is the slope per hour; " +
	"projected growth = b × the time the samples span. A checked metric has no upward trend when its projected growth is below its noise band " +
	"(5 % of its mean for memory, tree fds and goroutines; 2 descriptors for proxy-server fds); the verdict is \"no upward trend\" when every checked metric passes."

func soakTrend(samples []SoakSample) ([]TrendLine, string, string) {
	if len(samples) < 4 {
		return nil, fmt.Sprintf("%s (%d after warm-up; a trend needs at least 3)", verdictTooFew, max(0, len(samples)-1)), soakVerdictRule
	}
	after := samples[1:]
	ts, act := make([]float64, len(after)), make([]float64, len(after))
	for i, s := range after {
		ts[i], act[i] = s.ElapsedS/3600, s.activeSessions()
	}
	var up []string
	var lines []TrendLine
	for _, m := range soakMetrics {
		ys := make([]float64, len(after))
		for i, s := range after {
			ys[i] = m.value(s)
		}
		if slices.Min(ys) < 0 {
			continue // -1: not available from /metrics
		}
		tl := trendLine(m.name, m.unit, ts, act, ys)
		tl.BandRule = m.bandRule
		if m.band != nil {
			tl.Checked, tl.Band, tl.Verdict = true, m.band(tl.Mean), verdictFlat
			if tl.Projected >= tl.Band {
				tl.Verdict, up = verdictUp, append(up, m.name)
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
	tl := TrendLine{Metric: name, Unit: unit, N: n, First: ys[0], Last: ys[n-1], WindowH: ts[n-1] - ts[0], Mean: mean(ys)}
	tl.RawSlopePerHour, _, _ = fitTrend(ts, nil, ys)
	tl.SlopePerHour, tl.PerActive, tl.Adjusted = fitTrend(ts, act, ys)
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
	if len(y) < 2 {
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
	if x == nil || len(y) < 5 {
		return sty / stt, 0, false
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
		return sty / stt, 0, false
	}
	return (sty*sxx - sxy*stx) / det, (stt*sxy - stx*sty) / det, true
}

func (r *SoakResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== soak: %d sessions (%d created), %.0f min after a warm-up of at least %.0f s, a sample every %.0f s (after the first, each the mean of %d readings); env %v\n",
		r.Sessions, r.Created, r.DurationMS/60000, r.WarmUpMS/1000, r.IntervalMS/1000, r.Readings, r.Env)
	fmt.Fprintf(w, "   each round: browser_navigate (%s, at random) + get_content(search_for a button) + browser_snapshot + browser_click + get_console_content, 0.2–1.5 s think time before each; "+
		"then a 1–6 s pause, or with probability %.2f a pause of 1.5–2 × the idle timeout (%.0f s): the session is suspended, and the next round starts with a browser_snapshot that resumes it\n",
		strings.Join(r.Pages, ", "), r.LongPauseProb, r.IdleTimeoutMS/1000)
	if len(r.Trend) > 0 {
		fmt.Fprintln(w, "trend over the samples after the first (warm-up) one:")
		tw := newTable(w, "metric\tunit\tn\tmean\tfirst\tlast\tslope/h raw\tslope/h adjusted\tprojected over window\tband\tverdict\tslope/h 1st half → 2nd half\t")
		for _, t := range r.Trend {
			adj, band, verdict, halves := "—", t.BandRule, "(shown only)", "—"
			if t.Adjusted {
				adj = fmt.Sprintf("%.2f", t.SlopePerHour)
			}
			if t.Checked {
				band, verdict = fmt.Sprintf("%.2f (%s)", t.Band, t.BandRule), t.Verdict
			}
			if len(t.HalfSlopesPerHour) == 2 {
				halves = fmt.Sprintf("%.2f → %.2f", t.HalfSlopesPerHour[0], t.HalfSlopesPerHour[1])
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.2f\t%s\t%+.2f\t%s\t%s\t%s\t\n",
				t.Metric, t.Unit, t.N, t.Mean, t.First, t.Last, t.RawSlopePerHour, adj, t.Projected, band, verdict, halves)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "verdict: %s\nrule: %s\n", r.Verdict, r.VerdictRule)
	fmt.Fprintf(w, "traffic: %d requests in %d rounds, %d errors; %d long pauses; page after resume: %d kept, %d lost\n",
		r.Ops, r.Rounds, r.ErrorCount, r.LongPauses, r.ResumeURLKept, r.ResumeURLLost)
	writeErrors(w, "errors", r.ErrorCount, r.Errors)
	writeCleanup(w, r.Cleanup)
	fmt.Fprintln(w)
}
