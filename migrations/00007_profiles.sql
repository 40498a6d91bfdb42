-- Login profiles, and saved browser states sealed at rest.
--
--   * session_state.state now holds a sealed blob (AES-256-GCM, bound to its
--     session id), which SQLite cannot read: the JSON CHECK and the url
--     derived from it go, and the table is rebuilt, since SQLite cannot drop
--     a CHECK in place. A row of text is one saved before sealing; the store
--     seals every such row when it opens the database, so none outlives the
--     first start after this migration.
--   * profiles keeps each named storage state sealed (bound to its name)
--     beside what it says about itself in the clear: origins, the earliest
--     cookie expiry, its size. version counts its saves from 1.
--   * sessions record the profile they started from (NULL: none), the
--     version they stand on, and whether they write back. No foreign key:
--     deleting a profile leaves its sessions their own copy.

-- +goose Up
CREATE TABLE session_state_sealed (
    session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    state      BLOB CHECK (state IS NULL OR typeof(state) = 'blob' OR json_valid(state)),
    saved_at   TEXT NOT NULL
);
INSERT INTO session_state_sealed (session_id, state, saved_at)
    SELECT session_id, state, saved_at FROM session_state;
DROP TABLE session_state;
ALTER TABLE session_state_sealed RENAME TO session_state;

CREATE TABLE profiles (
    name              TEXT PRIMARY KEY NOT NULL,
    version           INTEGER NOT NULL CHECK (version >= 1),
    state             BLOB NOT NULL CHECK (typeof(state) = 'blob'),
    origins           TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(origins) AND json_type(origins) = 'array'),
    cookies_expire_at TEXT,
    bytes             INTEGER NOT NULL CHECK (bytes >= 0),
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);

ALTER TABLE sessions ADD COLUMN profile TEXT;
ALTER TABLE sessions ADD COLUMN profile_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN profile_write INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE sessions DROP COLUMN profile_write;
ALTER TABLE sessions DROP COLUMN profile_version;
ALTER TABLE sessions DROP COLUMN profile;
DROP TABLE profiles;

-- Sealed states cannot go back to JSON: those sessions resume blank.
CREATE TABLE session_state_json (
    session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    url        TEXT NOT NULL GENERATED ALWAYS AS (
                   CASE WHEN json_valid(state) THEN COALESCE(json_extract(state, '$.url'), '') ELSE '' END
               ) VIRTUAL,
    state      TEXT CHECK (json_valid(state)),
    saved_at   TEXT NOT NULL
);
INSERT INTO session_state_json (session_id, state, saved_at)
    SELECT session_id, state, saved_at FROM session_state WHERE state IS NULL OR typeof(state) = 'text';
DROP TABLE session_state;
ALTER TABLE session_state_json RENAME TO session_state;
