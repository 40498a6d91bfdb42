-- The durable record: every session, request, response, console entry and
-- image (docs/ARCHITECTURE.md, "Where state lives").
--
-- Conventions, so readers and writers never disagree:
--   * Timestamps are TEXT in UTC, RFC 3339 with a fixed nine-digit fraction
--     ("2006-01-02T15:04:05.000000000Z"). The fixed width makes text order
--     equal time order, so ORDER BY and MAX() on them are correct, and every
--     nanosecond reads back exactly.
--   * JSON columns are declared TEXT: a column typed "JSON" would get NUMERIC
--     affinity and SQLite would turn a JSON text such as 1.0 into a number,
--     losing the exact bytes. json_valid() keeps them honest.
--   * result and page_snapshot are stored exactly as received; nothing is
--     transformed on write.
--   * Every child row cascades from its parent so that pruning old sessions
--     later is one DELETE.

-- +goose Up
CREATE TABLE sessions (
    session_id    TEXT PRIMARY KEY NOT NULL,
    created_at    TEXT NOT NULL,
    last_activity TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('active', 'suspended', 'closed', 'error')),
    metadata      TEXT CHECK (json_valid(metadata))
);

CREATE TABLE requests (
    ref_id     TEXT PRIMARY KEY NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    tool_name  TEXT NOT NULL,
    params     TEXT CHECK (json_valid(params)),
    timestamp  TEXT NOT NULL
);

CREATE INDEX requests_session_timestamp ON requests (session_id, timestamp);

CREATE TABLE responses (
    ref_id        TEXT PRIMARY KEY NOT NULL REFERENCES requests (ref_id) ON DELETE CASCADE,
    status        TEXT NOT NULL CHECK (status IN ('success', 'error')),
    result        TEXT NOT NULL DEFAULT '',
    page_snapshot TEXT NOT NULL DEFAULT '',
    console_logs  TEXT NOT NULL DEFAULT '',
    error_message TEXT NOT NULL DEFAULT '',
    timestamp     TEXT NOT NULL
);

CREATE TABLE console_logs (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    ref_id    TEXT NOT NULL REFERENCES responses (ref_id) ON DELETE CASCADE,
    level     TEXT NOT NULL,
    message   TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    location  TEXT CHECK (json_valid(location))
);

CREATE INDEX console_logs_ref_id ON console_logs (ref_id);

-- A cursor only makes sense for a recorded response; the foreign key turns a
-- cursor for an unknown ref into an error instead of an orphan row.
CREATE TABLE diff_cursors (
    ref_id             TEXT PRIMARY KEY NOT NULL REFERENCES responses (ref_id) ON DELETE CASCADE,
    cursor_position    INTEGER NOT NULL CHECK (cursor_position >= 0),
    last_snapshot_hash TEXT NOT NULL,
    last_read          TEXT NOT NULL
);

-- Screenshots: the primary key already indexes ref_id for ListImages.
CREATE TABLE images (
    ref_id    TEXT NOT NULL REFERENCES responses (ref_id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    mime_type TEXT NOT NULL,
    data      BLOB NOT NULL,
    PRIMARY KEY (ref_id, seq)
);

-- +goose Down
DROP TABLE images;
DROP TABLE diff_cursors;
DROP TABLE console_logs;
DROP TABLE responses;
DROP INDEX requests_session_timestamp;
DROP TABLE requests;
DROP TABLE sessions;
