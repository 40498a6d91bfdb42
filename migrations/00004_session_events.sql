-- A session's timeline: what happened to it besides its calls (created,
-- suspended, resumed, its worker lost and replaced with its saved state or
-- not, put in the error state, moved off a browser node, closed), written
-- best effort beside the log line that says the same and never rewritten;
-- and the documented error code of each failed call, beside its message.

-- +goose Up
CREATE TABLE session_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT ''
);

CREATE INDEX session_events_session_at ON session_events (session_id, at);

ALTER TABLE responses ADD COLUMN error_code TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE responses DROP COLUMN error_code;
DROP TABLE session_events;
