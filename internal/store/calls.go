package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	sqlite3 "modernc.org/sqlite/lib"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// InsertRequest records a tool call's request row, which the session
// manager commits before the worker sees the call. ESESSIONMISSING
// if its session is not recorded; EINVALID if its ref_id already is.
func (db *DB) InsertRequest(ctx context.Context, r *proxy.Request) error {
	switch {
	case r == nil || r.RefID == "":
		return proxy.Errorf(proxy.EINVALID, "request ref_id is required")
	case r.SessionID == "":
		return proxy.Errorf(proxy.EINVALID, "request %q: session_id is required", r.RefID)
	case r.ToolName == "":
		return proxy.Errorf(proxy.EINVALID, "request %q: tool name is required", r.RefID)
	case len(r.Params) > 0 && !json.Valid(r.Params):
		return proxy.Errorf(proxy.EINVALID, "request %q: params are not valid JSON", r.RefID)
	}
	err := db.withHot(ctx, WriteRequest, false, func(h hotConn) error {
		return h.exec(insertRequest, r.RefID, r.SessionID, r.ToolName, nullJSON(r.Params), formatTime(r.Timestamp))
	})
	switch code := sqliteCode(err); {
	case code == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return proxy.SessionNotFound(r.SessionID)
	case code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return proxy.Errorf(proxy.EINVALID, "ref_id %q is already recorded", r.RefID)
	case err != nil:
		return fmt.Errorf("store: insert request %s: %w", r.RefID, err)
	}
	return nil
}

// GetRequest returns one recorded call, EREFMISSING if there is none.
func (db *DB) GetRequest(ctx context.Context, refID string) (*proxy.Request, error) {
	var (
		r      proxy.Request
		params sql.NullString
		ts     string
	)
	err := db.r.QueryRowContext(ctx,
		`SELECT ref_id, session_id, tool_name, params, timestamp FROM requests WHERE ref_id = ?`, refID).
		Scan(&r.RefID, &r.SessionID, &r.ToolName, &params, &ts)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, proxy.RefNotFound(refID)
	case err != nil:
		return nil, fmt.Errorf("store: get request %s: %w", refID, err)
	}
	if r.Timestamp, err = parseTime(ts); err != nil {
		return nil, fmt.Errorf("store: get request %s: %w", refID, err)
	}
	r.Params = rawJSON(params)
	return &r, nil
}

// InsertResponse records the answer to a recorded request together with its
// console entries and images, atomically: a reader never sees a response
// without its console entries. Console entries and images are stored under
// r.RefID whatever their own RefID says; images get seq = their index, so
// their order is kept and two can never collide. The caller's slices are
// not modified. EREFMISSING if no request is recorded for r.RefID; EINVALID
// if it already has a response.
func (db *DB) InsertResponse(ctx context.Context, r *proxy.Response, console []proxy.ConsoleEntry, images []proxy.Image) error {
	return db.RecordResponse(ctx, r, console, images, nil, nil)
}

// RecordResponse is InsertResponse that also records the call's downloads
// and act (if not nil) in the same transaction. A download is stored under
// its own RefID when set (an earlier call that started it), else under
// r.RefID, in their order; a name twice under one ref is EINVALID. A session that no
// longer exists is not an error here: the response is what must not be
// lost.
func (db *DB) RecordResponse(ctx context.Context, r *proxy.Response, console []proxy.ConsoleEntry, images []proxy.Image, downloads []proxy.Download, act *proxy.SessionActivity) error {
	// Validate everything before BEGIN so that the write lock is held only
	// for the inserts themselves.
	switch {
	case r == nil || r.RefID == "":
		return proxy.Errorf(proxy.EINVALID, "response ref_id is required")
	case r.Status != proxy.StatusSuccess && r.Status != proxy.StatusError:
		return proxy.Errorf(proxy.EINVALID, "response %q: invalid status %q", r.RefID, r.Status)
	}
	for i, c := range console {
		if len(c.Location) > 0 && !json.Valid(c.Location) {
			return proxy.Errorf(proxy.EINVALID, "response %q: console entry %d: location is not valid JSON", r.RefID, i)
		}
	}
	names := make(map[[2]string]bool, len(downloads))
	for _, d := range downloads {
		key := [2]string{downloadRef(r, d), d.Name}
		if d.Name == "" || names[key] || d.Size < 0 {
			return proxy.Errorf(proxy.EINVALID, "response %q: download %q: empty, negative or repeated", r.RefID, d.Name)
		}
		names[key] = true
	}
	if act != nil && len(act.Metadata) > 0 && !json.Valid(act.Metadata) {
		return proxy.Errorf(proxy.EINVALID, "response %q: session metadata is not valid JSON", r.RefID)
	}

	err := db.withHot(ctx, WriteResponse, true, func(h hotConn) error {
		err := h.exec(insertResponse, r.RefID, r.Status, r.Result, r.PageSnapshot, r.ConsoleLogs, r.ErrorMessage, r.ErrorCode, formatTime(r.Timestamp))
		switch code := sqliteCode(err); {
		case code == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return proxy.Errorf(proxy.EREFMISSING, "ref_id %q has no recorded request", r.RefID)
		case code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return proxy.Errorf(proxy.EINVALID, "ref_id %q already has a response", r.RefID)
		case err != nil:
			return err
		}
		for i, c := range console {
			if err := h.exec(insertConsole, r.RefID, c.Level, c.Message, formatTime(c.Timestamp), nullJSON(c.Location)); err != nil {
				return fmt.Errorf("console entry %d: %w", i, err)
			}
		}
		for i, img := range images {
			data := img.Data
			if data == nil {
				data = []byte{} // nil would bind as NULL
			}
			if err := h.exec(insertImage, r.RefID, i, img.MimeType, data); err != nil {
				return fmt.Errorf("image %d: %w", i, err)
			}
		}
		for i, d := range downloads {
			var data any // NULL: nothing kept
			if d.Stored {
				data = d.Data
				if d.Data == nil {
					data = []byte{}
				}
			}
			ref := downloadRef(r, d)
			err := h.exec(insertDownload, ref, d.Name, i, d.MimeType, d.Size, d.SHA256, d.Stored, data)
			if ref != r.RefID && sqliteCode(err)&0xff == sqlite3.SQLITE_CONSTRAINT {
				// The call that started it has no response row, or
				// already a download of that name: keep this one with
				// the call that saw it finish rather than lose it.
				err = h.exec(insertDownload, r.RefID, d.Name, i, d.MimeType, d.Size, d.SHA256, d.Stored, data)
			}
			if err != nil {
				return fmt.Errorf("download %d: %w", i, err)
			}
		}
		if act == nil {
			return nil
		}
		if err := h.exec(touchSession, formatTime(act.At), act.SessionID); err != nil {
			return fmt.Errorf("touch session %s: %w", act.SessionID, err)
		}
		if act.Metadata != nil {
			if err := h.exec(setMetadata, nullJSON(act.Metadata), act.SessionID); err != nil {
				return fmt.Errorf("session metadata %s: %w", act.SessionID, err)
			}
		}
		return nil
	})
	var perr *proxy.Error
	switch {
	case errors.As(err, &perr):
		return perr
	case err != nil:
		return fmt.Errorf("store: insert response %s: %w", r.RefID, err)
	}
	return nil
}

// GetResponse returns the recorded answer of a call. EREFMISSING if the ref
// is unknown, and also while the call is still in flight (request recorded,
// no response yet), with a message that says so.
func (db *DB) GetResponse(ctx context.Context, refID string) (*proxy.Response, error) {
	// One query answers both "is there a response" and "is there a request":
	// a response cannot exist without its request (foreign key).
	var (
		r                                         proxy.Response
		status, result, snapshot, logs, msg, code sql.NullString
		ts                                        sql.NullString
	)
	err := db.r.QueryRowContext(ctx,
		`SELECT s.status, s.result, s.page_snapshot, s.console_logs, s.error_message, s.error_code, s.timestamp
		 FROM requests q LEFT JOIN responses s ON s.ref_id = q.ref_id
		 WHERE q.ref_id = ?`, refID).
		Scan(&status, &result, &snapshot, &logs, &msg, &code, &ts)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, proxy.RefNotFound(refID)
	case err != nil:
		return nil, fmt.Errorf("store: get response %s: %w", refID, err)
	case !status.Valid:
		e := proxy.Errorf(proxy.EREFMISSING, "ref_id %q is still in flight: its call has not answered yet", refID)
		e.Retryable = true
		e.Suggestion = "Retry get_content for this ref_id once the call has returned."
		return nil, e
	}
	r.RefID = refID
	r.Status, r.Result, r.PageSnapshot, r.ConsoleLogs, r.ErrorMessage, r.ErrorCode =
		status.String, result.String, snapshot.String, logs.String, msg.String, code.String
	if r.Timestamp, err = parseTime(ts.String); err != nil {
		return nil, fmt.Errorf("store: get response %s: %w", refID, err)
	}
	return &r, nil
}

// ListConsole returns a ref's console entries in the order they were
// recorded; empty (never nil, never an error) for a ref without any,
// including an unknown one.
func (db *DB) ListConsole(ctx context.Context, refID string) ([]proxy.ConsoleEntry, error) {
	rows, err := db.r.QueryContext(ctx,
		`SELECT id, level, message, timestamp, location FROM console_logs WHERE ref_id = ? ORDER BY id`, refID)
	if err != nil {
		return nil, fmt.Errorf("store: list console %s: %w", refID, err)
	}
	defer rows.Close()
	out := []proxy.ConsoleEntry{}
	for rows.Next() {
		var (
			c        = proxy.ConsoleEntry{RefID: refID}
			ts       string
			location sql.NullString
		)
		if err := rows.Scan(&c.ID, &c.Level, &c.Message, &ts, &location); err != nil {
			return nil, fmt.Errorf("store: list console %s: %w", refID, err)
		}
		if c.Timestamp, err = parseTime(ts); err != nil {
			return nil, fmt.Errorf("store: list console %s: %w", refID, err)
		}
		c.Location = rawJSON(location)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list console %s: %w", refID, err)
	}
	return out, nil
}

// ListImages returns a ref's images in seq order; empty (never nil, never an
// error) for a ref without any.
func (db *DB) ListImages(ctx context.Context, refID string) ([]proxy.Image, error) {
	rows, err := db.r.QueryContext(ctx,
		`SELECT seq, mime_type, data FROM images WHERE ref_id = ? ORDER BY seq`, refID)
	if err != nil {
		return nil, fmt.Errorf("store: list images %s: %w", refID, err)
	}
	defer rows.Close()
	out := []proxy.Image{}
	for rows.Next() {
		img := proxy.Image{RefID: refID}
		if err := rows.Scan(&img.Seq, &img.MimeType, &img.Data); err != nil {
			return nil, fmt.Errorf("store: list images %s: %w", refID, err)
		}
		if img.Data == nil {
			img.Data = []byte{}
		}
		out = append(out, img)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list images %s: %w", refID, err)
	}
	return out, nil
}

// downloadRef is the ref a download of r is stored under.
func downloadRef(r *proxy.Response, d proxy.Download) string {
	if d.RefID != "" {
		return d.RefID
	}
	return r.RefID
}

// GetDownload returns one download of a ref with its bytes (nil when it
// was not stored); EDOWNLOADMISSING when the ref has none of that name.
func (db *DB) GetDownload(ctx context.Context, refID, name string) (*proxy.Download, error) {
	d := proxy.Download{RefID: refID, Name: name}
	err := db.r.QueryRowContext(ctx,
		`SELECT mime_type, size, sha256, stored, data FROM downloads WHERE ref_id = ? AND name = ?`, refID, name).
		Scan(&d.MimeType, &d.Size, &d.SHA256, &d.Stored, &d.Data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, proxy.Errorf(proxy.EDOWNLOADMISSING, "ref_id %q has no download named %q", refID, name)
	case err != nil:
		return nil, fmt.Errorf("store: get download %s: %w", refID, err)
	}
	if d.Stored && d.Data == nil {
		d.Data = []byte{}
	}
	return &d, nil
}

// RefOwner returns the owner of the session a ref was recorded in,
// EREFMISSING if the ref is unknown.
func (db *DB) RefOwner(ctx context.Context, refID string) (proxy.ClientID, error) {
	var owner string
	err := db.r.QueryRowContext(ctx,
		`SELECT s.owner FROM requests r JOIN sessions s ON s.session_id = r.session_id WHERE r.ref_id = ?`, refID).Scan(&owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", proxy.RefNotFound(refID)
	case err != nil:
		return "", fmt.Errorf("store: owner of ref %s: %w", refID, err)
	}
	return proxy.ClientID(owner), nil
}

// ListCalls returns every call of a session in the order they were made,
// each with its response once it has one. ESESSIONMISSING if the session
// is not recorded.
func (db *DB) ListCalls(ctx context.Context, sessionID string) ([]proxy.Call, error) {
	if _, err := db.GetSession(ctx, sessionID); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx,
		`SELECT q.ref_id, q.tool_name, q.params, q.timestamp,
		        s.status, s.result, s.page_snapshot, s.console_logs, s.error_message, s.error_code, s.timestamp
		 FROM requests q LEFT JOIN responses s ON s.ref_id = q.ref_id
		 WHERE q.session_id = ? ORDER BY q.timestamp, q.ref_id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: list calls of %s: %w", sessionID, err)
	}
	defer rows.Close()
	calls := []proxy.Call{}
	for rows.Next() {
		var (
			c                                         proxy.Call
			params                                    sql.NullString
			qts                                       string
			status, result, snapshot, logs, msg, code sql.NullString
			sts                                       sql.NullString
		)
		if err := rows.Scan(&c.Request.RefID, &c.Request.ToolName, &params, &qts, &status, &result, &snapshot, &logs, &msg, &code, &sts); err != nil {
			return nil, fmt.Errorf("store: list calls of %s: %w", sessionID, err)
		}
		c.Request.SessionID, c.Request.Params = sessionID, rawJSON(params)
		if c.Request.Timestamp, err = parseTime(qts); err != nil {
			return nil, fmt.Errorf("store: list calls of %s: %w", sessionID, err)
		}
		if status.Valid {
			r := &proxy.Response{RefID: c.Request.RefID, Status: status.String, Result: result.String,
				PageSnapshot: snapshot.String, ConsoleLogs: logs.String, ErrorMessage: msg.String, ErrorCode: code.String}
			if r.Timestamp, err = parseTime(sts.String); err != nil {
				return nil, fmt.Errorf("store: list calls of %s: %w", sessionID, err)
			}
			c.Response = r
		}
		calls = append(calls, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list calls of %s: %w", sessionID, err)
	}
	if err := db.describeDownloads(ctx, sessionID, calls); err != nil {
		return nil, fmt.Errorf("store: list calls of %s: %w", sessionID, err)
	}
	return calls, nil
}

// describeDownloads gives calls, a session's, their downloads' descriptions,
// in one query for the whole session.
func (db *DB) describeDownloads(ctx context.Context, sessionID string, calls []proxy.Call) error {
	rows, err := db.r.QueryContext(ctx,
		`SELECT d.ref_id, d.name, d.mime_type, d.size, d.sha256, d.stored
		 FROM downloads d JOIN requests q ON q.ref_id = d.ref_id
		 WHERE q.session_id = ? ORDER BY d.ref_id, d.rowid`, sessionID)
	if err != nil {
		return err
	}
	defer rows.Close()
	byRef := map[string][]proxy.Download{}
	for rows.Next() {
		var d proxy.Download
		if err := rows.Scan(&d.RefID, &d.Name, &d.MimeType, &d.Size, &d.SHA256, &d.Stored); err != nil {
			return err
		}
		byRef[d.RefID] = append(byRef[d.RefID], d)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range calls {
		calls[i].Downloads = byRef[calls[i].Request.RefID]
	}
	return nil
}
