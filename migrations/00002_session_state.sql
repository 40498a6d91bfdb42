-- What a suspended session needs to come back in a new worker (resume after
-- a suspend, a crash or a restart): one row per session, replaced on every
-- save.
--
--   * state is the JSON the upstream layer produced (last URL, title and the
--     Playwright storage state: cookies, localStorage). The store does not
--     interpret it; NULL means "saved, but there was nothing to keep".
--   * url is derived from state by SQLite itself, so it can never disagree
--     with it and no Go code has to know the JSON's shape; it is there for
--     queries and for a human with the sqlite3 shell. Never write it.
--   * The row goes with its session (ON DELETE CASCADE), like every child row.

-- +goose Up
CREATE TABLE session_state (
    session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    -- json_valid first: json_extract on malformed JSON would raise its own
    -- error before the CHECK on state could give the clear one.
    url        TEXT NOT NULL GENERATED ALWAYS AS (
                   CASE WHEN json_valid(state) THEN COALESCE(json_extract(state, '$.url'), '') ELSE '' END
               ) VIRTUAL,
    state      TEXT CHECK (json_valid(state)),
    saved_at   TEXT NOT NULL
);

-- +goose Down
DROP TABLE session_state;
