package bench

import (
	"context"
	"database/sql"
	"fmt"
	_ "modernc.org/sqlite" // read the server's record (read-only) for the time breakdown
	"net/url"
	"slices"
	"time"
)

type callTiming struct {
	ref, tool, page string
	sent, received  time.Time
}

// Breakdown splits the client-side latency of one tool on one page with the
// two timestamps proxy-server records per call, requests.timestamp (before
// the worker is called) and responses.timestamp (when it answered): Before
// is HTTP, admission, session lock and worker check; Upstream the
// @playwright/mcp call; After ingesting, recording and answering.
type Breakdown struct {
	Tool     string  `json:"tool"`
	Page     string  `json:"page"`
	N        int     `json:"n"`
	Client   Summary `json:"client"`
	Before   Summary `json:"before_worker"`
	Upstream Summary `json:"upstream"`
	After    Summary `json:"after_worker"`
}

// timeBreakdown joins the client timings with the server's record, read
// only: the requests and responses tables and their RFC 3339 timestamps.
func timeBreakdown(ctx context.Context, dbPath string, calls []callTiming) ([]Breakdown, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: dbPath}).EscapedPath()+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dbPath, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT q.ref_id, q.timestamp, s.timestamp FROM requests q JOIN responses s ON s.ref_id = q.ref_id`)
	if err != nil {
		return nil, fmt.Errorf("reading the record: %w", err)
	}
	defer rows.Close()
	spans := map[string][2]time.Time{}
	for rows.Next() {
		var ref, a, b string
		if err := rows.Scan(&ref, &a, &b); err != nil {
			return nil, fmt.Errorf("reading the record: %w", err)
		}
		ta, err1 := time.Parse(time.RFC3339Nano, a)
		tb, err2 := time.Parse(time.RFC3339Nano, b)
		if err1 == nil && err2 == nil {
			spans[ref] = [2]time.Time{ta, tb}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the record: %w", err)
	}
	by := map[[2]string]*[4][]float64{} // client, before, upstream, after
	for _, c := range calls {
		sp, ok := spans[c.ref]
		if !ok {
			continue
		}
		k := [2]string{c.tool, c.page}
		if by[k] == nil {
			by[k] = &[4][]float64{}
		}
		for i, d := range []time.Duration{c.received.Sub(c.sent), sp[0].Sub(c.sent), sp[1].Sub(sp[0]), c.received.Sub(sp[1])} {
			by[k][i] = append(by[k][i], ms(d))
		}
	}
	out := make([]Breakdown, 0, len(by))
	for k, a := range by {
		out = append(out, Breakdown{Tool: k[0], Page: k[1], N: len(a[0]), Client: Summarize(a[0]), Before: Summarize(a[1]), Upstream: Summarize(a[2]), After: Summarize(a[3])})
	}
	slices.SortFunc(out, func(a, b Breakdown) int { return byToolPage(a.Tool, a.Page, b.Tool, b.Page) })
	return out, nil
}
