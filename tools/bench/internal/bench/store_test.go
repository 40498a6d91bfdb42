package bench

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSyntheticSnapshot(t *testing.T) {
	tests := []struct {
		name string
		n    int
		// marks is how many lines StoreSearchTerm matches (a link and its
		// url per marked item).
		marks int
	}{
		{"4 KiB", 4 << 10, 10},
		{"100 KiB", 100 << 10, 10},
		{"1 MiB", 1 << 20, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SyntheticSnapshot(tt.n, 0)
			if len(s) > tt.n || len(s) < tt.n-300 {
				t.Errorf("len = %d, want about %d", len(s), tt.n)
			}
			if !strings.HasSuffix(s, "\n") {
				t.Error("does not end with a whole line")
			}
			matches := 0
			refs := map[string]bool{}
			for line := range strings.Lines(s) {
				if strings.Contains(strings.ToLower(line), StoreSearchTerm) {
					matches++
				}
				if _, r, ok := strings.Cut(line, "[ref="); ok {
					r, _, _ = strings.Cut(r, "]")
					if refs[r] {
						t.Fatalf("ref %s repeated", r)
					}
					refs[r] = true
				}
			}
			if matches != tt.marks {
				t.Errorf("%q matches %d lines, want %d", StoreSearchTerm, matches, tt.marks)
			}
			// Every button label the readers search for exists.
			last := syntheticItems(tt.n)
			if ref, ok := ButtonRef(s, "Add "+strconv.Itoa(last)); !ok || ref == "" {
				t.Errorf("no button \"Add %d\" (the readers' largest label)", last)
			}
			if SyntheticSnapshot(tt.n, 1) == s {
				t.Error("variant 1 is the same bytes as variant 0")
			}
			if SyntheticSnapshot(tt.n, 0) != s {
				t.Error("not deterministic")
			}
		})
	}
}

// TestRunStore is a very short store run on small snapshots: every part
// runs, nothing fails, no SQLITE_BUSY.
func TestRunStore(t *testing.T) {
	if testing.Short() {
		t.Skip("writes databases for a second")
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	res, err := RunStore(context.Background(), log, StoreConfig{
		Dir: t.TempDir(), Duration: 300 * time.Millisecond, Writers: 2, Readers: 2,
		SnapshotKB: 8, SearchKB: 64, SearchIterations: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ingest) != 2 {
		t.Fatalf("%d ingest runs, want 2 (without and with readers)", len(res.Ingest))
	}
	for _, r := range res.Ingest {
		if r.Calls == 0 || r.PerSec <= 0 || r.MBPerSec <= 0 || r.Write.N != r.Calls {
			t.Errorf("%s: calls %d, %v/s, %v MB/s, %d write latencies: want some", r.Name, r.Calls, r.PerSec, r.MBPerSec, r.Write.N)
		}
		if r.ErrorCount != 0 || r.Busy != 0 {
			t.Errorf("%s: %d errors (%d busy): %v", r.Name, r.ErrorCount, r.Busy, r.Errors)
		}
		if (r.Readers > 0) != (r.ReaderOps > 0) || (r.Readers > 0) != (r.GetContent.N > 0 && r.GetResponse.N > 0) {
			t.Errorf("%s: %d readers but %d reader ops (%d get_content, %d GetResponse)", r.Name, r.Readers, r.ReaderOps, r.GetContent.N, r.GetResponse.N)
		}
		if r.DBBytes == 0 {
			t.Errorf("%s: database size not measured", r.Name)
		}
	}
	if s := res.Search; s.Get.N != 3 || s.SearchOnly.N != 3 || s.MatchLines != 10 || s.ResultBytes == 0 || s.Term != StoreSearchTerm {
		t.Errorf("search = %+v", s)
	}
	var b strings.Builder
	res.writeText(&b)
	for _, want := range []string{"writers only", "writers + 2 readers", "target: ingest ≥ 200", "target: search on 1 MB ≤ 20 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, b.String())
		}
	}
}
