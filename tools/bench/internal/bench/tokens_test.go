package bench

import (
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
)

var bins e2etest.Binaries

func TestMain(m *testing.M) { e2etest.Main(m, bins.Remove) }

// Answers as @playwright/mcp 0.0.83 and the proxy gave them on the tokens
// pages: browser_find's matches with their context, a search's ancestors,
// a subtree, a small page inline.
const (
	findShop = `### Result
Found 1 match for "Product 417":

- generic [active] [ref=e1]:
  - main [ref=e5]:
    - list [ref=e7]:
      - listitem [ref=e1668]:
        ...
        - paragraph [ref=e1670]: €95.48
        - button "Add to cart" [ref=e1671]
      - listitem [ref=e1672]:
        - heading "Product 417" [level=3] [ref=e1673]
        - paragraph [ref=e1674]: €132.01
        - button "Add to cart" [ref=e1675]
      - listitem [ref=e1676]:`
	searchShop = `- generic [active] [ref=e1]:
  - main [ref=e5]:
    - list [ref=e7]:
      - listitem [ref=e1672]:
        - heading "Product 417" [level=3] [ref=e1673]
`
	findOrders = `### Result
Found 1 match for "ORD-10277":

- generic [active] [ref=f2e1]:
  - table [ref=f2e5]:
    - rowgroup [ref=f2e14]:
      - row [ref=f2e1665]:
        ...
        - cell "€144.28" [ref=f2e1669]
        - cell "Delivered" [ref=f2e1670]
      - row [ref=f2e1671]:
        - cell "ORD-10277" [ref=f2e1672]
        - cell "2026-05-20" [ref=f2e1673]
        - cell "Barbara Liskov" [ref=f2e1674]
        - cell "€181.81" [ref=f2e1675]`
	searchOrders = `- generic [active] [ref=f2e1]:
  - table [ref=f2e5]:
    - rowgroup [ref=f2e14]:
      - row [ref=f2e1671]:
        - cell "ORD-10277" [ref=f2e1672]
`
	parcelYAML = `- generic [active] [ref=f6e1]:
  - heading "Parcel status" [level=1] [ref=f6e2]
  - main [ref=f6e3]:
    - paragraph [ref=f6e4]: Order ORD-10277, shipped 2026-03-09.
    - generic [ref=f6e5]:
      - term [ref=f6e6]: Carrier
      - definition [ref=f6e7]: Northwind Express
      - term [ref=f6e8]: Tracking number
      - definition [ref=f6e9]: NW-48213-7730
      - term [ref=f6e12]: Last scan
    - paragraph [ref=f6e14]:
      - link "Back to your account" [ref=f6e15] [cursor=pointer]:
        - /url: account`
	shopHead = `- generic [active] [ref=e1]:
  - heading "Shop" [level=1] [ref=e2]
  - banner [ref=e3]:
    - status [ref=e4]: "Cart: 0 items"
  - main [ref=e5]:`
	consoleAnswer = `### Result
Total messages: 20 (Errors: 3, Warnings: 3)
Returning 3 messages for level "error"

[ERROR] Failed to load /api/widgets: 503 Service Unavailable @ http://127.0.0.1:43355/t/r1/dashboard:7
[ERROR] TypeError: Cannot read properties of undefined (reading 'total') at renderSummary (dashboard.js:88) @ http://127.0.0.1:43355/t/r1/dashboard:13
[ERROR] Unhandled promise rejection: QuotaExceededError: localStorage is full @ http://127.0.0.1:43355/t/r1/dashboard:19`
)

func TestSnapshotReading(t *testing.T) {
	type result struct {
		Val string
		OK  bool
	}
	ok := func(v string, err error) result { return result{v, err == nil} }
	b := func(v string, found bool) result { return result{v, found} }
	tests := []struct {
		name string
		got  result
		want result
	}{
		{"button beside a product in find's context", b(ButtonNear(findShop, "Product 417")), result{"e1675", true}},
		{"no button in a search of ancestors only", b(ButtonNear(searchShop, "Product 417")), result{"", false}},
		{"row total beside the id, not the row above's", ok(rowTotal(findOrders, "ORD-10277")), result{"€181.81", true}},
		{"no total in ancestors only", ok(rowTotal(searchOrders, "ORD-10277")), result{"", false}},
		{"definition after its term", ok(valueAfter(parcelYAML, "Tracking number")), result{"NW-48213-7730", true}},
		{"a term with no definition after it", ok(valueAfter(parcelYAML, "Last scan")), result{"", false}},
		{"absent label", ok(valueAfter(parcelYAML, "Weight")), result{"", false}},
		{"link by a word of its name", b(refByNameContains(parcelYAML, "link", "ACCOUNT")), result{"f6e15", true}},
		{"quoted text of a status", b(firstRef(shopHead, "status")), result{"e4", true}},
		{"passphrase in a paragraph", ok(passphrase("- paragraph [ref=f3e147]: Want. " + ArticleTarget + " States south.")), result{ArticleCode, true}},
		{"no passphrase", ok(passphrase("- paragraph: nothing here")), result{"", false}},
		{"console errors without their source", ok(consoleErrors(consoleAnswer)), result{strings.Join(ConsoleErrors, "\n"), true}},
		{"no console error", ok(consoleErrors("no console messages (at level error or above) for ref R")), result{"", false}},
		{"confirmation seen", ok(confirmed(`~ status [ref=e4]: "Cart: 1 item" (was "Cart: 0 items")`, shopConfirm)), result{shopConfirm, true}},
		{"confirmation not seen", ok(confirmed(`status [ref=e4]: "Cart: 0 items"`, shopConfirm)), result{"", false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.got
			if !got.OK {
				got.Val = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseNodes(t *testing.T) {
	got := parseNodes(shopHead + "\n    - text: Username\n  - /url: parcel\n    ...\n")
	want := []snapNode{
		{indent: 0, role: "generic", ref: "e1"},
		{indent: 2, role: "heading", name: "Shop", hasName: true, ref: "e2"},
		{indent: 2, role: "banner", ref: "e3"},
		{indent: 4, role: "status", ref: "e4", text: "Cart: 0 items"},
		{indent: 2, role: "main", ref: "e5"},
		{indent: 4, role: "text", text: "Username"},
		{indent: 2, role: "/url", text: "parcel"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(snapNode{})); diff != "" {
		t.Errorf("parseNodes (-want +got):\n%s", diff)
	}
}

func TestInlineSnapshot(t *testing.T) {
	tests := []struct {
		name, answer, yaml string
		inline             bool
	}{
		{"small new page", "ref_id: R1\npage: Sign in http://h/t/x/signin\nsnapshot:\n- heading \"Sign in\" [ref=e2]", "- heading \"Sign in\" [ref=e2]", true},
		{"large new page", "ref_id: R1\npage: Shop http://h/t/x/shop\nsnapshot: 100.7 KB, read with get_content", "", false},
		{"changes", "ref_id: R1\nchanges: +1 -1 ~1\n~ status [ref=e4]: \"Cart: 1 item\" (was \"Cart: 0 items\")", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := proxyAnswer(tt.answer)
			if err != nil {
				t.Fatal(err)
			}
			yaml, inline := inlineSnapshot(p)
			if yaml != tt.yaml || inline != tt.inline || p.RefID != "R1" {
				t.Errorf("inlineSnapshot = %q, %v (ref %q); want %q, %v", yaml, inline, p.RefID, tt.yaml, tt.inline)
			}
		})
	}
	if _, err := proxyAnswer("error: ELEMENT_NOT_FOUND (retryable): no such ref\nref_id: R2"); err == nil {
		t.Error("an error answer parsed as a success")
	}
}

func TestSelectTasks(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		want    []string
		wantErr string
	}{
		{"all by default", nil, []string{"shop", "orders", "contact", "article", "link", "console", "evaluate", "tabs"}, ""},
		{"in the order given", []string{"link", "shop"}, []string{"link", "shop"}, ""},
		{"unknown", []string{"shop", "nope"}, nil, `unknown task "nope"`},
		{"twice", []string{"shop", "shop"}, nil, `task "shop" given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := selectTasks(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, task := range got {
				names = append(names, task.name)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTokensJudge(t *testing.T) {
	side := func(name string, tools, list int, tasks ...TokensTaskRun) TokensSide {
		s := TokensSide{Side: name, Tools: tools, ToolsListBytes: list, Tasks: tasks}
		for _, tr := range tasks {
			s.Bytes += tr.Bytes
			s.Calls += tr.Calls
		}
		return s
	}
	task := func(name string, bytes, calls int) TokensTaskRun {
		return TokensTaskRun{Task: name, Bytes: bytes, Calls: calls, Verified: true}
	}
	r := &TokensResult{
		TargetPct: 50,
		Tasks:     []TokensTaskInfo{{Name: "a"}, {Name: "b"}},
		Sides: []TokensSide{
			side(SideSnapshot, 25, 20000, task("a", 100000, 3), task("b", 5000, 2)),
			side(SideFind, 25, 20000, task("a", 1000, 3), task("b", 1000, 2)),
			side(SideProxy, 30, 19000, task("a", 400, 3), task("b", 600, 3)),
		},
	}
	want := []TokensVerdict{
		{"proxy bytes ≤ 50 % of plain+find, suite", "50.0 % (1000 vs 2000 B)", true},
		{"proxy bytes ≤ 50 % of plain+find, a", "40.0 % (400 vs 1000 B)", true},
		{"proxy bytes ≤ 50 % of plain+find, b", "60.0 % (600 vs 1000 B)", false},
		{"proxy calls ≤ plain+find's, a", "3 vs 3", true},
		{"proxy calls ≤ plain+find's, b", "3 vs 2", false},
		{"default tools/list bytes ≤ plain's", "19000 B (30 tools) vs 20000 B (25 tools)", true},
	}
	if diff := cmp.Diff(want, r.judge()); diff != "" {
		t.Errorf("judge (-want +got):\n%s", diff)
	}
	var text strings.Builder
	r.Verdicts = r.judge()
	r.writeText(&text)
	for _, s := range []string{"suite", "60.0 %", "NOT MET", "19000", "all sides"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("the text report lacks %q:\n%s", s, text.String())
		}
	}

	charts, err := TokensCharts(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 1 || charts[0].Name != "tokens.svg" {
		t.Fatalf("charts = %v", charts)
	}
	svg := string(charts[0].SVG)
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := dec.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("the SVG is not well-formed XML: %v", err)
			}
			break
		}
	}
	for _, s := range []string{`data-name="plain+find"`, `data-name="proxy"`, ">suite<", ">tools/list<", "proxy, b: 600", "plain+snapshot, a: 100000", ">100k<", "every task verified on every side"} {
		if !strings.Contains(svg, s) {
			t.Errorf("the chart lacks %q", s)
		}
	}
	if _, err := TokensCharts(&TokensResult{}); err == nil {
		t.Error("a report without a tokens run drew a chart")
	}
}

// TestTokenPages: the pages are deterministic, sized as the suite says,
// and the target facts are on them once.
func TestTokenPages(t *testing.T) {
	article := articlePage()
	if article != articlePage() {
		t.Fatal("the article differs between two renderings")
	}
	if n := len(article); n < 100<<10 || n > 125<<10 {
		t.Errorf("the article is %d bytes, want about 110 KB", n)
	}
	if n := strings.Count(strings.ToLower(article), ArticleKeyword); n != 1 {
		t.Errorf("%q occurs %d times in the article, want once", ArticleKeyword, n)
	}
	shop := shopPage()
	if n := strings.Count(shop, ">Add to cart</button>"); n != ShopProducts {
		t.Errorf("%d Add to cart buttons, want %d", n, ShopProducts)
	}
	if n := strings.Count(shop, ">"+shopProduct+"<"); n != 1 {
		t.Errorf("%q is named %d times", shopProduct, n)
	}
	orders := ordersPage()
	if n := strings.Count(orders, "<tr><td>ORD-"); n != OrderRows {
		t.Errorf("%d order rows, want %d", n, OrderRows)
	}
	if o := OrderAt(OrderTarget); !strings.Contains(orders, "<td>"+o.ID+"</td><td>"+o.Date+"</td><td>"+o.Customer+"</td><td>"+o.Total+"</td>") {
		t.Errorf("the orders page lacks the row %+v", o)
	}
	if n := strings.Count(dashboardPage(), "console.error("); n != len(ConsoleErrors) {
		t.Errorf("%d console.error calls, want %d", n, len(ConsoleErrors))
	}
}

// TestTokenSite drives the site's pages over HTTP as a browser would and
// checks what it records per run.
func TestTokenSite(t *testing.T) {
	site, err := StartSite()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := c.Get(site.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	post := func(path string, form url.Values) (int, string) {
		t.Helper()
		resp, err := c.PostForm(site.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if code, _ := get("/t/Bad!/shop"); code != http.StatusNotFound && code != http.StatusBadRequest {
		t.Errorf("a bad run id answered %d", code)
	}
	if code, body := get("/t/r1/shop"); code != 200 || !strings.Contains(body, "Cart: 0 items") {
		t.Errorf("shop: %d", code)
	}
	if code, _ := post("/t/r1/cart?id=417", nil); code != http.StatusNoContent {
		t.Errorf("cart POST: %d", code)
	}
	if code, _ := post("/t/r1/cart?id=9999", nil); code != http.StatusBadRequest {
		t.Errorf("cart POST of an unknown product: %d", code)
	}
	// Signed out, the orders page sends the client to sign in.
	if _, body := get("/t/r1/orders"); !strings.Contains(body, "<title>Sign in</title>") {
		t.Error("the orders page was served without a sign-in")
	}
	if code, body := post("/t/r1/signin", url.Values{"username": {"ada"}, "password": {"wrong"}}); code != http.StatusUnauthorized || !strings.Contains(body, "Wrong user name") {
		t.Errorf("a wrong password answered %d", code)
	}
	if code, body := post("/t/r1/signin", url.Values{"username": {SignInUser}, "password": {SignInPassword}}); code != 200 || !strings.Contains(body, OrderAt(OrderTarget).ID) {
		t.Errorf("sign-in then orders: %d", code)
	}
	// The cookie is the run's: another run is still signed out.
	if _, body := get("/t/r2/orders"); !strings.Contains(body, "<title>Sign in</title>") {
		t.Error("run r2 is signed in by r1's sign-in")
	}
	form := url.Values{}
	for k, v := range ContactValues {
		form.Set(k, v)
	}
	if code, body := post("/t/r1/contact", form); code != 200 || !strings.Contains(body, "Ada Lovelace") || !strings.Contains(body, contactConfirm) {
		t.Errorf("contact: %d %s", code, body)
	}
	get("/t/r1/parcel")

	rec := site.Record("r1")
	want := RunRecord{
		Cart: []int{417}, SignIns: []string{"ada", "ada"}, SignedIn: true, OrdersServed: 1, Contact: form,
		Fetched: map[string]int{"shop": 1, "orders": 2, "signin": 1, "parcel": 1},
	}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("the record of r1 (-want +got):\n%s", diff)
	}
	if r2 := site.Record("r2"); r2.SignedIn || len(r2.Cart) != 0 || r2.Fetched["signin"] != 1 {
		t.Errorf("the record of r2: %+v", r2)
	}
	for _, task := range tokensSuite() {
		if task.name == "shop" {
			if _, err := task.verify(context.Background(), site, "r1", shopConfirm); err != nil {
				t.Errorf("shop verification of r1: %v", err)
			}
		}
		if task.name == "contact" {
			if _, err := task.verify(context.Background(), site, "r1", contactConfirm); err != nil {
				t.Errorf("contact verification of r1: %v", err)
			}
			if _, err := task.verify(context.Background(), site, "r2", contactConfirm); err == nil {
				t.Error("contact verified for r2, which submitted nothing")
			}
		}
	}
}

// TestTokensE2E runs two tasks of the suite on the three sides with real
// @playwright/mcp, Chromium, proxy-server and mcp-bridge: every task
// verified, and the counts add up.
func TestTokensE2E(t *testing.T) {
	e2etest.RequireBrowser(t)
	server, bridge := bins.Build(t)
	root := e2etest.ProjectRoot(t)
	site, err := StartSite()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	ctx := context.Background()
	res, err := RunTokens(ctx, slog.New(slog.DiscardHandler), site, TokensConfig{
		StdioCommon: StdioCommon{Server: ServerConfig{Binary: server, Dir: root}, Root: root, Bridge: bridge}, Tasks: []string{"shop", "link"},
	})
	if err != nil {
		t.Fatalf("RunTokens: %v", err)
	}
	var sides []string
	for _, s := range res.Sides {
		sides = append(sides, s.Side)
		if s.Error != "" || s.Tools == 0 || s.ToolsListBytes <= 0 || len(s.Tasks) != 2 {
			t.Errorf("%s: error %q, %d tools, tools/list %d B, %d tasks", s.Side, s.Error, s.Tools, s.ToolsListBytes, len(s.Tasks))
		}
		var bytes, calls int
		for _, tr := range s.Tasks {
			if !tr.Verified || tr.Error != "" {
				t.Errorf("%s / %s: not verified: %s %s", s.Side, tr.Task, tr.Error, tr.Verification)
			}
			var sum int
			for _, st := range tr.Steps {
				if st.Bytes <= 0 {
					t.Errorf("%s / %s: %s counted %d bytes", s.Side, tr.Task, st.Tool, st.Bytes)
				}
				sum += st.Bytes
			}
			if tr.Bytes != sum || tr.Calls != len(tr.Steps) || tr.Calls < 2 {
				t.Errorf("%s / %s: %d bytes in %d calls, the steps say %d in %d", s.Side, tr.Task, tr.Bytes, tr.Calls, sum, len(tr.Steps))
			}
			bytes += tr.Bytes
			calls += tr.Calls
		}
		if s.Bytes != bytes || s.Calls != calls {
			t.Errorf("%s: totals %d B / %d calls, the tasks sum to %d / %d", s.Side, s.Bytes, s.Calls, bytes, calls)
		}
	}
	if diff := cmp.Diff([]string{SideSnapshot, SideFind, SideProxy}, sides); diff != "" {
		t.Errorf("sides (-want +got):\n%s", diff)
	}
	if plain, find := res.side(SideSnapshot), res.side(SideFind); plain != nil && find != nil {
		if plain.ToolsListBytes != find.ToolsListBytes {
			t.Errorf("the two plain sides' tools/list differ: %d vs %d B", plain.ToolsListBytes, find.ToolsListBytes)
		}
		// The whole shop page against a search: the snapshot side reads
		// far more on the 600-product list.
		if ps, fs := plain.task("shop"), find.task("shop"); ps != nil && fs != nil && ps.Bytes <= fs.Bytes {
			t.Errorf("shop: plain+snapshot %d B, plain+find %d B", ps.Bytes, fs.Bytes)
		}
	}
	if n := len(res.Verdicts); n != 6 {
		t.Errorf("%d verdicts, want 6 (suite, 2 tasks × bytes and calls, tools/list)", n)
	}
	for _, run := range []string{"snap", "find", "prox"} {
		if rec := site.Record(run); len(rec.Cart) != 1 || rec.Fetched["parcel"] != 1 {
			t.Errorf("run %s: the site recorded cart %v, parcel fetched %d times", run, rec.Cart, rec.Fetched["parcel"])
		}
	}
	for _, s := range res.Stops {
		if !s.Clean() {
			t.Errorf("unclean stop: %s", s.Summary())
		}
	}
	if !res.Cleanup.Clean() {
		t.Errorf("proxy-server: %s", res.Cleanup.Summary())
	}
}

func TestAnswerErrors(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"ref_id: r\nconsole: 2 errors\n! Failed to load /api: 503\n! TypeError: x (app.js:88) @ http://h/app.js:3\nsnapshot: 1.0 KB, read with get_content",
			[]string{"Failed to load /api: 503", "TypeError: x (app.js:88)"}},
		{"ref_id: r\nconsole: 7 errors\n! a\n! b\n! c\n! d\n! e\n! 2 more: get_console_content(ref_id, level: error)", nil},
		{"ref_id: r\nchanges: none", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, answerErrors(tt.text)); diff != "" {
			t.Errorf("answerErrors(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

// TestTokensFlags: -tasks picks tasks in the order given; none means all;
// -bridge is resolved under the project root.
func TestTokensFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"default: every task", nil, nil},
		{"two tasks, spaces trimmed", []string{"-tasks", "link, shop"}, []string{"link", "shop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg TokensConfig
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			cfg.Flags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := cfg.Check(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Tasks); diff != "" {
				t.Errorf("tasks (-want +got):\n%s", diff)
			}
			cfg.Server.Dir = "/root"
			cfg.defaults()
			if cfg.Bridge != "/root/bin/mcp-bridge" {
				t.Errorf("bridge = %q, want it under the project root", cfg.Bridge)
			}
		})
	}
}
