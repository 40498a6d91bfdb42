package toolset

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func TestSelect(t *testing.T) {
	tests := []struct {
		in      []string
		want    string
		wantErr string
	}{
		{in: nil, want: "upstream,session,content"},
		{in: []string{" "}, want: "upstream,session,content"},
		{in: []string{"all"}, want: "upstream,storage,session,content,navigation,interaction,extraction,state,network,elements"},
		{in: []string{"storage", "EXTRACTION"}, want: "storage,extraction"},
		{in: []string{"Navigation", " elements "}, want: "navigation,elements"},
		{in: []string{"upstream", "nope"}, wantErr: `unknown tool group "nope"`},
		{in: []string{"upstream", "unsafe"}, want: "upstream,unsafe"},
		{in: []string{"all", "UNSAFE"}, want: "upstream,storage,session,content,navigation,interaction,extraction,state,network,elements,unsafe"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, ","), func(t *testing.T) {
			s, err := Select(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Select(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("Select(%q) = %s, want %s", tt.in, got, tt.want)
			}
			for _, tool := range s.Tools() {
				if !s.Has(tool.Group) {
					t.Errorf("tool %s of unselected group %s listed", tool.Name, tool.Group)
				}
			}
		})
	}
}

// A client's choice: a list naming no group leaves the server's selection
// in force (not the defaults); an unknown group is an error naming every
// group.
func TestChoice(t *testing.T) {
	tests := []struct {
		in      string
		want    string // "" with ok false
		wantErr string
	}{
		{in: ""},
		{in: " , ,"},
		{in: "all", want: "upstream,storage,session,content,navigation,interaction,extraction,state,network,elements"},
		{in: "storage,extraction", want: "storage,extraction"},
		{in: " session ", want: "session"},
		{in: "storage,cookies", wantErr: `unknown tool group "cookies" (groups: upstream, storage, session, content, navigation, interaction, extraction, state, network, elements, unsafe, or all)`},
		{in: "unsafe", want: "unsafe"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, ok, err := Choice(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Choice(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok != (tt.want != "") || s.String() != tt.want {
				t.Errorf("Choice(%q) = %q, %v; want %q", tt.in, s.String(), ok, tt.want)
			}
		})
	}
}

// A request's own choice replaces the server's; without one, or with an
// empty one, the server's applies. A client has unsafe only when the
// server enabled it.
func TestFromContext(t *testing.T) {
	sel := func(names ...string) Selection {
		s, err := Select(names)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	choose := func(s Selection) context.Context { return WithSelection(context.Background(), s) }
	tests := []struct {
		name   string
		server Selection
		ctx    context.Context
		want   string
	}{
		{"no choice", sel("upstream"), context.Background(), "upstream"},
		{"own choice", sel("upstream"), choose(sel("storage")), "storage"},
		{"zero choice", sel("upstream"), choose(Selection{}), "upstream"},
		{"unsafe the server did not enable", sel("upstream"), choose(sel("upstream", "unsafe")), "upstream"},
		{"only unsafe the server did not enable", sel("upstream"), choose(sel("unsafe")), ""},
		{"unsafe the server enabled", sel("upstream", "unsafe"), choose(sel("storage", "unsafe")), "storage,unsafe"},
		{"server's unsafe, client's choice without it", sel("upstream", "unsafe"), choose(sel("all")), "upstream,storage,session,content,navigation,interaction,extraction,state,network,elements"},
		{"server's unsafe, no choice", sel("upstream", "unsafe"), context.Background(), "upstream,unsafe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromContext(tt.ctx, tt.server)
			if got.String() != tt.want {
				t.Errorf("FromContext = %s, want %s", got, tt.want)
			}
			if got.Empty() {
				t.Error("FromContext is the zero Selection: it would read as no choice")
			}
			for _, tool := range got.Tools() {
				if !got.Has(tool.Group) {
					t.Errorf("tool %s of unselected group %s", tool.Name, tool.Group)
				}
			}
		})
	}
}

// A surface serving many clients lists every group one may choose: unsafe
// only on a server that enabled it.
func TestAllowedBy(t *testing.T) {
	tests := []struct {
		server []string
		want   string
	}{
		{nil, "upstream,storage,session,content,navigation,interaction,extraction,state,network,elements"},
		{[]string{"all"}, "upstream,storage,session,content,navigation,interaction,extraction,state,network,elements"},
		{[]string{"session", "unsafe"}, "upstream,storage,session,content,navigation,interaction,extraction,state,network,elements,unsafe"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.server, ","), func(t *testing.T) {
			server, err := Select(tt.server)
			if err != nil {
				t.Fatal(err)
			}
			if got := AllowedBy(server).String(); got != tt.want {
				t.Errorf("AllowedBy(%s) = %s, want %s", server, got, tt.want)
			}
		})
	}
}

// Upstream's cookie and web-storage tools are the storage group, its
// future ones of those families too; every other upstream tool is upstream.
func TestUpstreamGroup(t *testing.T) {
	tests := map[string]string{
		"browser_cookie_list":           GroupStorage,
		"browser_cookie_set":            GroupStorage,
		"browser_localstorage_get":      GroupStorage,
		"browser_sessionstorage_clear":  GroupStorage,
		"browser_storage_state":         GroupStorage,
		"browser_set_storage_state":     GroupStorage,
		"browser_cookie_export_someday": GroupStorage,
		"browser_click":                 GroupUpstream,
		"browser_find":                  GroupUpstream,
		"browser_storage":               GroupUpstream,
		"browser_pdf_save":              GroupUpstream,
	}
	for name, want := range tests {
		if got := UpstreamGroup(name); got != want {
			t.Errorf("UpstreamGroup(%s) = %s, want %s", name, got, want)
		}
	}
}

// The list, group by group: every tool is defined, in its group.
func TestEveryToolIsDefined(t *testing.T) {
	want := map[string][]string{
		GroupNavigation:  {"navigate", "go_back", "go_forward", "reload", "wait_for_load"},
		GroupInteraction: {"click", "type", "fill", "select", "check", "uncheck", "hover", "scroll", "drag_and_drop", "upload_file", "press"},
		GroupExtraction:  {"get_text", "get_all_text", "get_attribute", "get_value", "extract_table", "extract_links", "get_page_metadata", "screenshot_element"},
		GroupState:       {"get_cookies", "set_cookies", "save_state", "restore_state"},
		GroupNetwork:     {"block_resource", "mock_response", "set_offline", "set_throttling", "get_request_log"},
		GroupElements:    {"find_element", "find_elements", "element_exists", "is_visible", "is_enabled", "wait_for_selector"},
	}
	all, err := Select([]string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, tool := range all.Tools() {
		got[tool.Group] = append(got[tool.Group], tool.Name)
		var s map[string]any
		if err := json.Unmarshal(tool.InputSchema, &s); err != nil || s["type"] != "object" {
			t.Errorf("%s: input schema %s is not an object schema (%v)", tool.Name, tool.InputSchema, err)
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		if strings.HasPrefix(tool.Name, "browser_") {
			t.Errorf("%s would shadow an upstream tool name", tool.Name)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools by group (-want +got):\n%s", diff)
	}
}

// Hostile arguments change only the base64 blob: the code around it is the
// same bytes whatever the caller sends.
func TestBuildEncodesArgumentsAsData(t *testing.T) {
	all, _ := Select([]string{"all"})
	click, _ := all.Lookup("click")
	hostile := []string{
		`#a`,
		`a[title="x"]`,
		"a'); globalThis.pwned = 1; ('",
		"`${globalThis.pwned = 1}`",
		`"]}); process.exit(1); //`,
		"\u2028\u2029</script>",
		`\'); require("child_process")`,
	}
	var skeleton string
	for _, sel := range hostile {
		params, _ := json.Marshal(map[string]string{"selector": sel})
		p, err := click.Build(params)
		if err != nil {
			t.Fatal(err)
		}
		var a struct{ Code string }
		if err := json.Unmarshal(p.Args, &a); err != nil {
			t.Fatal(err)
		}
		if strings.Trim(p.Blob, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != "" {
			t.Fatalf("blob %q is not plain base64", p.Blob)
		}
		decoded, _ := base64.StdEncoding.DecodeString(p.Blob)
		if string(decoded) != string(params) {
			t.Errorf("blob decodes to %s, want %s", decoded, params)
		}
		rest := strings.Replace(a.Code, p.Blob, "BLOB", 1)
		if skeleton == "" {
			skeleton = rest
		} else if rest != skeleton {
			t.Errorf("selector %q changed the code around the blob", sel)
		}
		if strings.Contains(a.Code, sel) && sel != "#a" {
			t.Errorf("selector %q appears verbatim in the code", sel)
		}
	}
}

// Every program must be a function expression node can compile, the way
// upstream compiles it: vm.runInContext("(" + code + ")").
func TestProgramsCompile(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	all, _ := Select([]string{"all"})
	var codes []string
	for _, tool := range all.Tools() {
		p, err := tool.Build(json.RawMessage(`{"selector":"#x"}`))
		if err != nil {
			t.Fatal(err)
		}
		var a struct{ Code string }
		_ = json.Unmarshal(p.Args, &a)
		codes = append(codes, a.Code)
	}
	dir := t.TempDir()
	data, _ := json.Marshal(codes)
	if err := os.WriteFile(filepath.Join(dir, "codes.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	script := `const vm = require('vm'); const codes = require(process.argv[1]);
let bad = 0;
codes.forEach((c, i) => { try { const f = vm.runInNewContext('(' + c + ')', {}); if (typeof f !== 'function') throw new Error('not a function'); } catch (e) { bad++; console.log(i + ': ' + e.message); } });
process.exit(bad ? 1 : 0);`
	out, err := exec.Command(node, "-e", script, filepath.Join(dir, "codes.json")).CombinedOutput()
	if err != nil {
		names := []string{}
		for _, tool := range all.Tools() {
			names = append(names, tool.Name)
		}
		t.Fatalf("programs do not compile: %v\n%s\n(tools in order: %v)", err, out, names)
	}
}

func TestInterpret(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	tests := []struct {
		name          string
		result, error string
		wantValue     string
		wantCode      string
		wantImage     string
	}{
		{name: "value", result: `{"pwproxy":1,"ok":true,"value":{"url":"http://x/","status":200}}`, wantValue: `{"url":"http://x/","status":200}`},
		{name: "undefined value", result: `{"pwproxy":1,"ok":true}`, wantValue: `null`},
		{name: "coded failure", result: `{"pwproxy":1,"ok":false,"error":{"code":"ELEMENT_NOT_FOUND","message":"no element"}}`, wantCode: proxy.EELEMENTMISSING},
		{name: "unknown code", result: `{"pwproxy":1,"ok":false,"error":{"code":"WHAT","message":"?"}}`, wantCode: proxy.EBROWSER},
		{name: "not an envelope", result: `"hello"`, wantCode: proxy.EBROWSER},
		{name: "upstream error", error: "page.goto: net::ERR_INTERNET_DISCONNECTED at http://x/", wantCode: proxy.ENAVIGATION},
		{name: "image", result: `{"pwproxy":1,"ok":true,"value":{"success":true,"image":{"mime_type":"image/png","data":"` + png + `"}}}`,
			wantValue: `{"image":{"bytes":9,"mime_type":"image/png"},"success":true}`, wantImage: "\x89PNG fake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Interpret(tt.result, tt.error)
			if tt.wantCode != "" {
				if o.Err == nil || o.Err.Code != tt.wantCode {
					t.Fatalf("Interpret = %+v, want error %s", o, tt.wantCode)
				}
				if o.Err.Suggestion == "" {
					t.Errorf("error %s has no suggestion", o.Err.Code)
				}
				return
			}
			if o.Err != nil {
				t.Fatalf("unexpected error %v", o.Err)
			}
			if string(o.Value) != tt.wantValue {
				t.Errorf("value = %s, want %s", o.Value, tt.wantValue)
			}
			if tt.wantImage != "" && (o.Image == nil || string(o.Image.Data) != tt.wantImage) {
				t.Errorf("image = %+v", o.Image)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := map[string]string{
		"page.goto: net::ERR_NAME_NOT_RESOLVED at http://nowhere.invalid/":                   proxy.ENAVIGATION,
		`Error: Ref e42 not found in the current page snapshot. Try capturing new snapshot.`: proxy.EELEMENTMISSING,
		"locator.click: Timeout 5000ms exceeded.\nCall log:\n  - element is not visible":     proxy.ENOTINTERACTIVE,
		"locator.count: Error: Failed to parse selector: div[":                               proxy.EINVALIDSELECTOR,
		"SyntaxError: Failed to execute 'querySelectorAll': 'div[' is not a valid selector.": proxy.EINVALIDSELECTOR,
		"page.waitForLoadState: Timeout 100ms exceeded.":                                     proxy.ETIMEOUT,
		// What upstream's own tools answer when their target is a selector.
		`Error: "#nope" does not match any elements.`: proxy.EELEMENTMISSING,
		`Error: browserBackend.callTool: Unexpected token "" while parsing css selector "". Did you mean to CSS.escape it?`: proxy.EINVALIDSELECTOR,
		"Error: Unexpected end of selector while parsing selector `text=`":                                                  proxy.EINVALIDSELECTOR,
		"SyntaxError: Unexpected token ')'":                                                                                 proxy.EBROWSER,
		"Execution context was destroyed, most likely because of a navigation":                                              proxy.EBROWSER,
		"Error: Unknown key: \"Foo\"":                                                                                       proxy.EBROWSER,
	}
	for text, want := range tests {
		if got := Classify(text); got != want {
			t.Errorf("Classify(%q) = %s, want %s", text, got, want)
		}
	}
}
