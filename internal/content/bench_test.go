package content_test

import (
	"context"
	"path/filepath"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

const mb = 1 << 20

func BenchmarkSearch(b *testing.B) {
	snap := bigSnapshot(b, mb)
	for _, q := range []struct{ name, query string }{
		{"ascii", "button"},
		{"ascii_rare", "espresso-pro"},
		{"non_ascii", "カート"},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.SetBytes(int64(len(snap)))
			b.ReportAllocs()
			for b.Loop() {
				content.Search(snap, q.query)
			}
		})
	}
}

// BenchmarkGetDiff is a repeated get_content on a 1 MB snapshot: after the
// first read every read is "unchanged", which costs a hash of the view.
func BenchmarkGetDiff(b *testing.B) {
	snap := bigSnapshot(b, mb)
	run := func(b *testing.B, s content.Store, search string) {
		svc := content.New(s)
		ctx := context.Background()
		if _, err := svc.Get(ctx, "r", search, false); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(snap)))
		b.ReportAllocs()
		for b.Loop() {
			c, err := svc.Get(ctx, "r", search, false)
			if err != nil || !c.Unchanged {
				b.Fatalf("Get = %+v, %v; want unchanged", c, err)
			}
		}
	}
	fake := func() content.Store {
		fs := newFakeStore()
		fs.setResponse(proxy.Response{RefID: "r", Status: proxy.StatusSuccess, PageSnapshot: snap})
		return fs
	}
	sqlite := func(b *testing.B) content.Store {
		db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "proxy.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		seed(b, db, "r", snap, nil)
		return db
	}
	b.Run("fake", func(b *testing.B) { run(b, fake(), "") })
	b.Run("fake_search", func(b *testing.B) { run(b, fake(), "button") })
	b.Run("sqlite", func(b *testing.B) { run(b, sqlite(b), "") })
	b.Run("sqlite_search", func(b *testing.B) { run(b, sqlite(b), "button") })
}
