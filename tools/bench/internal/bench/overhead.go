package bench

import (
	"context"
	"encoding/json"
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
type OverheadConfig struct {
	Server ServerConfig
	// Root is the project root (node_modules) for the plain upstream.
	Root string
	// Bridge is the mcp-bridge binary.
	Bridge string
	// Iterations is the number of timed A/B pairs per call kind (default
	// 200).
	Iterations int
	// Warmup is the number of untimed A/B rounds first (default 20).
	Warmup int
	// Page is the test page both sides sit on (default "table").
	Page string
	// SettleMS is --timeout-settle on both sides (default 0; negative:
	// upstream's default on both).
	SettleMS int
	// CallTimeout bounds every tool call.
	CallTimeout time.Duration
	// StrictOrder runs A before B in every pair. By default the order
	// flips every round (AB, BA, …): strictly A-first, B always runs right
	// after A's call of the same kind, so a heavy call (a snapshot) leaves
	// its CPU work (GC, Chromium) to B alone.
	StrictOrder bool
	// Hop adds a third side, C: a plain @playwright/mcp connected to a
	// Playwright browser server launched like the proxy's shared browser,
	// so the report splits B − A into the shared browser's hop (C − A) and
	// the proxy's own part (B − C).
	Hop bool
	// Relay, with Hop, adds side D: the same plain @playwright/mcp on the
	// same browser server behind two minimal Go relays (stdio → HTTP →
	// stdio, the shape of mcp-bridge → proxy-server without their work).
	// It is the command prefix that runs a stdio MCP server so, such as
	// `bench relay --`. D − C is the floor of any such path on this
	// machine, B − D the proxy's work above it.
	Relay []string
	// OtherBridge, when set, adds side E: the proxy path through this
	// other mcp-bridge binary, on the same proxy-server. B − E, paired
	// within the same rounds, compares two bridges without the drift
	// between runs (the plain side's median moved by 2–3 ms from one
	// day to the next on this VM).
	OtherBridge string
	// Direct adds side F: the same client straight to proxy-server's own
	// Streamable HTTP endpoint (/mcp), no mcp-bridge. F − A is what the
	// proxy adds for a client that speaks HTTP, B − F what the bridge and
	// its stdio add on top.
	Direct bool
}

// OverheadResult is the result of the overhead scenario.
type OverheadResult struct {
	Iterations int    `json:"iterations"`
	Warmup     int    `json:"warmup_rounds"`
	Page       string `json:"page"`
	SettleMS   int    `json:"timeout_settle_ms"`
	// Order is "AB" (strict) or "AB/BA" (flipped every round).
	Order string            `json:"order"`
	Env   map[string]string `json:"env"`
	// PlainCommand is how the plain upstream was started.
	PlainCommand string `json:"plain_command"`
	// ViaCommand is how side C (Hop) was started.
	ViaCommand string `json:"via_browser_server_command,omitempty"`
	// RelayedCommand is how side D (Relay) was started.
	RelayedCommand string `json:"relayed_command,omitempty"`
	// OtherBridge is side E's mcp-bridge (OtherBridge).
	OtherBridge string `json:"other_bridge,omitempty"`
	// DirectURL is side F's endpoint (Direct).
	DirectURL string               `json:"direct_http_url,omitempty"`
	Kinds     []OverheadKindResult `json:"kinds"`
	TargetMS  float64              `json:"target_added_ms"`
	// Breakdown splits the proxy side's calls with the server's record
	// (see Breakdown): before = client → bridge → HTTP → worker called,
	// upstream = the worker call, after = record + answer → bridge →
	// client.
	Breakdown    []Breakdown       `json:"proxy_breakdown"`
	BreakdownErr string            `json:"breakdown_error,omitempty"`
	Errors       []ErrorCount      `json:"errors"`
	ErrorCount   int               `json:"error_count"`
	Stops        []StdioStopReport `json:"stdio_stops"`
	Cleanup      StopReport        `json:"cleanup"`
	Interrupted  bool              `json:"interrupted,omitempty"`
}

// OverheadKindResult is one call kind: A is plain, B is the proxy path.
type OverheadKindResult struct {
	Tool  string  `json:"tool"`
	Args  string  `json:"args"`
	Pairs int     `json:"pairs"`
	Plain Summary `json:"plain"`
	Proxy Summary `json:"proxy"`
	// Diff summarises the paired differences B − A.
	Diff Summary `json:"paired_diff"`
	// AddedMS is the median of the paired differences, with a
	// distribution-free 95 % confidence interval (order statistics).
	AddedMS     float64 `json:"added_ms"`
	AddedCILow  float64 `json:"added_ms_ci95_low"`
	AddedCIHigh float64 `json:"added_ms_ci95_high"`
	AddedCIOK   bool    `json:"added_ms_ci95_ok"`
	// DiffOfMediansMS is median(B) − median(A).
	DiffOfMediansMS float64 `json:"diff_of_medians_ms"`
	// Ratio is median(B) / median(A).
	Ratio      float64   `json:"ratio"`
	PlainBytes ByteStats `json:"plain_bytes"`
	ProxyBytes ByteStats `json:"proxy_bytes"`
	// Hop is side C's figures, when it ran.
	Hop *HopResult `json:"hop,omitempty"`
	// Floor is side D's figures, when it ran.
	Floor *FloorResult `json:"relay_floor,omitempty"`
	// Other is side E's figures, when it ran.
	Other *ProxyPathResult `json:"other_bridge,omitempty"`
	// Direct is side F's figures, when it ran.
	Direct *ProxyPathResult `json:"direct_http,omitempty"`
}

// ProxyPathResult compares another way to the same proxy-server (side E,
// another mcp-bridge; side F, a client of /mcp) with A and with B, all from
// the same rounds.
type ProxyPathResult struct {
	Side Summary `json:"side"`
	// AddedMS is the median of the paired side − A, VsSideMS of B − side
	// (negative: B's way is faster); each with a 95 % confidence interval.
	AddedMS      float64 `json:"added_ms"`
	AddedCILow   float64 `json:"added_ms_ci95_low"`
	AddedCIHigh  float64 `json:"added_ms_ci95_high"`
	VsSideMS     float64 `json:"b_minus_side_ms"`
	VsSideCILow  float64 `json:"b_minus_side_ms_ci95_low"`
	VsSideCIHigh float64 `json:"b_minus_side_ms_ci95_high"`
	CIOK         bool    `json:"ci95_ok"`
}

// summarizeProxyPath computes side E's or F's figures from the same rounds
// as A and B.
func summarizeProxyPath(plain, proxy, side []float64) *ProxyPathResult {
	added, vs, ok := splitAt(plain, side, proxy)
	if !ok {
		return nil
	}
	return &ProxyPathResult{Side: Summarize(side),
		AddedMS: added.ms, AddedCILow: added.lo, AddedCIHigh: added.hi,
		VsSideMS: vs.ms, VsSideCILow: vs.lo, VsSideCIHigh: vs.hi,
		CIOK: added.ciOK && vs.ciOK}
}

// split is r's side and its two paired medians (writeSplits); ok is false
// when the side did not run (r is nil).
func (r *ProxyPathResult) split() (side Summary, added, vs pairedMedian, ok bool) {
	if r == nil {
		return Summary{}, pairedMedian{}, pairedMedian{}, false
	}
	return r.Side, pairedMedian{r.AddedMS, r.AddedCILow, r.AddedCIHigh, r.CIOK},
		pairedMedian{r.VsSideMS, r.VsSideCILow, r.VsSideCIHigh, r.CIOK}, true
}

// FloorResult splits the proxy's own part (B − C) with side D, the plain
// upstream of side C behind two minimal Go relays: D − C is what any path
// of that shape costs here, B − D what the proxy's work adds to it.
type FloorResult struct {
	Relayed Summary `json:"relayed"`
	// FloorMS is the median of the paired D − C, AboveFloorMS of B − D;
	// each with a 95 % confidence interval.
	FloorMS          float64 `json:"floor_ms"`
	FloorCILow       float64 `json:"floor_ms_ci95_low"`
	FloorCIHigh      float64 `json:"floor_ms_ci95_high"`
	AboveFloorMS     float64 `json:"above_floor_ms"`
	AboveFloorCILow  float64 `json:"above_floor_ms_ci95_low"`
	AboveFloorCIHigh float64 `json:"above_floor_ms_ci95_high"`
	CIOK             bool    `json:"ci95_ok"`
}

// summarizeFloor computes side D's figures from the same rounds as B and C.
func summarizeFloor(proxy, via, relayed []float64) *FloorResult {
	floor, above, ok := splitAt(via, relayed, proxy)
	if !ok {
		return nil
	}
	return &FloorResult{Relayed: Summarize(relayed),
		FloorMS: floor.ms, FloorCILow: floor.lo, FloorCIHigh: floor.hi,
		AboveFloorMS: above.ms, AboveFloorCILow: above.lo, AboveFloorCIHigh: above.hi,
		CIOK: floor.ciOK && above.ciOK}
}

// split is f's side D and its two paired medians (writeSplits); ok is
// false when there is no side D (f is nil).
func (f *FloorResult) split() (side Summary, floor, above pairedMedian, ok bool) {
	if f == nil {
		return Summary{}, pairedMedian{}, pairedMedian{}, false
	}
	return f.Relayed, pairedMedian{f.FloorMS, f.FloorCILow, f.FloorCIHigh, f.CIOK},
		pairedMedian{f.AboveFloorMS, f.AboveFloorCILow, f.AboveFloorCIHigh, f.CIOK}, true
}

// pairedMedian is the median of paired differences with its 95 % interval.
type pairedMedian struct {
	ms, lo, hi float64
	ciOK       bool
}

// splitAt splits the paired z − x at y: the medians of y − x and z − y.
// ok is false when the rounds do not pair up.
func splitAt(x, y, z []float64) (first, second pairedMedian, ok bool) {
	d1, d2 := pairedDiffs(x, y), pairedDiffs(y, z)
	if len(d1) == 0 || len(d2) == 0 {
		return first, second, false
	}
	first.ms, second.ms = Summarize(d1).Median, Summarize(d2).Median
	first.lo, first.hi, first.ciOK = medianCI(d1, 0.95)
	second.lo, second.hi, second.ciOK = medianCI(d2, 0.95)
	return first, second, true
}

// HopResult splits B − A with side C, a plain @playwright/mcp on a shared
// browser server: the hop is what sharing one browser costs any client,
// the rest is the proxy's own work.
type HopResult struct {
	Via Summary `json:"via_browser_server"`
	// HopMS is the median of the paired C − A, ProxyOwnMS of B − C; each
	// with a 95 % confidence interval.
	HopMS          float64 `json:"hop_ms"`
	HopCILow       float64 `json:"hop_ms_ci95_low"`
	HopCIHigh      float64 `json:"hop_ms_ci95_high"`
	ProxyOwnMS     float64 `json:"proxy_own_ms"`
	ProxyOwnCILow  float64 `json:"proxy_own_ms_ci95_low"`
	ProxyOwnCIHigh float64 `json:"proxy_own_ms_ci95_high"`
	CIOK           bool    `json:"ci95_ok"`
}

// summarizeHop computes side C's figures from the same rounds as A and B.
func summarizeHop(plain, proxy, via []float64) *HopResult {
	hop, own, ok := splitAt(plain, via, proxy)
	if !ok {
		return nil
	}
	return &HopResult{Via: Summarize(via),
		HopMS: hop.ms, HopCILow: hop.lo, HopCIHigh: hop.hi,
		ProxyOwnMS: own.ms, ProxyOwnCILow: own.lo, ProxyOwnCIHigh: own.hi,
		CIOK: hop.ciOK && own.ciOK}
}

// split is h's side C and its two paired medians (writeSplits); ok is
// false when there is no side C (h is nil).
func (h *HopResult) split() (side Summary, hop, own pairedMedian, ok bool) {
	if h == nil {
		return Summary{}, pairedMedian{}, pairedMedian{}, false
	}
	return h.Via, pairedMedian{h.HopMS, h.HopCILow, h.HopCIHigh, h.CIOK},
		pairedMedian{h.ProxyOwnMS, h.ProxyOwnCILow, h.ProxyOwnCIHigh, h.CIOK}, true
}

// ByteStats describes the sizes of the results of one call kind.
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

// overheadKind is one call measured on both sides.
type overheadKind struct {
	tool string
	args map[string]any
}

func overheadKinds() []overheadKind {
	return []overheadKind{
		{"browser_evaluate", map[string]any{"function": "() => document.title"}},
		{"browser_snapshot", map[string]any{}},
	}
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
	alpha := (1 - conf) / 2
	// cdf accumulates P(B ≤ j) in log space: C(n, j) / 2^n overflows
	// nothing that way even for large n.
	lgN, _ := math.Lgamma(float64(n + 1))
	cdf, k := 0.0, 0
	for j := 0; j < n; j++ {
		lgJ, _ := math.Lgamma(float64(j + 1))
		lgNJ, _ := math.Lgamma(float64(n - j + 1))
		cdf += math.Exp(lgN - lgJ - lgNJ - float64(n)*math.Ln2)
		if cdf > alpha {
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

// summarizeKind computes a kind's result from its timed pairs (ms) and
// result sizes.
func summarizeKind(tool string, args map[string]any, plain, proxy []float64, plainBytes, proxyBytes []int) OverheadKindResult {
	var a strings.Builder
	enc := json.NewEncoder(&a)
	enc.SetEscapeHTML(false) // "() => …" as written, not "=\u003e"
	_ = enc.Encode(args)     // a map of JSON values: cannot fail
	r := OverheadKindResult{Tool: tool, Args: strings.TrimSpace(a.String()), Pairs: len(plain),
		Plain: Summarize(plain), Proxy: Summarize(proxy),
		PlainBytes: byteStats(plainBytes), ProxyBytes: byteStats(proxyBytes)}
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

// RunOverhead runs the overhead scenario.
func RunOverhead(ctx context.Context, log *slog.Logger, site *Site, cfg OverheadConfig) (res *OverheadResult, err error) {
	if cfg.Iterations <= 0 {
		cfg.Iterations = 200
	}
	if cfg.Warmup < 0 {
		cfg.Warmup = 0
	}
	if cfg.Page == "" {
		cfg.Page = "table"
	}
	page, ok := Pages[cfg.Page]
	if !ok {
		return nil, fmt.Errorf("unknown page %q", cfg.Page)
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 3 * time.Minute
	}
	scfg := cfg.Server
	scfg.Env = copyEnv(scfg.Env)
	if cfg.SettleMS >= 0 {
		// Appended last: commander keeps the last value, so a user's own
		// --timeout-settle cannot make the two sides differ.
		scfg.Env["PROXY_PLAYWRIGHT_ARGS"] = strings.TrimSpace(scfg.Env["PROXY_PLAYWRIGHT_ARGS"] + fmt.Sprintf(" --timeout-settle=%d", cfg.SettleMS))
	}
	res = &OverheadResult{Iterations: cfg.Iterations, Warmup: cfg.Warmup, Page: cfg.Page, SettleMS: cfg.SettleMS, Env: scfg.Env, TargetMS: OverheadTargetMS, Order: "AB/BA"}
	if cfg.StrictOrder {
		res.Order = "AB"
	}

	srv, stop, err := startServer(ctx, log, scfg, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	// Deferred in this order so that they run bridge, plain, server: the
	// server's stop reaps any child of this process.
	defer stop()
	plain, err := StartPlain(ctx, log, PlainConfig{Root: cfg.Root, SettleMS: cfg.SettleMS})
	if err != nil {
		return res, err
	}
	defer func() { res.Stops = append(res.Stops, plain.Stop(context.WithoutCancel(ctx))) }()
	res.PlainCommand = plain.CommandLine()
	var via, relayed *StdioServer
	if cfg.Hop {
		var stop func()
		via, relayed, stop, err = startVia(ctx, log, cfg)
		if err != nil {
			return res, err
		}
		defer stop()
		defer func() { res.Stops = append(res.Stops, via.Stop(context.WithoutCancel(ctx))) }()
		res.ViaCommand = via.CommandLine()
		if relayed != nil {
			defer func() { res.Stops = append(res.Stops, relayed.Stop(context.WithoutCancel(ctx))) }()
			res.RelayedCommand = relayed.CommandLine()
		}
	}
	proxy, err := StartBridge(ctx, log, cfg.Bridge, srv.URL)
	if err != nil {
		return res, err
	}
	defer func() { res.Stops = append(res.Stops, proxy.Stop(context.WithoutCancel(ctx))) }()
	var other *StdioServer
	if cfg.OtherBridge != "" {
		if other, err = StartBridge(ctx, log, cfg.OtherBridge, srv.URL); err != nil {
			return res, fmt.Errorf("side E: %w", err)
		}
		defer func() { res.Stops = append(res.Stops, other.Stop(context.WithoutCancel(ctx))) }()
		res.OtherBridge = cfg.OtherBridge
	}
	var direct *StdioServer
	if cfg.Direct {
		res.DirectURL = strings.TrimSuffix(srv.URL, "/") + "/mcp"
		if direct, err = StartHTTP(ctx, log, "proxy over HTTP", res.DirectURL, os.Getenv("PROXY_AUTH_TOKEN")); err != nil {
			return res, fmt.Errorf("side F: %w", err)
		}
		defer func() { res.Stops = append(res.Stops, direct.Stop(context.WithoutCancel(ctx))) }()
	}

	call := func(s *StdioServer, tool string, args map[string]any) (ToolCall, error) {
		cctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
		defer cancel()
		return s.Call(cctx, tool, args)
	}
	// Untimed: both sides open the page (the plain side launches its
	// browser here; the bridge creates its default session).
	url := site.PageURL(page)
	sides := []*StdioServer{plain, proxy}
	names := []string{"plain", "proxy"}
	viaAt, relayedAt, otherAt, directAt := -1, -1, -1, -1
	for _, x := range []struct {
		s    *StdioServer
		at   *int
		name string
	}{
		{via, &viaAt, "plain via browser server"},
		{relayed, &relayedAt, "plain via browser server behind relays"},
		{other, &otherAt, "proxy through the other bridge"},
		{direct, &directAt, "proxy over HTTP"},
	} {
		if x.s != nil {
			*x.at = len(sides)
			sides = append(sides, x.s)
			names = append(names, x.name)
		}
	}
	for _, s := range sides {
		if _, err := call(s, "browser_navigate", map[string]any{"url": url}); err != nil {
			return res, fmt.Errorf("opening the %s page: %w", cfg.Page, err)
		}
	}

	kinds := overheadKinds()
	// took holds each side's times, in the order of sides.
	type acc struct {
		took                   [][]float64
		plainBytes, proxyBytes []int
	}
	accs := make([]acc, len(kinds))
	for k := range accs {
		accs[k].took = make([][]float64, len(sides))
	}
	var timings []callTiming
	errs := newErrorLog()
	// Also on errors and Ctrl-C: partial results are still results. The
	// server's record is read before its stop removes the database.
	defer func() {
		for i, k := range kinds {
			a := accs[i]
			plainT, proxyT := a.took[0], a.took[1]
			kr := summarizeKind(k.tool, k.args, plainT, proxyT, a.plainBytes, a.proxyBytes)
			if viaAt >= 0 {
				kr.Hop = summarizeHop(plainT, proxyT, a.took[viaAt])
			}
			if relayedAt >= 0 {
				kr.Floor = summarizeFloor(proxyT, a.took[viaAt], a.took[relayedAt])
			}
			if otherAt >= 0 {
				kr.Other = summarizeProxyPath(plainT, proxyT, a.took[otherAt])
			}
			if directAt >= 0 {
				kr.Direct = summarizeProxyPath(plainT, proxyT, a.took[directAt])
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
	// A broken side fails every call: stop early rather than run for hours.
	maxErrors := 10 + rounds*len(kinds)/20
	log.Info("overhead: A/B alternated calls", "warmup_rounds", cfg.Warmup, "timed_pairs_per_kind", cfg.Iterations, "order", res.Order, "page", cfg.Page, "timeout_settle_ms", cfg.SettleMS)
	for i := range rounds {
		timed := i >= cfg.Warmup
		for k, kind := range kinds {
			// Side j of this round is sides[order[j]]: with two sides AB
			// and BA in turn, with more a rotation (ABC, BCA, CAB).
			got := make([]ToolCall, len(sides))
			failed := false
			for j := range sides {
				n := j
				if !cfg.StrictOrder {
					n = (j + i) % len(sides)
				}
				var err error
				if got[n], err = call(sides[n], kind.tool, kind.args); err != nil {
					errs.add(names[n]+" "+kind.tool, err)
					failed = true
				}
			}
			if !timed || failed {
				continue
			}
			for n, c := range got {
				accs[k].took[n] = append(accs[k].took[n], ms(c.Took))
			}
			a, b := got[0], got[1]
			accs[k].plainBytes = append(accs[k].plainBytes, a.Bytes)
			accs[k].proxyBytes = append(accs[k].proxyBytes, b.Bytes)
			if ref, err := RefIDOf(b.Text()); err == nil {
				timings = append(timings, callTiming{ref: ref, tool: kind.tool, page: cfg.Page, sent: b.Start, received: b.Start.Add(b.Took)})
			}
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if n := errs.total(); n > maxErrors {
			return res, fmt.Errorf("%d failed calls, first: %s", n, firstOverheadError(errs.list()))
		}
		if step := max(1, rounds/10); (i+1)%step == 0 || i+1 == rounds {
			args := []any{"round", i + 1, "of", rounds, "warmup", !timed}
			for k, kind := range kinds {
				if t := accs[k].took; len(t[0]) > 0 {
					args = append(args, kind.tool, fmt.Sprintf("plain p50 %.1f ms, proxy p50 %.1f ms", Percentile(t[0], 50), Percentile(t[1], 50)))
				}
			}
			log.Info("overhead progress", args...)
		}
	}
	return res, nil
}

func firstOverheadError(es []ErrorCount) string {
	if len(es) == 0 {
		return ""
	}
	return es[0].Where + ": " + es[0].Message
}

// startVia launches a Playwright browser server the way proxy-server launches
// its shared browser (same flags, V8 size optimisation on, as by default)
// and a plain @playwright/mcp connected to it: side C of the overhead
// scenario; with cfg.Relay, also side D, another one behind the relays.
// stop ends the browser server.
func startVia(ctx context.Context, log *slog.Logger, cfg OverheadConfig) (via, relayed *StdioServer, stop func(), err error) {
	from, err := upstream.PlaywrightFrom(upstream.DefaultCommand(cfg.Root))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("side C: %w", err)
	}
	exe := os.Getenv("PROXY_BROWSER_EXECUTABLE")
	if exe == "" {
		if exe, err = upstream.FindBrowser(); err != nil {
			return nil, nil, nil, fmt.Errorf("side C: %w", err)
		}
	}
	quiet := slog.New(slog.DiscardHandler)
	b, err := upstream.LaunchBrowserServer(ctx, upstream.BrowserConfig{Executable: exe, Headless: true, OptimizeMemory: true, Logger: quiet}, "", from)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("side C: browser server: %w", err)
	}
	stop = func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := b.Close(sctx); err != nil {
			log.Warn("side C: stopping the browser server", "err", err)
		}
	}
	via, err = StartPlain(ctx, log, PlainConfig{Root: cfg.Root, SettleMS: cfg.SettleMS, Endpoint: b.PlaywrightEndpoint()})
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	if len(cfg.Relay) > 0 {
		relayed, err = StartPlain(ctx, log, PlainConfig{Root: cfg.Root, SettleMS: cfg.SettleMS, Endpoint: b.PlaywrightEndpoint(), Relay: cfg.Relay})
		if err != nil {
			via.Stop(context.WithoutCancel(ctx))
			stop()
			return nil, nil, nil, fmt.Errorf("side D: %w", err)
		}
	}
	return via, relayed, stop, nil
}

// CommandLine is the child's command line, for the report.
func (s *StdioServer) CommandLine() string {
	return strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " ")
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
		if k.Pairs == 0 {
			continue
		}
		fmt.Fprintf(w, "result: %s: the proxy path adds %.1f ms median (target ≤ %.0f ms median: %s); the client receives %d bytes per call through the proxy vs %d plain\n",
			k.Tool, k.AddedMS, r.TargetMS, verdict(k.AddedMS <= r.TargetMS), k.ProxyBytes.Median, k.PlainBytes.Median)
	}
	if r.ViaCommand != "" {
		fmt.Fprintf(w, "C = a plain @playwright/mcp on a Playwright browser server launched like proxy-server's shared browser: %s\n", r.ViaCommand)
		writeSplits(w, "tool\tC p50 ms\tC p95\tshared browser's hop (C−A paired)\t95% CI\tproxy's own (B−C paired)\t95% CI\t", r.Kinds,
			func(k OverheadKindResult) (Summary, pairedMedian, pairedMedian, bool) { return k.Hop.split() })
	}
	if r.RelayedCommand != "" {
		fmt.Fprintf(w, "D = C's plain @playwright/mcp, on the same browser server, behind two minimal Go relays (stdio → HTTP → stdio, the shape of mcp-bridge → proxy-server with none of their work): %s\n", r.RelayedCommand)
		writeSplits(w, "tool\tD p50 ms\tD p95\tfloor of two relays (D−C paired)\t95% CI\tproxy's work above it (B−D paired)\t95% CI\t", r.Kinds,
			func(k OverheadKindResult) (Summary, pairedMedian, pairedMedian, bool) { return k.Floor.split() })
	}
	if r.OtherBridge != "" {
		fmt.Fprintf(w, "E = the proxy path through another mcp-bridge, on the same proxy-server: %s\n", r.OtherBridge)
		writeSplits(w, "tool\tE p50 ms\tE p95\tadded through it (E−A paired)\t95% CI\tB's bridge against it (B−E paired)\t95% CI\t", r.Kinds,
			func(k OverheadKindResult) (Summary, pairedMedian, pairedMedian, bool) { return k.Other.split() })
	}
	if r.DirectURL != "" {
		fmt.Fprintf(w, "F = the same client straight to proxy-server's Streamable HTTP endpoint, no mcp-bridge: %s\n", r.DirectURL)
		writeSplits(w, "tool\tF p50 ms\tF p95\tadded over HTTP (F−A paired)\t95% CI\tthe bridge's part (B−F paired)\t95% CI\t", r.Kinds,
			func(k OverheadKindResult) (Summary, pairedMedian, pairedMedian, bool) { return k.Direct.split() })
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
	for _, s := range r.Stops {
		fmt.Fprintf(w, "stdio stop: %s\n", s.Summary())
	}
	writeCleanup(w, r.Cleanup)
	fmt.Fprintln(w, "(the proxy-server's count of descendants seen includes the plain side's node and Chromium, which ran beside it)")
	fmt.Fprintln(w)
}

// writeSplits writes one row per call kind that has a split: the extra
// side's median and p95, then the two paired medians with their intervals.
func writeSplits(w io.Writer, header string, kinds []OverheadKindResult, split func(OverheadKindResult) (Summary, pairedMedian, pairedMedian, bool)) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, header)
	for _, k := range kinds {
		side, first, second, ok := split(k)
		if !ok {
			continue
		}
		ci1, ci2 := "-", "-"
		if first.ciOK && second.ciOK {
			ci1 = fmt.Sprintf("%s…%s", f1(first.lo), f1(first.hi))
			ci2 = fmt.Sprintf("%s…%s", f1(second.lo), f1(second.hi))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", k.Tool, f1(side.Median), f1(side.P95), f1(first.ms), ci1, f1(second.ms), ci2)
	}
	tw.Flush()
}
