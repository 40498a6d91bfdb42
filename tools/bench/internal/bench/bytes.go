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

// bytesItem is the catalogue item whose button the task clicks.
const bytesItem = 742

// BytesConfig configures the bytes scenario: how many bytes reach the model
// for one scripted task, plain @playwright/mcp against the proxy path.
type BytesConfig struct{ StdioCommon }

// Flags registers the bytes flags: none of its own.
func (c *BytesConfig) Flags(*flag.FlagSet) {}

// Check validates the flags.
func (c *BytesConfig) Check() error { return nil }

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

// RunBytes runs the scripted task on plain @playwright/mcp, reading with
// browser_snapshot and then with browser_find, and through mcp-bridge →
// proxy-server, counting the bytes of every tool result.
func RunBytes(ctx context.Context, log *slog.Logger, site *Site, cfg BytesConfig) (res *BytesResult, err error) {
	cfg.defaults()
	res = &BytesResult{Item: bytesItem, Env: cfg.Server.Env, TargetPct: BytesTargetPct}
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

	var errs []error
	for _, side := range []string{SideSnapshot, SideFind, SideProxy} {
		s := map[bool]*StdioServer{true: proxy, false: plain}[side == SideProxy]
		run, err := runBytesTask(ctx, log, s, side, site, cfg.CallTimeout)
		if err != nil {
			run.Error = err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", side, err))
		}
		res.Runs = append(res.Runs, run)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	if plain := res.Runs[0].Total; plain > 0 {
		res.RatioPct = 100 * float64(res.Runs[2].Total) / float64(plain)
	}
	return res, errors.Join(errs...)
}

// runBytesTask is the scripted model: (1) open the catalogue, find the
// item and click its button; (2) open the form, fill every field, submit.
// Every tool result it receives is counted; the checks that the task worked
// are not.
func runBytesTask(ctx context.Context, log *slog.Logger, s *StdioServer, side string, site *Site, timeout time.Duration) (run BytesRun, err error) {
	run.Side = side
	a := newAgent(log, s, side, site, "", timeout)
	defer func() {
		run.Steps = a.steps
		for _, st := range a.steps {
			run.Total += st.Bytes
		}
	}()
	proxy := side == SideProxy
	// On the proxy a snapshot answers its ref_id only.
	metadata := func() (string, error) {
		text, err := a.call(ctx, "browser_snapshot", "metadata", map[string]any{})
		if err != nil {
			return "", err
		}
		return RefIDOf(text)
	}
	a.phase = "catalogue"
	item := fmt.Sprintf("Item %d", bytesItem)
	if _, err := a.call(ctx, "browser_navigate", "", map[string]any{"url": site.PageURL(Pages["catalogue"])}); err != nil {
		return run, err
	}
	var button string
	if !proxy {
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
		for _, q := range []string{item, strconv.Itoa(bytesItem)} {
			text, err := a.search(ctx, ref, q)
			if err != nil {
				return run, err
			}
			b, ok := ButtonNear(text, item)
			if !ok {
				b, ok = ButtonNear(seen+text, item)
			}
			if ok {
				button = b
				break
			}
			seen += text
		}
	}
	if button == "" {
		return run, fmt.Errorf("the button of %q was not found in what the model read", item)
	}
	if _, err := a.call(ctx, "browser_click", "its button", map[string]any{"target": button, "element": "Add button of " + item}); err != nil {
		return run, err
	}
	want := fmt.Sprintf("Cart: 1 items|Added %d", bytesItem)
	got, err := verifyPage(ctx, s, proxy, fmt.Sprintf(`() => document.getElementById('cart').textContent + '|' + (document.querySelector('button[data-id="%d"]') || {}).textContent`, bytesItem),
		func(v string) bool { return v == want }, timeout)
	run.Verification = append(run.Verification, fmt.Sprintf("catalogue: %q", got))
	if err != nil {
		return run, fmt.Errorf("after the click: %w", err)
	}

	// (2) The form: small, read whole on the proxy.
	a.phase = "form"
	if _, err := a.call(ctx, "browser_navigate", "", map[string]any{"url": site.PageURL(Pages["form"])}); err != nil {
		return run, err
	}
	var yaml string
	if proxy {
		var ref string
		if ref, err = metadata(); err == nil {
			yaml, err = a.call(ctx, "get_content", "whole snapshot", map[string]any{"ref_id": ref})
		}
	} else {
		yaml, err = a.snapshot(ctx, "inline yaml", map[string]any{})
	}
	if err != nil {
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
	if _, err := a.call(ctx, "browser_click", "Submit", map[string]any{"target": submit, "element": "Submit button"}); err != nil {
		return run, err
	}
	got, err = verifyPage(ctx, s, proxy, `() => location.search`, func(v string) bool { return formSubmitted(v) == nil }, timeout)
	run.Verification = append(run.Verification, fmt.Sprintf("form: %q", got))
	if err != nil {
		return run, fmt.Errorf("after the submit: %w (%v)", err, formSubmitted(got))
	}
	run.Verified = true
	return run, nil
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
		return "", fmt.Errorf("no ref_id in the answer %q", truncate(text, 200))
	}
	return p.RefID, nil
}

// EvaluateResult returns the value in the "### Result" section of a
// browser_evaluate answer: a JSON string is unquoted, anything else is
// returned as written.
func EvaluateResult(text string) (string, error) {
	_, after, ok := strings.Cut(text, "### Result\n")
	if !ok {
		return "", fmt.Errorf("no ### Result in %q", truncate(text, 200))
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
	fmt.Fprintf(w, "== bytes: bytes to the model for one scripted task (no LLM): open the catalogue, find \"Item %d\", click its button; open the form, fill its %d fields (browser_fill_form), submit. Counted: every tool result as it came off the wire; not: the reads that verify the effect on the page. Sides: %s and %s = @playwright/mcp over stdio reading with browser_snapshot or upstream's browser_find; %s = mcp-bridge → proxy-server (ref mode), reading with get_content(ref_id, search_for). env %v\n",
		r.Item, len(formFields), SideSnapshot, SideFind, SideProxy, r.Env)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "side\tphase\ttool\tdetail\tbytes\tms\t")
	for _, run := range r.Runs {
		for _, s := range run.Steps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.0f\t\n", run.Side, s.Phase, s.Tool, s.Detail, s.Bytes, s.MS)
		}
	}
	tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\nside\tcalls\tcatalogue bytes\tform bytes\ttotal bytes\tof plain\tverified\t")
	for _, run := range r.Runs {
		by := map[string]int{}
		for _, s := range run.Steps {
			by[s.Phase] += s.Bytes
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f %%\t%s\t\n", run.Side, len(run.Steps), by["catalogue"], by["form"], run.Total,
			100*float64(run.Total)/float64(max(1, r.Runs[0].Total)), map[bool]string{true: "yes", false: "NO"}[run.Verified])
	}
	tw.Flush()
	for _, run := range r.Runs {
		if run.Error != "" {
			fmt.Fprintf(w, "%s: ERROR: %s (page read back: %s)\n", run.Side, run.Error, strings.Join(run.Verification, "; "))
		}
	}
	if r.RatioPct > 0 {
		fmt.Fprintf(w, "result: proxy / plain = %.1f %% of the bytes (target ≤ %.0f %%: %s)\n", r.RatioPct, r.TargetPct, verdict(r.RatioPct <= r.TargetPct))
	}
	writeStdioEnd(w, r.Stops, r.Cleanup)
}

// writeStdioEnd writes how the children and the server stopped.
func writeStdioEnd(w io.Writer, stops []StdioStopReport, cleanup StopReport) {
	for _, s := range stops {
		fmt.Fprintf(w, "stdio stop: %s\n", s.Summary())
	}
	writeCleanup(w, cleanup)
	fmt.Fprintln(w)
}

// verdict is what a result says about its target.
func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT MET"
}
