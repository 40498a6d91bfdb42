// Package migrations owns the SQLite schema of the durable record: goose SQL
// migrations, embedded so the binary carries its own schema.
//
// It must never hold Go code that touches a database: applying migrations is
// internal/store's job (store.Open and `proxy-server migrate`), and a
// migration, once released, must never be edited — add a new file instead.
package migrations

import "embed"

// FS holds every migration at its root, so goose.NewProvider can take it
// directly, without fs.Sub.
//
//go:embed *.sql
var FS embed.FS
