package bench

import (
	"context"
	"encoding/json"
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

const bytesItem = 742

// BytesConfig configures the bytes scenario: how many bytes reach the model
// for one scripted task on the catalogue and form pages, on the sides of
// the tokens scenario.
type BytesConfig struct{ StdioCommon }

func (c *BytesConfig) Flags(*flag.FlagSet) {}

func (c *BytesConfig) Check() error { return nil }

type BytesResult struct {
	TokensResult
	Item     int     `json:"item"`
	RatioPct float64 `json:"ratio_pct"`
}

type BytesStep struct {
	Phase  string  `json:"phase"`
	Tool   string  `json:"tool"`
	Detail string  `json:"detail,omitempty"`
	Bytes  int     `json:"bytes"`
	MS     float64 `json:"ms"`
}

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

func RunBytes(ctx context.Context, log *slog.Logger, site *Site, cfg BytesConfig) (*BytesResult, error) {
	tr, err := runSuite(ctx, log, site, cfg.StdioCommon, bytesTasks())
	res := &BytesResult{TokensResult: *tr, Item: bytesItem}
	res.TargetPct = BytesTargetPct
	if p, x := tr.side(SideSnapshot), tr.side(SideProxy); p != nil && x != nil && p.Bytes > 0 {
		res.RatioPct = 100 * float64(x.Bytes) / float64(p.Bytes)
	}
	return res, err
}

// bytesTasks are the scripted model: (1) open the catalogue, find the item
// and click its button; (2) open the form, fill every field, submit. Each
// reads its effect back from the page, uncounted, as what it found.
func bytesTasks() []tokensTask {
	item := fmt.Sprintf("Item %d", bytesItem)
	readBack := func(_ context.Context, _ *Site, _, found string) (string, error) {
		return "page read back: " + found, nil
	}
	return []tokensTask{{name: "catalogue", goal: "find " + item + " and click its button", verify: readBack,
		do: func(ctx context.Context, a *agent) (string, error) {
			proxy := a.side == SideProxy
			if _, err := a.call(ctx, "browser_navigate", "", map[string]any{"url": a.site.PageURL(Pages["catalogue"])}); err != nil {
				return "", err
			}
			var button string
			if !proxy {
				text, err := a.look(ctx, item, "inline yaml")
				if err != nil {
					return "", err
				}
				button, _ = ButtonNear(text, item)
			} else {
				ref, err := a.metadata(ctx)
				if err != nil {
					return "", err
				}
				// get_content's search returns matching lines with their
				// ancestors, not their siblings: the item's name finds its
				// list item but not the button next to the link. A model
				// then searches for the item number, which the button's
				// name carries too. A later read of the same ref may be
				// only the new tail.
				var seen string
				for _, q := range []string{item, strconv.Itoa(bytesItem)} {
					text, err := a.search(ctx, ref, q)
					if err != nil {
						return "", err
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
				return "", fmt.Errorf("the button of %q was not found in what the model read", item)
			}
			if _, err := a.call(ctx, "browser_click", "its button", map[string]any{"target": button, "element": "Add button of " + item}); err != nil {
				return "", err
			}
			want := fmt.Sprintf("Cart: 1 items|Added %d", bytesItem)
			return a.verifyPage(ctx, fmt.Sprintf(`() => document.getElementById('cart').textContent + '|' + (document.querySelector('button[data-id="%d"]') || {}).textContent`, bytesItem),
				func(v string) error {
					if v != want {
						return fmt.Errorf("the page shows %q", v)
					}
					return nil
				})
		}},
		{name: "form", goal: fmt.Sprintf("fill the form's %d fields (browser_fill_form), submit", len(formFields)), verify: readBack,
			do: func(ctx context.Context, a *agent) (string, error) {
				if _, err := a.call(ctx, "browser_navigate", "", map[string]any{"url": a.site.PageURL(Pages["form"])}); err != nil {
					return "", err
				}
				var yaml string
				var err error
				if a.side == SideProxy { // small: read whole
					var ref string
					if ref, err = a.metadata(ctx); err == nil {
						yaml, err = a.call(ctx, "get_content", "whole snapshot", map[string]any{"ref_id": ref})
					}
				} else {
					yaml, err = a.snapshot(ctx, "inline yaml", map[string]any{})
				}
				if err != nil {
					return "", err
				}
				var fields []formField
				for _, f := range formFields {
					fields = append(fields, f.formField)
				}
				if _, err := a.fill(ctx, yaml, fields); err != nil {
					return "", err
				}
				submit, ok := ButtonRef(yaml, "Submit")
				if !ok {
					return "", fmt.Errorf(`no button "Submit" in what the model read`)
				}
				if _, err := a.call(ctx, "browser_click", "Submit", map[string]any{"target": submit, "element": "Submit button"}); err != nil {
					return "", err
				}
				return a.verifyPage(ctx, `() => location.search`, formSubmitted)
			}},
	}
}

func (a *agent) metadata(ctx context.Context) (string, error) {
	text, err := a.call(ctx, "browser_snapshot", "metadata", map[string]any{})
	if err != nil {
		return "", err
	}
	return RefIDOf(text)
}

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

// verifyPage evaluates fn in the page (not counted) until check accepts
// the value or a few seconds pass: an action's effect (a navigation after a
// submit) may land just after the action answered.
func (a *agent) verifyPage(ctx context.Context, fn string, check func(string) error) (string, error) {
	var last string
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if attempt > 0 {
			if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
				return last, err
			}
		}
		if last, err = a.evaluate(ctx, fn); err == nil {
			if err = check(last); err == nil {
				return last, nil
			}
		}
	}
	return last, fmt.Errorf("after the task: %w", err)
}

func (a *agent) evaluate(ctx context.Context, fn string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	c, err := a.s.Call(ctx, "browser_evaluate", map[string]any{"function": fn})
	if err == nil && a.side == SideProxy {
		var ref string
		if ref, err = RefIDOf(c.Text()); err == nil {
			c, err = a.s.Call(ctx, "get_content", map[string]any{"ref_id": ref, "reset_cursor": true})
		}
	}
	if err != nil {
		return "", err
	}
	return EvaluateResult(c.Text())
}

func SnapshotYAML(text string) string {
	_, after, ok := strings.Cut(text, "```yaml\n")
	if !ok {
		return text
	}
	yaml, _, _ := strings.Cut(after, "\n```")
	return yaml
}

func RefIDOf(text string) (string, error) {
	p, err := mcpserver.ParseAnswer(text)
	if err != nil {
		return "", fmt.Errorf("no ref_id in the answer %q", truncate(text, 200))
	}
	return p.RefID, nil
}

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
	for _, s := range r.Sides {
		for _, t := range s.Tasks {
			for _, st := range t.Steps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.0f\t\n", s.Side, st.Phase, st.Tool, st.Detail, st.Bytes, st.MS)
			}
		}
	}
	tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\nside\tcalls\tcatalogue bytes\tform bytes\ttotal bytes\tof plain\tverified\t")
	for _, s := range r.Sides {
		by, verified := map[string]int{}, len(s.Tasks) == 2
		for _, t := range s.Tasks {
			by[t.Task], verified = t.Bytes, verified && t.Verified
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f %%\t%s\t\n", s.Side, s.Calls, by["catalogue"], by["form"], s.Bytes,
			100*float64(s.Bytes)/float64(max(1, r.Sides[0].Bytes)), map[bool]string{true: "yes", false: "NO"}[verified])
	}
	tw.Flush()
	r.writeErrors(w)
	if r.RatioPct > 0 {
		fmt.Fprintf(w, "result: proxy / plain = %.1f %% of the bytes (target ≤ %.0f %%: %s)\n", r.RatioPct, r.TargetPct, verdict(r.RatioPct <= r.TargetPct))
	}
	writeStdioEnd(w, r.Stops, r.Cleanup)
}

func writeStdioEnd(w io.Writer, stops []StdioStopReport, cleanup StopReport) {
	for _, s := range stops {
		fmt.Fprintf(w, "stdio stop: %s\n", s.Summary())
	}
	writeCleanup(w, cleanup)
	fmt.Fprintln(w)
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT MET"
}
