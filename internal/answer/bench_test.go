//go:build unix

package answer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParse parses recorded @playwright/mcp 0.0.83 answers, one
// sub-benchmark per recording (go test -bench Parse ./internal/answer).
func BenchmarkParse(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("testdata", "results", "*.json"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no recordings: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(filepath.Base(f), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := Parse(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseLargeSnapshot parses a browser_snapshot answer carrying a
// 1,500-item page inline (≈ 120 KB of yaml), the catalogue of the bench.
func BenchmarkParseLargeSnapshot(b *testing.B) {
	var yaml strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&yaml, "- listitem [ref=e%d]:\n  - link \"Item %d, a fine product\" [ref=e%d]:\n    - /url: /item/%d\n", 2*i, i, 2*i+1, i)
	}
	text := "### Page\n- Page URL: http://127.0.0.1/catalogue.html\n- Page Title: Catalogue\n### Snapshot\n```yaml\n" + yaml.String() + "```\n"
	raw, err := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		p, err := Parse(raw)
		if err != nil || p.SnapshotInline == "" {
			b.Fatalf("Parse: %v, snapshot %d bytes", err, len(p.SnapshotInline))
		}
	}
}
