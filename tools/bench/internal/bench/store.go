package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/google/uuid"
	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"io"
	"log/slog"
	"math/rand/v2"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The record's targets (docs/BENCHMARKS.md, "Against the targets"): 100 KB
// snapshots ingested per second, and the median get_content search on 1 MB.
const (
	IngestTargetPerSec = 200
	SearchTargetMS     = 20
)

// StoreSearchTerm is what the 1 MB search looks for: SyntheticSnapshot puts
// it in a handful of lines, whatever the size.
const StoreSearchTerm = "espresso"

// StoreConfig configures the store scenario: the SQLite record used in
// process (internal/store and internal/content, no server, no browser).
// Writers default to 4, the server's admission of 2 × CPUs on 2 CPUs.
// Dir ("": the system's temp directory) and the snapshot sizes (0: 100 KiB
// ingested, 1 MiB searched) have no flag: tests make them small.
type StoreConfig struct {
	Dir                  string
	Duration             time.Duration // of each ingest run
	Writers, Readers     int
	SnapshotKB, SearchKB int
	SearchIterations     int
}

func (c *StoreConfig) Flags(fs *flag.FlagSet) {
	fs.DurationVar(&c.Duration, "duration", 20*time.Second, "duration of each ingest run (without readers, then with them)")
	fs.IntVar(&c.Writers, "writers", 4, "goroutines recording calls")
	fs.IntVar(&c.Readers, "readers", 4, "goroutines querying (get_content with search_for, GetResponse) during the second ingest run")
	fs.IntVar(&c.SearchIterations, "n", 200, "get_content search iterations on the large snapshot")
}

func (c *StoreConfig) Check() error {
	switch {
	case c.Duration <= 0 || c.Duration > time.Hour:
		return fmt.Errorf("-duration %s: want (0, 1h]", c.Duration)
	case c.Writers < 1 || c.Writers > 64:
		return fmt.Errorf("-writers %d: want 1..64", c.Writers)
	case c.Readers < 0 || c.Readers > 64:
		return fmt.Errorf("-readers %d: want 0..64", c.Readers)
	case c.SearchIterations < 1 || c.SearchIterations > 100000:
		return fmt.Errorf("-n %d: want 1..100000", c.SearchIterations)
	}
	return nil
}

type StoreResult struct {
	DurationMS    float64     `json:"duration_ms"`
	Writers       int         `json:"writers"`
	SnapshotBytes int         `json:"snapshot_bytes"`
	Ingest        []IngestRun `json:"ingest"`
	Search        StoreSearch `json:"search"`
	Interrupted   bool        `json:"interrupted,omitempty"`
}

// IngestRun is writers recording calls for a fixed time, with or without
// readers. MBPerSec is snapshot + result bytes in 10^6 bytes; Busy counts
// SQLITE_BUSY/LOCKED, which the store's design (one writer connection,
// readers in WAL) rules out.
type IngestRun struct {
	Name        string       `json:"name"`
	Readers     int          `json:"readers"`
	Calls       int          `json:"calls"`
	WindowMS    float64      `json:"window_ms"`
	PerSec      float64      `json:"calls_per_s"`
	MBPerSec    float64      `json:"mb_per_s"`
	Write       Summary      `json:"write"`
	GetContent  Summary      `json:"get_content_search"`
	GetResponse Summary      `json:"get_response"`
	ReaderOps   int          `json:"reader_ops"`
	ErrorCount  int          `json:"error_count"`
	Busy        int          `json:"sqlite_busy"`
	Errors      []ErrorCount `json:"errors"`
	DBBytes     int64        `json:"db_bytes"`
}

// StoreSearch is get_content with search_for on one large snapshot: Get
// from SQLite (reset_cursor), SearchOnly the same search in memory.
type StoreSearch struct {
	SnapshotBytes int     `json:"snapshot_bytes"`
	SnapshotLines int     `json:"snapshot_lines"`
	Term          string  `json:"term"`
	MatchLines    int     `json:"match_lines"`
	ResultBytes   int     `json:"result_bytes"`
	Get           Summary `json:"get_content"`
	SearchOnly    Summary `json:"search_only"`
	Error         string  `json:"error,omitempty"`
}

func RunStore(ctx context.Context, log *slog.Logger, cfg StoreConfig) (res *StoreResult, err error) {
	cfg.SnapshotKB, cfg.SearchKB = cmp.Or(cfg.SnapshotKB, 100), cmp.Or(cfg.SearchKB, 1024)
	dir, err := os.MkdirTemp(cfg.Dir, "pwproxy-bench-store-*")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	res = &StoreResult{DurationMS: ms(cfg.Duration), Writers: cfg.Writers, SnapshotBytes: len(SyntheticSnapshot(cfg.SnapshotKB<<10, 0))}
	defer func() { res.Interrupted = ctx.Err() != nil }()
	for i, readers := range []int{0, cfg.Readers}[:min(2, 1+cfg.Readers)] {
		name := "writers only"
		if readers > 0 {
			name = fmt.Sprintf("writers + %d readers", readers)
		}
		run, err := runIngest(ctx, log.With("run", name), filepath.Join(dir, fmt.Sprintf("ingest-%d.db", i)), name, readers, cfg)
		if res.Ingest = append(res.Ingest, run); err != nil {
			return res, fmt.Errorf("ingest (%s): %w", name, err)
		}
	}
	if res.Search, err = runStoreSearch(ctx, log, filepath.Join(dir, "search.db"), cfg); err != nil {
		res.Search.Error = err.Error()
		return res, fmt.Errorf("search: %w", err)
	}
	return res, nil
}

type storeDB struct {
	*store.DB
	path     string
	sessions []string
}

func openStore(ctx context.Context, path string, sessions int) (*storeDB, error) {
	db, err := store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	s := &storeDB{DB: db, path: path}
	for range sessions {
		now := time.Now().UTC()
		s.sessions = append(s.sessions, uuid.NewString())
		if err := db.CreateSession(ctx, &proxy.Session{ID: s.sessions[len(s.sessions)-1], State: proxy.SessionActive, CreatedAt: now, LastActivity: now}); err != nil {
			_, _ = s.close()
			return nil, err
		}
	}
	return s, nil
}

// close closes the database and returns the size of its files (with the WAL
// and shared memory), then removes them.
func (s *storeDB) close() (int64, error) {
	err := s.DB.Close()
	var n int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(s.path + suffix); err == nil {
			n += fi.Size()
		}
		_ = os.Remove(s.path + suffix)
	}
	return n, err
}

// record writes one browser_navigate as the server's session manager does
// per call: two commits, the request row before the worker is called, then
// the response with its snapshot and console entries together with the
// session's last activity.
func (s *storeDB) record(ctx context.Context, w int, ref, snapshot string) error {
	now, session := time.Now().UTC(), s.sessions[w%len(s.sessions)]
	if err := s.InsertRequest(ctx, &proxy.Request{RefID: ref, SessionID: session, ToolName: "browser_navigate",
		Params: json.RawMessage(`{"url":"http://127.0.0.1:8080/catalogue"}`), Timestamp: now}); err != nil {
		return err
	}
	done := time.Now().UTC()
	console := []proxy.ConsoleEntry{{Level: proxy.LevelError, Message: "boom", Timestamp: done}, {Level: proxy.LevelInfo, Message: "ready", Timestamp: done}}
	return s.RecordResponse(ctx, &proxy.Response{RefID: ref, Status: proxy.StatusSuccess, Result: navigateResult,
		PageSnapshot: snapshot, ConsoleLogs: "[ERROR] boom @ app.js:1\n[LOG] ready @ app.js:2\n", Timestamp: done}, console, nil, nil,
		&proxy.SessionActivity{SessionID: session, At: done})
}

// navigateResult is a navigate answer as @playwright/mcp 0.0.83 gives it
// after an action: the snapshot is not inline but linked.
const navigateResult = `{"content":[{"type":"text","text":"### Ran Playwright code\n` + "```js\\nawait page.goto('http://127.0.0.1:8080/catalogue');\\n```" +
	`\n### Page\n- Page URL: http://127.0.0.1:8080/catalogue\n- Page Title: Catalogue\n- Console: 1 errors, 0 warnings\n### Snapshot\n- [Snapshot](/tmp/pw/page-2026-01-01T00-00-00-000Z.yml)\n"}]}`

func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && (e.Code()&0xff == sqlite3.SQLITE_BUSY || e.Code()&0xff == sqlite3.SQLITE_LOCKED)
}

func runIngest(ctx context.Context, log *slog.Logger, path, name string, readers int, cfg StoreConfig) (run IngestRun, err error) {
	run.Name, run.Readers = name, readers
	db, err := openStore(ctx, path, cfg.Writers)
	if err != nil {
		return run, err
	}
	defer func() {
		var cerr error
		run.DBBytes, cerr = db.close()
		err = errors.Join(err, cerr)
	}()
	svc := content.New(db.DB)
	errs := newErrorLog()
	// A few distinct snapshots, so that not every row is the same bytes.
	snaps := make([]string, 8)
	for i := range snaps {
		snaps[i] = SyntheticSnapshot(cfg.SnapshotKB<<10, i)
	}
	var (
		mu                        sync.Mutex
		refs                      []string
		writeLat, getLat, respLat []float64
		written                   int64
	)
	done := func(lat *[]float64, t time.Time, ref string, bytes int) {
		mu.Lock()
		defer mu.Unlock()
		*lat = append(*lat, ms(time.Since(t)))
		if ref != "" {
			refs, written = append(refs, ref), written+int64(bytes)
		}
	}
	// Untimed seed: the readers need refs from their first query on.
	for i := range 2 * cfg.Writers {
		ref := uuid.NewString()
		if err := db.record(ctx, i, ref, snaps[i%len(snaps)]); err != nil {
			return run, fmt.Errorf("seeding: %w", err)
		}
		refs = append(refs, ref)
	}
	loadCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	start := time.Now()
	// ctx, not loadCtx, for the operations: one in progress at the end
	// completes. A failure pauses its loop: no hot loop on a broken database.
	parallel(cfg.Writers+readers, cfg.Writers+readers, func(w int) {
		rng := rand.New(rand.NewPCG(uint64(w), 7))
		for i := 0; loadCtx.Err() == nil; i++ {
			t := time.Now()
			var where string
			var err error
			switch {
			case w < cfg.Writers:
				ref, snap := uuid.NewString(), snaps[(w+i)%len(snaps)]
				if where, err = "record call", db.record(ctx, w, ref, snap); err == nil {
					done(&writeLat, t, ref, len(snap)+len(navigateResult))
				}
			case i%2 == 0:
				// A button label as the model would search for it.
				q := proxy.Query{Text: fmt.Sprintf("Add %d", rng.IntN(syntheticItems(cfg.SnapshotKB<<10))+1)}
				if _, err = svc.Content(ctx, pick(&mu, refs, rng), q, false); err == nil {
					done(&getLat, t, "", 0)
				}
				where = "content.Get (search_for)"
			default:
				if _, err = db.GetResponse(ctx, pick(&mu, refs, rng)); err == nil {
					done(&respLat, t, "", 0)
				}
				where = "store.GetResponse"
			}
			if err != nil {
				errs.add(where, err)
				if isBusy(err) {
					mu.Lock()
					run.Busy++
					mu.Unlock()
				}
				_ = sleepCtx(loadCtx, 10*time.Millisecond)
			}
		}
	})
	window := time.Since(start)
	run.WindowMS, run.Calls = ms(window), len(writeLat)
	run.PerSec, run.MBPerSec = float64(run.Calls)/window.Seconds(), float64(written)/1e6/window.Seconds()
	run.Write, run.GetContent, run.GetResponse = Summarize(writeLat), Summarize(getLat), Summarize(respLat)
	run.ReaderOps = len(getLat) + len(respLat)
	run.ErrorCount, run.Errors = errs.total(), errs.list()
	return run, ctx.Err()
}

func pick(mu *sync.Mutex, refs []string, rng *rand.Rand) string {
	mu.Lock()
	defer mu.Unlock()
	return refs[rng.IntN(len(refs))]
}

func runStoreSearch(ctx context.Context, log *slog.Logger, path string, cfg StoreConfig) (s StoreSearch, err error) {
	snap := SyntheticSnapshot(cfg.SearchKB<<10, 0)
	s.SnapshotBytes, s.SnapshotLines, s.Term = len(snap), strings.Count(snap, "\n"), StoreSearchTerm
	for line := range strings.Lines(snap) {
		if strings.Contains(strings.ToLower(line), strings.ToLower(StoreSearchTerm)) {
			s.MatchLines++
		}
	}
	db, err := openStore(ctx, path, 1)
	if err != nil {
		return s, err
	}
	defer func() {
		_, cerr := db.close()
		err = errors.Join(err, cerr)
	}()
	ref := uuid.NewString()
	if err := db.record(ctx, 0, ref, snap); err != nil {
		return s, err
	}
	svc, q := content.New(db.DB), proxy.Query{Text: StoreSearchTerm}
	// One untimed read: the first read of a fresh database pays for opening
	// pages that every later read finds in the cache.
	first, err := svc.Content(ctx, ref, q, true)
	if err != nil {
		return s, err
	}
	s.ResultBytes = len(first.Text)
	for _, f := range []struct {
		into *Summary
		op   func() error
	}{
		{&s.Get, func() error { _, err := svc.Content(ctx, ref, q, true); return err }},
		{&s.SearchOnly, func() error { _, err := content.Search(snap, q); return err }},
	} {
		lat := make([]float64, 0, cfg.SearchIterations)
		for range cfg.SearchIterations {
			t := time.Now()
			if err := f.op(); err != nil {
				return s, err
			}
			lat = append(lat, ms(time.Since(t)))
		}
		*f.into = Summarize(lat)
	}
	return s, nil
}

func syntheticItems(n int) int { return max(1, n/250) }

// SyntheticSnapshot returns an aria snapshot of about n bytes (exactly n
// when n is larger than the header), shaped like what @playwright/mcp
// answers for the benchmark's catalogue page: a banner, a navigation, then
// list items with a link, a price and a button, every ref unique. Five
// items spread over the page are "Espresso Machine Pro" products, so that
// StoreSearchTerm matches a handful of lines at any size. variant changes
// prices and refs, so that two snapshots are not the same bytes.
func SyntheticSnapshot(n, variant int) string {
	var b strings.Builder
	b.Grow(n + 512)
	ref := variant * 100000
	next := func() string { ref++; return fmt.Sprintf("e%d", ref) }
	fmt.Fprintf(&b, "- generic [ref=%s]:\n", next())
	fmt.Fprintf(&b, "  - banner [ref=%s]:\n    - link \"Bench shop home\" [ref=%s] [cursor=pointer]:\n      - /url: /\n", next(), next())
	fmt.Fprintf(&b, "    - navigation \"Main\" [ref=%s]:\n      - list [ref=%s]:\n", next(), next())
	for _, s := range []string{"Form", "Table", "Catalogue", "カート (2)"} {
		fmt.Fprintf(&b, "        - listitem [ref=%s]:\n          - link %q [ref=%s] [cursor=pointer]:\n            - /url: /%s\n",
			next(), s, next(), strings.ToLower(strings.Fields(s)[0]))
	}
	fmt.Fprintf(&b, "  - status [ref=%s]: \"Cart: 0 items\"\n", next())
	fmt.Fprintf(&b, "  - main [ref=%s]:\n    - heading \"Products\" [level=2] [ref=%s]\n    - list [ref=%s]:\n", next(), next(), next())
	items := syntheticItems(n)
	const marks = 5
	for i := 1; b.Len() < n; i++ {
		name, url := fmt.Sprintf("Item %d", i), fmt.Sprintf("/item/%d", i)
		if items >= marks && i%(items/marks) == items/(2*marks) && i/(items/marks) < marks {
			k := i/(items/marks) + 1
			name, url = fmt.Sprintf("Espresso Machine Pro %d", k), fmt.Sprintf("/products/espresso-pro-%d", k)
		}
		fmt.Fprintf(&b, "      - listitem [ref=%s]:\n        - link %q [ref=%s] [cursor=pointer]:\n          - /url: %s\n",
			next(), name, next(), url)
		fmt.Fprintf(&b, "        - text: €%d.%02d\n        - button \"Add %d\" [ref=%s] [cursor=pointer]\n", 5+(i+variant)%95, (i*7+variant)%100, i, next())
	}
	// Cut at a line end so that the yaml stays whole lines.
	if s := b.String(); len(s) > n && strings.LastIndexByte(s[:n], '\n') > 0 {
		return s[:strings.LastIndexByte(s[:n], '\n')+1]
	}
	return b.String()
}

// InProcessReport is an empty Report for a benchmark that runs in this
// process (no proxy-server, no browser), with the machine described.
func InProcessReport(ctx context.Context, command []string) *Report {
	m := hostFacts()
	m.Chromium, m.Node, m.PlaywrightMCP = "n/a", "n/a", "n/a"
	m.ProxyServer = "internal/store + internal/content in process, tree " + firstLine(run(ctx, ".", "git", "describe", "--always", "--dirty"))
	return &Report{Started: time.Now().UTC(), Command: command, Machine: m}
}

func (s *StoreResult) writeText(w io.Writer) {
	metOrNot := map[bool]string{true: "met", false: "NOT MET"}
	fmt.Fprintf(w, "== store: internal/store + internal/content in process on a temp file (WAL, one writer connection + a read pool); "+
		"each call = 2 commits as the server makes them (%d B page snapshot, 2 console entries, the session's activity), %d writers for %.0f s each run; "+
		"readers alternate get_content(random ref, search_for) and GetResponse(random ref); MB = 10^6 bytes of snapshot + result\n",
		s.SnapshotBytes, s.Writers, s.DurationMS/1000)
	tw := newTable(w, "run\tcalls/s\tMB/s\twrite p50 ms\tp95 ms\tmax ms\tget_content p50 ms\tp95 ms\treader ops/s\tSQLITE_BUSY\terrors\t")
	for _, r := range s.Ingest {
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%d\t%d\t\n", r.Name, r.PerSec, r.MBPerSec, r.Write.Median, r.Write.P95, r.Write.Max,
			r.GetContent.Median, r.GetContent.P95, float64(r.ReaderOps)/max(r.WindowMS/1000, 1e-9), r.Busy, r.ErrorCount)
	}
	tw.Flush()
	for _, r := range s.Ingest {
		fmt.Fprintf(w, "target: ingest ≥ %d snapshots/s of %.0f KiB: %s: %.0f/s, %s\n", IngestTargetPerSec, float64(s.SnapshotBytes)/1024, r.Name, r.PerSec, metOrNot[r.PerSec >= IngestTargetPerSec])
		writeErrors(w, r.Name+" errors", r.ErrorCount, r.Errors)
	}
	if q := s.Search; q.Get.N > 0 {
		fmt.Fprintf(w, "search: get_content(ref, search_for %q, reset_cursor) from SQLite on a %.2f MiB snapshot (%d lines, %d matching), %d iterations: median %.2f ms, p95 %.2f ms, max %.2f ms (in-memory search: median %.2f ms)\n",
			q.Term, float64(q.SnapshotBytes)/(1<<20), q.SnapshotLines, q.MatchLines, q.Get.N, q.Get.Median, q.Get.P95, q.Get.Max, q.SearchOnly.Median)
		fmt.Fprintf(w, "target: search on 1 MB ≤ %d ms median: %.2f ms, %s\n", SearchTargetMS, q.Get.Median, metOrNot[q.Get.Median <= SearchTargetMS])
	} else if q.Error != "" {
		fmt.Fprintf(w, "search: error: %s\n", q.Error)
	}
	fmt.Fprintln(w)
}
