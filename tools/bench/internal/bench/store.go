package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// The record's targets (docs/BENCHMARKS.md, "Against the targets"),
// printed next to the results.
const (
	// IngestTargetPerSec is the ingest rate the record must sustain:
	// 100 KB page snapshots per second.
	IngestTargetPerSec = 200
	// SearchTargetMS is the median get_content search latency allowed on a
	// 1 MB snapshot.
	SearchTargetMS = 20
)

// StoreSearchTerm is what the 1 MB search looks for: SyntheticSnapshot puts
// it in a handful of lines, whatever the size.
const StoreSearchTerm = "espresso"

// StoreConfig configures the store scenario: the SQLite record used in
// process (internal/store and internal/content, no server, no browser).
type StoreConfig struct {
	// Dir is where the temporary databases go (default: the system temp
	// directory). Each ingest run writes Duration × rate × SnapshotBytes.
	Dir string
	// Keep keeps the databases.
	Keep bool
	// Duration of each ingest run (default 20 s).
	Duration time.Duration
	// Writers record calls concurrently (default 4, the server's default
	// admission of 2 × CPUs on a 2-CPU machine).
	Writers int
	// Readers query while the writers write (default 4); the comparison run
	// has none.
	Readers int
	// SnapshotBytes is the page snapshot of each ingested call (100 KiB).
	SnapshotBytes int
	// SearchSnapshotBytes is the snapshot searched by the search run (1 MiB).
	SearchSnapshotBytes int
	// SearchIterations of get_content with search_for (default 200).
	SearchIterations int
	// SearchTerm for the search run (default StoreSearchTerm).
	SearchTerm string
}

// StoreResult is the result of the store scenario.
type StoreResult struct {
	DurationMS    float64     `json:"duration_ms"`
	Writers       int         `json:"writers"`
	SnapshotBytes int         `json:"snapshot_bytes"`
	Ingest        []IngestRun `json:"ingest"`
	Search        StoreSearch `json:"search"`
	// Targets as printed: ingest rows/s and search median ms.
	IngestTargetPerSec float64 `json:"ingest_target_per_s"`
	SearchTargetMS     float64 `json:"search_target_median_ms"`
	Interrupted        bool    `json:"interrupted,omitempty"`
}

// IngestRun is one ingest run: writers recording calls for a fixed time,
// with or without readers.
type IngestRun struct {
	Name    string `json:"name"`
	Readers int    `json:"readers"`
	// Calls counts calls fully recorded (request, then response with the
	// session's activity); Seeded the untimed ones recorded before the window.
	Calls    int     `json:"calls"`
	Seeded   int     `json:"seeded"`
	WindowMS float64 `json:"window_ms"`
	PerSec   float64 `json:"calls_per_s"`
	// MBPerSec is page snapshot + result bytes recorded per second, in
	// 10^6 bytes (as go test's MB/s).
	MBPerSec float64 `json:"mb_per_s"`
	// Write is the latency of recording one call.
	Write Summary `json:"write"`
	// GetContent is content.Service.Get with search_for on a random
	// recorded ref (a search neither reads nor moves the diff cursor);
	// GetResponse is
	// store.GetResponse on a random recorded ref.
	GetContent  Summary `json:"get_content_search"`
	GetResponse Summary `json:"get_response"`
	ReaderOps   int     `json:"reader_ops"`
	// ErrorCount counts every failed operation; Busy those that were
	// SQLITE_BUSY or SQLITE_LOCKED (must be 0).
	ErrorCount int          `json:"error_count"`
	Busy       int          `json:"sqlite_busy"`
	Errors     []ErrorCount `json:"errors"`
	DBBytes    int64        `json:"db_bytes"`
	CPU        CPUUsage     `json:"cpu"`
}

// StoreSearch is get_content with search_for on one large snapshot.
type StoreSearch struct {
	SnapshotBytes int    `json:"snapshot_bytes"`
	SnapshotLines int    `json:"snapshot_lines"`
	Term          string `json:"term"`
	// MatchLines is how many lines of the snapshot contain the term;
	// ResultBytes the size of the answer (matches and their ancestors).
	MatchLines  int `json:"match_lines"`
	ResultBytes int `json:"result_bytes"`
	// Get is content.Service.Get(ref, term, reset_cursor=true) from SQLite;
	// SearchOnly is content.Search on the same text in memory (the CPU part).
	Get        Summary `json:"get_content"`
	SearchOnly Summary `json:"search_only"`
	Error      string  `json:"error,omitempty"`
}

// RunStore runs the store scenario: ingest without readers, ingest with
// readers, then the search latency on a large snapshot. Each run gets its
// own fresh database.
func RunStore(ctx context.Context, log *slog.Logger, cfg StoreConfig) (res *StoreResult, err error) {
	if cfg.Duration <= 0 {
		cfg.Duration = 20 * time.Second
	}
	if cfg.Writers <= 0 {
		cfg.Writers = 4
	}
	if cfg.Readers < 0 {
		cfg.Readers = 0
	}
	if cfg.SnapshotBytes <= 0 {
		cfg.SnapshotBytes = 100 << 10
	}
	if cfg.SearchSnapshotBytes <= 0 {
		cfg.SearchSnapshotBytes = 1 << 20
	}
	if cfg.SearchIterations <= 0 {
		cfg.SearchIterations = 200
	}
	if cfg.SearchTerm == "" {
		cfg.SearchTerm = StoreSearchTerm
	}
	dir, err := os.MkdirTemp(cfg.Dir, "pwproxy-bench-store-*")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	if cfg.Keep {
		log.Info("store databases kept", "dir", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	// The generator cuts at a line end: report the size actually stored.
	res = &StoreResult{DurationMS: ms(cfg.Duration), Writers: cfg.Writers, SnapshotBytes: len(SyntheticSnapshot(cfg.SnapshotBytes, 0)),
		IngestTargetPerSec: IngestTargetPerSec, SearchTargetMS: SearchTargetMS}
	defer func() { res.Interrupted = ctx.Err() != nil }()

	runs := []struct {
		name    string
		readers int
	}{{"writers only", 0}}
	if cfg.Readers > 0 {
		runs = append(runs, struct {
			name    string
			readers int
		}{fmt.Sprintf("writers + %d readers", cfg.Readers), cfg.Readers})
	}
	for i, r := range runs {
		path := filepath.Join(dir, fmt.Sprintf("ingest-%d.db", i))
		run, err := runIngest(ctx, log.With("run", r.name), path, r.name, r.readers, cfg)
		res.Ingest = append(res.Ingest, run)
		if !cfg.Keep {
			removeDB(path)
		}
		if err != nil {
			return res, fmt.Errorf("ingest (%s): %w", r.name, err)
		}
	}
	res.Search, err = runStoreSearch(ctx, log, filepath.Join(dir, "search.db"), cfg)
	if err != nil {
		res.Search.Error = err.Error()
		return res, fmt.Errorf("search: %w", err)
	}
	return res, nil
}

func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
}

func fileBytes(path string) int64 {
	var n int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// isBusy reports whether err is SQLite refusing for a lock: the store's
// design (one writer connection, readers in WAL) says it never happens.
func isBusy(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked")
	}
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// refList is the refs recorded so far, for the readers to pick from.
type refList struct {
	mu   sync.RWMutex
	refs []string
}

func (l *refList) add(ref string) {
	l.mu.Lock()
	l.refs = append(l.refs, ref)
	l.mu.Unlock()
}

func (l *refList) pick(rng *rand.Rand) string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.refs[rng.IntN(len(l.refs))]
}

// ingestCall is what one recorded browser_navigate writes, as the server's
// session manager does per call: two commits, the request row before the
// worker is called, then the response with its page snapshot and console
// entries together with the session's last activity.
type ingestCall struct {
	session  string
	snapshot string
	result   string
	console  []proxy.ConsoleEntry
}

func (c *ingestCall) record(ctx context.Context, db *store.DB, ref string) error {
	now := time.Now().UTC()
	if err := db.InsertRequest(ctx, &proxy.Request{RefID: ref, SessionID: c.session, ToolName: "browser_navigate",
		Params: json.RawMessage(`{"url":"http://127.0.0.1:8080/catalogue"}`), Timestamp: now}); err != nil {
		return err
	}
	done := time.Now().UTC()
	console := make([]proxy.ConsoleEntry, len(c.console))
	for i, e := range c.console {
		e.Timestamp = done
		console[i] = e
	}
	return db.RecordResponse(ctx, &proxy.Response{RefID: ref, Status: proxy.StatusSuccess, Result: c.result,
		PageSnapshot: c.snapshot, ConsoleLogs: "[ERROR] boom @ app.js:1\n[LOG] ready @ app.js:2\n", Timestamp: done}, console, nil, nil,
		&proxy.SessionActivity{SessionID: c.session, At: done})
}

// navigateResult is a navigate answer as @playwright/mcp 0.0.83 gives it
// after an action: the snapshot is not inline but linked.
const navigateResult = `{"content":[{"type":"text","text":"### Ran Playwright code\n` + "```js\\nawait page.goto('http://127.0.0.1:8080/catalogue');\\n```" +
	`\n### Page\n- Page URL: http://127.0.0.1:8080/catalogue\n- Page Title: Catalogue\n- Console: 1 errors, 0 warnings\n### Snapshot\n- [Snapshot](/tmp/pw/page-2026-01-01T00-00-00-000Z.yml)\n"}]}`

func runIngest(ctx context.Context, log *slog.Logger, path, name string, readers int, cfg StoreConfig) (run IngestRun, err error) {
	run.Name, run.Readers = name, readers
	db, err := store.Open(ctx, path)
	if err != nil {
		return run, err
	}
	defer func() {
		run.DBBytes = fileBytes(path)
		if cerr := db.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	svc := content.New(db)
	errs := newErrorLog()
	var busy, failed int
	var errMu sync.Mutex
	fail := func(where string, err error) {
		errs.add(where, err)
		errMu.Lock()
		failed++
		if isBusy(err) {
			busy++
		}
		errMu.Unlock()
	}

	// A few distinct snapshots, so that not every row is the same bytes.
	snaps := make([]string, 8)
	for i := range snaps {
		snaps[i] = SyntheticSnapshot(cfg.SnapshotBytes, i)
	}
	console := []proxy.ConsoleEntry{{Level: proxy.LevelError, Message: "boom"}, {Level: proxy.LevelInfo, Message: "ready"}}
	calls := make([]*ingestCall, cfg.Writers)
	for w := range calls {
		id := uuid.NewString()
		if err := db.CreateSession(ctx, &proxy.Session{ID: id, State: proxy.SessionActive, CreatedAt: time.Now().UTC(), LastActivity: time.Now().UTC()}); err != nil {
			return run, err
		}
		calls[w] = &ingestCall{session: id, snapshot: snaps[w%len(snaps)], result: navigateResult, console: console}
	}
	// Untimed seed: the readers need refs from their first query on.
	refs := &refList{}
	for i := range 2 * cfg.Writers {
		c := *calls[i%len(calls)]
		c.snapshot = snaps[i%len(snaps)]
		ref := uuid.NewString()
		if err := c.record(ctx, db, ref); err != nil {
			return run, fmt.Errorf("seeding: %w", err)
		}
		refs.add(ref)
	}
	run.Seeded = 2 * cfg.Writers

	loadCtx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var (
		mu              sync.Mutex
		writeLat        []float64
		written         int64 // snapshot + result bytes
		getLat, respLat []float64
		// Progress counters, read by the progress line only.
		recorded, readerOps atomic.Int64
	)
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-loadCtx.Done():
				return
			case <-t.C:
				n, r := recorded.Load(), readerOps.Load()
				errMu.Lock()
				e := failed
				errMu.Unlock()
				el := time.Since(start)
				log.Info("ingest", "elapsed", el.Round(time.Second), "calls", n, "calls_per_s", fmt.Sprintf("%.0f", float64(n)/el.Seconds()),
					"reader_ops", r, "errors", e)
			}
		}
	}()

	log.Info("ingest run", "writers", cfg.Writers, "readers", readers, "duration", cfg.Duration, "snapshot_bytes", len(snaps[0]))
	mark := markCPU(-1) // no server: the bench process is the one measured
	start := time.Now()
	var wg sync.WaitGroup
	for w := range cfg.Writers {
		wg.Go(func() {
			c := *calls[w]
			var lat []float64
			var bytes int64
			// ctx, not loadCtx: a write in progress at the end completes.
			for i := 0; loadCtx.Err() == nil; i++ {
				c.snapshot = snaps[(w+i)%len(snaps)]
				ref := uuid.NewString()
				t := time.Now()
				if err := c.record(ctx, db, ref); err != nil {
					fail("record call", err)
					_ = sleepCtx(loadCtx, 10*time.Millisecond) // no hot loop on a broken database
					continue
				}
				lat = append(lat, ms(time.Since(t)))
				bytes += int64(len(c.snapshot) + len(c.result))
				refs.add(ref)
				recorded.Add(1)
			}
			mu.Lock()
			writeLat = append(writeLat, lat...)
			written += bytes
			mu.Unlock()
		})
	}
	for r := range readers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 7))
			var gl, rl []float64
			for i := 0; loadCtx.Err() == nil; i++ {
				ref := refs.pick(rng)
				t := time.Now()
				if i%2 == 0 {
					// A button label as the model would search for it.
					term := fmt.Sprintf("Add %d", rng.IntN(syntheticItems(cfg.SnapshotBytes))+1)
					if _, err := svc.Content(ctx, ref, proxy.Query{Text: term}, false); err != nil {
						fail("content.Get (search_for)", err)
						_ = sleepCtx(loadCtx, 10*time.Millisecond)
						continue
					}
					gl = append(gl, ms(time.Since(t)))
					readerOps.Add(1)
				} else {
					if _, err := db.GetResponse(ctx, ref); err != nil {
						fail("store.GetResponse", err)
						_ = sleepCtx(loadCtx, 10*time.Millisecond)
						continue
					}
					rl = append(rl, ms(time.Since(t)))
					readerOps.Add(1)
				}
			}
			mu.Lock()
			getLat = append(getLat, gl...)
			respLat = append(respLat, rl...)
			mu.Unlock()
		})
	}
	wg.Wait()
	window := time.Since(start)
	run.CPU = cpuSince(mark, markCPU(-1))
	cancel()
	<-progressDone

	run.WindowMS = ms(window)
	run.Calls = len(writeLat)
	run.PerSec = float64(run.Calls) / window.Seconds()
	run.MBPerSec = float64(written) / 1e6 / window.Seconds()
	run.Write, run.GetContent, run.GetResponse = Summarize(writeLat), Summarize(getLat), Summarize(respLat)
	run.ReaderOps = len(getLat) + len(respLat)
	run.ErrorCount, run.Busy, run.Errors = failed, busy, errs.list()
	log.Info("ingest run done", "calls_per_s", fmt.Sprintf("%.0f", run.PerSec), "mb_per_s", fmt.Sprintf("%.1f", run.MBPerSec),
		"write_p50_ms", fmt.Sprintf("%.2f", run.Write.Median), "write_p95_ms", fmt.Sprintf("%.2f", run.Write.P95),
		"reader_ops", run.ReaderOps, "errors", run.ErrorCount, "sqlite_busy", run.Busy)
	return run, ctx.Err()
}

func runStoreSearch(ctx context.Context, log *slog.Logger, path string, cfg StoreConfig) (s StoreSearch, err error) {
	snap := SyntheticSnapshot(cfg.SearchSnapshotBytes, 0)
	s.SnapshotBytes, s.SnapshotLines, s.Term = len(snap), strings.Count(snap, "\n"), cfg.SearchTerm
	lterm := strings.ToLower(cfg.SearchTerm)
	for line := range strings.Lines(snap) {
		if strings.Contains(strings.ToLower(line), lterm) {
			s.MatchLines++
		}
	}
	db, err := store.Open(ctx, path)
	if err != nil {
		return s, err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if !cfg.Keep {
			removeDB(path)
		}
	}()
	c := &ingestCall{session: uuid.NewString(), snapshot: snap, result: navigateResult}
	if err := db.CreateSession(ctx, &proxy.Session{ID: c.session, State: proxy.SessionActive}); err != nil {
		return s, err
	}
	ref := uuid.NewString()
	if err := c.record(ctx, db, ref); err != nil {
		return s, err
	}
	svc := content.New(db)
	log.Info("search run", "snapshot_bytes", len(snap), "term", cfg.SearchTerm, "match_lines", s.MatchLines, "iterations", cfg.SearchIterations)
	// One untimed read: the first read of a fresh database pays for
	// opening pages that every later read finds in the cache.
	q := proxy.Query{Text: cfg.SearchTerm}
	first, err := svc.Content(ctx, ref, q, true)
	if err != nil {
		return s, err
	}
	s.ResultBytes = len(first.Text)
	lat := make([]float64, 0, cfg.SearchIterations)
	for range cfg.SearchIterations {
		t := time.Now()
		if _, err := svc.Content(ctx, ref, q, true); err != nil {
			return s, err
		}
		lat = append(lat, ms(time.Since(t)))
		if ctx.Err() != nil {
			return s, ctx.Err()
		}
	}
	s.Get = Summarize(lat)
	lat = lat[:0]
	for range cfg.SearchIterations {
		t := time.Now()
		if _, err := content.Search(snap, q); err != nil {
			return s, err
		}
		lat = append(lat, ms(time.Since(t)))
	}
	s.SearchOnly = Summarize(lat)
	log.Info("search run done", "median_ms", fmt.Sprintf("%.2f", s.Get.Median), "p95_ms", fmt.Sprintf("%.2f", s.Get.P95))
	return s, nil
}

// syntheticItems is how many catalogue items SyntheticSnapshot writes for
// about n bytes.
func syntheticItems(n int) int { return max(1, n/syntheticItemBytes) }

// syntheticItemBytes is the approximate size of one catalogue item in
// SyntheticSnapshot.
const syntheticItemBytes = 250

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
	ref := 0
	next := func() string {
		ref++
		return fmt.Sprintf("e%d", ref+variant*100000)
	}
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
	s := b.String()
	if len(s) > n {
		// Cut at a line end so that the yaml stays whole lines.
		if cut := strings.LastIndexByte(s[:n], '\n'); cut > 0 {
			s = s[:cut+1]
		}
	}
	return s
}

// hostMachine describes the machine for an in-process benchmark (no
// browser, no server binary).
func hostMachine(ctx context.Context) Machine {
	m := hostFacts()
	m.Chromium, m.Node, m.PlaywrightMCP = "n/a", "n/a", "n/a"
	m.ProxyServer = "internal/store + internal/content in process, tree " + firstLine(run(ctx, ".", "git", "describe", "--always", "--dirty"))
	return m
}

// InProcessReport is an empty Report for a benchmark that runs in this
// process (no proxy-server, no browser), with the machine described.
func InProcessReport(ctx context.Context, command []string) *Report {
	return &Report{Started: time.Now().UTC(), Command: command, Machine: hostMachine(ctx)}
}

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

func (s *StoreResult) writeText(w io.Writer) {
	fmt.Fprintf(w, "== store: internal/store + internal/content in process on a temp file (WAL, one writer connection + a read pool); "+
		"each call = 2 commits as the server makes them, InsertRequest then RecordResponse (%d B page snapshot, 2 console entries, the session's activity), %d writers for %.0f s each run; "+
		"readers loop without pause, alternately content.Get(random ref, search_for \"Add N\", a read only: a search leaves the diff cursor alone) and store.GetResponse(random ref); "+
		"MB = 10^6 bytes of snapshot + result\n",
		s.SnapshotBytes, s.Writers, s.DurationMS/1000)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\treaders\tcalls\tcalls/s\tMB/s\twrite p50 ms\tp95 ms\tmax ms\tget_content p50 ms\tp95 ms\tGetResponse p50 ms\tp95 ms\treader ops/s\terrors\tSQLITE_BUSY\tDB MB\tCPU bench/other\t")
	f2 := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	for _, r := range s.Ingest {
		readerRate := 0.0
		if r.WindowMS > 0 {
			readerRate = float64(r.ReaderOps) / (r.WindowMS / 1000)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%d\t%d\t%.0f\t%.2f/%.2f\t\n",
			r.Name, r.Readers, r.Calls, r.PerSec, r.MBPerSec, f2(r.Write.Median), f2(r.Write.P95), f2(r.Write.Max),
			f2(r.GetContent.Median), f2(r.GetContent.P95), f2(r.GetResponse.Median), f2(r.GetResponse.P95),
			readerRate, r.ErrorCount, r.Busy, float64(r.DBBytes)/1e6, r.CPU.BenchCores, r.CPU.OtherCores)
	}
	tw.Flush()
	for _, r := range s.Ingest {
		fmt.Fprintf(w, "target: ingest ≥ %.0f snapshots/s of %.0f KiB: %s: %.0f/s, %s\n", s.IngestTargetPerSec, float64(s.SnapshotBytes)/1024, r.Name, r.PerSec, metOrNot(r.PerSec >= s.IngestTargetPerSec))
		if r.Busy > 0 {
			fmt.Fprintf(w, "%s: %d SQLITE_BUSY/LOCKED errors (must be 0)\n", r.Name, r.Busy)
		}
		writeErrors(w, r.Name+" errors", r.ErrorCount, r.Errors)
	}
	q := s.Search
	if q.Get.N > 0 {
		fmt.Fprintf(w, "search: get_content(ref, search_for %q, reset_cursor) from SQLite on a %.2f MiB snapshot (%d lines, %d matching, %d B answer), %d iterations: median %.2f ms, p95 %.2f ms, max %.2f ms (of which content.Search in memory: median %.2f ms)\n",
			q.Term, float64(q.SnapshotBytes)/(1<<20), q.SnapshotLines, q.MatchLines, q.ResultBytes, q.Get.N, q.Get.Median, q.Get.P95, q.Get.Max, q.SearchOnly.Median)
		fmt.Fprintf(w, "target: search on 1 MB ≤ %.0f ms median: %.2f ms, %s\n", s.SearchTargetMS, q.Get.Median, metOrNot(q.Get.Median <= s.SearchTargetMS))
	}
	if q.Error != "" {
		fmt.Fprintf(w, "search: error: %s\n", q.Error)
	}
	fmt.Fprintln(w)
}
