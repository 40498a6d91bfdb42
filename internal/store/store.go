// Package store owns the durable record in SQLite (modernc.org/sqlite, no
// ORM): sessions, requests, responses, console entries, images and diff
// cursors, and the goose migrations that shape them.
//
// It stores what it is given byte for byte and interprets nothing: parsing
// upstream responses, searching snapshots and deciding what a diff cursor
// means belong to other packages. It must never call out to a worker or the
// network, and never hold a write transaction open across anything but its
// own SQL, because the single writer connection is shared by the whole server.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store/seal"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/migrations"
)

// DB is the record. It is safe for concurrent use.
//
// Concurrency design: one writer connection plus a pool of read-only
// connections. In WAL mode readers never wait for the writer nor the writer
// for readers, so reads (get_content, listings) scale with the pool while
// writes queue in database/sql's FIFO connection wait instead of in SQLite's
// sleeping busy handler. A single in-process writer also means no write can
// ever meet SQLITE_BUSY from another write of this process, whatever the mix
// of read-modify-write transactions (with busy_timeout alone, most of them
// failed under load: TestConcurrentReadModifyWrite). _txlock=immediate and busy_timeout stay on the writer as
// well, for writers in other processes (a `proxy-server migrate` run, or a
// second server opened on the same file after a crash): BEGIN IMMEDIATE
// takes the write lock up front, where busy_timeout can wait for it, rather
// than failing on a lock upgrade.
//
// The cost is that write transactions must be short; every write method here
// is one statement or one small transaction.
type DB struct {
	path string
	w    *sql.DB // exactly one connection: the only writer
	r    *sql.DB // read-only pool
	// hot are the writes every tool call makes, prepared once on the
	// writer's connection (stmts.go).
	hot hotStatements

	// health is whether writes reach the disk (storage.go).
	health writeHealth
	// faults fails writes on demand (SetWriteFault, for tests).
	faults atomic.Pointer[func(Write) error]
	// box seals saved browser states and profiles (seal.go).
	box *seal.Box

	closeOnce sync.Once
	closeErr  error
}

// timeLayout is RFC 3339 with a fixed nine-digit fraction. Unlike
// time.RFC3339Nano, which trims trailing zeros, fixed width makes text order
// equal time order (ORDER BY, MAX), and time.RFC3339Nano parses it back.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse stored timestamp %q: %w", s, err)
	}
	return t.UTC(), nil
}

// Option is an option of Open.
type Option func(*openOptions)

type openOptions struct{ key []byte }

// WithStateKey seals saved browser states and profiles with key
// (PROXY_STATE_KEY, seal.KeySize bytes) instead of the key file beside the
// database, which is then neither read nor created.
func WithStateKey(key []byte) Option {
	return func(o *openOptions) { o.key = key }
}

// KeyFilePath is the key file Open uses without WithStateKey: the database
// file's path and ".key".
func KeyFilePath(dbPath string) string { return dbPath + ".key" }

// Open opens (creating it and its parent directory if missing) the database
// at path, brings its schema up to date and seals what an older version
// kept in the clear (seal.go). Without WithStateKey, the key is read from
// KeyFilePath, which is created when missing.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	if path == "" || path == ":memory:" {
		// Two pools on :memory: would be two unrelated databases.
		return nil, fmt.Errorf("store: open: need a database file path, got %q", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil { // private: it holds what the user browsed
		return nil, fmt.Errorf("store: open %s: create parent directory: %w", path, err)
	}
	key := o.key
	if key == nil {
		if key, err = seal.KeyFile(KeyFilePath(abs)); err != nil {
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
	}
	box, err := seal.New(key)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}

	// The path goes into a SQLite URI, where '?', '#' and '%' are syntax.
	name := "file:" + (&url.URL{Path: filepath.ToSlash(abs)}).EscapedPath()

	// Pragmas go in the DSN because they then apply to every connection the
	// pool opens; db.Exec("PRAGMA …") would reach only one of them.
	w, err := sql.Open("sqlite", name+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"+
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"+
		fmt.Sprintf("&_pragma=cache_size(-%d)", writerCacheKiB))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)

	db := &DB{path: abs, w: w, box: box}
	// The writer must exist before the readers: it is what puts the file in
	// WAL mode, and the readers, being query_only, could not.
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// Before the readers too: no reader snapshot may hold the WAL that
	// sealing truncates.
	if err := db.migrateAndSeal(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}

	if err := db.prepareHot(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}

	r, err := sql.Open("sqlite", name+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=query_only(1)"+
		fmt.Sprintf("&_pragma=cache_size(-%d)", readerCacheKiB))
	if err != nil {
		_ = db.closeHot(context.Background())
		w.Close()
		return nil, fmt.Errorf("store: open %s readers: %w", path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	if err := openAll(ctx, r, n); err != nil {
		r.Close()
		_ = db.closeHot(context.Background())
		w.Close()
		return nil, fmt.Errorf("store: open %s readers: %w", path, err)
	}
	db.r = r
	return db, nil
}

// Page cache per connection. SQLite's cache lives outside the Go heap and
// a connection fills it only as it is used, so a pool whose connections are
// opened and filled one by one grows for a long time (a soak reads it as a
// leak of memory and descriptors). Readers mostly stream snapshot
// overflow pages that are read once, so theirs is small and full after a few
// reads; the writer keeps SQLite's default for the B-tree pages every call
// touches. At most writerCacheKiB + n × readerCacheKiB in all.
const (
	writerCacheKiB = 2000
	readerCacheKiB = 512
)

// openAll opens every connection of the pool now and leaves them idle in
// it (no idle timeout or lifetime is set), so the server's descriptors and
// connections are fixed from the start instead of growing with the first
// bursts of concurrent reads.
func openAll(ctx context.Context, pool *sql.DB, n int) error {
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close() // back to the pool, idle
		}
	}()
	for range n {
		c, err := pool.Conn(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		if err := c.PingContext(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Path is the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Migrate applies every pending migration. Open already calls it; it exists
// for `proxy-server migrate` and is a no-op on an up-to-date database.
func (db *DB) Migrate(ctx context.Context) error {
	// The global registry holds Go migrations registered by init(); this
	// project has none and must not pick up anyone else's.
	p, err := goose.NewProvider(goose.DialectSQLite3, db.w, migrations.FS,
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	// Not p.Close(): it would close db.w.
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Close closes the database after folding the WAL back into the main file,
// so a clean shutdown leaves one self-contained file. It is idempotent.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		var errs []error
		// Readers first: a reader holding a snapshot would stop the
		// checkpoint from truncating the WAL.
		if db.r != nil {
			if err := db.r.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close readers: %w", err))
			}
		}
		if err := db.closeHot(context.Background()); err != nil {
			errs = append(errs, fmt.Errorf("close statements: %w", err))
		}
		if _, err := db.w.ExecContext(context.Background(), "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			errs = append(errs, fmt.Errorf("checkpoint: %w", err))
		}
		if err := db.w.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close writer: %w", err))
		}
		if err := errors.Join(errs...); err != nil {
			db.closeErr = fmt.Errorf("store: close %s: %w", db.path, err)
		}
	})
	return db.closeErr
}

// Ping reports whether the database answers, for the /health database
// check: a query on the read pool, and the writer connection, which waits
// behind any write in progress (writes are short, and a writer stuck longer
// than the caller's deadline is worth reporting). While writes fail for
// want of space (or a failing or read-only disk) it reports that, though
// reads still work: the next write that succeeds clears it.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.r.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("store: ping readers: %w", err)
	}
	if err := db.w.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping writer: %w", err)
	}
	if err := db.writeFailure(); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// SizeBytes is the size of the main database file in pages (page_count ×
// page_size); the WAL is not counted.
func (db *DB) SizeBytes(ctx context.Context) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx,
		"SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: size: %w", err)
	}
	return n, nil
}

// sqliteCode is the extended SQLite result code of err, 0 if it has none.
func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// nullJSON binds raw JSON as TEXT, or NULL when empty. json.RawMessage is a
// []byte and would otherwise be bound as a BLOB, which SQLite's json
// functions read as JSONB, not text.
func nullJSON(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

// rawJSON turns a scanned nullable JSON column back into a RawMessage.
func rawJSON(s sql.NullString) []byte {
	if !s.Valid {
		return nil
	}
	return []byte(s.String)
}

// exec runs one write on the writer; a write the storage refuses is
// STORAGE_FULL (wrote).
func (db *DB) exec(ctx context.Context, write Write, query string, args ...any) (sql.Result, error) {
	if err := db.fault(write); err != nil {
		return nil, db.wrote(err)
	}
	res, err := db.w.ExecContext(ctx, query, args...)
	return res, db.wrote(err)
}
