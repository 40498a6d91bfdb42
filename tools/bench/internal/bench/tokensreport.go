package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

func (r *TokensResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== tokens: what a scripted agent's tool results weigh on %d tasks, three sides in one run: %s = @playwright/mcp over stdio reading with browser_snapshot, %s = the same with browser_find, %s = mcp-bridge → proxy-server. Counted: every tools/call result as it came off the wire, the calls, and each side's tools/list result (paid on every turn, not in the totals); not: the checks that each task worked. env %v\n",
		len(r.Tasks), SideSnapshot, SideFind, SideProxy, r.Env)
	r.writeTable(w)
	r.writeErrors(w)
	if len(r.Verdicts) == 0 {
		fmt.Fprintln(w, "targets: not judged (a side did not complete every task)")
	}
	for _, v := range r.Verdicts {
		fmt.Fprintf(w, "target: %s: %s: %s\n", v.Target, v.Measured, verdict(v.Met))
	}
	writeStdioEnd(w, r.Stops, r.Cleanup)
}

func (r *TokensResult) writeErrors(w io.Writer) {
	for _, s := range r.Sides {
		for _, t := range s.Tasks {
			if t.Error != "" {
				fmt.Fprintf(w, "%s / %s: ERROR: %s (%s)\n", s.Side, t.Task, t.Error, t.Found)
			}
		}
		if s.Error != "" && !strings.HasPrefix(s.Error, "task ") {
			fmt.Fprintf(w, "%s: ERROR: %s\n", s.Side, s.Error)
		}
	}
}

func (r *TokensResult) writeTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "task\t"
	for _, s := range r.Sides {
		head += s.Side + " bytes\tcalls\t"
	}
	fmt.Fprintln(tw, head+"proxy/find bytes\tverified\t")
	find, proxy := r.side(SideFind), r.side(SideProxy)
	ratio := func(p, f int) string {
		if f == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f %%", 100*float64(p)/float64(f))
	}
	for _, t := range r.Tasks {
		row := t.Name + "\t"
		all := true
		for _, s := range r.Sides {
			if tr := s.task(t.Name); tr != nil {
				row += fmt.Sprintf("%d\t%d\t", tr.Bytes, tr.Calls)
				all = all && tr.Verified
			} else {
				row += "-\t-\t"
				all = false
			}
		}
		rt := "-"
		if find != nil && proxy != nil {
			if ft, pt := find.task(t.Name), proxy.task(t.Name); ft != nil && pt != nil {
				rt = ratio(pt.Bytes, ft.Bytes)
			}
		}
		fmt.Fprintf(tw, "%s%s\t%s\t\n", row, rt, map[bool]string{true: "all sides", false: "NO"}[all])
	}
	row := "suite\t"
	for _, s := range r.Sides {
		row += fmt.Sprintf("%d\t%d\t", s.Bytes, s.Calls)
	}
	rt := "-"
	if find != nil && proxy != nil {
		rt = ratio(proxy.Bytes, find.Bytes)
	}
	fmt.Fprintf(tw, "%s%s\t\t\n", row, rt)
	row = "tools/list\t"
	for _, s := range r.Sides {
		row += fmt.Sprintf("%d\t%d tools\t", s.ToolsListBytes, s.Tools)
	}
	fmt.Fprintf(tw, "%s\t\t\n", row)
	tw.Flush()
}

func TokensCharts(res *TokensResult) ([]Chart, error) {
	if res == nil || len(res.Sides) == 0 || len(res.Tasks) == 0 {
		return nil, fmt.Errorf("the report has no tokens run")
	}
	var tasks []string
	for _, t := range res.Tasks {
		tasks = append(tasks, t.Name)
	}
	var bytesSeries, callSeries []barSeries
	verified := "every task verified on every side"
	for i, s := range res.Sides {
		bs := barSeries{name: s.Side, color: palette[i%len(palette)]}
		cs := bs
		for _, t := range tasks {
			tr := s.task(t)
			if tr == nil {
				tr = &TokensTaskRun{Bytes: -1, Calls: -1, Verified: true}
			}
			bs.values, cs.values = append(bs.values, float64(tr.Bytes)), append(cs.values, float64(tr.Calls))
			if !tr.Verified {
				verified = "NOT every task verified"
			}
		}
		bytesSeries, callSeries = append(bytesSeries, bs), append(callSeries, cs)
		bytesSeries[i].values = append(bs.values, float64(s.Bytes), float64(s.ToolsListBytes))
		if len(s.Tasks) < len(tasks) {
			verified = "NOT every task ran"
		}
	}
	sub := fmt.Sprintf("bench tokens: a scripted agent, %d tasks, three sides in one run; %s. Bytes: every tools/call result as received; tools/list is paid on every turn.",
		len(tasks), verified)
	fig := figure{
		title:    "Context spent per task: plain @playwright/mcp vs the proxy",
		subtitle: sub,
		bars: []barPanel{
			{title: "tool result bytes", xLabel: "task (suite = all tasks; tools/list = its one answer)", yLabel: "bytes (log scale)", logY: true,
				categories: append(slices.Clone(tasks), "suite", "tools/list"), series: bytesSeries},
			{title: "tool calls", xLabel: "task", yLabel: "calls", categories: tasks, series: callSeries},
		},
	}
	return []Chart{{Name: "tokens.svg", SVG: fig.render()}}, nil
}
