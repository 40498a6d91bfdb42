package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// PlainStartResult is the session-start baseline: what a conversation pays
// with a plain @playwright/mcp of its own instead of a proxy session.
// Start is spawning the process until initialize has answered; FirstNav
// launches the browser; ExistingNav is a second navigation to the page.
type PlainStartResult struct {
	Iterations        int     `json:"iterations"`
	Start             Summary `json:"start"`
	FirstNav          Summary `json:"first_navigate"`
	StartPlusFirstNav Summary `json:"start_plus_first_navigate"`
	ExistingNav       Summary `json:"navigate_existing"`
	Errors            int     `json:"errors"`
}

// RunPlainStart starts a plain @playwright/mcp iterations times, each time
// timing its start, its first navigation and a second one, then stops it.
// Upstream's own settle wait is left at its default, as in the proxy's
// sessions measurements it is compared with.
func RunPlainStart(ctx context.Context, log *slog.Logger, root, url string, iterations int) (*PlainStartResult, error) {
	res := &PlainStartResult{Iterations: iterations}
	var start, first, both, again []float64
	for i := 0; i < iterations; i++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		t0 := time.Now()
		s, err := StartPlain(ctx, log, PlainConfig{Root: root, SettleMS: -1})
		if err != nil {
			return res, fmt.Errorf("plain start %d: %w", i, err)
		}
		t1 := time.Now()
		_, err1 := s.Call(ctx, "browser_navigate", map[string]any{"url": url})
		t2 := time.Now()
		_, err2 := s.Call(ctx, "browser_navigate", map[string]any{"url": url})
		t3 := time.Now()
		if rep := s.Stop(ctx); !rep.Clean() {
			return res, fmt.Errorf("plain start %d: %s", i, rep.Summary())
		}
		if err1 != nil || err2 != nil {
			res.Errors++
			log.Warn("plain navigate failed", "iteration", i, "first", err1, "second", err2)
			continue
		}
		start, first, both, again = append(start, ms(t1.Sub(t0))), append(first, ms(t2.Sub(t1))), append(both, ms(t2.Sub(t0))), append(again, ms(t3.Sub(t2)))
	}
	res.Start, res.FirstNav, res.StartPlusFirstNav, res.ExistingNav = Summarize(start), Summarize(first), Summarize(both), Summarize(again)
	return res, nil
}

func (r *PlainStartResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== baseline: a plain @playwright/mcp per conversation (started %d times, its own Chromium, upstream's default settle)\n", r.Iterations)
	tw := newTable(w, "measurement\tn\tmedian ms\tp95 ms\tmax ms\t")
	for i, x := range []Summary{r.Start, r.FirstNav, r.StartPlusFirstNav, r.ExistingNav} {
		name := []string{"start (spawn → initialize)", "first navigate", "start + first navigate", "navigate, existing"}[i]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", name, x.N, f0(x.Median), f0(x.P95), f0(x.Max))
	}
	tw.Flush()
	if r.Errors > 0 {
		fmt.Fprintf(w, "errors: %d\n", r.Errors)
	}
	fmt.Fprintln(w)
}
