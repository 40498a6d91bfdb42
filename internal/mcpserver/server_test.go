package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// fakeBackend records what the MCP surface asks of it.
type fakeBackend struct {
	mu      sync.Mutex
	created []string
	// owners of the created sessions: the MCP session that created each.
	owners   map[string]proxy.ClientID
	calls    []fakeCall
	closed   map[string]bool
	contents map[string]*proxy.Content
	// tools replaces the default catalogue (browser_navigate only).
	tools []proxy.Tool
	// sessions are listed and found besides the created ones.
	sessions []*proxy.Session
	console  map[string]string
	// contentReads counts get_content reads: the ones that move a cursor.
	contentReads int
	// searches are the queries of the get_content reads, in order.
	searches    []proxy.Query
	credentials []string
	downloads   map[string][]proxy.Download // by ref
	// callErr and callRes, when set, are what every Call answers;
	// validateErr what Validate does.
	callErr     error
	callRes     *proxy.CallResult
	validateErr error
	// createOpts are the options of each CreateSession (the zero value
	// when none were given); profiles are the login profiles a create may
	// name, and profilesMode is PROXY_PROFILES.
	createOpts   []proxy.BrowserOptions
	profiles     map[string]bool
	profilesMode string
}

type fakeCall struct {
	Session, Tool string
	Params        string
}

var navigateSchema = json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","description":"The URL"}},"required":["url"],"$schema":"http://json-schema.org/draft-07/schema#"}`)

// Tools lists, as the session manager does, the catalogue of the groups
// the request selects (else the defaults).
func (b *fakeBackend) Tools(ctx context.Context) ([]proxy.Tool, error) {
	up := b.upstreamTools()
	// The fake stands the proxy's own tools among upstream's, without the
	// programs that would run them: the catalogue lists those names with
	// their own groups when upstream's are selected, as it did before it
	// refused to offer upstream tools it has not reviewed.
	var upstream, own []proxy.Tool
	for _, t := range up {
		if o, ok := toolset.All().Lookup(t.Name); ok {
			t.Group = o.Group
			own = append(own, t)
			continue
		}
		upstream = append(upstream, t)
	}
	listed, err := catalog.New(func(context.Context) ([]proxy.Tool, error) { return upstream, nil }, catalog.Options{Profiles: b.profilesMode}).List(ctx)
	defaults, _ := toolset.Select(nil)
	if err != nil || !toolset.FromContext(ctx, defaults).Has(toolset.GroupUpstream) {
		return listed, err
	}
	return append(own, listed...), nil
}

func (b *fakeBackend) CreateSession(ctx context.Context, opts ...proxy.BrowserOptions) (*proxy.Session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var o proxy.BrowserOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Profile != "" && !b.profiles[o.Profile] {
		return nil, proxy.ProfileNotFound(o.Profile)
	}
	b.createOpts = append(b.createOpts, o)
	id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", len(b.created)+1)
	b.created = append(b.created, id)
	if b.owners == nil {
		b.owners = map[string]proxy.ClientID{}
	}
	owner, _ := proxy.ClientFrom(ctx)
	b.owners[id] = owner
	return &proxy.Session{ID: id, State: proxy.SessionActive, Owner: owner, Profile: o.Profile}, nil
}

func (b *fakeBackend) CloseSession(_ context.Context, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed == nil {
		b.closed = map[string]bool{}
	}
	b.closed[id] = true
	return nil
}

func (b *fakeBackend) ResumeSession(_ context.Context, id string) (*proxy.Session, bool, error) {
	return &proxy.Session{ID: id, State: proxy.SessionActive}, true, nil
}

// ListSessions lists every session, as for the operator, unless ctx names
// a client (as the end of an MCP session does): then that client's own.
func (b *fakeBackend) ListSessions(ctx context.Context) ([]*proxy.Session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*proxy.Session
	for _, id := range b.created {
		out = append(out, &proxy.Session{ID: id, State: proxy.SessionActive, Owner: b.owners[id]})
	}
	out = append(out, b.sessions...)
	if _, ok := proxy.ClientFrom(ctx); ok {
		out = slices.DeleteFunc(out, func(s *proxy.Session) bool { return !proxy.CanSee(ctx, s.Owner) })
	}
	return out, nil
}

func (b *fakeBackend) GetSession(ctx context.Context, id string) (*proxy.Session, error) {
	ss, _ := b.ListSessions(ctx)
	for _, s := range ss {
		if s.ID == id {
			return s, nil
		}
	}
	return nil, proxy.Errorf(proxy.ESESSIONMISSING, "no session %q", id)
}

func (b *fakeBackend) Peek(_ context.Context, ref string) (*proxy.Content, error) {
	if c, ok := b.contents[ref]; ok {
		return c, nil
	}
	return nil, proxy.Errorf(proxy.EREFMISSING, "no ref %s", ref)
}

// fakePlaceholder is what the fake vault answers for every value.
const fakePlaceholder = "<secret>cred_0123456789abcdef</secret>"

func (b *fakeBackend) AddCredential(_ context.Context, value string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(value) < 4 {
		return "", proxy.Errorf(proxy.EINVALID, "credential value is shorter than 4 bytes")
	}
	b.credentials = append(b.credentials, value)
	return fakePlaceholder, nil
}

func (b *fakeBackend) Call(_ context.Context, req proxy.CallRequest) (*proxy.CallResult, error) {
	sessionID, tool, params := req.SessionID, req.Tool, req.Params
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed[sessionID] {
		return nil, proxy.Errorf(proxy.ESESSIONCLOSED, "session %s is closed", sessionID)
	}
	b.calls = append(b.calls, fakeCall{sessionID, tool, string(params)})
	if b.callErr != nil {
		return nil, b.callErr
	}
	if b.callRes != nil {
		res := *b.callRes
		return &res, nil
	}
	return &proxy.CallResult{RefID: "ref-1", SessionID: sessionID, Status: proxy.StatusSuccess, Metadata: proxy.CallMetadata{Tool: tool}}, nil
}

func (b *fakeBackend) upstreamTools() []proxy.Tool {
	if b.tools == nil {
		return []proxy.Tool{{Name: "browser_navigate", Description: "Navigate", InputSchema: navigateSchema}}
	}
	return b.tools
}

// Validate refuses, as the session manager's catalogue does, a tool it
// does not offer (the fake's stand-ins for the proxy's own tools pass).
func (b *fakeBackend) Validate(ctx context.Context, tool string, _ json.RawMessage) error {
	if b.validateErr != nil {
		return b.validateErr
	}
	up := b.upstreamTools()
	if r, _ := catalog.ReviewOf(tool); slices.ContainsFunc(up, func(t proxy.Tool) bool { return t.Name == tool }) && r.Reach == catalog.InPage {
		return nil
	}
	if _, own := toolset.All().Lookup(tool); own {
		return nil
	}
	_, err := catalog.New(func(context.Context) ([]proxy.Tool, error) { return up, nil }, catalog.Options{Profiles: b.profilesMode}).Resolve(ctx, tool)
	return err
}

func (b *fakeBackend) Calls(context.Context, string) ([]proxy.Call, error) { return nil, nil }

func (b *fakeBackend) Events(context.Context, string) ([]proxy.SessionEvent, error) { return nil, nil }

func (b *fakeBackend) Download(_ context.Context, ref, name string) (*proxy.Download, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.downloads[ref] {
		if d.Name == name {
			return &d, nil
		}
	}
	if _, ok := b.contents[ref]; !ok {
		return nil, proxy.Errorf(proxy.EREFMISSING, "no ref %s", ref)
	}
	return nil, proxy.Errorf(proxy.EDOWNLOADMISSING, "no download %s", name)
}

func (b *fakeBackend) Images(ctx context.Context, ref string) ([]proxy.Image, error) {
	c, err := b.Peek(ctx, ref)
	if err != nil {
		return nil, err
	}
	return c.Images, nil
}

func (b *fakeBackend) Content(_ context.Context, ref string, q proxy.Query, _ bool) (*proxy.Content, error) {
	b.mu.Lock()
	b.contentReads++
	b.searches = append(b.searches, q)
	b.mu.Unlock()
	if c, ok := b.contents[ref]; ok {
		return c, nil
	}
	return nil, proxy.Errorf(proxy.EREFMISSING, "no ref %s", ref)
}

func (b *fakeBackend) Console(_ context.Context, ref, _ string) (string, error) {
	if text, ok := b.console[ref]; ok {
		return text, nil
	}
	if _, ok := b.contents[ref]; ok {
		return "", nil
	}
	return "", proxy.Errorf(proxy.EREFMISSING, "no ref %s", ref)
}

// connect serves s in-process and returns a client of it.
func connect(t *testing.T, s *Server) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(s.MCPServer())
	if err != nil {
		t.Fatal(err)
	}
	startAndInitialize(t, c)
	t.Cleanup(func() { c.Close() })
	return c
}

// startAndInitialize starts c and runs the MCP handshake at the protocol
// version the proxy serves.
func startAndInitialize(t *testing.T, c *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
}

func call(t *testing.T, c *client.Client, tool string, args map[string]any) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) == 0 {
		return "", res.IsError
	}
	return res.Content[0].(mcp.TextContent).Text, res.IsError
}

func TestDefaultSessionIsCreatedOnceAndReplacedWhenClosed(t *testing.T) {
	b := &fakeBackend{}
	s, err := New(context.Background(), b, b)
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)

	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if text, isErr := call(t, c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); isErr {
				t.Errorf("navigate: %s", text)
			}
		}()
	}
	wg.Wait()
	if len(b.created) != 1 {
		t.Fatalf("8 concurrent first calls created %d sessions, want 1", len(b.created))
	}
	for _, c := range b.calls {
		if c.Session != b.created[0] || c.Params != `{"url":"http://127.0.0.1/"}` {
			t.Errorf("call = %+v: want the default session and params without session_id", c)
		}
	}

	// An explicit session_id goes where it says and is not forwarded.
	call(t, c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/x", "session_id": "99999999-9999-4999-8999-999999999999"})
	if last := b.calls[len(b.calls)-1]; last.Session != "99999999-9999-4999-8999-999999999999" || last.Params != `{"url":"http://127.0.0.1/x"}` {
		t.Errorf("explicit session call = %+v", last)
	}

	// Closing the default makes the next call create a new one.
	if text, isErr := call(t, c, catalog.ToolCloseSession, map[string]any{"session_id": b.created[0]}); isErr {
		t.Fatal(text)
	}
	if text, isErr := call(t, c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); isErr {
		t.Fatalf("navigate after closing the default: %s", text)
	}
	if len(b.created) != 2 || b.calls[len(b.calls)-1].Session != b.created[1] {
		t.Errorf("after close: created %v, last call %+v", b.created, b.calls[len(b.calls)-1])
	}
}

func TestResumeSessionTool(t *testing.T) {
	fb := &fakeBackend{}
	s, err := New(context.Background(), fb, fb)
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	id := "11111111-1111-4111-8111-111111111111"
	text, isErr := call(t, c, catalog.ToolResumeSession, map[string]any{"session_id": id})
	if isErr {
		t.Fatal(text)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("resume_session answered %q: %v", text, err)
	}
	want := map[string]any{"session_id": id, "state": "active", "restored": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resume_session (-want +got):\n%s", diff)
	}
	if text, isErr := call(t, c, catalog.ToolResumeSession, map[string]any{}); !isErr {
		t.Errorf("resume_session without session_id succeeded: %s", text)
	}
}

// TestGetContentSearchOptions: search_for, regex and case_sensitive reach
// the backend as one query; an option that is not a boolean is refused
// before it does; no match is said in words.
func TestGetContentSearchOptions(t *testing.T) {
	b := &fakeBackend{contents: map[string]*proxy.Content{
		"r1": {Text: "- button \"Go\" [ref=e2]\n", Snapshot: true},
		"r2": {NoMatch: true, Snapshot: true},
	}}
	s, err := New(context.Background(), b, b)
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr string
		query   *proxy.Query
	}{
		{name: "plain", args: map[string]any{"ref_id": "r1", "search_for": "go"},
			want: "- button \"Go\" [ref=e2]\n", query: &proxy.Query{Text: "go", Outline: true}},
		{name: "regex, case-sensitive", args: map[string]any{"ref_id": "r1", "search_for": "G.", "regex": true, "case_sensitive": true},
			want: "- button \"Go\" [ref=e2]\n", query: &proxy.Query{Text: "G.", Regex: true, CaseSensitive: true, Outline: true}},
		{name: "no match", args: map[string]any{"ref_id": "r2", "search_for": "zz", "regex": false},
			want: `no match for "zz" in the page snapshot of ref r2`, query: &proxy.Query{Text: "zz", Outline: true}},
		{name: "regex not a boolean", args: map[string]any{"ref_id": "r1", "search_for": "x", "regex": "yes"}, wantErr: proxy.EINVALID},
		{name: "case_sensitive not a boolean", args: map[string]any{"ref_id": "r1", "search_for": "x", "case_sensitive": 1}, wantErr: proxy.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.mu.Lock()
			b.searches = nil
			b.mu.Unlock()
			if !getContentAnswers(t, c, tt.args, tt.want, tt.wantErr) {
				return
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if diff := cmp.Diff([]proxy.Query{*tt.query}, b.searches); diff != "" {
				t.Errorf("queries (-want +got):\n%s", diff)
			}
		})
	}
}

// getContentAnswers calls get_content and checks that it answers want, or
// the error body of code wantErr when that is set. It reports whether the
// call answered text as wanted.
func getContentAnswers(t *testing.T, c *client.Client, args map[string]any, want, wantErr string) bool {
	t.Helper()
	text, isErr := call(t, c, catalog.ToolGetContent, args)
	if wantErr != "" {
		if p, err := ParseAnswer(text); err != nil || !isErr || p.ErrorCode != wantErr {
			t.Errorf("get_content(%v) = %s (isError=%v), want %s", args, text, isErr, wantErr)
		}
		return false
	}
	if isErr || text != want {
		t.Errorf("get_content(%v) = %q (isError=%v), want %q", args, text, isErr, want)
		return false
	}
	return true
}

// get_content(ref_id, download) answers a download's text, the documented
// code when there is none, and refuses the options of a page read rather
// than ignore them; none of it reads the page or moves its cursor.
func TestGetContentDownload(t *testing.T) {
	b := &fakeBackend{contents: map[string]*proxy.Content{"r1": {Text: "page", Snapshot: true}},
		downloads: map[string][]proxy.Download{"r1": {
			{RefID: "r1", Name: "report.csv", MimeType: "text/csv", Size: 8, Stored: true, Data: []byte("a,b\n1,2\n")},
			{RefID: "r1", Name: "blob.bin", MimeType: "application/octet-stream", Size: 3, Stored: true, Data: []byte{0, 1, 2}},
		}}}
	s, err := New(context.Background(), b, b)
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr string
	}{
		{"text", map[string]any{"ref_id": "r1", "download": "report.csv"}, "a,b\n1,2\n", ""},
		{"binary", map[string]any{"ref_id": "r1", "download": "blob.bin"}, "", proxy.EINVALID},
		{"unknown name", map[string]any{"ref_id": "r1", "download": "x.csv"}, "", proxy.EDOWNLOADMISSING},
		{"unknown ref", map[string]any{"ref_id": "nope", "download": "report.csv"}, "", proxy.EREFMISSING},
		{"not a string", map[string]any{"ref_id": "r1", "download": 3}, "", proxy.EINVALID},
		{"with search_for", map[string]any{"ref_id": "r1", "download": "report.csv", "search_for": "a"}, "", proxy.EINVALID},
		{"with reset_cursor", map[string]any{"ref_id": "r1", "download": "report.csv", "reset_cursor": true}, "", proxy.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getContentAnswers(t, c, tt.args, tt.want, tt.wantErr)
		})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.contentReads != 0 {
		t.Errorf("%d page reads for downloads, want none", b.contentReads)
	}
}

// An empty console read is said in words: "" would read as a non-answer.
func TestConsoleSaysWhenThereIsNothing(t *testing.T) {
	b := &fakeBackend{contents: map[string]*proxy.Content{"quiet": {Text: "x"}, "loud": {Text: "y"}},
		console: map[string]string{"loud": "[ERROR] boom @ http://127.0.0.1/:3\n"}}
	s, err := New(context.Background(), b, b)
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"ref_id": "quiet"}, "no console messages for ref quiet"},
		{map[string]any{"ref_id": "quiet", "level": "error"}, "no console messages at level error or above for ref quiet"},
		{map[string]any{"ref_id": "loud", "level": "error"}, "[ERROR] boom @ http://127.0.0.1/:3\n"},
	}
	for _, tt := range tests {
		if got, isErr := call(t, c, catalog.ToolGetConsole, tt.args); got != tt.want || isErr {
			t.Errorf("get_console_content(%v) = %q (isError=%v), want %q", tt.args, got, isErr, tt.want)
		}
	}
}
