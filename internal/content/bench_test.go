package content_test

import (
	"context"
	"path/filepath"
	"strings"
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
		{"case_sensitive", "Espresso"},
		{"regex", `espresso-\w+$`},
	} {
		query := proxy.Query{Text: q.query, CaseSensitive: q.name == "case_sensitive", Regex: q.name == "regex"}
		b.Run(q.name, func(b *testing.B) {
			b.SetBytes(int64(len(snap)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := content.Search(snap, query); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetDiff is a repeated get_content on a 1 MB snapshot: after the
// first read every read is "unchanged", which costs a hash of the view; a
// search is no diff and answers its matches every time.
func BenchmarkGetDiff(b *testing.B) {
	snap := bigSnapshot(b, mb)
	run := func(b *testing.B, s content.Store, search string) {
		svc := content.New(s)
		ctx := context.Background()
		q := proxy.Query{Text: search}
		if _, err := svc.Content(ctx, "r", q, false); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(snap)))
		b.ReportAllocs()
		for b.Loop() {
			c, err := svc.Content(ctx, "r", q, false)
			switch {
			case err != nil:
				b.Fatal(err)
			case search == "" && !c.Unchanged:
				b.Fatalf("Get = %+v; want unchanged", c)
			case search != "" && (c.NoMatch || c.Text == ""):
				b.Fatalf("Get(search %q) = %+v; want matches", search, c)
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

// BenchmarkChanges is the summary an action's answer carries, on a page of
// 100 KB: a status line changed (the diff), and the same page as a new one
// (over the budget, so never outlined) and a small new page (outlined).
func BenchmarkChanges(b *testing.B) {
	snap := bigSnapshot(b, 100<<10)
	clicked := strings.Replace(snap, "[ref=e", "[ref=x", 1) // one element renamed: a removal and an addition
	small := readSnapshot(b)
	const url = "http://127.0.0.1/"
	cases := []struct {
		name       string
		prev, next content.Page
	}{
		{"diff_100KB", content.Page{URL: url, Snapshot: snap}, content.Page{URL: url, Snapshot: clicked}},
		{"new_page_100KB", content.Page{}, content.Page{URL: url, Snapshot: snap}},
		{"new_page_small", content.Page{}, content.Page{URL: url, Snapshot: small}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.next.Snapshot)))
			for b.Loop() {
				content.Changes(c.prev, c.next, 1000)
			}
		})
	}
}
