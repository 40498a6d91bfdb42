package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
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

// OverheadConfig configures the overhead scenario: the same calls, A/B
// alternated, to a plain @playwright/mcp over stdio (A) and through
// mcp-bridge → proxy-server (B), with the same mcp-go client.
//
// The extra sides split B − A, each paired within the same rounds: C, a
// plain @playwright/mcp on a browser server launched like the proxy's
// shared browser (Hop); D, C's upstream behind two minimal Go relays, the
// floor of any path of mcp-bridge → proxy-server's shape (Relay, with
// Hop); E, the proxy path through another mcp-bridge, without the drift
// between runs (OtherBridge); F, the client straight to /mcp (Direct).
type OverheadConfig struct {
	StdioCommon
	Iterations, Warmup, SettleMS int // SettleMS < 0: upstream's default
	Page, OtherBridge            string
	// StrictOrder runs A before B in every pair. By default the order
	// flips every round: strictly A-first, a heavy call (a snapshot) would
	// leave its CPU work (GC, Chromium) to B alone.
	StrictOrder, Hop, Relay, Direct bool
}

// Flags registers the overhead flags.
func (c *OverheadConfig) Flags(fs *flag.FlagSet) {
	p := c.FlagPrefix
	c.bridgeFlag(fs)
	fs.IntVar(&c.Iterations, p+"n", 200, "overhead: timed A/B pairs per call kind (browser_evaluate, browser_snapshot)")
	fs.IntVar(&c.Warmup, p+"warmup", 20, "overhead: untimed A/B rounds before the timed ones")
	fs.StringVar(&c.Page, p+"page", "table", "overhead: page both sides sit on: form, table or catalogue")
	fs.IntVar(&c.SettleMS, p+"timeout-settle", 0, "overhead: @playwright/mcp --timeout-settle in ms on both sides (-1: upstream's default, 500 ms)")
	fs.BoolVar(&c.StrictOrder, p+"strict-order", false, "overhead: A before B in every pair (default: the order flips every round, AB, BA, …)")
	fs.BoolVar(&c.Hop, p+"hop", true, "overhead: also a side C, plain @playwright/mcp on a browser server launched like the proxy's shared browser, splitting B − A into the shared browser's hop and the proxy's own part")
	fs.BoolVar(&c.Direct, p+"http", false, "overhead: also a side F, the same client straight to proxy-server's Streamable HTTP endpoint (/mcp) with no mcp-bridge, splitting B − A into what a client that speaks HTTP pays and what the bridge adds")
	fs.StringVar(&c.OtherBridge, p+"other-bridge", "", "overhead: also a side E, the proxy path through this other mcp-bridge `binary` on the same server, compared with B call by call in the same rounds")
	fs.BoolVar(&c.Relay, p+"relay", true, "overhead: with -hop, also a side D, side C's upstream behind two minimal Go relays (`bench relay`), splitting the proxy's own part into the floor of such a path and the proxy's work above it")
}

// Check validates the flags.
func (c *OverheadConfig) Check() error {
	p := c.FlagPrefix
	switch _, ok := Pages[c.Page]; {
	case c.Iterations < 1 || c.Iterations > 100000:
		return fmt.Errorf("-%sn %d: want 1..100000", p, c.Iterations)
	case c.Warmup < 0 || c.Warmup > 10000:
		return fmt.Errorf("-%swarmup %d: want 0..10000", p, c.Warmup)
	case c.SettleMS < -1 || c.SettleMS > 60000:
		return fmt.Errorf("-%stimeout-settle %d: want -1..60000", p, c.SettleMS)
	case !ok:
		return fmt.Errorf("-%spage %q: want form, table or catalogue", p, c.Page)
	}
	if c.OtherBridge != "" {
		if _, err := os.Stat(underRoot(c.Server.Dir, c.OtherBridge)); err != nil {
			return fmt.Errorf("-%sother-bridge: %w", p, err)
		}
	}
	return nil
}

// OverheadResult is the result of the overhead scenario.
type OverheadResult struct {
	Iterations     int                  `json:"iterations"`
	Warmup         int                  `json:"warmup_rounds"`
	Page           string               `json:"page"`
	SettleMS       int                  `json:"timeout_settle_ms"`
	Order          string               `json:"order"` // "AB" or "AB/BA"
	Env            map[string]string    `json:"env"`
	PlainCommand   string               `json:"plain_command"`
	ViaCommand     string               `json:"via_browser_server_command,omitempty"`
	RelayedCommand string               `json:"relayed_command,omitempty"`
	OtherBridge    string               `json:"other_bridge,omitempty"`
	DirectURL      string               `json:"direct_http_url,omitempty"`
	Kinds          []OverheadKindResult `json:"kinds"`
	TargetMS       float64              `json:"target_added_ms"`
	Breakdown      []Breakdown          `json:"proxy_breakdown"`
	BreakdownErr   string               `json:"breakdown_error,omitempty"`
	Errors         []ErrorCount         `json:"errors"`
	ErrorCount     int                  `json:"error_count"`
	Stops          []StdioStopReport    `json:"stdio_stops"`
	Cleanup        StopReport           `json:"cleanup"`
	Interrupted    bool                 `json:"interrupted,omitempty"`
}

// OverheadKindResult is one call kind: A is plain, B is the proxy path.
type OverheadKindResult struct {
	Tool  string  `json:"tool"`
	Args  string  `json:"args"`
	Pairs int     `json:"pairs"`
	Plain Summary `json:"plain"`
	Proxy Summary `json:"proxy"`
	// Diff summarises the paired B − A; AddedMS is their median.
	Diff            Summary   `json:"paired_diff"`
	AddedMS         float64   `json:"added_ms"`
	AddedCILow      float64   `json:"added_ms_ci95_low"`
	AddedCIHigh     float64   `json:"added_ms_ci95_high"`
	AddedCIOK       bool      `json:"added_ms_ci95_ok"`
	DiffOfMediansMS float64   `json:"diff_of_medians_ms"`
	Ratio           float64   `json:"ratio"`
	PlainBytes      ByteStats `json:"plain_bytes"`
	ProxyBytes      ByteStats `json:"proxy_bytes"`
	// The extra sides: Hop splits B − A at C, Floor B − C at D, Other and
	// Direct B − A at E and F.
	Hop    *SplitResult `json:"hop,omitempty"`
	Floor  *SplitResult `json:"relay_floor,omitempty"`
	Other  *SplitResult `json:"other_bridge,omitempty"`
	Direct *SplitResult `json:"direct_http,omitempty"`
}

// SplitResult splits the paired z − x of the same rounds at a third side
// y: y's times, and the medians of the paired y − x and z − y.
type SplitResult struct {
	Side   Summary `json:"side"`
	First  Paired  `json:"first"`
	Second Paired  `json:"second"`
}

// Paired is the median of paired differences with its 95 % interval.
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

func splitAt(x, y, z []float64) *SplitResult {
	d1, d2 := pairedDiffs(x, y), pairedDiffs(y, z)
	if len(d1) == 0 || len(d2) == 0 {
		return nil
	}
	return &SplitResult{Side: Summarize(y), First: paired(d1), Second: paired(d2)}
}

// ByteStats are the sizes of the results of one call kind.
type ByteStats struct {
	Min    int `json:"min"`
	Median int `json:"median"`
	Max    int `json:"max"`
}

func byteStats(xs []int) ByteStats {
	if len(xs) == 0 {
		return ByteStats{}
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return ByteStats{Min: s[0], Median: s[len(s)/2], Max: s[len(s)-1]}
}

// pairedDiffs returns b[i] − a[i]; nil when the lengths differ.
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
	if n == 0 || conf <= 0 || conf >= 1 {
		return 0, 0, false
	}
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

func summarizeKind(tool string, args map[string]any, plain, proxy []float64, plainBytes, proxyBytes []int) OverheadKindResult {
	var a strings.Builder
	enc := json.NewEncoder(&a)
	enc.SetEscapeHTML(false) // "() => …" as written, not "=\u003e"
	_ = enc.Encode(args)     // a map of JSON values: cannot fail
	r := OverheadKindResult{Tool: tool, Args: strings.TrimSpace(a.String()), Pairs: len(plain),
		Plain: Summarize(plain), Proxy: Summarize(proxy), PlainBytes: byteStats(plainBytes), ProxyBytes: byteStats(proxyBytes)}
	d := pairedDiffs(plain, proxy)
	if len(d) == 0 {
		return r
	}
	r.Diff = Summarize(d)
	r.AddedMS = r.Diff.Median
	r.AddedCILow, r.AddedCIHigh, r.AddedCIOK = medianCI(d, 0.95)
	r.DiffOfMediansMS = r.Proxy.Median - r.Plain.Median
	if r.Plain.Median > 0 {
		r.Ratio = r.Proxy.Median / r.Plain.Median
	}
	return r
}

// overheadSide is one side of the rounds and its timed calls per kind.
type overheadSide struct {
	name  string
	s     *StdioServer
	took  [][]float64
	bytes [][]int
}

// RunOverhead runs the overhead scenario.
func RunOverhead(ctx context.Context, log *slog.Logger, site *Site, cfg OverheadConfig) (res *OverheadResult, err error) {
	cfg.Iterations, cfg.Page = cmp.Or(cfg.Iterations, 200), cmp.Or(cfg.Page, "table")
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	cfg.defaults()
	page := Pages[cfg.Page]
	scfg := cfg.Server
	if cfg.SettleMS >= 0 {
		// Appended last: commander keeps the last value, so a user's own
		// --timeout-settle cannot make the two sides differ.
		scfg.Env["PROXY_PLAYWRIGHT_ARGS"] = strings.TrimSpace(scfg.Env["PROXY_PLAYWRIGHT_ARGS"] + fmt.Sprintf(" --timeout-settle=%d", cfg.SettleMS))
	}
	res = &OverheadResult{Iterations: cfg.Iterations, Warmup: cfg.Warmup, Page: cfg.Page, SettleMS: cfg.SettleMS, Env: scfg.Env, TargetMS: OverheadTargetMS, Order: "AB/BA"}
	if cfg.StrictOrder {
		res.Order = "AB"
	}
	defer func() { err = errors.Join(err, stdioLeaks(res.Cleanup, res.Stops)) }()
	srv, stop, err := startServer(ctx, log, scfg, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	// The server's stop comes last: it reaps any child of this process.
	defer stop()
	kinds := []struct {
		tool string
		args map[string]any
	}{
		{"browser_evaluate", map[string]any{"function": "() => document.title"}},
		{"browser_snapshot", map[string]any{}},
	}
	var sides []*overheadSide
	at := map[string]*overheadSide{}
	add := func(key, name string) func(*StdioServer, error) error {
		return func(s *StdioServer, err error) error {
			if err == nil {
				at[key] = &overheadSide{name: name, s: s, took: make([][]float64, len(kinds)), bytes: make([][]int, len(kinds))}
				sides = append(sides, at[key])
			}
			return err
		}
	}
	stopBrowser := func() {}
	defer func() { stopBrowser() }()
	defer func() {
		for i := len(sides) - 1; i >= 0; i-- {
			res.Stops = append(res.Stops, sides[i].s.Stop(context.WithoutCancel(ctx)))
		}
	}()
	if err := add("A", "plain")(StartPlain(ctx, log, PlainConfig{Root: cfg.Root, SettleMS: cfg.SettleMS})); err != nil {
		return res, err
	}
	res.PlainCommand = at["A"].s.CommandLine()
	if err := add("B", "proxy")(StartBridge(ctx, log, cfg.Bridge, srv.URL)); err != nil {
		return res, err
	}
	if cfg.Hop {
		if stopBrowser, err = startVia(ctx, log, cfg, add); err != nil {
			return res, err
		}
		res.ViaCommand = at["C"].s.CommandLine()
		if d := at["D"]; d != nil {
			res.RelayedCommand = d.s.CommandLine()
		}
	}
	if cfg.OtherBridge != "" {
		res.OtherBridge = underRoot(cfg.Root, cfg.OtherBridge)
		if err := add("E", "proxy through the other bridge")(StartBridge(ctx, log, res.OtherBridge, srv.URL)); err != nil {
			return res, err
		}
	}
	if cfg.Direct {
		res.DirectURL = strings.TrimSuffix(srv.URL, "/") + "/mcp"
		if err := add("F", "proxy over HTTP")(StartHTTP(ctx, log, "proxy over HTTP", res.DirectURL, os.Getenv("PROXY_AUTH_TOKEN"))); err != nil {
			return res, err
		}
	}

	call := func(s *StdioServer, tool string, args map[string]any) (ToolCall, error) {
		cctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
		defer cancel()
		return s.Call(cctx, tool, args)
	}
	// Untimed: every side opens the page (the plain side launches its
	// browser here; the bridge creates its default session).
	for _, x := range sides {
		if _, err := call(x.s, "browser_navigate", map[string]any{"url": site.PageURL(page)}); err != nil {
			return res, fmt.Errorf("opening the %s page: %w", cfg.Page, err)
		}
	}
	var timings []callTiming
	errs := newErrorLog()
	// Also on errors and Ctrl-C: partial results are still results. The
	// server's record is read before its stop removes the database.
	defer func() {
		for k, kind := range kinds {
			a, b := at["A"], at["B"]
			kr := summarizeKind(kind.tool, kind.args, a.took[k], b.took[k], a.bytes[k], b.bytes[k])
			for _, sp := range []struct {
				dst     **SplitResult
				x, y, z string
			}{{&kr.Hop, "A", "C", "B"}, {&kr.Floor, "C", "D", "B"}, {&kr.Other, "A", "E", "B"}, {&kr.Direct, "A", "F", "B"}} {
				if at[sp.y] != nil {
					*sp.dst = splitAt(at[sp.x].took[k], at[sp.y].took[k], at[sp.z].took[k])
				}
			}
			res.Kinds = append(res.Kinds, kr)
		}
		res.Errors, res.ErrorCount = errs.list(), errs.total()
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		var berr error
		if res.Breakdown, berr = timeBreakdown(bctx, srv.DBPath, timings); berr != nil {
			res.BreakdownErr = berr.Error()
		}
	}()

	rounds := cfg.Warmup + cfg.Iterations
	maxErrors := 10 + rounds*len(kinds)/20
	log.Info("overhead: A/B alternated calls", "warmup_rounds", cfg.Warmup, "timed_pairs_per_kind", cfg.Iterations, "order", res.Order, "page", cfg.Page, "timeout_settle_ms", cfg.SettleMS)
	for i := range rounds {
		timed := i >= cfg.Warmup
		for k, kind := range kinds {
			// Side j of this round is sides[(j+i) % n]: with two sides AB
			// and BA in turn, with more a rotation (ABC, BCA, CAB).
			got := make([]ToolCall, len(sides))
			failed := false
			for j := range sides {
				n := j
				if !cfg.StrictOrder {
					n = (j + i) % len(sides)
				}
				var err error
				if got[n], err = call(sides[n].s, kind.tool, kind.args); err != nil {
					errs.add(sides[n].name+" "+kind.tool, err)
					failed = true
				}
			}
			if !timed || failed {
				continue
			}
			for n, c := range got {
				sides[n].took[k] = append(sides[n].took[k], ms(c.Took))
				sides[n].bytes[k] = append(sides[n].bytes[k], c.Bytes)
			}
			if b := got[1]; b.Result != nil {
				if ref, err := RefIDOf(b.Text()); err == nil {
					timings = append(timings, callTiming{ref: ref, tool: kind.tool, page: cfg.Page, sent: b.Start, received: b.Start.Add(b.Took)})
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if n := errs.total(); n > maxErrors {
			first := errs.list()[0]
			return res, fmt.Errorf("%d failed calls, first: %s: %s", n, first.Where, first.Message)
		}
		if step := max(1, rounds/10); (i+1)%step == 0 || i+1 == rounds {
			args := []any{"round", i + 1, "of", rounds, "warmup", !timed}
			for k, kind := range kinds {
				if t := sides[0].took[k]; len(t) > 0 {
					args = append(args, kind.tool, fmt.Sprintf("plain p50 %.1f ms, proxy p50 %.1f ms", Percentile(t, 50), Percentile(sides[1].took[k], 50)))
				}
			}
			log.Info("overhead progress", args...)
		}
	}
	return res, nil
}

// startVia launches a browser server the way proxy-server launches its
// shared browser (same flags, V8 size optimisation on) and sides C and D on
// it; stop ends the browser server.
func startVia(ctx context.Context, log *slog.Logger, cfg OverheadConfig, add func(key, name string) func(*StdioServer, error) error) (stop func(), err error) {
	from, err := upstream.PlaywrightFrom(upstream.DefaultCommand(cfg.Root))
	if err != nil {
		return func() {}, fmt.Errorf("side C: %w", err)
	}
	exe := os.Getenv("PROXY_BROWSER_EXECUTABLE")
	if exe == "" {
		if exe, err = upstream.FindBrowser(); err != nil {
			return func() {}, fmt.Errorf("side C: %w", err)
		}
	}
	b, err := upstream.LaunchBrowserServer(ctx, upstream.BrowserConfig{Executable: exe, Headless: true, OptimizeMemory: true, Logger: slog.New(slog.DiscardHandler)}, "", from)
	if err != nil {
		return func() {}, fmt.Errorf("side C: browser server: %w", err)
	}
	stop = func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := b.Close(sctx); err != nil {
			log.Warn("side C: stopping the browser server", "err", err)
		}
	}
	plain := PlainConfig{Root: cfg.Root, SettleMS: cfg.SettleMS, Endpoint: b.PlaywrightEndpoint()}
	if err := add("C", "plain via browser server")(StartPlain(ctx, log, plain)); err != nil || !cfg.Relay {
		return stop, err
	}
	self, err := os.Executable()
	if err != nil {
		return stop, fmt.Errorf("side D: this program's path: %w", err)
	}
	plain.Relay = []string{self, "relay", "--"}
	return stop, add("D", "plain via browser server behind relays")(StartPlain(ctx, log, plain))
}

func f1(x float64) string { return fmt.Sprintf("%.1f", x) }

func (r *OverheadResult) writeText(w io.Writer) {
	settle := fmt.Sprintf("--timeout-settle=%d on both sides (PROXY_PLAYWRIGHT_ARGS for proxy-server): upstream's default 500 ms settle wait after actions would drown a difference of milliseconds in noise", r.SettleMS)
	if r.SettleMS < 0 {
		settle = "upstream's default --timeout-settle on both sides"
	}
	order := "A/B/A/B alternated, A first in every pair"
	if r.Order != "AB" {
		order = "A/B/A/B alternated, the order within a pair flipped every round (AB, BA, …) so that neither side always runs right after the other's call"
	}
	fmt.Fprintf(w, "== overhead: per-call latency, plain @playwright/mcp over stdio (A) vs mcp-bridge → proxy-server → @playwright/mcp (B), the same mcp-go stdio client on both; %d timed pairs per call, %s, after %d untimed warm-up rounds; both sides on the %q page; %s; env %v\n",
		r.Iterations, order, r.Warmup, r.Page, settle, r.Env)
	fmt.Fprintf(w, "plain: %s\n", r.PlainCommand)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tpairs\tA p50 ms\tA p95\tA max\tB p50 ms\tB p95\tB max\tadded p50 (B−A paired)\t95% CI\tp50(B)−p50(A)\tB/A\tA bytes\tB bytes\t")
	for _, k := range r.Kinds {
		ci := "-"
		if k.AddedCIOK {
			ci = fmt.Sprintf("%s…%s", f1(k.AddedCILow), f1(k.AddedCIHigh))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%d\t%d\t\n", k.Tool, k.Pairs,
			f1(k.Plain.Median), f1(k.Plain.P95), f1(k.Plain.Max), f1(k.Proxy.Median), f1(k.Proxy.P95), f1(k.Proxy.Max),
			f1(k.AddedMS), ci, f1(k.DiffOfMediansMS), k.Ratio, k.PlainBytes.Median, k.ProxyBytes.Median)
	}
	tw.Flush()
	for _, k := range r.Kinds {
		if k.Pairs > 0 {
			fmt.Fprintf(w, "result: %s: the proxy path adds %.1f ms median (target ≤ %.0f ms median: %s); the client receives %d bytes per call through the proxy vs %d plain\n",
				k.Tool, k.AddedMS, r.TargetMS, verdict(k.AddedMS <= r.TargetMS), k.ProxyBytes.Median, k.PlainBytes.Median)
		}
	}
	for _, x := range []struct {
		what, intro, header string
		split               func(OverheadKindResult) *SplitResult
	}{
		{r.ViaCommand, "C = a plain @playwright/mcp on a Playwright browser server launched like proxy-server's shared browser: %s\n",
			"tool\tC p50 ms\tC p95\tshared browser's hop (C−A paired)\t95% CI\tproxy's own (B−C paired)\t95% CI\t",
			func(k OverheadKindResult) *SplitResult { return k.Hop }},
		{r.RelayedCommand, "D = C's plain @playwright/mcp, on the same browser server, behind two minimal Go relays (stdio → HTTP → stdio, the shape of mcp-bridge → proxy-server with none of their work): %s\n",
			"tool\tD p50 ms\tD p95\tfloor of two relays (D−C paired)\t95% CI\tproxy's work above it (B−D paired)\t95% CI\t",
			func(k OverheadKindResult) *SplitResult { return k.Floor }},
		{r.OtherBridge, "E = the proxy path through another mcp-bridge, on the same proxy-server: %s\n",
			"tool\tE p50 ms\tE p95\tadded through it (E−A paired)\t95% CI\tB's bridge against it (B−E paired)\t95% CI\t",
			func(k OverheadKindResult) *SplitResult { return k.Other }},
		{r.DirectURL, "F = the same client straight to proxy-server's Streamable HTTP endpoint, no mcp-bridge: %s\n",
			"tool\tF p50 ms\tF p95\tadded over HTTP (F−A paired)\t95% CI\tthe bridge's part (B−F paired)\t95% CI\t",
			func(k OverheadKindResult) *SplitResult { return k.Direct }},
	} {
		if x.what == "" {
			continue
		}
		fmt.Fprintf(w, x.intro, x.what)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, x.header)
		for _, k := range r.Kinds {
			s := x.split(k)
			if s == nil {
				continue
			}
			ci1, ci2 := "-", "-"
			if s.First.CIOK && s.Second.CIOK {
				ci1, ci2 = fmt.Sprintf("%s…%s", f1(s.First.Low), f1(s.First.High)), fmt.Sprintf("%s…%s", f1(s.Second.Low), f1(s.Second.High))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", k.Tool, f1(s.Side.Median), f1(s.Side.P95), f1(s.First.MS), ci1, f1(s.Second.MS), ci2)
		}
		tw.Flush()
	}
	fmt.Fprintln(w, "where B's time goes (medians, ms; from the server's record: before = client → bridge → HTTP → worker called, upstream = the @playwright/mcp call, after = parse + record + answer → bridge → client):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\tn\tB client\tbefore\tupstream\tafter\tafter p95\tA client\tupstream − A\t")
	if r.BreakdownErr != "" {
		fmt.Fprintf(tw, "(unavailable: %s)\t\t\t\t\t\t\t\t\t\n", r.BreakdownErr)
	}
	for _, b := range r.Breakdown {
		a := math.NaN()
		for _, k := range r.Kinds {
			if k.Tool == b.Tool {
				a = k.Plain.Median
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", b.Tool, b.N, f1(b.Client.Median), f1(b.Before.Median), f1(b.Upstream.Median),
			f1(b.After.Median), f1(b.After.P95), f1(a), f1(b.Upstream.Median-a))
	}
	tw.Flush()
	writeErrors(w, "errors", r.ErrorCount, r.Errors)
	writeStdioEnd(w, r.Stops, r.Cleanup)
}
