package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// OverheadTargetMS is the target for the overhead scenario
// (docs/BENCHMARKS.md): the proxy path adds at most this much to a call,
// median.
const OverheadTargetMS = 3.0

// Both sides sit on the table page with no settle wait: upstream's default
// 500 ms after actions would drown a difference of milliseconds in noise.
const overheadPage, overheadSettleMS = "table", 0

// OverheadConfig configures the overhead scenario: the same calls, rounds
// of A (plain @playwright/mcp), B (mcp-bridge → proxy-server), C (plain on
// a browser server launched like the proxy's shared browser), D (C behind
// two minimal Go relays), with Direct F (the client straight to /mcp) and,
// with OnePerWorker, G (B on a second proxy-server that gives every session
// a node process of its own), with the same mcp-go client. The extra sides
// split B − A call by call.
type OverheadConfig struct {
	StdioCommon
	Iterations, Warmup   int
	Direct, OnePerWorker bool
}

func (c *OverheadConfig) Flags(fs *flag.FlagSet) {
	fs.IntVar(&c.Iterations, "n", 200, "timed rounds per call kind (browser_evaluate, browser_snapshot)")
	fs.IntVar(&c.Warmup, "warmup", 20, "untimed rounds before the timed ones")
	fs.BoolVar(&c.Direct, "http", false, "also a side F, the same client straight to proxy-server's /mcp, no mcp-bridge")
	fs.BoolVar(&c.OnePerWorker, "k1", false, "also a side G, mcp-bridge → a second proxy-server with PROXY_SESSIONS_PER_WORKER=1: B − G is what sharing a node process adds")
}

func (c *OverheadConfig) Check() error {
	if c.Iterations < 1 || c.Warmup < 0 {
		return fmt.Errorf("-n %d, -warmup %d: want n ≥ 1, warmup ≥ 0", c.Iterations, c.Warmup)
	}
	return nil
}

type OverheadResult struct {
	Iterations      int                  `json:"iterations"`
	Warmup          int                  `json:"warmup_rounds"`
	Page            string               `json:"page"`
	SettleMS        int                  `json:"timeout_settle_ms"`
	Env             map[string]string    `json:"env"`
	PlainCommand    string               `json:"plain_command"`
	RelayedCommand  string               `json:"relayed_command,omitempty"`
	DirectURL       string               `json:"direct_http_url,omitempty"`
	OnePerWorkerEnv map[string]string    `json:"one_per_worker_env,omitempty"`
	Kinds           []OverheadKindResult `json:"kinds"`
	TargetMS        float64              `json:"target_added_ms"`
	Errors          []ErrorCount         `json:"errors"`
	ErrorCount      int                  `json:"error_count"`
	Stops           []StdioStopReport    `json:"stdio_stops"`
	Cleanup         StopReport           `json:"cleanup"`
	CleanupK1       *StopReport          `json:"cleanup_one_per_worker,omitempty"`
	Interrupted     bool                 `json:"interrupted,omitempty"`
}

type OverheadKindResult struct {
	Tool   string       `json:"tool"`
	Pairs  int          `json:"pairs"`
	Plain  Summary      `json:"plain"`
	Proxy  Summary      `json:"proxy"`
	Added  Paired       `json:"added"`
	Hop    *SplitResult `json:"hop,omitempty"`
	Floor  *SplitResult `json:"relay_floor,omitempty"`
	Direct *SplitResult `json:"direct_http,omitempty"`
	// OnePerWorker is G − A and B − G.
	OnePerWorker *SplitResult `json:"one_per_worker,omitempty"`
}

type SplitResult struct {
	Side   Summary `json:"side"`
	First  Paired  `json:"first"`
	Second Paired  `json:"second"`
}

type Paired struct {
	MS   float64 `json:"ms"`
	Low  float64 `json:"ci95_low"`
	High float64 `json:"ci95_high"`
	CIOK bool    `json:"ci95_ok"`
}

func paired(d []float64) Paired {
	p := Paired{MS: Summarize(d).Median}
	p.Low, p.High, p.CIOK = medianCI(d, 0.95)
	return p
}

func (p Paired) ci() string {
	if !p.CIOK {
		return "-"
	}
	return fmt.Sprintf("%.1f…%.1f", p.Low, p.High)
}

func splitAt(x, y, z []float64) *SplitResult {
	d1, d2 := pairedDiffs(x, y), pairedDiffs(y, z)
	if len(d1) == 0 || len(d2) == 0 {
		return nil
	}
	return &SplitResult{Side: Summarize(y), First: paired(d1), Second: paired(d2)}
}

func pairedDiffs(a, b []float64) []float64 {
	if len(a) != len(b) {
		return nil
	}
	out := make([]float64, len(a))
	for i := range a {
		out[i] = b[i] - a[i]
	}
	return out
}

// medianCI returns a distribution-free confidence interval for the median
// of xs: the order statistics x(k) and x(n−k+1) (1-based), with k the
// largest rank such that P(Binomial(n, ½) ≤ k−1) ≤ (1−conf)/2, so the
// coverage is at least conf. ok is false when n is too small for any such
// k (n < 6 at 95 %).
func medianCI(xs []float64, conf float64) (lo, hi float64, ok bool) {
	n := len(xs)
	// The binomial CDF is summed in log space: C(n, j) / 2^n overflows
	// nothing that way even for large n.
	lgN, _ := math.Lgamma(float64(n + 1))
	cdf, k := 0.0, 0
	for j := 0; j < n; j++ {
		lgJ, _ := math.Lgamma(float64(j + 1))
		lgNJ, _ := math.Lgamma(float64(n - j + 1))
		if cdf += math.Exp(lgN - lgJ - lgNJ - float64(n)*math.Ln2); cdf > (1-conf)/2 {
			break
		}
		k = j + 1
	}
	if k < 1 {
		return 0, 0, false
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[k-1], s[n-k], true
}

func summarizeKind(tool string, plain, proxy []float64) OverheadKindResult {
	r := OverheadKindResult{Tool: tool, Pairs: len(plain), Plain: Summarize(plain), Proxy: Summarize(proxy)}
	if d := pairedDiffs(plain, proxy); len(d) > 0 {
		r.Added = paired(d)
	}
	return r
}

func RunOverhead(ctx context.Context, log *slog.Logger, site *Site, cfg OverheadConfig) (res *OverheadResult, err error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	cfg.defaults()
	scfg := cfg.Server
	// Appended last: commander keeps the last value, so a user's own
	// --timeout-settle cannot make the sides differ.
	scfg.Env["PROXY_PLAYWRIGHT_ARGS"] = strings.TrimSpace(scfg.Env["PROXY_PLAYWRIGHT_ARGS"] + fmt.Sprintf(" --timeout-settle=%d", overheadSettleMS))
	res = &OverheadResult{Iterations: cfg.Iterations, Warmup: cfg.Warmup, Page: overheadPage, SettleMS: overheadSettleMS, Env: scfg.Env, TargetMS: OverheadTargetMS}
	defer func() {
		err = errors.Join(err, stdioLeaks(res.Cleanup, res.Stops))
		if res.CleanupK1 != nil {
			err = errors.Join(err, stdioLeaks(*res.CleanupK1, nil))
		}
	}()
	// G's server starts first and stops last, and each server counts the
	// other's tree as beside it: a server's stop reaps any child of this
	// process it does not know, and the shared browser's crashpad handler
	// leaves its server's tree.
	var srvK1 *Server
	if cfg.OnePerWorker {
		k1 := scfg
		k1.Env = copyEnv(scfg.Env)
		k1.Env["PROXY_SESSIONS_PER_WORKER"] = "1"
		res.OnePerWorkerEnv, res.CleanupK1 = k1.Env, &StopReport{}
		var stopK1 func()
		if srvK1, stopK1, err = startServer(ctx, log, k1, res.CleanupK1, &res.Interrupted); err != nil {
			return res, fmt.Errorf("side G: %w", err)
		}
		defer stopK1()
		scfg.Beside = append(slices.Clip(scfg.Beside), srvK1.PID)
	}
	srv, stop, err := startServer(ctx, log, scfg, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	defer stop() // it reaps any child of this process
	if srvK1 != nil {
		srvK1.addBeside(srv.PID)
	}
	kinds := []struct {
		tool string
		args map[string]any
	}{
		{"browser_evaluate", map[string]any{"function": "() => document.title"}},
		{"browser_snapshot", map[string]any{}},
	}
	var sides []*StdioServer
	took := map[string][][]float64{} // by side name, then kind
	add := func(s *StdioServer, err error) error {
		if err == nil {
			sides, took[s.Name] = append(sides, s), make([][]float64, len(kinds))
		}
		return err
	}
	stopBrowser := func() {}
	defer func() { stopBrowser() }()
	defer func() {
		for i := len(sides) - 1; i >= 0; i-- {
			res.Stops = append(res.Stops, sides[i].Stop(context.WithoutCancel(ctx)))
		}
	}()
	plainCfg := PlainConfig{Root: cfg.Root, SettleMS: overheadSettleMS}
	if err := add(StartPlain(ctx, log, plainCfg)); err != nil {
		return res, err
	}
	res.PlainCommand = sides[0].CommandLine()
	if err := add(StartBridge(ctx, log, cfg.Bridge, srv.URL)); err != nil {
		return res, err
	}
	if stopBrowser, plainCfg.Endpoint, err = startBrowserServer(ctx, log, cfg.Root); err != nil {
		return res, err
	}
	if err := add(StartPlain(ctx, log, plainCfg)); err != nil {
		return res, err
	}
	self, err := os.Executable()
	if err != nil {
		return res, fmt.Errorf("side D: this program's path: %w", err)
	}
	plainCfg.Relay = []string{self, "relay", "--"}
	if err := add(StartPlain(ctx, log, plainCfg)); err != nil {
		return res, err
	}
	res.RelayedCommand = sides[3].CommandLine()
	direct, onePerWorker := -1, -1
	if cfg.Direct {
		res.DirectURL = strings.TrimSuffix(srv.URL, "/") + "/mcp"
		if err := add(StartHTTP(ctx, log, "proxy over HTTP", res.DirectURL, os.Getenv("PROXY_AUTH_TOKEN"))); err != nil {
			return res, err
		}
		direct = len(sides) - 1
	}
	if srvK1 != nil {
		g, err := StartBridge(ctx, log, cfg.Bridge, srvK1.URL)
		if err == nil {
			g.Name = "proxy, a node process per session"
		}
		if err := add(g, err); err != nil {
			return res, fmt.Errorf("side G: %w", err)
		}
		onePerWorker = len(sides) - 1
	}

	call := func(s *StdioServer, tool string, args map[string]any) (ToolCall, error) {
		cctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
		defer cancel()
		return s.Call(cctx, tool, args)
	}
	// Untimed: every side opens the page (the plain side launches its
	// browser here; the bridge creates its default session).
	for _, s := range sides {
		if _, err := call(s, "browser_navigate", map[string]any{"url": site.PageURL(Pages[overheadPage])}); err != nil {
			return res, fmt.Errorf("opening the %s page: %w", overheadPage, err)
		}
	}
	errs := newErrorLog()
	// Also on errors and Ctrl-C: partial results are still results.
	defer func() {
		for k, kind := range kinds {
			side := func(i int) []float64 {
				if i >= 0 && i < len(sides) {
					return took[sides[i].Name][k]
				}
				return nil
			}
			kr := summarizeKind(kind.tool, side(0), side(1))
			kr.Hop, kr.Floor = splitAt(side(0), side(2), side(1)), splitAt(side(2), side(3), side(1))
			if direct >= 0 {
				kr.Direct = splitAt(side(0), side(direct), side(1))
			}
			if onePerWorker >= 0 {
				kr.OnePerWorker = splitAt(side(0), side(onePerWorker), side(1))
			}
			res.Kinds = append(res.Kinds, kr)
		}
		res.Errors, res.ErrorCount = errs.list(), errs.total()
	}()

	rounds := cfg.Warmup + cfg.Iterations
	maxErrors := 10 + rounds*len(kinds)/20
	log.Info("overhead: rounds of every side in turn", "warmup_rounds", cfg.Warmup, "timed_rounds", cfg.Iterations, "sides", len(sides))
	for i := range rounds {
		for k, kind := range kinds {
			// Side j of round i is sides[(j+i) % n], a rotation (ABC, BCA,
			// CAB): strictly A-first, a heavy call would leave its CPU work
			// (GC, Chromium) to B alone.
			got := make([]ToolCall, len(sides))
			failed := false
			for j := range sides {
				n := (j + i) % len(sides)
				var err error
				if got[n], err = call(sides[n], kind.tool, kind.args); err != nil {
					errs.add(sides[n].Name+" "+kind.tool, err)
					failed = true
				}
			}
			if i < cfg.Warmup || failed {
				continue
			}
			for n, c := range got {
				took[sides[n].Name][k] = append(took[sides[n].Name][k], ms(c.Took))
			}
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if n := errs.total(); n > maxErrors {
			first := errs.list()[0]
			return res, fmt.Errorf("%d failed calls, first: %s: %s", n, first.Where, first.Message)
		}
	}
	return res, nil
}

func startBrowserServer(ctx context.Context, log *slog.Logger, root string) (stop func(), endpoint string, err error) {
	from, err := upstream.PlaywrightFrom(upstream.DefaultCommand(root))
	if err != nil {
		return func() {}, "", fmt.Errorf("side C: %w", err)
	}
	exe := os.Getenv("PROXY_BROWSER_EXECUTABLE")
	if exe == "" {
		if exe, err = upstream.FindBrowser(); err != nil {
			return func() {}, "", fmt.Errorf("side C: %w", err)
		}
	}
	b, err := upstream.LaunchBrowserServer(ctx, upstream.BrowserConfig{Executable: exe, Headless: true, OptimizeMemory: true, Logger: slog.New(slog.DiscardHandler)}, "", from)
	if err != nil {
		return func() {}, "", fmt.Errorf("side C: browser server: %w", err)
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := b.Close(sctx); err != nil {
			log.Warn("side C: stopping the browser server", "err", err)
		}
	}, b.PlaywrightEndpoint(), nil
}

func (r *OverheadResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== overhead: per-call latency, the same mcp-go client on every side: A plain @playwright/mcp over stdio, B mcp-bridge → proxy-server → @playwright/mcp, C plain on a browser server launched like proxy-server's shared browser, D C behind two minimal Go relays (stdio → HTTP → stdio), F the client straight to /mcp (-http), G B on a second proxy-server with a node process per session (-k1); %d timed rounds per call after %d untimed, the order rotating every round; the %q page; --timeout-settle=%d on every side; env %v\n",
		r.Iterations, r.Warmup, r.Page, r.SettleMS, r.Env)
	fmt.Fprintf(w, "A: %s\nD: %s\n", r.PlainCommand, r.RelayedCommand)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tpairs\tA p50 ms\tA p95\tA max\tB p50 ms\tB p95\tB max\tadded p50 (B−A paired)\t95% CI\t")
	for _, k := range r.Kinds {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t\n", k.Tool, k.Pairs, k.Plain.Median, k.Plain.P95, k.Plain.Max,
			k.Proxy.Median, k.Proxy.P95, k.Proxy.Max, k.Added.MS, k.Added.ci())
	}
	tw.Flush()
	for _, k := range r.Kinds {
		if k.Pairs > 0 {
			fmt.Fprintf(w, "result: %s: the proxy path adds %.1f ms median (target ≤ %.0f ms median: %s)\n", k.Tool, k.Added.MS, r.TargetMS, verdict(k.Added.MS <= r.TargetMS))
		}
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tside\tp50 ms\tp95\tsplit (paired medians, ms)\t95% CI\t\t95% CI\t")
	for _, k := range r.Kinds {
		for _, x := range []struct {
			side, first, second string
			s                   *SplitResult
		}{{"C", "hop C−A", "proxy's own B−C", k.Hop}, {"D", "floor D−C", "proxy's work B−D", k.Floor}, {"F", "over HTTP F−A", "the bridge B−F", k.Direct},
			{"G", "one per worker G−A", "sharing a node process B−G", k.OnePerWorker}} {
			if s := x.s; s != nil {
				fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%s %.1f\t%s\t%s %.1f\t%s\t\n", k.Tool, x.side, s.Side.Median, s.Side.P95,
					x.first, s.First.MS, s.First.ci(), x.second, s.Second.MS, s.Second.ci())
			}
		}
	}
	tw.Flush()
	writeErrors(w, "errors", r.ErrorCount, r.Errors)
	if r.CleanupK1 != nil && r.CleanupK1.Signal != "" {
		fmt.Fprintf(w, "cleanup, G's server: %s\n", r.CleanupK1.Summary())
	}
	writeStdioEnd(w, r.Stops, r.Cleanup)
}
