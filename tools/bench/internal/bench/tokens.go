package bench

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
)

// The tokens scenario: what a suite of everyday browser tasks costs the
// model's context, three sides in one run. A scripted agent (no LLM) does
// each task with the cheapest honest strategy a capable model would use
// with that side's tools, using only what its answers say; every result is
// counted. Whether a task worked is checked apart, uncounted, against the
// site's own record or the values it is known to show.

const (
	SideSnapshot = "plain+snapshot" // plain @playwright/mcp, reading with browser_snapshot
	SideFind     = "plain+find"     // plain @playwright/mcp, locating with browser_find
	SideProxy    = "proxy"          // mcp-bridge → proxy-server
)

// TokensBytesTargetPct: the proxy's result bytes are at most this share of
// plain+find's, on the suite and on each task.
const TokensBytesTargetPct = 50.0

type StdioCommon struct {
	Server       ServerConfig
	Root, Bridge string
	CallTimeout  time.Duration
}

func (c *StdioCommon) defaults() {
	c.Root = cmp.Or(c.Root, c.Server.Dir)
	c.Bridge = cmp.Or(c.Bridge, filepath.Join(c.Root, "bin/mcp-bridge"))
	c.CallTimeout = cmp.Or(c.CallTimeout, 3*time.Minute)
	c.Server.Env = copyEnv(c.Server.Env)
}

type TokensConfig struct {
	StdioCommon
	Tasks []string
}

func (c *TokensConfig) Flags(fs *flag.FlagSet) {
	fs.Func("tasks", "comma-separated `list` of tasks to run (default all)", func(s string) error {
		c.Tasks = nil
		for _, t := range strings.Split(s, ",") {
			if t = strings.TrimSpace(t); t == "" {
				return fmt.Errorf("%q: an empty task name", s)
			}
			c.Tasks = append(c.Tasks, t)
		}
		return nil
	})
}

func (c *TokensConfig) Check() error {
	if _, err := selectTasks(c.Tasks); err != nil {
		return fmt.Errorf("-tasks: %w", err)
	}
	return nil
}

type TokensResult struct {
	Env         map[string]string `json:"env"`
	Tasks       []TokensTaskInfo  `json:"tasks"`
	Sides       []TokensSide      `json:"sides"` // in the order of tokensSides
	Verdicts    []TokensVerdict   `json:"verdicts,omitempty"`
	TargetPct   float64           `json:"target_pct"`
	Stops       []StdioStopReport `json:"stdio_stops"`
	Cleanup     StopReport        `json:"cleanup"`
	Interrupted bool              `json:"interrupted,omitempty"`
}

type TokensTaskInfo struct {
	Name string `json:"name"`
	Goal string `json:"goal"`
}

type TokensSide struct {
	Side           string          `json:"side"`
	Tools          int             `json:"tools"`
	ToolsListBytes int             `json:"tools_list_bytes"`
	Bytes          int             `json:"bytes"`
	Calls          int             `json:"calls"`
	Tasks          []TokensTaskRun `json:"tasks"`
	Error          string          `json:"error,omitempty"`
}

type TokensTaskRun struct {
	Task         string      `json:"task"`
	Steps        []BytesStep `json:"steps"`
	Bytes        int         `json:"bytes"`
	Calls        int         `json:"calls"`
	Found        string      `json:"found"`
	Verified     bool        `json:"verified"`
	Verification string      `json:"verification"`
	Error        string      `json:"error,omitempty"`
}

type TokensVerdict struct {
	Target   string `json:"target"`
	Measured string `json:"measured"`
	Met      bool   `json:"met"`
}

func selectTasks(names []string) ([]tokensTask, error) {
	all := tokensSuite()
	if len(names) == 0 {
		return all, nil
	}
	var out []tokensTask
	for _, n := range names {
		i := slices.IndexFunc(all, func(t tokensTask) bool { return t.name == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown task %q", n)
		}
		if slices.ContainsFunc(out, func(t tokensTask) bool { return t.name == n }) {
			return nil, fmt.Errorf("task %q given twice", n)
		}
		out = append(out, all[i])
	}
	return out, nil
}

func RunTokens(ctx context.Context, log *slog.Logger, site *Site, cfg TokensConfig) (*TokensResult, error) {
	tasks, err := selectTasks(cfg.Tasks)
	if err != nil {
		return nil, err
	}
	res, err := runSuite(ctx, log, site, cfg.StdioCommon, tasks)
	res.TargetPct = TokensBytesTargetPct
	if err == nil {
		res.Verdicts = res.judge()
	}
	return res, err
}

// runSuite runs tasks on two plain @playwright/mcp processes (one per
// reading, so that no browser state carries over) and mcp-bridge →
// proxy-server.
func runSuite(ctx context.Context, log *slog.Logger, site *Site, cfg StdioCommon, tasks []tokensTask) (res *TokensResult, err error) {
	cfg.defaults()
	res = &TokensResult{Env: cfg.Server.Env}
	for _, t := range tasks {
		res.Tasks = append(res.Tasks, TokensTaskInfo{Name: t.name, Goal: t.goal})
	}
	defer func() { err = errors.Join(err, stdioLeaks(res.Cleanup, res.Stops)) }()
	srv, stop, err := startServer(ctx, log, cfg.Server, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	defer stop() // last: it reaps any child of this process
	var errs []error
	// Run ids of one length, so that URLs weigh the same on every side.
	for _, side := range []struct{ name, run string }{{SideSnapshot, "snap"}, {SideFind, "find"}, {SideProxy, "prox"}} {
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
	return res, errors.Join(errs...)
}

func stdioLeaks(cleanup StopReport, stops []StdioStopReport) error {
	var errs []error
	if cleanup.Signal != "" && !cleanup.Clean() {
		errs = append(errs, fmt.Errorf("unclean proxy-server stop: %s", cleanup.Summary()))
	}
	for _, s := range stops {
		if !s.Clean() {
			errs = append(errs, fmt.Errorf("unclean stop: %s", s.Summary()))
		}
	}
	return errors.Join(errs...)
}

// runTokensSide runs every task on one side, stopping at the first that
// fails: a later task on a broken side would only measure the breakage.
func runTokensSide(ctx context.Context, log *slog.Logger, s *StdioServer, name, run string, site *Site, tasks []tokensTask, timeout time.Duration) TokensSide {
	side := TokensSide{Side: name, Tools: len(s.Tools), ToolsListBytes: s.ToolsListBytes}
	a := newAgent(log.With("side", name), s, name, site, run, timeout)
	for _, t := range tasks {
		a.steps, a.last, a.phase = nil, "", t.name
		found, err := t.do(ctx, a)
		tr := TokensTaskRun{Task: t.name, Steps: a.steps, Found: found, Calls: len(a.steps)}
		for _, st := range a.steps {
			tr.Bytes += st.Bytes
		}
		if err == nil {
			tr.Verification, err = t.verify(ctx, site, run, found)
			tr.Verified = err == nil
		}
		if err != nil {
			tr.Error = err.Error()
			side.Error = fmt.Sprintf("task %s: %v", t.name, err)
		}
		side.Tasks = append(side.Tasks, tr)
		side.Bytes += tr.Bytes
		side.Calls += tr.Calls
		if err != nil || ctx.Err() != nil {
			break
		}
	}
	return side
}

func (r *TokensResult) judge() []TokensVerdict {
	find, proxy := r.side(SideFind), r.side(SideProxy)
	if find == nil || proxy == nil {
		return nil
	}
	bytesVerdict := func(what string, p, f int) TokensVerdict {
		pct := 0.0
		if f > 0 {
			pct = 100 * float64(p) / float64(f)
		}
		return TokensVerdict{Target: fmt.Sprintf("proxy bytes ≤ %.0f %% of plain+find, %s", r.TargetPct, what),
			Measured: fmt.Sprintf("%.1f %% (%d vs %d B)", pct, p, f), Met: f > 0 && pct <= r.TargetPct}
	}
	out := []TokensVerdict{bytesVerdict("suite", proxy.Bytes, find.Bytes)}
	var calls []TokensVerdict
	for _, t := range r.Tasks {
		pt, ft := proxy.task(t.Name), find.task(t.Name)
		if pt == nil || ft == nil {
			continue
		}
		out = append(out, bytesVerdict(t.Name, pt.Bytes, ft.Bytes))
		calls = append(calls, TokensVerdict{Target: "proxy calls ≤ plain+find's, " + t.Name,
			Measured: fmt.Sprintf("%d vs %d", pt.Calls, ft.Calls), Met: pt.Calls <= ft.Calls})
	}
	plain := r.side(SideSnapshot)
	if plain == nil {
		plain = find
	}
	return append(append(out, calls...), TokensVerdict{
		Target:   "default tools/list bytes ≤ plain's",
		Measured: fmt.Sprintf("%d B (%d tools) vs %d B (%d tools)", proxy.ToolsListBytes, proxy.Tools, plain.ToolsListBytes, plain.Tools),
		Met:      proxy.ToolsListBytes > 0 && proxy.ToolsListBytes <= plain.ToolsListBytes,
	})
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

// agent is the scripted model on one side (SideSnapshot, SideFind or
// SideProxy): it calls tools and counts what every result weighs. last is
// the answer of the last action (navigate, click, tabs): on the proxy,
// what the next read is about. Elements are named by "target", as
// @playwright/mcp 0.0.83 and the proxy name them.
type agent struct {
	log                    *slog.Logger
	s                      *StdioServer
	site                   *Site
	timeout                time.Duration
	steps                  []BytesStep
	side, run, phase, last string
}

func newAgent(log *slog.Logger, s *StdioServer, side string, site *Site, run string, timeout time.Duration) *agent {
	return &agent{log: log, s: s, side: side, site: site, run: run, timeout: timeout}
}

func (a *agent) call(ctx context.Context, tool, detail string, args map[string]any) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	c, err := a.s.Call(cctx, tool, args)
	a.steps = append(a.steps, BytesStep{Phase: a.phase, Tool: tool, Detail: detail, Bytes: c.Bytes, MS: ms(c.Took)})
	text := c.Text()
	a.log.Debug("answer", "tool", tool, "detail", detail, "bytes", c.Bytes, "text", truncate(text, 1500))
	return text, err
}

func (a *agent) act(ctx context.Context, tool, detail string, args map[string]any) (string, error) {
	text, err := a.call(ctx, tool, detail, args)
	a.last = text
	return text, err
}

func (a *agent) open(ctx context.Context, page string) (string, error) {
	return a.act(ctx, "browser_navigate", page, map[string]any{"url": a.site.TokenURL(a.run, page)})
}

func (a *agent) click(ctx context.Context, ref, element string) (string, error) {
	return a.act(ctx, "browser_click", element, map[string]any{"target": ref, "element": element})
}

func (a *agent) snapshot(ctx context.Context, detail string, args map[string]any) (string, error) {
	text, err := a.call(ctx, "browser_snapshot", detail, args)
	return SnapshotYAML(text), err
}

func (a *agent) find(ctx context.Context, text string) (string, error) {
	return a.call(ctx, "browser_find", fmt.Sprintf("text %q", text), map[string]any{"text": text})
}

func (a *agent) search(ctx context.Context, ref, q string) (string, error) {
	return a.call(ctx, "get_content", fmt.Sprintf("search_for %q", q), map[string]any{"ref_id": ref, "search_for": q})
}

// look reads what the agent needs about query off the page it is on: the
// whole page (plain+snapshot), browser_find (plain+find), or the last
// answer's page when it came inline, else a search of it (the proxy).
func (a *agent) look(ctx context.Context, query, detail string) (string, error) {
	switch a.side {
	case SideSnapshot:
		return a.snapshot(ctx, detail, map[string]any{})
	case SideFind:
		return a.find(ctx, query)
	}
	return a.proxyRead(ctx, func(ref string) (string, error) { return a.search(ctx, ref, query) })
}

func (a *agent) proxyRead(ctx context.Context, read func(ref string) (string, error)) (string, error) {
	p, err := proxyAnswer(a.last)
	if err != nil {
		return "", err
	}
	if yaml, ok := inlineSnapshot(p); ok {
		return yaml, nil
	}
	return read(p.RefID)
}

// page reads the page whole, as for a form that is filled from all its
// fields: browser_snapshot, or on the proxy the last answer's page (inline,
// or read with get_content: the answer said how large it is).
func (a *agent) page(ctx context.Context, detail string) (string, error) {
	if a.side != SideProxy {
		return a.snapshot(ctx, detail, map[string]any{})
	}
	return a.proxyRead(ctx, func(ref string) (string, error) {
		return a.call(ctx, "get_content", "whole snapshot", map[string]any{"ref_id": ref})
	})
}

// confirm checks that the last action led to want: the proxy's answer
// shows what changed, else the agent looks for query (plain+snapshot reads
// element ref alone when it holds one).
func (a *agent) confirm(ctx context.Context, query, want, detail, ref string) (string, error) {
	if a.side == SideProxy && strings.Contains(a.last, want) {
		return want, nil
	}
	var text string
	var err error
	if a.side == SideSnapshot && ref != "" {
		text, err = a.snapshot(ctx, detail, map[string]any{"target": ref})
	} else {
		text, err = a.look(ctx, query, detail)
	}
	if err != nil {
		return "", err
	}
	return confirmed(text, want)
}

func (a *agent) fill(ctx context.Context, yaml string, fields []formField) (string, error) {
	var list []any
	for _, f := range fields {
		ref, ok := ElementRef(yaml, f.role, f.name)
		if !ok {
			return "", fmt.Errorf("no %s %q in what the agent read", f.role, f.name)
		}
		list = append(list, map[string]any{"name": f.name, "type": f.role, "target": ref, "value": f.value})
	}
	return a.call(ctx, "browser_fill_form", fmt.Sprintf("%d fields", len(list)), map[string]any{"fields": list})
}

func (a *agent) fillAndClick(ctx context.Context, yaml string, fields []formField, button string) (string, error) {
	if _, err := a.fill(ctx, yaml, fields); err != nil {
		return "", err
	}
	ref, ok := ButtonRef(yaml, button)
	if !ok {
		return "", fmt.Errorf("no button %q in what the agent read", button)
	}
	return a.click(ctx, ref, button)
}

type formField struct{ role, name, value string }

func proxyAnswer(text string) (mcpserver.Parsed, error) {
	p, err := mcpserver.ParseAnswer(text)
	if err == nil && p.Error != "" {
		err = fmt.Errorf("the answer is an error: %s", p.Error)
	}
	return p, err
}

func inlineSnapshot(p mcpserver.Parsed) (string, bool) {
	yaml, ok := strings.CutPrefix(p.Body, "snapshot:\n")
	if !ok {
		return "", false
	}
	return yaml, true
}
