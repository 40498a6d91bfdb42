package store

import (
	"context"
	"fmt"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// ListDownloads returns a ref's downloads (for tests: the product reads
// them with their calls, describeDownloads) in the order they were recorded,
// described only (no Data); empty (never nil, never an error) for a ref
// without any.
func (db *DB) ListDownloads(ctx context.Context, refID string) ([]proxy.Download, error) {
	rows, err := db.r.QueryContext(ctx,
		`SELECT name, mime_type, size, sha256, stored FROM downloads WHERE ref_id = ? ORDER BY rowid`, refID)
	if err != nil {
		return nil, fmt.Errorf("store: list downloads %s: %w", refID, err)
	}
	defer rows.Close()
	out := []proxy.Download{}
	for rows.Next() {
		d := proxy.Download{RefID: refID}
		if err := rows.Scan(&d.Name, &d.MimeType, &d.Size, &d.SHA256, &d.Stored); err != nil {
			return nil, fmt.Errorf("store: list downloads %s: %w", refID, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list downloads %s: %w", refID, err)
	}
	return out, nil
}
