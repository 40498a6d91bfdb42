package content

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

const shopBefore = `- generic [active] [ref=e1]:
  - heading "Shop" [level=1] [ref=e2]
  - paragraph [ref=e3]: "Cart: 0"
  - list [ref=e4]:
    - listitem [ref=e5]:
      - text: Product 1
      - button "Add to cart" [ref=e6]
    - listitem [ref=e7]:
      - text: Product 2
      - button "Add to cart" [ref=e8]
  - link "next" [ref=e9] [cursor=pointer]:
    - /url: /b.html
`

func TestChanges(t *testing.T) {
	const url = "http://127.0.0.1/shop"
	page := func(snap string) Page { return Page{URL: url, Title: "Shop", Snapshot: snap} }
	tests := []struct {
		name       string
		prev, next Page
		budget     int
		want       proxy.Changes
	}{
		{
			name: "first snapshot of the session is the page itself",
			prev: Page{}, next: page("- heading \"Shop\" [ref=e2]\n"), budget: 1000,
			want: proxy.Changes{NewPage: true, TitleChanged: true, Added: 1, Text: `- heading "Shop"`},
		},
		{
			name: "a new page over the budget gives its size only",
			prev: page(shopBefore), next: Page{URL: url + "/b", Title: "Shop", Snapshot: shopBefore}, budget: 100,
			want: proxy.Changes{NewPage: true, Added: 12, Over: true},
		},
		{
			name: "the same snapshot changed nothing",
			prev: page(shopBefore), next: page(shopBefore), budget: 1000,
			want: proxy.Changes{},
		},
		{
			name: "a click: status line changes, the clicked button is renamed, focus moves",
			prev: page(shopBefore),
			next: page(strings.NewReplacer(
				`- generic [active] [ref=e1]:`, `- generic [ref=e1]:`,
				`"Cart: 0"`, `"Cart: 1"`,
				`- button "Add to cart" [ref=e8]`, `- button "Remove" [active] [ref=e10]`,
			).Replace(shopBefore)),
			budget: 1000,
			want: proxy.Changes{Added: 1, Removed: 1, Changed: 1,
				Text: "~ paragraph: \"Cart: 1\" (was \"Cart: 0\")\n+ button \"Remove\" [ref=e10]\n- button \"Add to cart\" [ref=e8]"},
		},
		{
			name: "an added subtree keeps its shape; a removed one shows its top line",
			prev: page(shopBefore),
			next: page(strings.Replace(shopBefore, `    - listitem [ref=e7]:
      - text: Product 2
      - button "Add to cart" [ref=e8]
`, `    - listitem [ref=e11]:
      - text: Product 3
      - button "Add to cart" [ref=e12]
`, 1)),
			budget: 1000,
			want: proxy.Changes{Added: 3, Removed: 3,
				Text: "+ listitem:\n+   text: Product 3\n+   button \"Add to cart\" [ref=e12]\n- listitem > text: Product 2"},
		},
		{
			name:   "a checkbox that lost its mark",
			prev:   page("- checkbox \"News\" [checked] [ref=e4]\n"),
			next:   page("- checkbox \"News\" [ref=e4]\n"),
			budget: 1000,
			want:   proxy.Changes{Changed: 1, Text: `~ checkbox "News" [ref=e4] (was [checked])`},
		},
		{
			name:   "a field that got a value",
			prev:   page("- textbox \"Email\" [ref=e5]\n"),
			next:   page("- textbox \"Email\" [ref=e5]: ada@example.com\n"),
			budget: 1000,
			want:   proxy.Changes{Changed: 1, Text: `~ textbox "Email" [ref=e5]: ada@example.com (was empty)`},
		},
		{
			name:   "focus alone is no change",
			prev:   page("- textbox \"Email\" [ref=e5]\n"),
			next:   page("- textbox \"Email\" [active] [ref=e5]\n"),
			budget: 1000,
			want:   proxy.Changes{},
		},
		{
			name:   "repeated text lines under one element are counted",
			prev:   page("- list [ref=e1]:\n  - text: a\n  - text: a\n"),
			next:   page("- list [ref=e1]:\n  - text: a\n  - text: a\n  - text: a\n"),
			budget: 1000,
			want:   proxy.Changes{Added: 1, Text: "+ text: a"},
		},
		{
			name:   "a summary over the budget keeps its counts",
			prev:   page(shopBefore),
			next:   page(strings.ReplaceAll(shopBefore, "Add to cart", "Buy")),
			budget: 40,
			want:   proxy.Changes{Changed: 2, Over: true},
		},
		{
			name: "a call without a snapshot says only whether the page changed",
			prev: page(shopBefore), next: Page{URL: url + "/b", Title: "B"}, budget: 1000,
			want: proxy.Changes{NewPage: true, TitleChanged: true},
		},
		{
			name: "a call without a snapshot on the same page",
			prev: page(shopBefore), next: Page{URL: url, Title: "Shop"}, budget: 1000,
			want: proxy.Changes{},
		},
		{
			name: "a title change on the same URL is said",
			prev: page(shopBefore), next: Page{URL: url, Title: "Shop (1)", Snapshot: shopBefore}, budget: 1000,
			want: proxy.Changes{TitleChanged: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Changes(tt.prev, tt.next, tt.budget)
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("Changes (-want +got):\n%s", diff)
			}
			if !got.Over && len(got.Text) > tt.budget {
				t.Errorf("Text is %d bytes, over the budget of %d", len(got.Text), tt.budget)
			}
		})
	}
}

// The outline of a sign-in page: wrappers and repeated labels go, the
// fields and the button keep their refs, static text loses its ref.
func TestOutline(t *testing.T) {
	const signIn = `- generic [active] [ref=f1e1]:
  - heading "Sign in" [level=1] [ref=f1e2]
  - generic [ref=f1e3]:
    - paragraph [ref=f1e4]:
      - generic [ref=f1e5]:
        - text: Username
        - textbox "Username" [ref=f1e6]
    - paragraph [ref=f1e7]:
      - text: Password
      - textbox "Password" [ref=f1e9]
    - paragraph [ref=f1e10]:
      - button "Sign in" [ref=f1e11]
  - paragraph [ref=f1e12]: Forgot it?
  - list [ref=f1e14]:
    - listitem [ref=f1e15]:
      - link "Help" [ref=f1e13] [cursor=pointer]:
        - /url: /help
`
	want := `- # Sign in
- textbox "Username" [ref=f1e6]
- textbox "Password" [ref=f1e9]
- button "Sign in" [ref=f1e11]
- paragraph: Forgot it?
- list:
  - listitem:
    - link "Help" [ref=f1e13]:
      - /url: /help`
	if diff := cmp.Diff(want, Outline(signIn)); diff != "" {
		t.Errorf("Outline (-want +got):\n%s", diff)
	}
}

// A description list reads as "term: definition"; a term without a
// one-line definition stays as it is.
func TestOutlineDescriptionList(t *testing.T) {
	const parcel = `- main [ref=e3]:
  - generic [ref=e5]:
    - term [ref=e6]: Carrier
    - definition [ref=e7]: Northwind Express
    - term [ref=e8]: Tracking number
    - definition [ref=e9]: NW-48213-7730
    - term [ref=e10]: Links
    - definition [ref=e11]:
      - link "Track" [ref=e12]
`
	want := `- Carrier: Northwind Express
- Tracking number: NW-48213-7730
- term: Links
- definition:
  - link "Track" [ref=e12]`
	if diff := cmp.Diff(want, Outline(parcel)); diff != "" {
		t.Errorf("Outline (-want +got):\n%s", diff)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int]string{0: "0 B", 999: "999 B", 1000: "1.0 KB", 48213: "48.2 KB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// A search read through MCP is an outline too, but the lines that match
// stay as they are (a search for a heading's ref finds it with its ref).
func TestSearchOutline(t *testing.T) {
	tests := []struct {
		q    proxy.Query
		want string
	}{
		{proxy.Query{Text: "Product 2", Outline: true},
			"- list:\n  - listitem:\n    - text: Product 1\n    - button \"Add to cart\" [ref=e6]\n  - listitem:\n    - text: Product 2\n    - button \"Add to cart\" [ref=e8]\n"},
		{proxy.Query{Text: "[ref=e2]", Outline: true},
			"- heading \"Shop\" [level=1] [ref=e2]\n- paragraph: \"Cart: 0\"\n- list:\n  - listitem:\n    ...\n"},
		{proxy.Query{Text: "Product 2"},
			"- generic [active] [ref=e1]:\n  - list [ref=e4]:\n    - listitem [ref=e5]:\n      - text: Product 1\n      - button \"Add to cart\" [ref=e6]\n    - listitem [ref=e7]:\n      - text: Product 2\n      - button \"Add to cart\" [ref=e8]\n"},
	}
	for _, tt := range tests {
		got, err := Search(shopBefore, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Search(%+v) (-want +got):\n%s", tt.q, diff)
		}
	}
}

// A heading is written as markdown writes it, and only when nothing about
// it would be lost.
func TestMarkdownHeading(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"level 1", `heading "Shop" [level=1]`, `# Shop`},
		{"level 3 with children", `heading "Product 7" [level=3]:`, `### Product 7`},
		{"with text", `heading "Total" [level=2]: 4 items`, `## Total: 4 items`},
		{"escaped quote", `heading "Say \"hi\"" [level=2]`, `## Say "hi"`},
		{"kept ref", `heading "Shop" [level=1] [ref=e2]`, `heading "Shop" [level=1] [ref=e2]`},
		{"no level", `heading "Shop"`, `heading "Shop"`},
		{"other attribute", `heading "Shop" [level=1] [disabled]`, `heading "Shop" [level=1] [disabled]`},
		{"nameless", `heading "" [level=2]`, `heading "" [level=2]`},
		{"not a heading", `button "Go" [ref=e4]`, `button "Go" [ref=e4]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := markdownHeading(tc.in); got != tc.want {
				t.Errorf("markdownHeading(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
