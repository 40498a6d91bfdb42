package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
)

// BytesTargetPct is the target for the bytes scenario (docs/BENCHMARKS.md):
// what the model receives through the proxy is at most this share of what
// it receives from plain @playwright/mcp for the same task.
const BytesTargetPct = 5.0

// BytesConfig configures the bytes scenario: how many bytes reach the model
// for one scripted task, plain @playwright/mcp against the proxy path.
// Item is the catalogue item to add to the cart (default 742); WithFind
// also runs the plain side reading the catalogue with browser_find.
type BytesConfig struct {
	StdioCommon
	Item     int
	WithFind bool
}

// Flags registers the bytes flags.
func (c *BytesConfig) Flags(fs *flag.FlagSet) {
	c.bridgeFlag(fs)
	fs.IntVar(&c.Item, c.FlagPrefix+"item", 742, "bytes: catalogue item whose button the task clicks")
	fs.BoolVar(&c.WithFind, c.FlagPrefix+"find", true, "bytes: also run the plain side with upstream's browser_find instead of browser_snapshot on the catalogue")
}

// Check validates the flags.
func (c *BytesConfig) Check() error {
	if c.Item < 1 || c.Item > CatalogueItems {
		return fmt.Errorf("-%sitem %d: want 1..%d", c.FlagPrefix, c.Item, CatalogueItems)
	}
	return nil
}

// Ways the scripted model reads the page: browser_snapshot, browser_find
// on the catalogue, get_content(ref_id, search_for) on the proxy.
const (
	ReadSnapshot = "plain"
	ReadFind     = "plain+browser_find"
	ReadContent  = "proxy"
)

// BytesResult is the result of the bytes scenario.
type BytesResult struct {
	Item int               `json:"item"`
	Env  map[string]string `json:"env"`
	Runs []BytesRun        `json:"runs"` // plain first
	// RatioPct is proxy total / plain total × 100.
	RatioPct    float64           `json:"ratio_pct"`
	TargetPct   float64           `json:"target_pct"`
	Stops       []StdioStopReport `json:"stdio_stops"`
	Cleanup     StopReport        `json:"cleanup"`
	Interrupted bool              `json:"interrupted,omitempty"`
}

// BytesRun is the scripted task on one side. Verified says the task's
// effect was read back from the page (not counted).
type BytesRun struct {
	Side         string      `json:"side"`
	Steps        []BytesStep `json:"steps"`
	Total        int         `json:"total_bytes"`
	Verified     bool        `json:"verified"`
	Verification []string    `json:"verification"`
	Error        string      `json:"error,omitempty"`
}

// BytesStep is one counted tool call.
type BytesStep struct {
	Phase  string  `json:"phase"`
	Tool   string  `json:"tool"`
	Detail string  `json:"detail,omitempty"`
	Bytes  int     `json:"bytes"`
	MS     float64 `json:"ms"`
}

// formFields is what the scripted model types into the form page, by the
// accessible role and name of the field; param and submitted are what the
// submitted query string must then hold.
var formFields = []struct {
	formField
	param, submitted string
}{
	{formField{"textbox", "Full name", "Ada Lovelace"}, "name", "Ada Lovelace"},
	{formField{"textbox", "Email", "ada@example.com"}, "email", "ada@example.com"},
	{formField{"textbox", "Password", "bench-Passw0rd-42"}, "password", "bench-Passw0rd-42"},
	{formField{"combobox", "Country", "Japan"}, "country", "Japan"},
	{formField{"radio", "Pro", "true"}, "plan", "pro"},
	{formField{"checkbox", "Send me the newsletter", "true"}, "news", "on"},
	{formField{"textbox", "About you", "Benchmark run"}, "about", "Benchmark run"},
}

// RunBytes runs the scripted task on plain @playwright/mcp and through
// mcp-bridge → proxy-server, counting the bytes of every tool result.
func RunBytes(ctx context.Context, log *slog.Logger, site *Site, cfg BytesConfig) (res *BytesResult, err error) {
	if cfg.Item == 0 {
		cfg.Item = 742
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	cfg.defaults()
	res = &BytesResult{Item: cfg.Item, Env: cfg.Server.Env, TargetPct: BytesTargetPct}
	defer func() { err = errors.Join(err, stdioLeaks(res.Cleanup, res.Stops)) }()
	srv, stop, err := startServer(ctx, log, cfg.Server, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	defer stop() // last: it reaps any child of this process

	plain, err := StartPlain(ctx, log, PlainConfig{Root: cfg.Root, SettleMS: -1})
	if err != nil {
		return res, err
	}
	defer func() { res.Stops = append(res.Stops, plain.Stop(context.WithoutCancel(ctx))) }()
	proxy, err := StartBridge(ctx, log, cfg.Bridge, srv.URL)
	if err != nil {
		return res, err
	}
	defer func() { res.Stops = append(res.Stops, proxy.Stop(context.WithoutCancel(ctx))) }()

	sides := map[string]*StdioServer{ReadSnapshot: plain, ReadFind: plain, ReadContent: proxy}
	var errs []error
	totals := map[string]int{}
	for _, read := range []string{ReadSnapshot, ReadFind, ReadContent} {
		if read == ReadFind && (!cfg.WithFind || !plain.HasTool("browser_find")) {
			continue
		}
		log.Info("bytes: scripted task", "side", read, "item", cfg.Item)
		run, err := runBytesTask(ctx, log, sides[read], read, site, cfg)
		if err != nil {
			run.Error = err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", read, err))
		}
		res.Runs = append(res.Runs, run)
		totals[read] = run.Total
		log.Info("bytes: task done", "side", read, "bytes", run.Total, "verified", run.Verified)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	if totals[ReadSnapshot] > 0 {
		res.RatioPct = 100 * float64(totals[ReadContent]) / float64(totals[ReadSnapshot])
	}
	return res, errors.Join(errs...)
}

// runBytesTask is the scripted model: (1) open the catalogue, find the
// item and click its button; (2) open the form, fill every field, submit.
// Every tool result it receives is counted; the checks that the task worked
// are not.
func runBytesTask(ctx context.Context, log *slog.Logger, s *StdioServer, read string, site *Site, cfg BytesConfig) (run BytesRun, err error) {
	run.Side = read
	side := map[string]string{ReadSnapshot: SideSnapshot, ReadFind: SideFind, ReadContent: SideProxy}[read]
	a, err := newAgent(log, s, side, site, "", cfg.CallTimeout)
	if err != nil {
		return run, err
	}
	defer func() {
		run.Steps = a.steps
		for _, st := range a.steps {
			run.Total += st.Bytes
		}
	}()
	metadata := func() (string, error) {
		text, err := a.call(ctx, "browser_snapshot", "metadata", map[string]any{})
		if err != nil {
			return "", err
		}
		return RefIDOf(text)
	}
	contentMode := read == ReadContent

	// (1) The catalogue.
	a.phase = "catalogue"
	item := fmt.Sprintf("Item %d", cfg.Item)
	if _, err := a.call(ctx, "browser_navigate", "", map[string]any{"url": site.PageURL(Pages["catalogue"])}); err != nil {
		return run, err
	}
	var button string
	if !contentMode {
		text, err := a.look(ctx, item, "inline yaml")
		if err != nil {
			return run, err
		}
		button, _ = ButtonNear(text, item)
	} else {
		ref, err := metadata()
		if err != nil {
			return run, err
		}
		// get_content's search returns matching lines with their
		// ancestors, not their siblings: the item's name finds its list
		// item but not the button next to the link. A model then searches
		// for the item number, which the button's name carries too. A
		// later read of the same ref may be only the new tail.
		var seen string
		for _, q := range []string{item, strconv.Itoa(cfg.Item)} {
			text, err := a.search(ctx, ref, q)
			if err != nil {
				return run, err
			}
			if b, ok := ButtonNear(text, item); ok {
				button = b
				break
			}
			if b, ok := ButtonNear(seen+text, item); ok {
				button = b
				break
			}
			seen += text
		}
	}
	if button == "" {
		return run, fmt.Errorf("the button of %q was not found in what the model read", item)
	}
	if _, err := a.call(ctx, "browser_click", "its button", map[string]any{a.clickArg: button, "element": "Add button of " + item}); err != nil {
		return run, err
	}
	want := fmt.Sprintf("Cart: 1 items|Added %d", cfg.Item)
	got, err := verifyPage(ctx, s, contentMode, fmt.Sprintf(`() => document.getElementById('cart').textContent + '|' + (document.querySelector('button[data-id="%d"]') || {}).textContent`, cfg.Item),
		func(v string) bool { return v == want }, cfg.CallTimeout)
	run.Verification = append(run.Verification, fmt.Sprintf("catalogue: %q", got))
	if err != nil {
		return run, fmt.Errorf("after the click: %w", err)
	}

	// (2) The form: small (the metadata says so), read whole on the proxy.
	a.phase = "form"
	if _, err := a.call(ctx, "browser_navigate", "", map[string]any{"url": site.PageURL(Pages["form"])}); err != nil {
		return run, err
	}
	var yaml string
	if contentMode {
		ref, err := metadata()
		if err == nil {
			yaml, err = a.call(ctx, "get_content", "whole snapshot", map[string]any{"ref_id": ref})
		}
		if err != nil {
			return run, err
		}
	} else if yaml, err = a.snapshot(ctx, "inline yaml", map[string]any{}); err != nil {
		return run, err
	}
	var fields []formField
	for _, f := range formFields {
		fields = append(fields, f.formField)
	}
	if _, err := a.fill(ctx, yaml, fields); err != nil {
		return run, fmt.Errorf("form: %w", err)
	}
	submit, ok := ButtonRef(yaml, "Submit")
	if !ok {
		return run, errors.New(`form: no button "Submit" in what the model read`)
	}
	if _, err := a.call(ctx, "browser_click", "Submit", map[string]any{a.clickArg: submit, "element": "Submit button"}); err != nil {
		return run, err
	}
	got, err = verifyPage(ctx, s, contentMode, `() => location.search`,
		func(v string) bool { return formSubmitted(v) == nil }, cfg.CallTimeout)
	run.Verification = append(run.Verification, fmt.Sprintf("form: %q", got))
	if err != nil {
		return run, fmt.Errorf("after the submit: %w (%v)", err, formSubmitted(got))
	}
	run.Verified = true
	return run, nil
}

// fillFormTargetParam is the element argument of browser_fill_form's fields
// ("target" in 0.0.83, "ref" before), from the schema.
func fillFormTargetParam(s *StdioServer) (string, error) {
	t, _ := s.tool("browser_fill_form")
	fields, _ := t.InputSchema.Properties["fields"].(map[string]any)
	items, _ := fields["items"].(map[string]any)
	props, _ := items["properties"].(map[string]any)
	return targetParam(s.Name, "browser_fill_form's fields", props)
}

// formSubmitted checks the query string the form page was submitted with.
func formSubmitted(search string) error {
	q, err := url.ParseQuery(strings.TrimPrefix(search, "?"))
	if err != nil {
		return fmt.Errorf("query %q: %w", search, err)
	}
	for _, f := range formFields {
		if got := q.Get(f.param); got != f.submitted {
			return fmt.Errorf("%s = %q, want %q", f.param, got, f.submitted)
		}
	}
	return nil
}

// verifyPage evaluates fn in the page (untimed, not counted) until ok
// accepts the value or a few seconds pass: an action's effect (a
// navigation after a submit) may land just after the action answered.
func verifyPage(ctx context.Context, s *StdioServer, viaContent bool, fn string, ok func(string) bool, timeout time.Duration) (string, error) {
	var last string
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if attempt > 0 {
			if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
				return last, err
			}
		}
		if last, err = evaluate(ctx, s, viaContent, fn, timeout); err == nil && ok(last) {
			return last, nil
		}
	}
	if err == nil {
		err = fmt.Errorf("the page shows %q", last)
	}
	return last, err
}

func evaluate(ctx context.Context, s *StdioServer, viaContent bool, fn string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := s.Call(ctx, "browser_evaluate", map[string]any{"function": fn})
	if err == nil && viaContent {
		var ref string
		if ref, err = RefIDOf(c.Text()); err == nil {
			c, err = s.Call(ctx, "get_content", map[string]any{"ref_id": ref, "reset_cursor": true})
		}
	}
	if err != nil {
		return "", err
	}
	return EvaluateResult(c.Text())
}

// SnapshotYAML returns the yaml of an @playwright/mcp answer that carries a
// snapshot inline (in a ```yaml block), or text itself when it has none.
func SnapshotYAML(text string) string {
	_, after, ok := strings.Cut(text, "```yaml\n")
	if !ok {
		return text
	}
	yaml, _, _ := strings.Cut(after, "\n```")
	return yaml
}

// RefIDOf returns the ref_id of a proxy call answer (its "ref_id:" line).
func RefIDOf(text string) (string, error) {
	p, err := mcpserver.ParseAnswer(text)
	if err != nil {
		return "", fmt.Errorf("no ref_id in the answer %q", clip(text, 200))
	}
	return p.RefID, nil
}

// EvaluateResult returns the value in the "### Result" section of a
// browser_evaluate answer: a JSON string is unquoted, anything else is
// returned as written.
func EvaluateResult(text string) (string, error) {
	_, after, ok := strings.Cut(text, "### Result\n")
	if !ok {
		return "", fmt.Errorf("no ### Result in %q", clip(text, 200))
	}
	val, _, _ := strings.Cut(after, "\n### ")
	val = strings.TrimSpace(val)
	var s string
	if json.Unmarshal([]byte(val), &s) == nil {
		return s, nil
	}
	return val, nil
}

func (r *BytesResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== bytes: bytes to the model for one scripted task (no LLM): open the catalogue, find %q, click its button; open the form, fill its %d fields (browser_fill_form), submit. Counted: every tool result the client received (the JSON-RPC result as it came off the wire); not counted: the reads that verify the effect on the page. env %v\n",
		fmt.Sprintf("Item %d", r.Item), len(formFields), r.Env)
	fmt.Fprintf(w, "sides: %s = @playwright/mcp over stdio, reading with browser_snapshot (yaml inline); %s = the same, reading the catalogue with upstream's browser_find; %s = mcp-bridge → proxy-server (ref mode: calls answer metadata only), reading with get_content(ref_id, search_for)\n",
		ReadSnapshot, ReadFind, ReadContent)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "side\tphase\ttool\tdetail\tbytes\tms\t")
	var plainTotal int
	for _, run := range r.Runs {
		writeSteps(tw, run.Side, run.Steps, func(s BytesStep) string { return s.Phase })
		if run.Side == ReadSnapshot {
			plainTotal = run.Total
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "side\tcalls\tcatalogue bytes\tform bytes\ttotal bytes\tof plain\tverified\t")
	for _, run := range r.Runs {
		by := map[string]int{}
		for _, s := range run.Steps {
			by[s.Phase] += s.Bytes
		}
		pct := "-"
		if plainTotal > 0 {
			pct = fmt.Sprintf("%.1f %%", 100*float64(run.Total)/float64(plainTotal))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t\n", run.Side, len(run.Steps), by["catalogue"], by["form"], run.Total, pct, map[bool]string{true: "yes", false: "NO"}[run.Verified])
	}
	tw.Flush()
	for _, run := range r.Runs {
		fmt.Fprintf(w, "%s: page read back after the task (not counted): %s\n", run.Side, strings.Join(run.Verification, "; "))
		if run.Error != "" {
			fmt.Fprintf(w, "%s: ERROR: %s\n", run.Side, run.Error)
		}
	}
	if r.RatioPct > 0 {
		fmt.Fprintf(w, "result: proxy / plain = %.1f %% of the bytes (target ≤ %.0f %%: %s)\n", r.RatioPct, r.TargetPct, verdict(r.RatioPct <= r.TargetPct))
	}
	writeStdioEnd(w, r.Stops, r.Cleanup)
}

// writeSteps writes one row per counted call.
func writeSteps(w io.Writer, side string, steps []BytesStep, group func(BytesStep) string) {
	for _, s := range steps {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%.0f\t\n", side, group(s), s.Tool, s.Detail, s.Bytes, s.MS)
	}
}

// writeStdioEnd writes how the children and the server stopped.
func writeStdioEnd(w io.Writer, stops []StdioStopReport, cleanup StopReport) {
	for _, s := range stops {
		fmt.Fprintf(w, "stdio stop: %s\n", s.Summary())
	}
	writeCleanup(w, cleanup)
	fmt.Fprintln(w, "(the proxy-server's count of descendants seen includes the plain side's node and Chromium, which ran beside it)")
	fmt.Fprintln(w)
}

// verdict is what a result says about its target.
func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT MET"
}
