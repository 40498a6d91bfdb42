//go:build unix

package answer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

var fixedNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// probeDir copies the captured output files into a fresh dir and returns it.
func probeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(filepath.Join("testdata", "out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b := readTestdata(t, filepath.Join("out", e.Name()))
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// parseCaptured parses a captured result as if it had been written to dir.
func parseCaptured(t *testing.T, name, dir string) *Parsed {
	t.Helper()
	raw := bytes.ReplaceAll(readTestdata(t, filepath.Join("results", name)), []byte(probeOutDir), []byte(dir))
	p, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestIngestCaptured(t *testing.T) {
	const consoleLog = "console-2026-11-23T09-19-40-354Z.log"
	logStart := time.Date(2026, 11, 23, 9, 19, 40, 354e6, time.UTC)
	at := func(ms int) time.Time { return logStart.Add(time.Duration(ms) * time.Millisecond) }
	loc := func(s string) json.RawMessage { return json.RawMessage(s) }
	indexLoc := loc(`{"url":"http://127.0.0.1:8765/index.html","lineNumber":3}`)

	tests := []struct {
		result      string
		want        func(dir string) *Ingested
		removed     []string // files Ingest must delete
		kept        []string // files it must leave
		compareData bool
	}{
		{
			result: "00_navigate.json",
			want: func(string) *Ingested {
				return &Ingested{
					Snapshot:   string(readTestdata(t, "out/page-2026-11-23T09-19-41-079Z.yml")),
					ConsoleRaw: string(readTestdata(t, "out/"+consoleLog)),
					Console: []proxy.ConsoleEntry{
						{Level: "info", Message: "log line", Timestamp: at(173), Location: indexLoc},
						{Level: "warn", Message: "warn line", Timestamp: at(174), Location: indexLoc},
						{Level: "error", Message: "error line", Timestamp: at(174), Location: indexLoc},
						{Level: "info", Message: "info line", Timestamp: at(175), Location: indexLoc},
						{Level: "error", Message: "Failed to load resource: the server responded with a status of 404 (File not found)", Timestamp: at(247),
							Location: loc(`{"url":"http://127.0.0.1:8765/favicon.ico","lineNumber":0}`)},
					},
				}
			},
			removed: []string{"page-2026-11-23T09-19-41-079Z.yml"},
			kept:    []string{consoleLog, "page-2026-11-23T09-19-41-822Z.yml", "page-2026-11-23T09-19-41-378Z.png"},
		},
		{
			result: "01_snapshot.json",
			want: func(string) *Ingested {
				return &Ingested{Snapshot: string(readTestdata(t, "out/page-2026-11-23T09-19-41-079Z.yml"))}
			},
			kept: []string{consoleLog, "page-2026-11-23T09-19-41-079Z.yml"},
		},
		{
			result: "04_take_screenshot.json",
			want: func(string) *Ingested {
				// The inline part and the file are the same picture.
				return &Ingested{Images: []proxy.Image{{Seq: 0, MimeType: "image/png", Data: readTestdata(t, "out/page-2026-11-23T09-19-41-378Z.png")}}}
			},
			removed: []string{"page-2026-11-23T09-19-41-378Z.png"},
		},
		{
			result: "05_navigate.json",
			want: func(string) *Ingested {
				return &Ingested{Snapshot: "- list [ref=f1e2]:\n  - listitem [ref=f1e3]: One\n  - listitem [ref=f1e4]: Two"}
			},
			removed: []string{"page-2026-11-23T09-19-41-822Z.yml"},
		},
		{
			result: "06_storage_state.json",
			want: func(string) *Ingested {
				return &Ingested{StorageState: readTestdata(t, "out/storage-state-2026-11-23T09-19-41-872Z.json")}
			},
			removed: []string{"storage-state-2026-11-23T09-19-41-872Z.json"},
		},
		{
			result: "02_click.json",
			want:   func(string) *Ingested { return &Ingested{} },
		},
	}
	for _, tt := range tests {
		t.Run(tt.result, func(t *testing.T) {
			dir := probeDir(t)
			got, err := Ingest(parseCaptured(t, tt.result, dir), dir, fixedNow)
			if err != nil {
				t.Fatalf("Ingest: %v", err)
			}
			if diff := cmp.Diff(tt.want(dir), got); diff != "" {
				t.Errorf("Ingest (-want +got):\n%s", diff)
			}
			for _, f := range tt.removed {
				if exists(filepath.Join(dir, f)) {
					t.Errorf("%s was not removed", f)
				}
			}
			for _, f := range tt.kept {
				if !exists(filepath.Join(dir, f)) {
					t.Errorf("%s was removed", f)
				}
			}
		})
	}
}

func TestIngestLinkedImageWithoutInlinePart(t *testing.T) {
	dir := probeDir(t)
	p := parseCaptured(t, "04_take_screenshot.json", dir)
	p.Images = nil // as with --image-responses=omit
	got, err := Ingest(p, dir, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	want := []proxy.Image{{Seq: 0, MimeType: "image/png", Data: readTestdata(t, "out/page-2026-11-23T09-19-41-378Z.png")}}
	if diff := cmp.Diff(want, got.Images); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	if exists(filepath.Join(dir, "page-2026-11-23T09-19-41-378Z.png")) {
		t.Error("png not removed")
	}
}

// TestIngestHostilePaths feeds links a page could forge (through console
// messages or evaluate results): nothing outside the output dir may be read
// or removed, and nothing may block.
func TestIngestHostilePaths(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.yml")
	if err := os.WriteFile(secret, []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	secretPNG := filepath.Join(outside, "secret.png")
	if err := os.WriteFile(secretPNG, []byte("\x89PNG secret"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) *Parsed
		// want is compared with what Ingest returns; an error is required.
		want *Ingested
	}{
		{"absolute path outside", func(t *testing.T, dir string) *Parsed {
			return &Parsed{SnapshotFile: "/etc/passwd"}
		}, &Ingested{}},
		{"secret outside", func(t *testing.T, dir string) *Parsed {
			return &Parsed{SnapshotFile: secret, LinkedFiles: []string{secretPNG}}
		}, &Ingested{}},
		{"dot-dot escape", func(t *testing.T, dir string) *Parsed {
			rel, _ := filepath.Rel(dir, secret)
			return &Parsed{SnapshotFile: filepath.Join(dir, "x") + "/../" + rel}
		}, &Ingested{}},
		{"relative dot-dot", func(t *testing.T, dir string) *Parsed {
			return &Parsed{SnapshotFile: "../../../../../../../etc/passwd"}
		}, &Ingested{}},
		{"symlink escaping", func(t *testing.T, dir string) *Parsed {
			link := filepath.Join(dir, "page-evil.yml")
			if err := os.Symlink(secret, link); err != nil {
				t.Fatal(err)
			}
			pngLink := filepath.Join(dir, "page-evil.png")
			if err := os.Symlink(secretPNG, pngLink); err != nil {
				t.Fatal(err)
			}
			return &Parsed{SnapshotFile: link, LinkedFiles: []string{pngLink}}
		}, &Ingested{}},
		{"console log outside", func(t *testing.T, dir string) *Parsed {
			return &Parsed{ConsoleFile: "/etc/passwd", ConsoleFrom: 1, ConsoleTo: 3}
		}, &Ingested{}},
		{"fifo does not block", func(t *testing.T, dir string) *Parsed {
			fifo := filepath.Join(dir, "page-fifo.yml")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			return &Parsed{SnapshotFile: fifo}
		}, &Ingested{}},
		{"directory", func(t *testing.T, dir string) *Parsed {
			if err := os.Mkdir(filepath.Join(dir, "sub.png"), 0o700); err != nil {
				t.Fatal(err)
			}
			return &Parsed{LinkedFiles: []string{filepath.Join(dir, "sub.png")}}
		}, &Ingested{}},
		{"missing file", func(t *testing.T, dir string) *Parsed {
			return &Parsed{SnapshotFile: filepath.Join(dir, "page-gone.yml")}
		}, &Ingested{}},
		{"forged snapshot link to the console log is read but the log is kept", func(t *testing.T, dir string) *Parsed {
			return &Parsed{SnapshotFile: filepath.Join(dir, "console-2026-11-23T09-19-40-354Z.log"), ConsoleFile: "/etc/passwd", ConsoleFrom: 1, ConsoleTo: 1}
		}, &Ingested{Snapshot: string(readTestdata(t, "out/console-2026-11-23T09-19-40-354Z.log"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := probeDir(t)
			p := tt.setup(t, dir)
			done := make(chan struct{})
			var got *Ingested
			var err error
			go func() {
				defer close(done)
				got, err = Ingest(p, dir, fixedNow)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Ingest blocked")
			}
			if err == nil {
				t.Error("Ingest returned no error")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Ingest (-want +got):\n%s", diff)
			}
			for _, f := range []string{secret, secretPNG, filepath.Join(dir, "console-2026-11-23T09-19-40-354Z.log")} {
				if !exists(f) {
					t.Errorf("%s was removed", f)
				}
			}
		})
	}
}

func TestIngestSymlinkInside(t *testing.T) {
	dir := probeDir(t)
	link := filepath.Join(dir, "page-link.yml")
	if err := os.Symlink("page-2026-11-23T09-19-41-822Z.yml", link); err != nil {
		t.Fatal(err)
	}
	got, err := Ingest(&Parsed{SnapshotFile: link}, dir, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if got.Snapshot != string(readTestdata(t, "out/page-2026-11-23T09-19-41-822Z.yml")) {
		t.Errorf("Snapshot = %q", got.Snapshot)
	}
}

func TestIngestConsoleRanges(t *testing.T) {
	const log = "[      10ms] [LOG] one @ http://h/a.js:1\n" +
		"[      20ms] [LOG] two\nlines @ http://h/a.js:2\n" +
		"[      30ms] Error: boom\n    at http://h/a.js:3:5\n" +
		"[      40ms] [WARNING] last @ http://h/a.js:4\n"
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		file     string
		from, to int
		wantRaw  string
		wantMsgs []string
		wantTS   time.Time // of the first entry
		wantErr  bool
	}{
		{name: "all", file: "console-2026-01-01T00-00-00-000Z.log", from: 1, to: 6, wantRaw: log,
			wantMsgs: []string{"info:one", "info:two\nlines", "error:Error: boom\n    at http://h/a.js:3:5", "warn:last"}, wantTS: start.Add(10 * time.Millisecond)},
		{name: "middle", file: "console-2026-01-01T00-00-00-000Z.log", from: 2, to: 3,
			wantRaw: "[      20ms] [LOG] two\nlines @ http://h/a.js:2\n", wantMsgs: []string{"info:two\nlines"}, wantTS: start.Add(20 * time.Millisecond)},
		{name: "single line", file: "console-2026-01-01T00-00-00-000Z.log", from: 6, to: 6,
			wantRaw: "[      40ms] [WARNING] last @ http://h/a.js:4\n", wantMsgs: []string{"warn:last"}, wantTS: start.Add(40 * time.Millisecond)},
		{name: "past the end", file: "console-2026-01-01T00-00-00-000Z.log", from: 6, to: 9,
			wantRaw: "[      40ms] [WARNING] last @ http://h/a.js:4\n", wantMsgs: []string{"warn:last"}, wantTS: start.Add(40 * time.Millisecond), wantErr: true},
		{name: "unknown file name uses now", file: "other.log", from: 1, to: 1,
			wantRaw: "[      10ms] [LOG] one @ http://h/a.js:1\n", wantMsgs: []string{"info:one"}, wantTS: fixedNow},
		{name: "starts mid-entry", file: "other.log", from: 3, to: 3,
			wantRaw: "lines @ http://h/a.js:2\n", wantMsgs: []string{"info:lines @ http://h/a.js:2"}, wantTS: fixedNow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := Ingest(&Parsed{ConsoleFile: path, ConsoleFrom: tt.from, ConsoleTo: tt.to}, dir, fixedNow)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantRaw, got.ConsoleRaw); diff != "" {
				t.Errorf("ConsoleRaw (-want +got):\n%s", diff)
			}
			var msgs []string
			for _, e := range got.Console {
				msgs = append(msgs, e.Level+":"+e.Message)
			}
			if diff := cmp.Diff(tt.wantMsgs, msgs); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if len(got.Console) > 0 && !got.Console[0].Timestamp.Equal(tt.wantTS) {
				t.Errorf("timestamp = %v, want %v", got.Console[0].Timestamp, tt.wantTS)
			}
			if !exists(path) {
				t.Error("console log removed")
			}
		})
	}
}

func TestIngestReadLimits(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.yml"), bytes.Repeat([]byte("x"), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	in := ingester{root: root, dir: dir, consumed: map[string]bool{}}
	if _, _, err := in.read(filepath.Join(dir, "big.yml"), 99); err == nil {
		t.Error("read over the limit succeeded")
	}
	if b, _, err := in.read(filepath.Join(dir, "big.yml"), 100); err != nil || len(b) != 100 {
		t.Errorf("read at the limit: %d bytes, %v", len(b), err)
	}

	// A console range longer than the bound is cut at a line boundary.
	long := strings.Repeat("[       1ms] [LOG] "+strings.Repeat("y", 1<<20)+"\n", 20)
	if err := os.WriteFile(filepath.Join(dir, "console-x.log"), []byte(long), 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := in.readLines(filepath.Join(dir, "console-x.log"), 1, 20)
	if err == nil || len(raw) > maxConsoleRangeBytes || !strings.HasSuffix(raw, "\n") || len(raw) == 0 {
		t.Errorf("readLines over the bound: %d bytes, err %v", len(raw), err)
	}
}

func TestIngestNil(t *testing.T) {
	got, err := Ingest(nil, t.TempDir(), fixedNow)
	if err == nil || got == nil {
		t.Errorf("Ingest(nil) = %v, %v", got, err)
	}
}
