-- What happened to a session besides its calls, for its timeline: created,
-- suspended, resumed, its worker lost and replaced (with its saved state or
-- not), put in the error state, moved off a browser node, closed. Written
-- best effort beside the log line that says the same; never rewritten.

-- +goose Up
CREATE TABLE session_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL,
    detail     TEXT NOT NULL DEFAULT ''
);

CREATE INDEX session_events_session_at ON session_events (session_id, at);

-- +goose Down
DROP TABLE session_events;
