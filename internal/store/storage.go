package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Writes the disk cannot take. A full disk (SQLITE_FULL), an I/O error
// (SQLITE_IOERR) or a database that has become read-only (SQLITE_READONLY)
// fail every write alike until an operator acts, and none of them is a
// bug: each comes back as STORAGE_FULL, naming the data directory, and the
// database reports itself degraded (Ping) until a write succeeds again.
// Nothing here is sticky in SQLite: a failed statement or COMMIT leaves the
// writer connection outside any transaction (the driver rolls back a
// COMMIT that failed), so the first write after space returns works.

// writeHealth is the outcome of the last write that reached SQLite.
type writeHealth struct {
	mu     sync.Mutex
	since  time.Time // when writes began to fail; zero while they work
	reason string    // SQLite's words for the last failure
}

// storageFailure reports whether err is SQLite refusing to write for a
// reason outside the proxy (space, the device, permissions), and SQLite's
// words for it.
func storageFailure(err error) (string, bool) {
	var inj injected
	if errors.As(err, &inj) {
		return inj.Error(), true
	}
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return "", false
	}
	switch e.Code() & 0xff { // the primary code of an extended one
	case sqlite3.SQLITE_FULL:
		return "the database or its disk is full", true
	case sqlite3.SQLITE_IOERR:
		return fmt.Sprintf("disk I/O error (SQLite code %d)", e.Code()), true
	case sqlite3.SQLITE_READONLY:
		return fmt.Sprintf("the database is read-only (SQLite code %d)", e.Code()), true
	}
	return "", false
}

// wrote records the outcome of a write and returns err, as STORAGE_FULL
// when the storage refused it. An error SQLite answered for another reason
// (a constraint) says nothing about the storage and changes nothing.
func (db *DB) wrote(err error) error {
	if err == nil {
		db.health.mu.Lock()
		db.health.since, db.health.reason = time.Time{}, ""
		db.health.mu.Unlock()
		return nil
	}
	reason, ok := storageFailure(err)
	if !ok {
		return err
	}
	db.health.mu.Lock()
	if db.health.since.IsZero() {
		db.health.since = time.Now().UTC()
	}
	db.health.reason = reason
	db.health.mu.Unlock()
	return db.storageFull(reason)
}

// storageFull is the error of a write the storage refused.
func (db *DB) storageFull(reason string) *proxy.Error {
	dir := filepath.Dir(db.path)
	e := proxy.Errorf(proxy.ESTORAGEFULL, "the record cannot be written: %s", reason)
	e.Suggestion = fmt.Sprintf("Free space in the proxy's data directory %s (the directory of PROXY_DATABASE_PATH), then send the call again; no restart is needed.", dir)
	e.Details = map[string]any{"data_dir": dir}
	return e
}

// writeFailure is the storage failure of the last write, nil when it
// succeeded (or none has failed).
func (db *DB) writeFailure() error {
	db.health.mu.Lock()
	defer db.health.mu.Unlock()
	if db.health.since.IsZero() {
		return nil
	}
	return fmt.Errorf("writes fail since %s: %s; free space in %s",
		db.health.since.Format(time.RFC3339), db.health.reason, filepath.Dir(db.path))
}

// Write names a kind of write, for SetWriteFault.
type Write string

// The kinds of write the record makes.
const (
	WriteRequest  Write = "request"  // a call's request row
	WriteResponse Write = "response" // a call's response row, console, images, activity
	WriteSession  Write = "session"  // a session's row: create, state, activity, metadata
	WriteState    Write = "state"    // a session's saved browser state
	WriteEvent    Write = "event"    // an event of a session's timeline
	WriteCursor   Write = "cursor"   // a diff cursor of get_content
)

// SetWriteFault makes the writes for which f returns an error fail before
// they reach SQLite, exactly as if the storage had refused them with that
// reason: STORAGE_FULL to the caller, the database degraded in Ping. nil
// ends it. It exists for tests of what the rest of the server does with a
// full disk, which a real one (a small filesystem) shows only end to end.
func (db *DB) SetWriteFault(f func(Write) error) {
	if f == nil {
		db.faults.Store(nil)
		return
	}
	db.faults.Store(&f)
}

// injected is a fault SetWriteFault put in a write's way.
type injected struct{ error }

func (db *DB) fault(w Write) error {
	f := db.faults.Load()
	if f == nil || w == "" {
		return nil
	}
	if err := (*f)(w); err != nil {
		return injected{err}
	}
	return nil
}
