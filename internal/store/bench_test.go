package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

const benchSnapshotSize = 100 << 10

func benchSnapshot() string {
	line := "  - button \"Click me\" [ref=e4] [cursor=pointer]\n"
	return strings.Repeat(line, benchSnapshotSize/len(line)+1)[:benchSnapshotSize]
}

func BenchmarkInsertResponse(b *testing.B) {
	ctx := context.Background()
	db := newDB(b)
	mustSession(b, db, "s")
	snapshot := benchSnapshot()
	// Requests first, untimed: a response needs its request (foreign key).
	for i := range b.N {
		mustRequest(b, db, "s", fmt.Sprint(i))
	}
	console := []proxy.ConsoleEntry{{Level: "error", Message: "boom"}, {Level: "info", Message: "hi"}}
	b.SetBytes(benchSnapshotSize)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r := &proxy.Response{RefID: fmt.Sprint(i), Status: proxy.StatusSuccess, Result: `{"content":[]}`, PageSnapshot: snapshot, Timestamp: t0}
		if err := db.InsertResponse(ctx, r, console, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetResponse(b *testing.B) {
	ctx := context.Background()
	db := newDB(b)
	mustSession(b, db, "s")
	mustRequest(b, db, "s", "r")
	mustResponse(b, db, "r", benchSnapshot())
	b.SetBytes(benchSnapshotSize)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := db.GetResponse(ctx, "r"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetResponseParallel(b *testing.B) {
	ctx := context.Background()
	db := newDB(b)
	mustSession(b, db, "s")
	mustRequest(b, db, "s", "r")
	mustResponse(b, db, "r", benchSnapshot())
	b.SetBytes(benchSnapshotSize)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := db.GetResponse(ctx, "r"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
