package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
)

// The tokens scenario: what a conversation costs the model's context on a
// suite of everyday browser tasks, on three sides in one run. A scripted
// agent (no LLM) does each task with the cheapest honest strategy a capable
// model would use with that side's tools: it only uses what the answers it
// received say (element refs are parsed out of them), and every tool result
// it receives is counted. Whether a task really worked is checked apart,
// uncounted, against what the bench's own site recorded (a cart POST, a
// sign-in, a submitted form, a page fetched) or against the values the site
// is known to show.

// Sides of the tokens scenario.
const (
	// SideSnapshot is plain @playwright/mcp, reading with browser_snapshot.
	SideSnapshot = "plain+snapshot"
	// SideFind is plain @playwright/mcp, locating with browser_find.
	SideFind = "plain+find"
	// SideProxy is mcp-bridge → proxy-server: compact answers that show an
	// action's effect, get_content(ref_id, search_for), get_console_content.
	SideProxy = "proxy"
)

// tokensSides are the sides in run order, with the run id each uses on the
// site (one length, so that URLs weigh the same on every side).
var tokensSides = []struct{ name, run string }{
	{SideSnapshot, "snap"},
	{SideFind, "find"},
	{SideProxy, "prox"},
}

// Targets of the tokens scenario.
const (
	// TokensBytesTargetPct: the proxy's result bytes are at most this share
	// of plain+find's, on the suite and on each task.
	TokensBytesTargetPct = 50.0
)

// TokensConfig configures the tokens scenario.
type TokensConfig struct {
	Server ServerConfig
	// Root is the project root (node_modules) for the plain upstream.
	Root string
	// Bridge is the mcp-bridge binary.
	Bridge string
	// Tasks are the names of the tasks to run (empty: all, in suite order).
	Tasks []string
	// CallTimeout bounds every tool call.
	CallTimeout time.Duration
}

// TokensResult is the result of the tokens scenario.
type TokensResult struct {
	Env   map[string]string `json:"env"`
	Tasks []TokensTaskInfo  `json:"tasks"`
	// Sides are the runs, in the order of tokensSides.
	Sides []TokensSide `json:"sides"`
	// Verdicts are the targets, judged on this run; empty when a side
	// failed (a failed run is not judged).
	Verdicts  []TokensVerdict   `json:"verdicts,omitempty"`
	TargetPct float64           `json:"target_pct"`
	Stops     []StdioStopReport `json:"stdio_stops"`
	Cleanup   StopReport        `json:"cleanup"`
	// Interrupted is set when the run was cut short (Ctrl-C).
	Interrupted bool `json:"interrupted,omitempty"`
}

// TokensTaskInfo names one task of the suite and says what it asks.
type TokensTaskInfo struct {
	Name string `json:"name"`
	Goal string `json:"goal"`
}

// TokensSide is the suite on one side.
type TokensSide struct {
	Side string `json:"side"`
	// Tools and ToolsListBytes are what its tools/list answered.
	Tools          int `json:"tools"`
	ToolsListBytes int `json:"tools_list_bytes"`
	// Bytes and Calls are the suite's totals (tools/list not included).
	Bytes int             `json:"bytes"`
	Calls int             `json:"calls"`
	Tasks []TokensTaskRun `json:"tasks"`
	Error string          `json:"error,omitempty"`
}

// TokensTaskRun is one task on one side.
type TokensTaskRun struct {
	Task  string      `json:"task"`
	Steps []BytesStep `json:"steps"`
	Bytes int         `json:"bytes"`
	Calls int         `json:"calls"`
	// Found is what the agent read off its answers (the value asked for,
	// or the confirmation it saw).
	Found string `json:"found"`
	// Verified says the uncounted ground-truth check passed; Verification
	// says what it saw.
	Verified     bool   `json:"verified"`
	Verification string `json:"verification"`
	Error        string `json:"error,omitempty"`
}

// TokensVerdict is one target judged on the run.
type TokensVerdict struct {
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

// tokensTask is one task of the suite: one strategy per side, each
// returning what the agent found, and the uncounted check of the result.
type tokensTask interface {
	Name() string
	Goal() string
	Snapshot(ctx context.Context, a *agent) (string, error)
	Find(ctx context.Context, a *agent) (string, error)
	Proxy(ctx context.Context, a *agent) (string, error)
	// Verify checks found and what the site recorded for the run; it may
	// wait briefly for a record the page sends after the action answered.
	Verify(ctx context.Context, site *Site, run, found string) (string, error)
}

// tokensSuite is every task, in suite order.
func tokensSuite() []tokensTask {
	return []tokensTask{shopTask{}, ordersTask{}, contactTask{}, articleTask{}, linkTask{}, consoleTask{}, evaluateTask{}, tabsTask{}}
}

// TokensTaskNames lists the suite's task names, in order.
func TokensTaskNames() []string {
	var out []string
	for _, t := range tokensSuite() {
		out = append(out, t.Name())
	}
	return out
}

// Check validates the configuration that needs no running process.
func (c TokensConfig) Check() error {
	_, err := selectTasks(c.Tasks)
	return err
}

func selectTasks(names []string) ([]tokensTask, error) {
	all := tokensSuite()
	if len(names) == 0 {
		return all, nil
	}
	var out []tokensTask
	for _, n := range names {
		i := slices.IndexFunc(all, func(t tokensTask) bool { return t.Name() == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown task %q (tasks: %s)", n, strings.Join(TokensTaskNames(), ", "))
		}
		if slices.ContainsFunc(out, func(t tokensTask) bool { return t.Name() == n }) {
			return nil, fmt.Errorf("task %q given twice", n)
		}
		out = append(out, all[i])
	}
	return out, nil
}

// RunTokens runs the selected tasks on the three sides: two plain
// @playwright/mcp processes (one per reading, so that no browser state
// carries over) and mcp-bridge → proxy-server. Any task that fails or
// does not verify fails the run.
func RunTokens(ctx context.Context, log *slog.Logger, site *Site, cfg TokensConfig) (res *TokensResult, err error) {
	tasks, err := selectTasks(cfg.Tasks)
	if err != nil {
		return nil, err
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 3 * time.Minute
	}
	scfg := cfg.Server
	scfg.Env = copyEnv(scfg.Env)
	res = &TokensResult{Env: scfg.Env, TargetPct: TokensBytesTargetPct}
	for _, t := range tasks {
		res.Tasks = append(res.Tasks, TokensTaskInfo{Name: t.Name(), Goal: t.Goal()})
	}
	srv, stop, err := startServer(ctx, log, scfg, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	// The server's stop comes last: it reaps any child of this process.
	defer stop()
	var errs []error
	for _, side := range tokensSides {
		var s *StdioServer
		if side.name == SideProxy {
			s, err = StartBridge(ctx, log, cfg.Bridge, srv.URL)
		} else {
			s, err = StartPlain(ctx, log, PlainConfig{Root: cfg.Root, SettleMS: -1})
		}
		if err != nil {
			return res, errors.Join(append(errs, fmt.Errorf("%s: %w", side.name, err))...)
		}
		run := runTokensSide(ctx, log, s, side.name, side.run, site, tasks, cfg.CallTimeout)
		res.Stops = append(res.Stops, s.Stop(context.WithoutCancel(ctx)))
		res.Sides = append(res.Sides, run)
		if run.Error != "" {
			errs = append(errs, fmt.Errorf("%s: %s", side.name, run.Error))
		}
		if ctx.Err() != nil {
			return res, errors.Join(append(errs, ctx.Err())...)
		}
	}
	if len(errs) == 0 {
		res.Verdicts = res.judge()
	}
	return res, errors.Join(errs...)
}

// runTokensSide runs every task on one side, stopping at the first that
// fails: a later task on a broken side would only measure the breakage.
func runTokensSide(ctx context.Context, log *slog.Logger, s *StdioServer, name, run string, site *Site, tasks []tokensTask, timeout time.Duration) TokensSide {
	side := TokensSide{Side: name, Tools: len(s.Tools), ToolsListBytes: s.ToolsListBytes}
	a, err := newAgent(log.With("side", name), s, site, run, timeout)
	if err != nil {
		side.Error = err.Error()
		return side
	}
	for _, t := range tasks {
		a.steps = nil
		var found string
		var err error
		switch name {
		case SideSnapshot:
			found, err = t.Snapshot(ctx, a)
		case SideFind:
			found, err = t.Find(ctx, a)
		case SideProxy:
			found, err = t.Proxy(ctx, a)
		default:
			err = fmt.Errorf("unknown side %q", name)
		}
		tr := TokensTaskRun{Task: t.Name(), Steps: a.steps, Found: found}
		for _, st := range a.steps {
			tr.Bytes += st.Bytes
		}
		tr.Calls = len(a.steps)
		if err == nil {
			tr.Verification, err = t.Verify(ctx, site, run, found)
			tr.Verified = err == nil
		}
		if err != nil {
			tr.Error = err.Error()
			side.Error = fmt.Sprintf("task %s: %v", t.Name(), err)
		}
		side.Tasks = append(side.Tasks, tr)
		side.Bytes += tr.Bytes
		side.Calls += tr.Calls
		log.Info("tokens: task done", "side", name, "task", t.Name(), "bytes", tr.Bytes, "calls", tr.Calls, "verified", tr.Verified)
		if err != nil || ctx.Err() != nil {
			break
		}
	}
	return side
}

// judge sets the targets against the run.
func (r *TokensResult) judge() []TokensVerdict {
	find, proxy := r.side(SideFind), r.side(SideProxy)
	if find == nil || proxy == nil {
		return nil
	}
	var out []TokensVerdict
	pct := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a) / float64(b)
	}
	suite := pct(proxy.Bytes, find.Bytes)
	out = append(out, TokensVerdict{
		Target:   fmt.Sprintf("proxy bytes ≤ %.0f %% of plain+find, suite", r.TargetPct),
		Measured: fmt.Sprintf("%.1f %% (%d vs %d B)", suite, proxy.Bytes, find.Bytes),
		Met:      find.Bytes > 0 && suite <= r.TargetPct,
	})
	for _, t := range r.Tasks {
		pt, ft := proxy.task(t.Name), find.task(t.Name)
		if pt == nil || ft == nil {
			continue
		}
		p := pct(pt.Bytes, ft.Bytes)
		out = append(out, TokensVerdict{
			Target:   fmt.Sprintf("proxy bytes ≤ %.0f %% of plain+find, %s", r.TargetPct, t.Name),
			Measured: fmt.Sprintf("%.1f %% (%d vs %d B)", p, pt.Bytes, ft.Bytes),
			Met:      ft.Bytes > 0 && p <= r.TargetPct,
		})
	}
	for _, t := range r.Tasks {
		pt, ft := proxy.task(t.Name), find.task(t.Name)
		if pt == nil || ft == nil {
			continue
		}
		out = append(out, TokensVerdict{
			Target:   "proxy calls ≤ plain+find's, " + t.Name,
			Measured: fmt.Sprintf("%d vs %d", pt.Calls, ft.Calls),
			Met:      pt.Calls <= ft.Calls,
		})
	}
	plain := r.side(SideSnapshot)
	if plain == nil {
		plain = find
	}
	out = append(out, TokensVerdict{
		Target:   "default tools/list bytes ≤ plain's",
		Measured: fmt.Sprintf("%d B (%d tools) vs %d B (%d tools)", proxy.ToolsListBytes, proxy.Tools, plain.ToolsListBytes, plain.Tools),
		Met:      proxy.ToolsListBytes > 0 && proxy.ToolsListBytes <= plain.ToolsListBytes,
	})
	return out
}

func (r *TokensResult) side(name string) *TokensSide {
	for i := range r.Sides {
		if r.Sides[i].Side == name {
			return &r.Sides[i]
		}
	}
	return nil
}

func (s *TokensSide) task(name string) *TokensTaskRun {
	for i := range s.Tasks {
		if s.Tasks[i].Task == name {
			return &s.Tasks[i]
		}
	}
	return nil
}

// agent is the scripted model on one side: it calls tools, counts what
// every result weighs, and knows the site's URLs for its run.
type agent struct {
	log     *slog.Logger
	s       *StdioServer
	site    *Site
	run     string
	timeout time.Duration
	steps   []BytesStep
	// clickArg and fillArg are the element arguments of browser_click and
	// of browser_fill_form's fields, read from the tools' schemas.
	clickArg, fillArg string
}

func newAgent(log *slog.Logger, s *StdioServer, site *Site, run string, timeout time.Duration) (*agent, error) {
	a := &agent{log: log, s: s, site: site, run: run, timeout: timeout}
	var err error
	if a.clickArg, err = s.TargetParam("browser_click"); err != nil {
		return nil, err
	}
	if a.fillArg, err = fillFormTargetParam(s); err != nil {
		return nil, err
	}
	return a, nil
}

// call makes one counted tool call and returns its text; an isError result
// is an error (its bytes still count).
func (a *agent) call(ctx context.Context, tool, detail string, args map[string]any) (string, error) {
	if !a.s.HasTool(tool) {
		return "", fmt.Errorf("%s offers no %s", a.s.Name, tool)
	}
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	c, err := a.s.Call(cctx, tool, args)
	a.steps = append(a.steps, BytesStep{Tool: tool, Detail: detail, Bytes: c.Bytes, MS: ms(c.Took)})
	text := c.Text()
	if a.log.Enabled(ctx, slog.LevelDebug) {
		shown := text
		if len(shown) > 1500 {
			shown = shown[:1500] + "…"
		}
		a.log.Debug("tokens: answer", "tool", tool, "detail", detail, "bytes", c.Bytes, "text", shown)
	}
	return text, err
}

func (a *agent) navigate(ctx context.Context, page string) (string, error) {
	return a.call(ctx, "browser_navigate", page, map[string]any{"url": a.site.TokenURL(a.run, page)})
}

func (a *agent) snapshot(ctx context.Context, detail string) (string, error) {
	text, err := a.call(ctx, "browser_snapshot", detail, map[string]any{})
	return SnapshotYAML(text), err
}

// snapshotOf is browser_snapshot of one element's subtree.
func (a *agent) snapshotOf(ctx context.Context, ref, detail string) (string, error) {
	text, err := a.call(ctx, "browser_snapshot", detail, map[string]any{"target": ref})
	return SnapshotYAML(text), err
}

// find is browser_find of a plain text, its argument read from the
// tool's schema (a version without it is an error, not a guess).
func (a *agent) find(ctx context.Context, text string) (string, error) {
	t, ok := a.s.tool("browser_find")
	if !ok {
		return "", fmt.Errorf("%s offers no browser_find", a.s.Name)
	}
	if _, ok := t.InputSchema.Properties["text"]; !ok {
		return "", fmt.Errorf("%s: browser_find has no text argument", a.s.Name)
	}
	return a.call(ctx, "browser_find", fmt.Sprintf("text %q", text), map[string]any{"text": text})
}

func (a *agent) click(ctx context.Context, ref, element string) (string, error) {
	return a.call(ctx, "browser_click", element, map[string]any{a.clickArg: ref, "element": element})
}

// formField is one field the agent fills, by the role and name it reads
// in the snapshot.
type formField struct {
	role, name, kind, value string
}

// fill fills fields with browser_fill_form, the refs read off yaml.
func (a *agent) fill(ctx context.Context, yaml string, fields []formField) (string, error) {
	var list []any
	for _, f := range fields {
		ref, ok := ElementRef(yaml, f.role, f.name)
		if !ok {
			return "", fmt.Errorf("no %s %q in what the agent read", f.role, f.name)
		}
		list = append(list, map[string]any{"name": f.name, "type": f.kind, a.fillArg: ref, "value": f.value})
	}
	return a.call(ctx, "browser_fill_form", fmt.Sprintf("%d fields", len(list)), map[string]any{"fields": list})
}

// proxyAnswer parses a proxy answer.
func proxyAnswer(text string) (mcpserver.Parsed, error) {
	p, err := mcpserver.ParseAnswer(text)
	if err != nil {
		return p, err
	}
	if p.Error != "" {
		return p, fmt.Errorf("the answer is an error: %s", p.Error)
	}
	return p, nil
}

// inlineSnapshot is the yaml of a proxy answer that carries its new page
// whole ("snapshot:" then the yaml).
func inlineSnapshot(p mcpserver.Parsed) (string, bool) {
	if yaml, ok := strings.CutPrefix(p.Body, "snapshot:\n"); ok {
		return yaml, true
	}
	return "", false
}

// proxyPage returns the yaml of the page a proxy answer is about: inline
// when the answer carries it, else read whole with get_content (the answer
// said how large it is).
func (a *agent) proxyPage(ctx context.Context, p mcpserver.Parsed) (string, error) {
	if yaml, ok := inlineSnapshot(p); ok {
		return yaml, nil
	}
	return a.call(ctx, "get_content", "whole snapshot", map[string]any{"ref_id": p.RefID})
}

// search is get_content(ref_id, search_for).
func (a *agent) search(ctx context.Context, ref, q string) (string, error) {
	return a.call(ctx, "get_content", fmt.Sprintf("search_for %q", q), map[string]any{"ref_id": ref, "search_for": q})
}
