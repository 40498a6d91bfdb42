package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPerSessionMemory(t *testing.T) {
	mem := func(rss, pss, nodeRSS, rendererRSS int64) MemSample {
		return MemSample{RSSKB: rss, PSSKB: pss, ByKind: map[string]KindMem{
			"node": {RSSKB: nodeRSS}, "chromium-renderer": {RSSKB: rendererRSS},
		}}
	}
	tests := []struct {
		name string
		in   LevelResult
		want LevelResult
	}{
		{
			name: "four sessions",
			in:   LevelResult{Created: 4, Baseline: mem(1000, 600, 100, 200), End: mem(3000, 1800, 500, 1400)},
			want: LevelResult{Created: 4, Baseline: mem(1000, 600, 100, 200), End: mem(3000, 1800, 500, 1400),
				PerSessionRSSKB: 500, PerSessionPSSKB: 300,
				PerSessionByKind: map[string]float64{"node": 100, "chromium-renderer": 300}},
		},
		{
			name: "a kind only at the end",
			in: LevelResult{Created: 2, Baseline: MemSample{RSSKB: 100, ByKind: map[string]KindMem{}},
				End: MemSample{RSSKB: 300, ByKind: map[string]KindMem{"node": {RSSKB: 200}}}},
			want: LevelResult{Created: 2, Baseline: MemSample{RSSKB: 100, ByKind: map[string]KindMem{}},
				End:             MemSample{RSSKB: 300, ByKind: map[string]KindMem{"node": {RSSKB: 200}}},
				PerSessionRSSKB: 100, PerSessionByKind: map[string]float64{"node": 100}},
		},
		{
			name: "no session created: nothing to divide",
			in:   LevelResult{End: MemSample{RSSKB: 300}},
			want: LevelResult{End: MemSample{RSSKB: 300}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in
			got.perSessionMemory()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("perSessionMemory (-want +got):\n%s", diff)
			}
		})
	}
}

// formButtons is what GET /content answers in the fake below: every
// button of the form page, with a ref.
const formButtons = "- button \"Save draft\" [ref=e1]\n- button \"Validate\" [ref=e2]\n- button \"Preview\" [ref=e3]\n"

// TestSessionLoopStartsNoCallAfterTheDeadline runs one session's loop
// against a fake proxy-server whose deadline passes while a chosen request
// is in flight: that request completes and counts, no other starts, and a
// round stopped part-way is cut, not completed.
func TestSessionLoopStartsNoCallAfterTheDeadline(t *testing.T) {
	round := []string{"browser_navigate", "get_content", "browser_snapshot", "browser_click"}
	tests := []struct {
		name string
		// deadlineDuring is the request (1-based) during which the
		// deadline passes; 0: never.
		deadlineDuring int
		maxIterations  int
		wantRequests   int
		wantRounds     int
		wantCut        int
	}{
		{"during the first navigate", 1, 100, 1, 0, 1},
		{"during get_content", 2, 100, 2, 0, 1},
		{"during the snapshot", 3, 100, 3, 0, 1},
		{"during the click: the round is complete", 4, 100, 4, 1, 0},
		{"during the second round's navigate", 5, 100, 5, 1, 1},
		{"during the third round's snapshot", 11, 100, 11, 2, 1},
		{"never, bounded by MaxIterations", 0, 3, 12, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loadCtx, deadline := context.WithCancel(context.Background())
			defer deadline()
			var mu sync.Mutex
			var seen []string
			var clicked []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				what := r.Method + " " + r.URL.Path
				var body struct {
					Tool   string         `json:"tool"`
					Params map[string]any `json:"params"`
				}
				switch {
				case r.Method == http.MethodPost && r.URL.Path == "/call":
					if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
						http.Error(w, err.Error(), http.StatusBadRequest)
						return
					}
					what = body.Tool
				case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/content/"):
					what = "get_content"
				}
				mu.Lock()
				seen = append(seen, what)
				n := len(seen)
				if body.Tool == "browser_click" {
					clicked = append(clicked, fmt.Sprint(body.Params["target"]))
				}
				mu.Unlock()
				if n == tt.deadlineDuring {
					deadline() // passes while this request is in flight
				}
				switch what {
				case "get_content":
					_ = json.NewEncoder(w).Encode(map[string]string{"text": formButtons})
				case "browser_navigate", "browser_snapshot", "browser_click":
					fmt.Fprintf(w, `{"ref_id":"ref-%d","status":"success"}`, n)
				default:
					http.Error(w, "unexpected request "+what, http.StatusNotFound)
				}
			}))
			defer srv.Close()
			c, err := NewClient(srv.URL, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			rec := newRecorder(1)
			cfg := ConcurrencyConfig{MaxIterations: tt.maxIterations, Pages: []string{"form"}}
			l := &loop{c: c, site: &Site{URL: "http://127.0.0.1:1"}, clickParam: "target", rec: rec}
			l.sessionLoop(context.Background(), loadCtx, "session-1", 0, cfg)

			var want []string
			for len(want) < tt.wantRequests {
				want = append(want, round[len(want)%len(round)])
			}
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if rec.rounds[0] != tt.wantRounds || rec.cut != tt.wantCut {
				t.Errorf("rounds completed %d, cut %d; want %d, %d", rec.rounds[0], rec.cut, tt.wantRounds, tt.wantCut)
			}
			wantCalls := 0
			for _, w := range want {
				if w != "get_content" {
					wantCalls++
				}
			}
			if rec.calls != wantCalls || rec.ok != wantCalls || rec.errlog.total() != 0 {
				t.Errorf("recorded %d calls, %d ok, %d errors (%v); want %d, all ok", rec.calls, rec.ok, rec.errlog.total(), rec.errlog.list(), wantCalls)
			}
			for _, ref := range clicked {
				if ref != "e1" && ref != "e2" && ref != "e3" {
					t.Errorf("clicked %q, want the ref of a form button from get_content", ref)
				}
			}
		})
	}
}

func TestConcurrencyReportShowsRoundsWindowAndRSS(t *testing.T) {
	res := &ConcurrencyResult{DurationMS: 60000, Pages: []string{"form"}, Levels: []LevelResult{{
		Level: 2, Created: 2, WindowMS: 61234, Rounds: 9, CutRounds: 2,
		PerSessionRSSKB: 200 * 1024, PerSessionPSSKB: 120 * 1024,
	}}}
	var buf bytes.Buffer
	res.writeText(&buf)
	lines := strings.Split(buf.String(), "\n")
	var header string
	var row []string
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "level") && strings.Contains(l, "cut") {
			header, row = l, strings.Fields(lines[i+1])
			break
		}
	}
	if header == "" {
		t.Fatalf("no level table in:\n%s", buf.String())
	}
	for _, want := range []string{"load s", "rounds", "cut", "end RSS/session MB", "end PSS/session MB"} {
		if !strings.Contains(header, want) {
			t.Errorf("the level table has no %q column: %s", want, header)
		}
	}
	for _, want := range []string{"61.2", "9", "2", "200.0", "120.0"} {
		found := false
		for _, cell := range row {
			found = found || cell == want
		}
		if !found {
			t.Errorf("the level row %q lacks %q", row, want)
		}
	}
}
