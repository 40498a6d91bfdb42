//go:build linux

package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// startStateFake starts a fake worker that records its calls; it returns
// the worker and a function reading the calls so far.
func startStateFake(t *testing.T, env ...string) (*Worker, func() []fakeCall) {
	t.Helper()
	record := filepath.Join(t.TempDir(), "calls.jsonl")
	w := startFake(t, fakeWorkerConfig(t, append(env, "PWP_FAKE_RECORD="+record)...))
	return w, func() []fakeCall {
		t.Helper()
		f, err := os.Open(record)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		} else if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var calls []fakeCall
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 32<<20)
		for sc.Scan() {
			var c fakeCall
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatal(err)
			}
			calls = append(calls, c)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		return calls
	}
}

// wantEmptyDir fails when dir holds anything: SaveState and RestoreState
// must not leave files behind.
func wantEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("files left in the output dir: %v", names)
	}
}

// checkErr compares err with what a test case expects: a *ToolError, or an
// error containing a text, or none.
func checkErr(t *testing.T, err error, wantTool *ToolError, wantSub string) {
	t.Helper()
	switch {
	case wantTool != nil:
		var te *ToolError
		if !errors.As(err, &te) {
			t.Fatalf("error = %v, want a *ToolError", err)
		}
		if diff := cmp.Diff(wantTool, te); diff != "" {
			t.Errorf("ToolError (-want +got):\n%s", diff)
		}
		if !strings.Contains(err.Error(), wantTool.Tool) || !strings.Contains(err.Error(), wantTool.Message) {
			t.Errorf("error %q does not name the tool and its message", err)
		}
	case wantSub != "":
		if err == nil || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("error = %v, want one containing %q", err, wantSub)
		}
	case err != nil:
		t.Fatalf("unexpected error: %v", err)
	}
}

func TestSaveStateFake(t *testing.T) {
	const pretty = "{\n  \"cookies\": [\n    {\"name\": \"sid\", \"value\": \"a b\"}\n  ],\n  \"origins\": []\n}"
	const compact = `{"cookies":[{"name":"sid","value":"a b"}],"origins":[]}`
	tests := []struct {
		name      string
		env       []string
		want      *SavedState
		wantTools []string
		wantTool  *ToolError
		wantErr   string
		hang      bool // the worker never answers: a short deadline
	}{
		{"state and page from the program",
			[]string{"PWP_FAKE_RUN=" + `{"pwproxyState":{"cookies":[{"name":"sid","value":"a b"}],"origins":[{"origin":"https://a.example","localStorage":[],"indexedDB":[{"name":"db","version":1,"stores":[]}]}]},"url":"https://a.example/x?y#z","title":"A page"}`},
			&SavedState{URL: "https://a.example/x?y#z", Title: "A page",
				StorageState: json.RawMessage(`{"cookies":[{"name":"sid","value":"a b"}],"origins":[{"origin":"https://a.example","localStorage":[],"indexedDB":[{"name":"db","version":1,"stores":[]}]}]}`)},
			[]string{"browser_run_code_unsafe"}, nil, "", false},
		{"blank page from the program",
			[]string{"PWP_FAKE_RUN=" + `{"pwproxyState":{"cookies":[],"origins":[]},"url":"about:blank","title":""}`},
			&SavedState{StorageState: json.RawMessage(`{"cookies":[],"origins":[]}`)},
			[]string{"browser_run_code_unsafe"}, nil, "", false},
		{"program answer unreadable: the tools' way",
			[]string{"PWP_FAKE_RUN=undefined", "PWP_FAKE_STORAGE=" + pretty, "PWP_FAKE_PAGE=- Page URL: https://a.example/\n- Page Title: A"},
			&SavedState{URL: "https://a.example/", Title: "A", StorageState: json.RawMessage(compact)},
			[]string{"browser_run_code_unsafe", "browser_storage_state"}, nil, "", false},
		{"program answers no state: the tools' way",
			[]string{"PWP_FAKE_RUN=" + `{"url":"https://a.example/"}`, "PWP_FAKE_PAGE=- Page URL: https://a.example/"},
			&SavedState{URL: "https://a.example/", StorageState: json.RawMessage(`{"cookies":[],"origins":[]}`)},
			[]string{"browser_run_code_unsafe", "browser_storage_state"}, nil, "", false},
		{"state with IndexedDB too large: the tools' way",
			[]string{"PWP_FAKE_RUN=" + `{"pwproxyTooLarge":20000000}`, "PWP_FAKE_PAGE=- Page URL: https://a.example/"},
			&SavedState{URL: "https://a.example/", StorageState: json.RawMessage(`{"cookies":[],"origins":[]}`)},
			[]string{"browser_run_code_unsafe", "browser_storage_state"}, nil, "", false},
		{"worker never answers the program: no second try", []string{"PWP_FAKE_HANG=browser_run_code_unsafe"}, nil,
			[]string{"browser_run_code_unsafe"}, nil, context.DeadlineExceeded.Error(), true},
		{"page from the storage response",
			[]string{"PWP_FAKE_STORAGE=" + pretty, "PWP_FAKE_PAGE=- Page URL: https://a.example/x?y#z\n- Page Title: A page"},
			&SavedState{URL: "https://a.example/x?y#z", Title: "A page", StorageState: json.RawMessage(compact)},
			[]string{"browser_run_code_unsafe", "browser_storage_state"}, nil, "", false},
		{"page from browser_tabs",
			[]string{"PWP_FAKE_STORAGE=" + pretty, "PWP_FAKE_TABS=- 0: [A](https://a.example/)\n- 1: (current) [B](https://b.example/)"},
			&SavedState{URL: "https://b.example/", Title: "B", StorageState: json.RawMessage(compact)},
			[]string{"browser_run_code_unsafe", "browser_storage_state", "browser_tabs"}, nil, "", false},
		{"blank page from browser_tabs", []string{"PWP_FAKE_TABS=- 0: (current) [](about:blank)"},
			&SavedState{StorageState: json.RawMessage(`{"cookies":[],"origins":[]}`)},
			[]string{"browser_run_code_unsafe", "browser_storage_state", "browser_tabs"}, nil, "", false},
		{"blank page from ### Page", []string{"PWP_FAKE_PAGE=- Page URL: about:blank"},
			&SavedState{StorageState: json.RawMessage(`{"cookies":[],"origins":[]}`)},
			[]string{"browser_run_code_unsafe", "browser_storage_state"}, nil, "", false},
		{"storage state fails", []string{"PWP_FAKE_FAIL=browser_storage_state"}, nil,
			[]string{"browser_run_code_unsafe", "browser_storage_state"}, &ToolError{Tool: "browser_storage_state", Message: "Error: boom from browser_storage_state"}, "", false},
		{"storage state over the limit", []string{"PWP_FAKE_STORAGE=big"}, nil,
			[]string{"browser_run_code_unsafe", "browser_storage_state"}, nil, "over the", false},
		{"storage state not JSON", []string{"PWP_FAKE_STORAGE={nope"}, nil,
			[]string{"browser_run_code_unsafe", "browser_storage_state"}, nil, "invalid JSON", false},
		{"tabs fail: the storage is kept", []string{"PWP_FAKE_FAIL=browser_tabs"},
			&SavedState{StorageState: json.RawMessage(`{"cookies":[],"origins":[]}`)},
			[]string{"browser_run_code_unsafe", "browser_storage_state", "browser_tabs"}, &ToolError{Tool: "browser_tabs", Message: "Error: boom from browser_tabs"}, "", false},
		{"tabs unreadable: the storage is kept", []string{"PWP_FAKE_TABS=what is this"},
			&SavedState{StorageState: json.RawMessage(`{"cookies":[],"origins":[]}`)},
			[]string{"browser_run_code_unsafe", "browser_storage_state", "browser_tabs"}, nil, "no tab", false},
	}
	for _, tt := range tests {
		// Without WithIndexedDB the program is never run: the same cases
		// the tools' way, but for those only the program answers.
		for _, indexedDB := range []bool{true, false} {
			wantTools := tt.wantTools
			if !indexedDB {
				if len(wantTools) < 2 {
					continue
				}
				wantTools = wantTools[1:]
			}
			t.Run(fmt.Sprintf("%s/indexedDB=%v", tt.name, indexedDB), func(t *testing.T) {
				w, calls := startStateFake(t, tt.env...)
				timeout := 10 * time.Second
				if tt.hang {
					timeout = 300 * time.Millisecond
				}
				ctx, cancel := context.WithTimeout(t.Context(), timeout)
				defer cancel()
				if indexedDB {
					ctx = WithIndexedDB(ctx)
				}
				got, err := SaveState(ctx, w)
				checkErr(t, err, tt.wantTool, tt.wantErr)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("SaveState (-want +got):\n%s", diff)
				}
				var tools []string
				for _, c := range calls() {
					tools = append(tools, c.Tool)
				}
				if diff := cmp.Diff(wantTools, tools); diff != "" {
					t.Errorf("tools called (-want +got):\n%s", diff)
				}
				wantEmptyDir(t, w.OutputDir())
			})
		}
	}
}

func TestRestoreStateFake(t *testing.T) {
	const storage = `{"cookies":[{"name":"sid","value":"abc"}],"origins":[]}`
	setCall := fakeCall{Tool: "browser_set_storage_state", Args: json.RawMessage(`{"filename":"<temp file>"}`), File: storage}
	navCall := func(u string) fakeCall {
		return fakeCall{Tool: "browser_navigate", Args: json.RawMessage(`{"url":"` + u + `"}`)}
	}
	tests := []struct {
		name     string
		env      []string
		state    *SavedState
		kill     bool          // SIGKILL the worker first
		timeout  time.Duration // 0: 10 s
		want     []fakeCall
		wantTool *ToolError
		wantErr  string
	}{
		{"storage then page", nil, &SavedState{URL: "https://a.example/x?y=1", StorageState: json.RawMessage(storage)},
			false, 0, []fakeCall{setCall, navCall("https://a.example/x?y=1")}, nil, ""},
		{"storage only", nil, &SavedState{StorageState: json.RawMessage(storage)},
			false, 0, []fakeCall{setCall}, nil, ""},
		{"page only", nil, &SavedState{URL: "http://127.0.0.1:9/"},
			false, 0, []fakeCall{navCall("http://127.0.0.1:9/")}, nil, ""},
		{"no navigation to a non-http URL", nil, &SavedState{URL: "data:text/html,hi", StorageState: json.RawMessage(storage)},
			false, 0, []fakeCall{setCall}, nil, ""},
		{"nil restores nothing", nil, nil, false, 0, nil, nil, ""},
		{"storage fails: no navigation", []string{"PWP_FAKE_FAIL=browser_set_storage_state"},
			&SavedState{URL: "https://a.example/", StorageState: json.RawMessage(storage)},
			false, 0, []fakeCall{setCall}, &ToolError{Tool: "browser_set_storage_state", Message: "Error: boom from browser_set_storage_state"}, ""},
		{"navigation fails", []string{"PWP_FAKE_FAIL=browser_navigate"},
			&SavedState{URL: "https://a.example/", StorageState: json.RawMessage(storage)},
			false, 0, []fakeCall{setCall, navCall("https://a.example/")}, &ToolError{Tool: "browser_navigate", Message: "Error: boom from browser_navigate"}, ""},
		{"invalid storage JSON is not sent", nil, &SavedState{URL: "https://a.example/", StorageState: json.RawMessage(`{"cookies":`)},
			false, 0, nil, nil, "not valid JSON"},
		{"worker never answers", []string{"PWP_FAKE_HANG=browser_set_storage_state"}, &SavedState{StorageState: json.RawMessage(storage)},
			false, 300 * time.Millisecond, []fakeCall{setCall}, nil, context.DeadlineExceeded.Error()},
		{"worker is dead", nil, &SavedState{StorageState: json.RawMessage(storage)},
			true, 0, nil, nil, worker.ErrWorkerExited.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, calls := startStateFake(t, tt.env...)
			if tt.kill {
				if err := syscall.Kill(w.PID(), syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				<-w.Done()
			}
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(t.Context(), timeout)
			defer cancel()
			err := RestoreState(ctx, w, tt.state)
			checkErr(t, err, tt.wantTool, tt.wantErr)
			got := calls()
			for i, c := range got {
				if c.Tool != "browser_set_storage_state" {
					continue
				}
				// The file has a random name: check where it was, then
				// compare the rest.
				var a struct{ Filename string }
				if err := json.Unmarshal(c.Args, &a); err != nil {
					t.Fatal(err)
				}
				if filepath.Dir(a.Filename) != w.OutputDir() || !strings.HasPrefix(filepath.Base(a.Filename), "restore-state-") {
					t.Errorf("storage state file %q: want a restore-state-* file in %s", a.Filename, w.OutputDir())
				}
				got[i].Args = setCall.Args
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			wantEmptyDir(t, w.OutputDir())
		})
	}
}
