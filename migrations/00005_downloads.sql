-- Files pages downloaded, stored with the call that started them. A download
-- over the size limit keeps its row (name, type, size) with stored = 0 and
-- no data, so the record still says it happened. The primary key indexes
-- ref_id for the listing (in the order rows were written) and the lookup by
-- name.

-- +goose Up
CREATE TABLE downloads (
    ref_id    TEXT NOT NULL REFERENCES responses (ref_id) ON DELETE CASCADE,
    name      TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    mime_type TEXT NOT NULL,
    size      INTEGER NOT NULL CHECK (size >= 0),
    sha256    TEXT NOT NULL DEFAULT '',
    stored    INTEGER NOT NULL CHECK (stored IN (0, 1)),
    data      BLOB,
    PRIMARY KEY (ref_id, name)
);

-- +goose Down
DROP TABLE downloads;
