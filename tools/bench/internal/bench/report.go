package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one benchmark run produced; it is what -json writes.
type Report struct {
	Started     time.Time          `json:"started"`
	Finished    time.Time          `json:"finished"`
	Command     []string           `json:"command"`
	Machine     Machine            `json:"machine"`
	Sessions    *SessionsResult    `json:"sessions,omitempty"`
	Concurrency *ConcurrencyResult `json:"concurrency,omitempty"`
	Nodes       *NodesResult       `json:"nodes,omitempty"`
	Idle        *IdleResult        `json:"idle,omitempty"`
	Store       *StoreResult       `json:"store,omitempty"`
	Soak        *SoakResult        `json:"soak,omitempty"`
	Overhead    *OverheadResult    `json:"overhead,omitempty"`
	Bytes       *BytesResult       `json:"bytes,omitempty"`
	Tokens      *TokensResult      `json:"tokens,omitempty"`
	Live        *LiveResult        `json:"live,omitempty"`
	Memory      *MemoryResult      `json:"memory,omitempty"`
	Error       string             `json:"error,omitempty"`
}

// Machine describes where the benchmark ran.
type Machine struct {
	NumCPU        int    `json:"nproc"`
	CPUModel      string `json:"cpu_model"`
	MemTotalKB    int64  `json:"mem_total_kb"`
	Kernel        string `json:"kernel"`
	GoVersion     string `json:"go"`
	Chromium      string `json:"chromium"`
	Node          string `json:"node"`
	PlaywrightMCP string `json:"playwright_mcp"`
	ProxyServer   string `json:"proxy_server"`
}

// DescribeMachine collects the machine facts, the versions by running the
// tools.
func DescribeMachine(ctx context.Context, root, serverBin string) Machine {
	m := hostFacts()
	browser := os.Getenv("PROXY_BROWSER_EXECUTABLE")
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil && browser == "" {
			browser = p
		}
	}
	version := func(name, arg string) string { return firstLine(run(ctx, root, name, arg)) }
	if browser != "" {
		m.Chromium = version(browser, "--version")
	}
	m.Node, m.ProxyServer = version("node", "--version"), version(serverBin, "version")
	var pkg struct {
		Version string `json:"version"`
	}
	if b, err := os.ReadFile(filepath.Join(root, "node_modules/@playwright/mcp/package.json")); err == nil && json.Unmarshal(b, &pkg) == nil {
		m.PlaywrightMCP = pkg.Version
	}
	return m
}

// hostFacts are the CPUs, memory, kernel and Go of this machine.
func hostFacts() Machine {
	m := Machine{NumCPU: runtime.NumCPU(), GoVersion: runtime.Version()}
	b, _ := os.ReadFile("/proc/cpuinfo")
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			m.CPUModel = strings.TrimSpace(v)
			break
		}
	}
	m.MemTotalKB, _ = statusKB("/proc/meminfo", "MemTotal")
	b, _ = os.ReadFile("/proc/sys/kernel/osrelease")
	m.Kernel = strings.TrimSpace(string(b))
	return m
}

func run(ctx context.Context, dir, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output() // stdout only: Debian's chromium wrapper chatters on stderr
	if err != nil && len(out) == 0 {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// WriteJSON writes the report, indented, to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding report: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteText writes the human-readable tables.
func (r *Report) WriteText(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs (%s), %.1f GiB RAM, Linux %s, %s\n", m.NumCPU, m.CPUModel, float64(m.MemTotalKB)/(1<<20), m.Kernel, m.GoVersion)
	fmt.Fprintf(w, "software: %s; node %s; @playwright/mcp %s; %s\n\n", m.Chromium, m.Node, m.PlaywrightMCP, m.ProxyServer)
	for _, t := range []interface{ writeText(io.Writer) }{r.Sessions, r.Concurrency, r.Nodes, r.Idle, r.Store, r.Soak, r.Overhead, r.Bytes, r.Tokens, r.Live, r.Memory} {
		if !reflect.ValueOf(t).IsNil() {
			t.writeText(w)
		}
	}
	if r.Error != "" {
		fmt.Fprintf(w, "ERROR: %s\n", r.Error)
	}
}

// newTable is a right-aligned table whose first line is header.
func newTable(w io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, header)
	return tw
}

func f0(x float64) string { return fmt.Sprintf("%.0f", x) }

func (s *SessionsResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== sessions: %d iterations per row; after startup an untimed %.0f s pause, then an untimed %.0f s sleep before every create (and before the existing-session navigate) lets the warm pool refill (the pool is not observable through the API); DELETE untimed; navigations to the %q page\n",
		s.Iterations, s.StartupWaitMS/1000, s.RefillWaitMS/1000, s.NavPage)
	tw := newTable(w, "warm_pool\tmeasurement\tn\tmedian ms\tp95 ms\tmax ms\t")
	row := func(pool int, name string, x Summary, extra string) {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\n", pool, name, x.N, f0(x.Median), f0(x.P95), f0(x.Max), extra)
	}
	byPool := map[int]SessionsRun{}
	for _, run := range s.Runs {
		byPool[run.WarmPool] = run
		row(run.WarmPool, "POST /sessions", run.Create, fmt.Sprintf("\t%d/%d got a pre-started worker", run.CreateFromPool, run.Create.N))
		row(run.WarmPool, "POST /sessions + first navigate", run.FirstNav, "\t")
		row(run.WarmPool, "navigate, existing session", run.ExistingNav, "\t")
		if run.ProfileCookies > 0 {
			row(run.WarmPool, fmt.Sprintf("POST /sessions from a profile (%d cookies over %d sites, localStorage on %d)", run.ProfileCookies, run.ProfileOrigins, run.ProfileStorage), run.ProfileCreate,
				fmt.Sprintf("\t%d/%d got a pre-started worker", run.ProfileFromPool, run.ProfileCreate.N))
			row(run.WarmPool, "  plain POST /sessions, in turn with it", run.ProfilePlainCreate, "\t")
		}
	}
	tw.Flush()
	warm, hasWarm := byPool[1]
	if cold, ok := byPool[0]; ok && hasWarm && warm.Create.Median > 0 {
		fmt.Fprintf(w, "ratio: POST /sessions median without / with warm pool = %.1f×\n", cold.Create.Median/warm.Create.Median)
	}
	for _, run := range s.Runs {
		if run.ProfileCreate.N > 0 && run.ProfilePlainCreate.N > 0 {
			fmt.Fprintf(w, "difference (warm_pool=%d): POST /sessions from a profile − plain, medians = %+.0f ms\n",
				run.WarmPool, run.ProfileCreate.Median-run.ProfilePlainCreate.Median)
		}
		if run.ExistingNav.Median > 0 {
			fmt.Fprintf(w, "ratio (warm_pool=%d): create + first navigate / navigate in an existing session = %.1f×\n",
				run.WarmPool, run.FirstNav.Median/run.ExistingNav.Median)
		}
	}
	if s.Plain != nil {
		fmt.Fprintln(w)
		s.Plain.writeText(w)
		if hasWarm && s.Plain.StartPlusFirstNav.Median > 0 {
			fmt.Fprintf(w, "ratio: plain @playwright/mcp start + first navigate / proxy create (warm pool) + first navigate = %.1f×\n", s.Plain.StartPlusFirstNav.Median/warm.FirstNav.Median)
		}
	}
	for _, run := range s.Runs {
		writeErrors(w, fmt.Sprintf("warm_pool=%d errors", run.WarmPool), run.ErrorCount, run.Errors)
		writeCleanup(w, run.Cleanup)
	}
	fmt.Fprintln(w)
}

func (c *ConcurrencyResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== concurrency: %.0f s per level; each session loops browser_navigate (%s in turn) + GET /content?search_for (button ref) + browser_snapshot + browser_click; env %v\n",
		c.DurationMS/1000, strings.Join(c.Pages, ", "), c.Env)
	fmt.Fprintln(w, "No call starts after the deadline; the calls in flight then finish and count: \"load s\" is the measured window, and calls/s are over it. "+
		"Rounds: completed (every call succeeded); cut: stopped part-way by the deadline. Memory per session: (end of load − 0-session baseline) / sessions.")
	tw := newTable(w, "level\tsessions\tcreate wall s\tcreate p50 ms\tload s\tok calls/s\tcalls\terrors\trounds\tcut\tRSS base MB\tend RSS/session MB\tend PSS/session MB\tCPU go/node/chromium\tother CPU\tload avg\t")
	for _, l := range c.Levels {
		fmt.Fprintf(tw, "%d\t%d\t%.1f\t%s\t%.1f\t%.2f\t%d\t%d\t%d\t%d\t%s\t%.1f\t%.1f\t%s\t%.2f\t%.1f→%.1f\t\n",
			l.Level, l.Created, l.CreateWallMS/1000, f0(l.Create.Median), l.WindowMS/1000, l.CallsPerSec, l.Calls, l.ErrorCount, l.Rounds, l.CutRounds,
			mb(l.Baseline.RSSKB), l.PerSessionRSSKB/1024, l.PerSessionPSSKB/1024,
			fmt.Sprintf("%.2f/%.2f/%.2f", l.LoadCPU.ServerByFamily["proxy-server"], l.LoadCPU.ServerByFamily["node"], l.LoadCPU.ServerByFamily["chromium"]),
			l.LoadCPU.OtherCores, l.LoadCPU.LoadAvg1[0], l.LoadCPU.LoadAvg1[1])
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = newTable(w, "level\ttool\tpage\tok\terrors\tok/s\tp50 ms\tp95 ms\tmax ms\t")
	for _, l := range c.Levels {
		for _, t := range l.Tools {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%.2f\t%s\t%s\t%s\t\n", l.Level, t.Tool, t.Page, t.OK, t.Errors, t.PerSec,
				f0(t.Latency.Median), f0(t.Latency.P95), f0(t.Latency.Max))
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	// Where the time of successful calls goes, from the server's record:
	// the admission queue shows in "before".
	fmt.Fprintln(w, "where the time goes (successful calls, medians in ms; before = HTTP + lock + worker check, upstream = @playwright/mcp call, after = parse + ingest + record + answer):")
	tw = newTable(w, "run\ttool\tpage\tn\tclient\tbefore\tupstream\tafter\tafter p95\t")
	for _, l := range c.Levels {
		if l.BreakdownErr != "" {
			fmt.Fprintf(tw, "level %d\t(unavailable: %s)\t\t\t\t\t\t\t\t\n", l.Level, l.BreakdownErr)
		}
		for _, b := range l.Breakdown {
			fmt.Fprintf(tw, "level %d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t\n", l.Level, b.Tool, b.Page, b.N,
				f0(b.Client.Median), f0(b.Before.Median), f0(b.Upstream.Median), f0(b.After.Median), f0(b.After.P95))
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "RSS per session by process kind at the end of the load, MB ((end − 0-session baseline) / sessions):")
	var ks []string
	for _, l := range c.Levels {
		ks = append(ks, slices.Collect(maps.Keys(l.PerSessionByKind))...)
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	tw = newTable(w, "level\t"+strings.Join(ks, "\t")+"\t")
	for _, l := range c.Levels {
		var cells []string
		for _, k := range ks {
			cells = append(cells, fmt.Sprintf("%.1f", l.PerSessionByKind[k]/1024))
		}
		fmt.Fprintf(tw, "%d\t%s\t\n", l.Level, strings.Join(cells, "\t"))
	}
	tw.Flush()
	for _, l := range c.Levels {
		if l.Created < l.Level {
			fmt.Fprintf(w, "level %d: only %d of %d sessions could be created\n", l.Level, l.Created, l.Level)
		}
		writeErrors(w, fmt.Sprintf("level %d create errors", l.Level), len(l.CreateErrors), l.CreateErrors)
		writeErrors(w, fmt.Sprintf("level %d errors", l.Level), l.ErrorCount, l.Errors)
		if !l.Settled {
			fmt.Fprintf(w, "level %d: the previous level's processes had not all gone: its baseline (and RSS/session) is too high\n", l.Level)
		}
		if l.MemoryGuard != "" {
			fmt.Fprintf(w, "level %d: MEMORY GUARD: %s\n", l.Level, l.MemoryGuard)
		}
	}
	writeCleanup(w, c.Cleanup)
	fmt.Fprintln(w)
}

func (r *IdleResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== idle: one active session alternates browser_navigate (table, form) and browser_snapshot, %d times, while K other sessions sit idle with the form page open; env %v\n",
		r.Navigations, r.Env)
	tw := newTable(w, "idle sessions\topened\tnavigate p50 ms\tp95 ms\tsnapshot p50 ms\tp95 ms\terrors\t")
	for _, l := range r.Levels {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%d\t\n", l.Idle, l.Opened,
			f0(l.Navigate.Median), f0(l.Navigate.P95), f0(l.Snapshot.Median), f0(l.Snapshot.P95), l.ErrCount)
	}
	tw.Flush()
	for _, l := range r.Levels {
		writeErrors(w, fmt.Sprintf("%d idle: errors", l.Idle), l.ErrCount, l.Errors)
	}
	writeCleanup(w, r.Cleanup)
	fmt.Fprintln(w)
}

func writeErrors(w io.Writer, title string, total int, es []ErrorCount) {
	if total == 0 && len(es) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: %d (first distinct messages):\n", title, total)
	for i, e := range es {
		if i == 5 {
			fmt.Fprintf(w, "  … %d more distinct messages in the JSON\n", len(es)-5)
			break
		}
		fmt.Fprintf(w, "  %d× %s: %s\n", e.Count, e.Where, e.Message)
	}
}

func writeCleanup(w io.Writer, r StopReport) {
	if r.Signal == "" {
		return
	}
	fmt.Fprintf(w, "cleanup: %s\n", r.Summary())
}
