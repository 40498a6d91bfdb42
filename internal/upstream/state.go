package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// The tools SaveState and RestoreState use (and runCodeTool). The storage
// ones exist because workerArgs always adds --caps=storage; browser_tabs and
// browser_navigate are core tools.
const (
	toolStorageState    = "browser_storage_state"
	toolSetStorageState = "browser_set_storage_state"
	toolTabs            = "browser_tabs"
	toolNavigate        = "browser_navigate"
)

// SavedState is what a session needs to come back in a new worker: the page
// it was on and its storage (cookies, localStorage, IndexedDB). sessionStorage, open
// tabs other than the current one, history and in-page state are not kept:
// Playwright's storage state does not cover them.
type SavedState struct {
	// URL is the current tab's URL; "" for about:blank (nothing to go back to).
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
	// StorageState is Playwright's storage-state JSON (cookies, plus origins
	// with their localStorage and, when it could be read, IndexedDB),
	// compacted.
	StorageState json.RawMessage `json:"storage_state,omitempty"`
}

// ToolError is an upstream tool that ran and reported failure (isError)
// while state was saved or restored, with upstream's message. Callers can
// tell it from a dead worker (ErrWorkerExited) and decide: a navigation that
// fails after the storage came back still leaves a usable worker.
type ToolError struct {
	Tool    string
	Message string
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("upstream %s failed: %s", e.Tool, e.Message)
}

// stateWorker is what SaveState and RestoreState drive: a worker process
// (*Worker) or a session in a SessionHost (*HostedSession).
type stateWorker interface {
	CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error)
	OutputDir() string
	log() *slog.Logger
}

// toolCall is one internal call's outcome: its parsed result, what Ingest
// took from the files it linked, and why Ingest could not take more.
type toolCall struct {
	parsed    *answer.Parsed
	ingested  *answer.Ingested
	ingestErr error
}

// callTool calls an upstream tool for the proxy's own purposes and always
// ingests what the result links, so that no call made here leaves a file in
// the output dir, whatever happens next. A tool that ran and failed is a
// *ToolError, returned together with the call.
func callTool(ctx context.Context, w stateWorker, tool string, args any) (*toolCall, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("%s: encode arguments: %w", tool, err)
	}
	res, err := w.CallTool(ctx, tool, raw)
	if err != nil {
		return nil, err // already names the tool
	}
	p, err := answer.Parse(res)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	c := &toolCall{parsed: p}
	c.ingested, c.ingestErr = answer.Ingest(p, w.OutputDir(), time.Now())
	if p.IsError {
		return c, &ToolError{Tool: tool, Message: p.ErrorText}
	}
	return c, nil
}

// SaveState reads what RestoreState needs from a live worker: the storage
// (cookies, localStorage) and the current page, from browser_storage_state
// (saveStateByTool).
//
// With WithIndexedDB in ctx it first runs stateProgram with
// browser_run_code_unsafe, the proxy's own use of it (never offered to MCP
// clients for this): Playwright's storage state with IndexedDB, which
// browser_storage_state leaves out, and the page, in one call. It is
// asked for only where a login is kept (a profile saved or written back):
// upstream lets every run of that tool settle for half a second
// afterwards, which the saves behind every call must not cost. Upstream
// refuses that tool while a dialog is open (it handles no modal state):
// then the state comes without IndexedDB. A worker that died or a ctx
// that ended gets no second attempt.
//
// When only the page cannot be read, SaveState returns the storage it got
// together with the error: cookies without the URL are still worth keeping.
// A nil *SavedState means nothing was saved.
func SaveState(ctx context.Context, w stateWorker) (*SavedState, error) {
	if !indexedDBWanted(ctx) {
		return saveStateByTool(ctx, w)
	}
	s, err := saveStateByProgram(ctx, w, answer.MaxStateFileBytes)
	if err == nil {
		return s, nil
	}
	if ctx.Err() != nil || errors.Is(err, worker.ErrWorkerExited) {
		return nil, fmt.Errorf("save state: %w", err)
	}
	w.log().Debug("saving state with IndexedDB failed; saving it without", "err", err)
	return saveStateByTool(ctx, w)
}

type indexedDBKey struct{}

// WithIndexedDB asks SaveState, for the saves made with the returned
// context, to keep IndexedDB too.
func WithIndexedDB(ctx context.Context) context.Context {
	return context.WithValue(ctx, indexedDBKey{}, true)
}

func indexedDBWanted(ctx context.Context) bool {
	v, _ := ctx.Value(indexedDBKey{}).(bool)
	return v
}

// stateProgram reads the worker's storage state with IndexedDB, and the
// current page. The title is best effort: a page in the middle of a
// navigation may not answer, and the storage matters more. A state over
// the limit (%d, in characters) is not sent: it would come back in one
// line of the worker's stdout, and a line over the worker's limit costs
// the worker; the fallback then saves it without IndexedDB, within
// Ingest's limit for a state file.
const stateProgram = `async (page) => {
  const state = await page.context().storageState({ indexedDB: true });
  const size = JSON.stringify(state).length;
  if (size > %d) return { pwproxyTooLarge: size };
  let title = '';
  try { title = await page.title(); } catch {}
  return { pwproxyState: state, url: page.url(), title };
}`

// saveStateByProgram is SaveState's first way: stateProgram, for a state
// of at most limit characters.
func saveStateByProgram(ctx context.Context, w stateWorker, limit int) (*SavedState, error) {
	c, err := callTool(ctx, w, runCodeTool, map[string]string{"code": fmt.Sprintf(stateProgram, limit)})
	if err != nil {
		return nil, err
	}
	return parseStateProgram(c.parsed.ResultText)
}

// parseStateProgram reads stateProgram's answer out of the ### Result
// text, which upstream writes as the returned value's JSON. The answer
// holds cookie values: no error quotes it.
func parseStateProgram(result string) (*SavedState, error) {
	var v struct {
		State    json.RawMessage `json:"pwproxyState"`
		URL      string          `json:"url"`
		Title    string          `json:"title"`
		TooLarge int64           `json:"pwproxyTooLarge"`
	}
	i := strings.Index(result, "{")
	if i < 0 {
		return nil, fmt.Errorf("%s: no state in its answer (%d bytes)", runCodeTool, len(result))
	}
	if err := json.NewDecoder(strings.NewReader(result[i:])).Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: its answer (%d bytes) is not the state: %w", runCodeTool, len(result), err)
	}
	if v.TooLarge > 0 {
		return nil, fmt.Errorf("%s: the state with IndexedDB is %d characters, over the limit", runCodeTool, v.TooLarge)
	}
	if len(v.State) == 0 || v.State[0] != '{' {
		return nil, fmt.Errorf("%s: no state in its answer (%d bytes)", runCodeTool, len(result))
	}
	var storage bytes.Buffer
	if err := json.Compact(&storage, v.State); err != nil {
		return nil, fmt.Errorf("%s: state: %w", runCodeTool, err)
	}
	s := &SavedState{URL: v.URL, Title: v.Title, StorageState: storage.Bytes()}
	if s.URL == "about:blank" {
		s.URL, s.Title = "", ""
	}
	return s, nil
}

// saveStateByTool is SaveState's fallback.
//
// The storage comes from browser_storage_state, which writes
// storage-state-*.json into the output dir and links it; the file is read
// and removed. The page comes from that same response's ### Page section
// when upstream included it (only when the tab changed since the previous
// response), else from browser_tabs {"action":"list"}, whose result marks
// the current tab. browser_tabs is chosen over browser_evaluate
// `() => location.href`: it answers from Playwright's own view of the page,
// so it works while a dialog is open (evaluate refuses), skips evaluate's
// wait for the page to settle, and cannot be fooled by a page that replaces
// window.eval.
func saveStateByTool(ctx context.Context, w stateWorker) (*SavedState, error) {
	c, err := callTool(ctx, w, toolStorageState, struct{}{})
	if c != nil {
		// Ingest leaves a state file it could not read (over its size
		// limit, say); nothing will ever want it.
		if rmErr := answer.RemoveStateFiles(w.OutputDir(), c.parsed.LinkedFiles); rmErr != nil {
			w.log().Warn("remove storage state file", "err", rmErr)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("save state: %w", err)
	}
	if len(c.ingested.StorageState) == 0 {
		if c.ingestErr != nil {
			return nil, fmt.Errorf("save state: %s: %w", toolStorageState, c.ingestErr)
		}
		return nil, fmt.Errorf("save state: %s linked no storage state file: %q", toolStorageState, tail(c.parsed.Text, 512))
	}
	var storage bytes.Buffer
	if err := json.Compact(&storage, c.ingested.StorageState); err != nil {
		return nil, fmt.Errorf("save state: %s wrote invalid JSON: %w", toolStorageState, err)
	}
	s := &SavedState{StorageState: storage.Bytes()}

	pageURL, title := c.parsed.PageURL, c.parsed.PageTitle
	if pageURL == "" {
		if pageURL, title, err = currentPage(ctx, w); err != nil {
			return s, fmt.Errorf("save state: read the current page: %w", err)
		}
	}
	if pageURL == "about:blank" {
		pageURL, title = "", ""
	}
	s.URL, s.Title = pageURL, title
	return s, nil
}

// currentPage returns the URL and title of the worker's current tab. A
// worker without a page gets a blank one (browser_tabs list opens it), so a
// never-used worker reads as about:blank.
func currentPage(ctx context.Context, w stateWorker) (pageURL, title string, err error) {
	c, err := callTool(ctx, w, toolTabs, map[string]string{"action": "list"})
	if err != nil {
		return "", "", err
	}
	if p := c.parsed; p.PageURL != "" {
		return p.PageURL, p.PageTitle, nil
	}
	t, ok := parseCurrentTab(c.parsed.ResultText)
	if !ok {
		return "", "", fmt.Errorf("%s: no tab in %q", toolTabs, tail(c.parsed.ResultText, 512))
	}
	return t.url, t.title, nil
}

// tabLine is one tab of a browser_tabs result.
type tabLine struct {
	url, title string
	current    bool
}

// parseCurrentTab picks the tab marked current, else the first, as upstream
// itself does for its ### Page section.
func parseCurrentTab(result string) (tabLine, bool) {
	var first tabLine
	found := false
	for line := range strings.SplitSeq(result, "\n") {
		t, ok := parseTabLine(strings.TrimRight(line, "\r"))
		switch {
		case !ok:
		case t.current:
			return t, true
		case !found:
			first, found = t, true
		}
	}
	return first, found
}

// parseTabLine reads one line of a browser_tabs result, which upstream
// renders as "- 0: (current) [Title](https://example.com/) [crashed]" with
// " (current)" and " [crashed]" optional. Neither the title nor the URL
// is escaped, and either may contain "](", so the split is the rightmost
// "](" after which a URL with a scheme follows: a title rarely contains
// "](scheme:", a URL more rarely still.
func parseTabLine(line string) (tabLine, bool) {
	rest, ok := strings.CutPrefix(line, "- ")
	if !ok {
		return tabLine{}, false
	}
	colon := strings.IndexByte(rest, ':')
	if colon < 1 || strings.Trim(rest[:colon], "0123456789") != "" {
		return tabLine{}, false
	}
	rest = rest[colon+1:]
	var t tabLine
	rest, t.current = strings.CutPrefix(rest, " (current)")
	if rest, ok = strings.CutPrefix(rest, " ["); !ok {
		return tabLine{}, false
	}
	rest = strings.TrimSuffix(rest, " [crashed]")
	if rest, ok = strings.CutSuffix(rest, ")"); !ok {
		return tabLine{}, false
	}
	for i := strings.LastIndex(rest, "]("); i >= 0; i = strings.LastIndex(rest[:i], "](") {
		if u, err := url.Parse(rest[i+2:]); err == nil && u.Scheme != "" {
			t.title, t.url = rest[:i], rest[i+2:]
			return t, true
		}
	}
	return tabLine{}, false
}

// RestoreState gives a fresh worker a saved session back: first the storage
// (browser_set_storage_state, which clears the context's cookies and
// localStorage, then sets the saved ones), then, when the saved URL is
// http(s), the page (browser_navigate). Other URLs (data:, chrome-error:,
// file:) are not navigated to: they are either not reproducible or not the
// proxy's to open without the caller's policy check. A nil s restores
// nothing.
//
// The storage state goes through a file with a random name in the worker's
// output dir (an allowed root for upstream's file access, whatever the
// worker's working directory), passed by absolute path and removed on every
// path. A tool that fails is a *ToolError naming it; a navigation that fails
// comes after the storage was restored.
//
// The navigation bypasses the proxy's navigation policy: a caller whose
// policy may have changed since the state was saved should check s.URL
// first (and clear it when blocked).
func RestoreState(ctx context.Context, w stateWorker, s *SavedState) error {
	if s == nil {
		return nil
	}
	if len(s.StorageState) > 0 {
		if err := setStorageState(ctx, w, s.StorageState); err != nil {
			return fmt.Errorf("restore state: %w", err)
		}
	}
	target, ok := restorableURL(s.URL)
	if !ok {
		return nil
	}
	// Ingest in callTool removes the page snapshot navigate writes; its
	// console lines are dropped: the session's next call reports its own.
	if _, err := callTool(ctx, w, toolNavigate, map[string]string{"url": target}); err != nil {
		return fmt.Errorf("restore state: %w", err)
	}
	return nil
}

// setStorageState writes state to a file with a random name in the output
// dir, has the worker load it, and removes it.
func setStorageState(ctx context.Context, w stateWorker, state json.RawMessage) (err error) {
	if !json.Valid(state) {
		return errors.New("saved storage state is not valid JSON")
	}
	// CreateTemp: a random name, O_EXCL, mode 0600 (cookies are secrets).
	f, err := os.CreateTemp(w.OutputDir(), "restore-state-*.json")
	if err != nil {
		return fmt.Errorf("write storage state file: %w", err)
	}
	name := f.Name()
	defer func() {
		if rmErr := os.Remove(name); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove storage state file: %w", rmErr))
		}
	}()
	_, writeErr := f.Write(state)
	if err := errors.Join(writeErr, f.Close()); err != nil {
		return fmt.Errorf("write storage state file: %w", err)
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return fmt.Errorf("storage state file: %w", err)
	}
	_, err = callTool(ctx, w, toolSetStorageState, map[string]string{"filename": abs})
	return err
}

// restorableURL returns u when it is an absolute http(s) URL.
func restorableURL(u string) (string, bool) {
	if u == "" {
		return "", false
	}
	parsed, err := url.Parse(u)
	if err != nil || parsed.Host == "" {
		return "", false
	}
	switch strings.ToLower(parsed.Scheme) {
	case "http", "https":
		return u, true
	}
	return "", false
}

// SaveStateJSON is SaveState as the opaque JSON the session layer keeps.
func SaveStateJSON(ctx context.Context, w stateWorker) (json.RawMessage, error) {
	s, err := SaveState(ctx, w)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding saved state: %w", err)
	}
	return b, nil
}

// RestoreStateJSON is RestoreState from SaveStateJSON's JSON.
func RestoreStateJSON(ctx context.Context, w stateWorker, state json.RawMessage) error {
	var s SavedState
	if err := json.Unmarshal(state, &s); err != nil {
		return fmt.Errorf("decoding saved state: %w", err)
	}
	return RestoreState(ctx, w, &s)
}
