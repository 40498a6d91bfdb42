package bench

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"slices"
	"time"

	_ "modernc.org/sqlite" // read the server's record (read-only) for the time breakdown
)

// callTiming is one successful POST /call as the client saw it.
type callTiming struct {
	ref, tool, page string
	sent, received  time.Time
}

// Breakdown splits the client-side latency of one tool on one page with the
// two timestamps proxy-server records per call: requests.timestamp (taken
// just before the request is recorded and the worker is called) and
// responses.timestamp (taken when the worker answered, before the answer is
// parsed, its files ingested and it is recorded). So
//
//	Before   = request received … worker called (HTTP, validation, session lock, worker check)
//	Upstream = request row insert + the @playwright/mcp call itself
//	After    = parse, ingest the snapshot/console files, record the response, answer
//
// All in ms; the clocks are the same machine's.
type Breakdown struct {
	Tool     string  `json:"tool"`
	Page     string  `json:"page"`
	N        int     `json:"n"`
	Client   Summary `json:"client"`
	Before   Summary `json:"before_worker"`
	Upstream Summary `json:"upstream"`
	After    Summary `json:"after_worker"`
}

// timeBreakdown reads the server's database read-only and joins it with
// the client timings. It depends only on the requests and responses tables
// (migrations/) and their RFC 3339 timestamps.
func timeBreakdown(ctx context.Context, dbPath string, calls []callTiming) ([]Breakdown, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	dsn := "file:" + (&url.URL{Path: dbPath}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dbPath, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT q.ref_id, q.timestamp, s.timestamp FROM requests q JOIN responses s ON s.ref_id = q.ref_id`)
	if err != nil {
		return nil, fmt.Errorf("reading the record: %w", err)
	}
	defer rows.Close()
	type span struct{ started, finished time.Time }
	spans := map[string]span{}
	for rows.Next() {
		var ref, a, b string
		if err := rows.Scan(&ref, &a, &b); err != nil {
			return nil, fmt.Errorf("reading the record: %w", err)
		}
		ta, err1 := time.Parse(time.RFC3339Nano, a)
		tb, err2 := time.Parse(time.RFC3339Nano, b)
		if err1 == nil && err2 == nil {
			spans[ref] = span{ta, tb}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the record: %w", err)
	}
	type acc struct{ client, before, upstream, after []float64 }
	by := map[[2]string]*acc{}
	for _, c := range calls {
		sp, ok := spans[c.ref]
		if !ok {
			continue
		}
		k := [2]string{c.tool, c.page}
		a := by[k]
		if a == nil {
			a = &acc{}
			by[k] = a
		}
		a.client = append(a.client, ms(c.received.Sub(c.sent)))
		a.before = append(a.before, ms(sp.started.Sub(c.sent)))
		a.upstream = append(a.upstream, ms(sp.finished.Sub(sp.started)))
		a.after = append(a.after, ms(c.received.Sub(sp.finished)))
	}
	out := make([]Breakdown, 0, len(by))
	for k, a := range by {
		out = append(out, Breakdown{Tool: k[0], Page: k[1], N: len(a.client), Client: Summarize(a.client),
			Before: Summarize(a.before), Upstream: Summarize(a.upstream), After: Summarize(a.after)})
	}
	slices.SortFunc(out, func(a, b Breakdown) int { return byToolPage(a.Tool, a.Page, b.Tool, b.Page) })
	return out, nil
}
