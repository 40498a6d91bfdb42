package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
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
type BytesConfig struct {
	Server ServerConfig
	// Root is the project root (node_modules) for the plain upstream.
	Root string
	// Bridge is the mcp-bridge binary.
	Bridge string
	// Item is the catalogue item to add to the cart (default 742).
	Item int
	// WithFind also runs the plain side with browser_find instead of
	// browser_snapshot for the catalogue, when upstream offers it.
	WithFind bool
	// CallTimeout bounds every tool call.
	CallTimeout time.Duration
}

// Ways the scripted model reads the page.
const (
	// ReadSnapshot: browser_snapshot, the yaml inline (plain upstream).
	ReadSnapshot = "plain"
	// ReadFind: browser_find on the catalogue (plain upstream, 0.0.83+).
	ReadFind = "plain+browser_find"
	// ReadContent: browser_snapshot answers metadata only; the model
	// reads with get_content(ref_id, search_for) (the proxy).
	ReadContent = "proxy"
)

// BytesResult is the result of the bytes scenario.
type BytesResult struct {
	Item int               `json:"item"`
	Env  map[string]string `json:"env"`
	// Runs are the task on each side, plain first.
	Runs []BytesRun `json:"runs"`
	// RatioPct is proxy total / plain total × 100.
	RatioPct  float64           `json:"ratio_pct"`
	TargetPct float64           `json:"target_pct"`
	Stops     []StdioStopReport `json:"stdio_stops"`
	Cleanup   StopReport        `json:"cleanup"`
	// Interrupted is set when the run was cut short (Ctrl-C).
	Interrupted bool `json:"interrupted,omitempty"`
}

// BytesRun is the scripted task on one side.
type BytesRun struct {
	Side  string      `json:"side"`
	Steps []BytesStep `json:"steps"`
	// Total is the sum of the steps' bytes.
	Total int `json:"total_bytes"`
	// Verified says the task's effect was read back from the page (not
	// counted): the cart and the item's button after the click, the
	// submitted query after the form.
	Verified     bool     `json:"verified"`
	Verification []string `json:"verification"`
	Error        string   `json:"error,omitempty"`
}

// BytesStep is one counted tool call of the task.
type BytesStep struct {
	Phase  string  `json:"phase"`
	Tool   string  `json:"tool"`
	Detail string  `json:"detail,omitempty"`
	Bytes  int     `json:"bytes"`
	MS     float64 `json:"ms"`
}

// formValues is what the scripted model types into the form page, by the
// accessible role and name of the field; the query string submitted is
// checked against submitted.
var formFields = []struct {
	role, name, kind, value string
	param, submitted        string
}{
	{"textbox", "Full name", "textbox", "Ada Lovelace", "name", "Ada Lovelace"},
	{"textbox", "Email", "textbox", "ada@example.com", "email", "ada@example.com"},
	{"textbox", "Password", "textbox", "bench-Passw0rd-42", "password", "bench-Passw0rd-42"},
	{"combobox", "Country", "combobox", "Japan", "country", "Japan"},
	{"radio", "Pro", "radio", "true", "plan", "pro"},
	{"checkbox", "Send me the newsletter", "checkbox", "true", "news", "on"},
	{"textbox", "About you", "textbox", "Benchmark run", "about", "Benchmark run"},
}

// RunBytes runs the scripted task on plain @playwright/mcp and through
// mcp-bridge → proxy-server, counting the bytes of every tool result.
func RunBytes(ctx context.Context, log *slog.Logger, site *Site, cfg BytesConfig) (res *BytesResult, err error) {
	if cfg.Item <= 0 {
		cfg.Item = 742
	}
	if cfg.Item > CatalogueItems {
		return nil, fmt.Errorf("item %d: the catalogue has %d items", cfg.Item, CatalogueItems)
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 3 * time.Minute
	}
	scfg := cfg.Server
	scfg.Env = copyEnv(scfg.Env)
	res = &BytesResult{Item: cfg.Item, Env: scfg.Env, TargetPct: BytesTargetPct}
	srv, stop, err := startServer(ctx, log, scfg, &res.Cleanup, &res.Interrupted)
	if err != nil {
		return res, err
	}
	// Deferred in this order so that they run bridge, plain, server: the
	// server's stop reaps any child of this process.
	defer stop()
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

	sides := []struct {
		s    *StdioServer
		read string
	}{{plain, ReadSnapshot}}
	if cfg.WithFind && plain.HasTool("browser_find") {
		sides = append(sides, struct {
			s    *StdioServer
			read string
		}{plain, ReadFind})
	}
	sides = append(sides, struct {
		s    *StdioServer
		read string
	}{proxy, ReadContent})
	var errs []error
	for _, side := range sides {
		log.Info("bytes: scripted task", "side", side.read, "item", cfg.Item)
		run, err := runBytesTask(ctx, side.s, side.read, site, cfg)
		if err != nil {
			run.Error = err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", side.read, err))
		}
		res.Runs = append(res.Runs, run)
		log.Info("bytes: task done", "side", side.read, "bytes", run.Total, "verified", run.Verified)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	var plainTotal, proxyTotal int
	for _, r := range res.Runs {
		switch r.Side {
		case ReadSnapshot:
			plainTotal = r.Total
		case ReadContent:
			proxyTotal = r.Total
		}
	}
	if plainTotal > 0 {
		res.RatioPct = 100 * float64(proxyTotal) / float64(plainTotal)
	}
	return res, errors.Join(errs...)
}

// runBytesTask is the scripted model: (1) open the catalogue, find the
// item and click its button; (2) open the form, fill every field, submit.
// Every tool result it receives is counted; the checks that the task worked
// are not.
func runBytesTask(ctx context.Context, s *StdioServer, read string, site *Site, cfg BytesConfig) (run BytesRun, err error) {
	run.Side = read
	call := func(phase, tool, detail string, args map[string]any) (ToolCall, error) {
		cctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
		defer cancel()
		c, err := s.Call(cctx, tool, args)
		run.Steps = append(run.Steps, BytesStep{Phase: phase, Tool: tool, Detail: detail, Bytes: c.Bytes, MS: ms(c.Took)})
		run.Total += c.Bytes
		return c, err
	}
	clickArg, err := s.TargetParam("browser_click")
	if err != nil {
		return run, err
	}

	// (1) The catalogue.
	itemName := fmt.Sprintf("Item %d", cfg.Item)
	if _, err := call("catalogue", "browser_navigate", "", map[string]any{"url": site.PageURL(Pages["catalogue"])}); err != nil {
		return run, err
	}
	var button string
	switch read {
	case ReadSnapshot:
		c, err := call("catalogue", "browser_snapshot", "inline yaml", map[string]any{})
		if err != nil {
			return run, err
		}
		button, _ = ButtonNear(SnapshotYAML(c.Text()), itemName)
	case ReadFind:
		c, err := call("catalogue", "browser_find", fmt.Sprintf("text %q", itemName), map[string]any{"text": itemName})
		if err != nil {
			return run, err
		}
		button, _ = ButtonNear(c.Text(), itemName)
	case ReadContent:
		c, err := call("catalogue", "browser_snapshot", "metadata", map[string]any{})
		if err != nil {
			return run, err
		}
		ref, err := RefIDOf(c.Text())
		if err != nil {
			return run, err
		}
		// get_content's search returns matching lines with their
		// ancestors, not their siblings: the item's name finds its list
		// item but not the button next to the link. A model then searches
		// for the item number, which the button's name carries too.
		var seen string
		for _, q := range []string{itemName, strconv.Itoa(cfg.Item)} {
			c, err := call("catalogue", "get_content", fmt.Sprintf("search_for %q", q), map[string]any{"ref_id": ref, "search_for": q})
			if err != nil {
				return run, err
			}
			text := c.Text()
			if b, ok := ButtonNear(text, itemName); ok {
				button = b
				break
			}
			// A later read of the same ref may be only the new tail.
			if b, ok := ButtonNear(seen+text, itemName); ok {
				button = b
				break
			}
			seen += text
		}
	default:
		return run, fmt.Errorf("unknown reading %q", read)
	}
	if button == "" {
		return run, fmt.Errorf("the button of %q was not found in what the model read", itemName)
	}
	if _, err := call("catalogue", "browser_click", "its button", map[string]any{clickArg: button, "element": fmt.Sprintf("Add button of %s", itemName)}); err != nil {
		return run, err
	}
	want := fmt.Sprintf("Cart: 1 items|Added %d", cfg.Item)
	got, err := verifyPage(ctx, s, read == ReadContent, fmt.Sprintf(`() => document.getElementById('cart').textContent + '|' + (document.querySelector('button[data-id="%d"]') || {}).textContent`, cfg.Item),
		func(v string) bool { return v == want }, cfg.CallTimeout)
	run.Verification = append(run.Verification, fmt.Sprintf("catalogue: %q", got))
	if err != nil {
		return run, fmt.Errorf("after the click: %w", err)
	}

	// (2) The form.
	if _, err := call("form", "browser_navigate", "", map[string]any{"url": site.PageURL(Pages["form"])}); err != nil {
		return run, err
	}
	var yaml string
	if read == ReadContent {
		c, err := call("form", "browser_snapshot", "metadata", map[string]any{})
		if err != nil {
			return run, err
		}
		ref, err := RefIDOf(c.Text())
		if err != nil {
			return run, err
		}
		// The form is small (snapshot_bytes in the metadata says so): the
		// model reads it whole.
		if c, err = call("form", "get_content", "whole snapshot", map[string]any{"ref_id": ref}); err != nil {
			return run, err
		}
		yaml = c.Text()
	} else {
		c, err := call("form", "browser_snapshot", "inline yaml", map[string]any{})
		if err != nil {
			return run, err
		}
		yaml = SnapshotYAML(c.Text())
	}
	if !s.HasTool("browser_fill_form") {
		return run, fmt.Errorf("%s offers no browser_fill_form", s.Name)
	}
	fillArg, err := fillFormTargetParam(s)
	if err != nil {
		return run, err
	}
	fields := make([]any, 0, len(formFields))
	for _, f := range formFields {
		ref, ok := ElementRef(yaml, f.role, f.name)
		if !ok {
			return run, fmt.Errorf("form: no %s %q in what the model read", f.role, f.name)
		}
		fields = append(fields, map[string]any{"name": f.name, "type": f.kind, fillArg: ref, "value": f.value})
	}
	if _, err := call("form", "browser_fill_form", fmt.Sprintf("%d fields", len(fields)), map[string]any{"fields": fields}); err != nil {
		return run, err
	}
	submit, ok := ElementRef(yaml, "button", "Submit")
	if !ok {
		return run, errors.New(`form: no button "Submit" in what the model read`)
	}
	if _, err := call("form", "browser_click", "Submit", map[string]any{clickArg: submit, "element": "Submit button"}); err != nil {
		return run, err
	}
	got, err = verifyPage(ctx, s, read == ReadContent, `() => location.search`,
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
	for _, p := range []string{"target", "ref"} {
		if _, ok := props[p]; ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: browser_fill_form fields have neither a target nor a ref", s.Name)
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
// navigation after a submit) may land just after the action answered. Over
// the proxy the evaluate answer is metadata only: the value is read with
// get_content.
func verifyPage(ctx context.Context, s *StdioServer, viaContent bool, fn string, ok func(string) bool, timeout time.Duration) (string, error) {
	var last string
	var lastErr error
	for attempt := 0; attempt < 20; attempt++ {
		if attempt > 0 {
			if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
				return last, err
			}
		}
		last, lastErr = evaluate(ctx, s, viaContent, fn, timeout)
		if lastErr == nil && ok(last) {
			return last, nil
		}
	}
	if lastErr != nil {
		return last, lastErr
	}
	return last, fmt.Errorf("the page shows %q", last)
}

func evaluate(ctx context.Context, s *StdioServer, viaContent bool, fn string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := s.Call(ctx, "browser_evaluate", map[string]any{"function": fn})
	if err != nil {
		return "", err
	}
	text := c.Text()
	if viaContent {
		ref, err := RefIDOf(text)
		if err != nil {
			return "", err
		}
		if c, err = s.Call(ctx, "get_content", map[string]any{"ref_id": ref, "reset_cursor": true}); err != nil {
			return "", err
		}
		text = c.Text()
	}
	return EvaluateResult(text)
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
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		return "", fmt.Errorf("no ref_id in the answer %q", text)
	}
	return p.RefID, nil
}

// EvaluateResult returns the value in the "### Result" section of a
// browser_evaluate answer: a JSON string is unquoted, anything else is
// returned as written.
func EvaluateResult(text string) (string, error) {
	_, after, ok := strings.Cut(text, "### Result\n")
	if !ok {
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		return "", fmt.Errorf("no ### Result in %q", text)
	}
	val, _, _ := strings.Cut(after, "\n### ")
	val = strings.TrimSpace(val)
	var s string
	if json.Unmarshal([]byte(val), &s) == nil {
		return s, nil
	}
	return val, nil
}

// snapLineRE matches an aria-snapshot element line: indentation, role,
// optional quoted accessible name; the rest (attributes, ref) follows.
//
//   - button "Add 17" [ref=e57]
//   - link "Item 742" [ref=e2232] [cursor=pointer]:
var snapLineRE = regexp.MustCompile(`^( *)- ([A-Za-z/][\w/-]*)(?: ("(?:[^"\\]|\\.)*"))?(?:\s|:|$)`)

// snapRefRE finds the element ref among a line's attributes.
var snapRefRE = regexp.MustCompile(`\[ref=([A-Za-z0-9_-]+)\]`)

// snapLine is one element line of an aria snapshot.
type snapLine struct {
	indent  int
	role    string
	name    string
	hasName bool
	ref     string
}

// parseSnapLine parses one line; ok is false for anything that is not an
// element line (text, "...", markdown around the yaml).
func parseSnapLine(line string) (snapLine, bool) {
	m := snapLineRE.FindStringSubmatchIndex(line)
	if m == nil {
		return snapLine{}, false
	}
	l := snapLine{indent: m[3] - m[2], role: line[m[4]:m[5]]}
	if m[6] >= 0 {
		name, err := strconv.Unquote(line[m[6]:m[7]])
		if err != nil {
			return snapLine{}, false
		}
		l.name, l.hasName = name, true
	}
	// The ref is searched after the name, which may itself contain
	// "[ref=…]" as text.
	if r := snapRefRE.FindStringSubmatch(line[m[1]:]); r != nil {
		l.ref = r[1]
	}
	return l, true
}

func parseSnapshot(yaml string) []snapLine {
	var out []snapLine
	for _, line := range strings.Split(yaml, "\n") {
		if l, ok := parseSnapLine(line); ok {
			out = append(out, l)
		}
	}
	return out
}

// ElementRef returns the ref of the first element with this role and
// accessible name, exactly.
func ElementRef(yaml, role, name string) (string, bool) {
	for _, l := range parseSnapshot(yaml) {
		if l.role == role && l.hasName && l.name == name && l.ref != "" {
			return l.ref, true
		}
	}
	return "", false
}

// ButtonNear returns the ref of the button that goes with the element
// named name: the first button under that element's parent (the list item
// holding the link "Item 742" and the button "Add 742"). It is how a model
// reads "click the button of Item 742" off a snapshot.
func ButtonNear(yaml, name string) (string, bool) {
	lines := parseSnapshot(yaml)
	for i, l := range lines {
		if !l.hasName || l.name != name {
			continue
		}
		parent := -1
		for j := i - 1; j >= 0; j-- {
			if lines[j].indent < l.indent {
				parent = j
				break
			}
		}
		if parent < 0 {
			return "", false
		}
		for k := parent + 1; k < len(lines) && lines[k].indent > lines[parent].indent; k++ {
			if lines[k].role == "button" && lines[k].ref != "" {
				return lines[k].ref, true
			}
		}
		return "", false
	}
	return "", false
}

func (r *BytesResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== bytes: bytes to the model for one scripted task (no LLM): open the catalogue, find %q, click its button; open the form, fill its %d fields (browser_fill_form), submit. Counted: every tool result the client received (the JSON-RPC result as it came off the wire); not counted: the reads that verify the effect on the page. env %v\n",
		fmt.Sprintf("Item %d", r.Item), len(formFields), r.Env)
	fmt.Fprintf(w, "sides: %s = @playwright/mcp over stdio, reading with browser_snapshot (yaml inline); %s = the same, reading the catalogue with upstream's browser_find; %s = mcp-bridge → proxy-server (ref mode: calls answer metadata only), reading with get_content(ref_id, search_for)\n",
		ReadSnapshot, ReadFind, ReadContent)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "side\tphase\ttool\tdetail\tbytes\tms\t")
	for _, run := range r.Runs {
		for _, s := range run.Steps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.0f\t\n", run.Side, s.Phase, s.Tool, s.Detail, s.Bytes, s.MS)
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	var plainTotal int
	for _, run := range r.Runs {
		if run.Side == ReadSnapshot {
			plainTotal = run.Total
		}
	}
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
		v := "yes"
		if !run.Verified {
			v = "NO"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t\n", run.Side, len(run.Steps), by["catalogue"], by["form"], run.Total, pct, v)
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
	for _, s := range r.Stops {
		fmt.Fprintf(w, "stdio stop: %s\n", s.Summary())
	}
	writeCleanup(w, r.Cleanup)
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
