package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The memory scenario's parts, in the order they are reported: a
// session's own node process (a worker, or its share of a host), the
// proxy's fixed processes, their sum, then Chromium's.
const (
	partSessions = "node (sessions)"
	partServer   = "server"
	partOurs     = "our share"
	partRenderer = "renderer"
	partChromium = "chromium rest"
	partOther    = "other"
	partTotal    = "total"
)

var memoryParts = []string{partSessions, partServer, partOurs, partRenderer, partChromium, partOther, partTotal}

// memPart puts a process kind (procKind) in its part: the browser server's
// node is the server's like proxy-server, whatever runs the sessions is
// theirs.
func memPart(kind string) string {
	switch {
	case kind == "node":
		return partSessions
	case kind == "proxy-server" || kind == "node-browser-server":
		return partServer
	case kind == "chromium-renderer":
		return partRenderer
	case strings.HasPrefix(kind, "chromium"):
		return partChromium
	}
	return partOther
}

// MemoryConfig configures the memory scenario: what one more session costs,
// by part, for each PROXY_SESSIONS_PER_WORKER of Modes (1: a node process
// per session). Each mode gets its own proxy-server, without a warm pool
// so that n sessions fill n/K hosts: counts that are multiples of K measure
// whole hosts, not a host's first sessions. There, sessions are opened up
// to each of Counts in turn, each navigated Navigations times to Page, and
// the tree's PSS is read after Settle.
type MemoryConfig struct {
	Server         ServerConfig
	Modes          []int
	Counts         []int
	Page           string
	Navigations    int
	Settle         time.Duration
	Readings       int
	RequestTimeout time.Duration
}

func (c *MemoryConfig) Flags(fs *flag.FlagSet) {
	c.Modes, c.Counts = []int{1, 8}, []int{8, 24}
	fs.Var((*IntList)(&c.Modes), "modes", "PROXY_SESSIONS_PER_WORKER values, one proxy-server each")
	fs.Var((*IntList)(&c.Counts), "sessions", "numbers of open sessions, ascending: the slope is between the first and the last; multiples of every K measure whole hosts")
	fs.StringVar(&c.Page, "page", "catalogue", "page every session navigates to: form, table or catalogue")
	fs.IntVar(&c.Navigations, "navigations", 2, "navigations per session before the readings")
	fs.DurationVar(&c.Settle, "settle", 5*time.Second, "untimed pause before the readings")
	fs.IntVar(&c.Readings, "readings", 3, "PSS readings, a second apart, averaged")
}

func (c *MemoryConfig) Check() error {
	if len(c.Modes) == 0 || slices.Min(c.Modes) < 1 {
		return fmt.Errorf("-modes %v: want numbers of at least 1", c.Modes)
	}
	ascending := len(c.Counts) >= 2 && c.Counts[0] >= 1 && c.Counts[len(c.Counts)-1] <= 200
	for i := 1; i < len(c.Counts) && ascending; i++ {
		ascending = c.Counts[i] > c.Counts[i-1]
	}
	if !ascending {
		return fmt.Errorf("-sessions %v: want two or more ascending numbers in 1..200", c.Counts)
	}
	if _, ok := Pages[c.Page]; !ok {
		return fmt.Errorf("-page %q: want form, table or catalogue", c.Page)
	}
	if c.Navigations < 1 || c.Readings < 1 {
		return fmt.Errorf("-navigations %d, -readings %d: want at least 1", c.Navigations, c.Readings)
	}
	return nil
}

type MemoryResult struct {
	Page        string      `json:"page"`
	Navigations int         `json:"navigations"`
	Runs        []MemoryRun `json:"runs"`
	Interrupted bool        `json:"interrupted,omitempty"`
}

// MemoryRun is one mode. PerSessionKB is the PSS one more session adds,
// by part: the slope between the first and the last count.
type MemoryRun struct {
	SessionsPerWorker int                `json:"sessions_per_worker"`
	Env               map[string]string  `json:"env"`
	Points            []MemoryPoint      `json:"points"`
	PerSessionKB      map[string]float64 `json:"per_added_session_pss_kb"`
	Errors            []ErrorCount       `json:"errors"`
	ErrorCount        int                `json:"error_count"`
	Cleanup           StopReport         `json:"cleanup"`
}

// MemoryPoint is the tree's PSS with Sessions open (Opened of them
// navigated), mean of the readings, by part; Last is the last reading, by
// process kind.
type MemoryPoint struct {
	Sessions int              `json:"sessions"`
	Opened   int              `json:"opened"`
	Procs    int              `json:"procs"`
	PSSKB    map[string]int64 `json:"pss_kb_by_part"`
	Last     MemSample        `json:"last_reading"`
}

func RunMemory(ctx context.Context, log *slog.Logger, site *Site, cfg MemoryConfig) (res *MemoryResult, err error) {
	res = &MemoryResult{Page: cfg.Page, Navigations: cfg.Navigations}
	defer func() { res.Interrupted = err != nil && ctx.Err() != nil }()
	for _, k := range cfg.Modes {
		run := MemoryRun{SessionsPerWorker: k}
		err := runMemoryMode(ctx, log.With("sessions_per_worker", k), site, &run, cfg)
		if res.Runs = append(res.Runs, run); err != nil {
			return res, fmt.Errorf("memory, %d sessions per worker: %w", k, err)
		}
	}
	return res, nil
}

func runMemoryMode(ctx context.Context, log *slog.Logger, site *Site, run *MemoryRun, cfg MemoryConfig) error {
	srv, c, stop, err := serveRun(ctx, log, cfg.Server, map[string]string{"PROXY_SESSIONS_PER_WORKER": strconv.Itoa(run.SessionsPerWorker),
		"PROXY_MAX_SESSIONS": strconv.Itoa(slices.Max(cfg.Counts)), "PROXY_WARM_POOL": "0"}, cfg.RequestTimeout, &run.Env, &run.Cleanup)
	if err != nil {
		return err
	}
	defer stop()
	errs := newErrorLog()
	var (
		mu  sync.Mutex
		ids []string
	)
	defer func() {
		closeAll(ctx, log, c, ids)
		run.Errors, run.ErrorCount = errs.list(), errs.total()
	}()
	if err := sleepCtx(ctx, settlePause); err != nil {
		return err
	}
	url, opened := site.PageURL(Pages[cfg.Page]), 0
	for _, n := range cfg.Counts {
		// At most 4 at a time, so that the opening itself does not time out.
		parallel(n-len(ids), 4, func(int) {
			s, err := c.CreateSession(ctx)
			if err != nil {
				errs.add("POST /sessions", err)
				return
			}
			mu.Lock()
			ids = append(ids, s.ID)
			mu.Unlock()
			for range cfg.Navigations {
				if _, err := c.Call(ctx, s.ID, "browser_navigate", map[string]any{"url": url}); err != nil {
					errs.add("browser_navigate", err)
					return
				}
			}
			mu.Lock()
			opened++
			mu.Unlock()
		})
		if len(ids) < n {
			return fmt.Errorf("%d of %d sessions created: %s", len(ids), n, firstMessage(errs.list()))
		}
		if err := sleepCtx(ctx, cfg.Settle); err != nil {
			return err
		}
		p := MemoryPoint{Sessions: n, Opened: opened, PSSKB: map[string]int64{}}
		for i := range cfg.Readings {
			if i > 0 {
				if err := sleepCtx(ctx, time.Second); err != nil {
					return err
				}
			}
			m := srv.Memory(true)
			p.Procs, p.Last = m.Procs, m
			for part, kb := range partsPSS(m) {
				p.PSSKB[part] += kb
			}
		}
		for part := range p.PSSKB {
			p.PSSKB[part] /= int64(cfg.Readings)
		}
		run.Points = append(run.Points, p)
		log.Info("memory read", "sessions", n, "opened", opened, "pss_mb", mb(p.PSSKB[partTotal]))
	}
	run.PerSessionKB = slope(run.Points[0], run.Points[len(run.Points)-1])
	return nil
}

// partsPSS sums a sample's PSS by part, with the sums the parts make.
func partsPSS(m MemSample) map[string]int64 {
	out := map[string]int64{partTotal: m.PSSKB}
	for kind, km := range m.ByKind {
		out[memPart(kind)] += km.PSSKB
	}
	out[partOurs] = out[partSessions] + out[partServer] + out[partOther]
	return out
}

func slope(a, b MemoryPoint) map[string]float64 {
	out := map[string]float64{}
	for _, part := range memoryParts {
		out[part] = float64(b.PSSKB[part]-a.PSSKB[part]) / float64(b.Sessions-a.Sessions)
	}
	return out
}

func (r *MemoryResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== memory: no warm pool; sessions opened ≤ 4 at a time, each navigated %d× to the %q page; PSS of the server's whole tree, mean of the readings, MB\n", r.Navigations, r.Page)
	tw := newTable(w, "sessions/worker\tsessions\tnavigated\tprocs\t"+strings.Join(memoryParts, "\t")+"\t")
	for _, run := range r.Runs {
		for _, p := range run.Points {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t", run.SessionsPerWorker, p.Sessions, p.Opened, p.Procs)
			for _, part := range memoryParts {
				fmt.Fprintf(tw, "%.1f\t", float64(p.PSSKB[part])/1024)
			}
			fmt.Fprintln(tw)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\nPSS per added session, MB (slope between the first and the last count):")
	tw = newTable(w, "part\t"+strings.Join(modeNames(r.Runs), "\t")+"\t")
	for _, part := range memoryParts {
		fmt.Fprintf(tw, "%s\t", part)
		for _, run := range r.Runs {
			fmt.Fprintf(tw, "%.1f\t", run.PerSessionKB[part]/1024)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, run := range r.Runs {
		writeErrors(w, fmt.Sprintf("%d sessions per worker: errors", run.SessionsPerWorker), run.ErrorCount, run.Errors)
		writeCleanup(w, run.Cleanup)
	}
	fmt.Fprintln(w)
}

func modeNames(runs []MemoryRun) []string {
	var out []string
	for _, run := range runs {
		out = append(out, fmt.Sprintf("K=%d", run.SessionsPerWorker))
	}
	return out
}

// MemoryCharts draws the PSS per added session by part, a bar per mode;
// "other" (no process of the proxy's falls there) only in the total.
func MemoryCharts(res *MemoryResult) ([]Chart, error) {
	parts := slices.DeleteFunc(slices.Clone(memoryParts), func(p string) bool { return p == partOther })
	if res == nil {
		return nil, fmt.Errorf("the report has no memory runs")
	}
	var (
		series []barSeries
		p      []MemoryPoint
	)
	for i, run := range res.Runs {
		if run.PerSessionKB == nil {
			continue
		}
		p = run.Points
		bs := barSeries{name: modeNames(res.Runs)[i] + " sessions per node process", color: palette[i%len(palette)]}
		for _, part := range parts {
			bs.values = append(bs.values, run.PerSessionKB[part]/1024)
		}
		series = append(series, bs)
	}
	if len(series) == 0 {
		return nil, fmt.Errorf("the report has no memory runs")
	}
	return []Chart{{Name: "memory-per-session.svg", SVG: figure{
		title: "Memory per added session, by part",
		subtitle: fmt.Sprintf("bench memory: PSS of the whole tree, slope between %d and %d open sessions, each on the %s page; "+
			"K=1 is a node process per session; a bar below 0 is not drawn", p[0].Sessions, p[len(p)-1].Sessions, res.Page),
		bars: []barPanel{{xLabel: "part", yLabel: "PSS per added session, MB", categories: parts, series: series}},
	}.render()}}, nil
}
