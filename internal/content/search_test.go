package content_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/search")

func readSnapshot(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "snapshot.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSearchGolden searches a realistic @playwright/mcp snapshot. The
// golden files are the exact expected output; regenerate them with
// `go test ./internal/content -run TestSearchGolden -update` and review
// the diff.
func TestSearchGolden(t *testing.T) {
	t.Parallel()
	snapshot := readSnapshot(t)
	tests := []struct {
		name string
		q    proxy.Query
	}{
		{"button", proxy.Query{Text: "button"}},
		{"sign_in_upper_case", proxy.Query{Text: "SIGN IN"}},
		{"url_lines", proxy.Query{Text: "/url:"}},
		{"japanese", proxy.Query{Text: "カート"}},
		{"ref", proxy.Query{Text: "[ref=e35]"}},
		{"password_shared_ancestors", proxy.Query{Text: "password"}},
		{"euro_sign", proxy.Query{Text: "€"}},
		{"heading_level", proxy.Query{Text: "[level="}},
		{"email_label", proxy.Query{Text: "Email address"}},
		{"regex_prices", proxy.Query{Text: `€\d+\.\d\d`, Regex: true}},
		{"case_sensitive", proxy.Query{Text: "Sign in", CaseSensitive: true}},
		{"no_match", proxy.Query{Text: "zzz-no-such-text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := content.Search(snapshot, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "search", tt.name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("Search(%+v) (-want +got):\n%s", tt.q, diff)
			}
			checkShape(t, snapshot, got)
		})
	}
}

// shop is a list of n products whose buttons all say "Add to cart", the
// product name beside the button (upstream's shape for <li>Product 1
// <button>).
func shop(n int) string {
	var b strings.Builder
	b.WriteString("- main [ref=e1]:\n  - heading \"Shop\" [level=1] [ref=e2]\n  - list [ref=e3]:\n")
	for i := 1; i <= n; i++ {
		b.WriteString(shopItem(i))
	}
	return b.String()
}

func shopItem(i int) string {
	return fmt.Sprintf("    - listitem [ref=e%d]:\n      - text: Product %d\n      - button \"Add to cart\" [ref=e%d]\n", 10*i, i, 10*i+1)
}

// ownText is a list whose items are named by their own text, the button
// their child.
func ownText(n int) string {
	var b strings.Builder
	b.WriteString("- list [ref=e1]:\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - listitem [ref=e%d]: Product %d\n    - button \"Add to cart\" [ref=e%d]\n", 10*i, i, 10*i+1)
	}
	return b.String()
}

const orders = `- table [ref=e1]:
  - rowgroup [ref=e2]:
    - row "Order Date Status Total" [ref=e3]:
      - columnheader "Order" [ref=e4]
      - columnheader "Date" [ref=e5]
      - columnheader "Status" [ref=e6]
      - columnheader "Total" [ref=e7]
  - rowgroup [ref=e8]:
    - row "ORD-1233 2024-05-01 Shipped 10.00" [ref=e9]:
      - cell "ORD-1233" [ref=e10]
      - cell "2024-05-01" [ref=e11]
      - cell "Shipped" [ref=e12]
      - cell "10.00" [ref=e13]
    - row "ORD-1234 2024-05-02 Pending 12.50" [ref=e14]:
      - cell "ORD-1234" [ref=e15]
      - cell "2024-05-02" [ref=e16]
      - cell "Pending" [ref=e17]
      - cell "12.50 Pay" [ref=e18]:
        - button "Pay" [ref=e19]
    - row "ORD-1235 2024-05-03 Shipped 7.00" [ref=e20]:
      - cell "ORD-1235" [ref=e21]
      - cell "2024-05-03" [ref=e22]
      - cell "Shipped" [ref=e23]
      - cell "7.00" [ref=e24]
`

// cards nest the name and the button in separate wrappers of one item.
const cards = `- list [ref=e1]:
  - listitem [ref=e2]:
    - generic [ref=e3]:
      - heading "Product 1" [level=3] [ref=e4]
    - generic [ref=e5]:
      - text: €10
      - button "Add to cart" [ref=e6]
  - listitem [ref=e7]:
    - generic [ref=e8]:
      - heading "Product 2" [level=3] [ref=e9]
    - generic [ref=e10]:
      - text: €12
      - button "Add to cart" [ref=e11]
`

// form is too long for one small block: its leaves are shown with their
// neighbours.
const form = `- form [ref=e1]:
  - text: Email
  - textbox [ref=e2]
  - text: Password
  - textbox [ref=e3]
  - checkbox [ref=e4]
  - text: Remember me
  - text: Phone
  - textbox [ref=e5]
  - button "Sign in" [ref=e6]
`

func TestSearch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		q          proxy.Query
		want       string
	}{
		{"empty query returns everything", "- a\n  - b\n", proxy.Query{}, "- a\n  - b\n"},
		{"empty text", "", proxy.Query{Text: "x"}, ""},
		{"no match", "- a\n  - b\n", proxy.Query{Text: "zz"}, ""},

		{"shared labels: the item of the name, with its button", shop(5), proxy.Query{Text: "Product 2"},
			"- main [ref=e1]:\n  - list [ref=e3]:\n" + shopItem(2)},
		{"shared labels: every item of a shared label", shop(3), proxy.Query{Text: "add to CART"},
			"- main [ref=e1]:\n  - list [ref=e3]:\n" + shopItem(1) + shopItem(2) + shopItem(3)},
		{"item named by its own text: its children", ownText(5), proxy.Query{Text: "Product 2"},
			"- list [ref=e1]:\n  - listitem [ref=e20]: Product 2\n    - button \"Add to cart\" [ref=e21]\n"},
		{"a long neighbour is cut, the match is whole", article, proxy.Query{Text: "needle"},
			"- article [ref=e1]:\n" +
				"  - paragraph [ref=e2]: " + strings.Repeat("a", 120-len("  - paragraph [ref=e2]: ")) + "…\n" +
				"  - paragraph [ref=e3]: " + strings.Repeat("b", 120-len("  - paragraph [ref=e3]: ")) + "…\n" +
				"  - paragraph [ref=e4]: " + strings.Repeat("c", 150) + " needle " + strings.Repeat("c", 150) + "\n" +
				"  - paragraph [ref=e5]: " + strings.Repeat("d", 120-len("  - paragraph [ref=e5]: ")) + "…\n"},
		{"table row: a match on the row and on its cell show the row once", orders, proxy.Query{Text: "ORD-1234"},
			`- table [ref=e1]:
  - rowgroup [ref=e8]:
    - row "ORD-1234 2024-05-02 Pending 12.50" [ref=e14]:
      - cell "ORD-1234" [ref=e15]
      - cell "2024-05-02" [ref=e16]
      - cell "Pending" [ref=e17]
      - cell "12.50 Pay" [ref=e18]:
        - button "Pay" [ref=e19]
`},
		{"table cell: its row", orders, proxy.Query{Text: "2024-05-03"},
			`- table [ref=e1]:
  - rowgroup [ref=e8]:
    - row "ORD-1235 2024-05-03 Shipped 7.00" [ref=e20]:
      - cell "ORD-1235" [ref=e21]
      - cell "2024-05-03" [ref=e22]
      - cell "Shipped" [ref=e23]
      - cell "7.00" [ref=e24]
`},
		{"nested wrappers: the whole card", cards, proxy.Query{Text: "Product 2"},
			`- list [ref=e1]:
  - listitem [ref=e7]:
    - generic [ref=e8]:
      - heading "Product 2" [level=3] [ref=e9]
    - generic [ref=e10]:
      - text: €12
      - button "Add to cart" [ref=e11]
`},
		{"first sibling: the lines after it", form, proxy.Query{Text: "email"},
			"- form [ref=e1]:\n  - text: Email\n  - textbox [ref=e2]\n  - text: Password\n  - textbox [ref=e3]\n  ...\n"},
		{"last sibling: the lines before it", form, proxy.Query{Text: "sign in"},
			"- form [ref=e1]:\n  ...\n  - text: Remember me\n  - text: Phone\n  - textbox [ref=e5]\n  - button \"Sign in\" [ref=e6]\n"},
		{"middle sibling: both sides, nothing elided that is shown", form, proxy.Query{Text: "remember"},
			"- form [ref=e1]:\n  ...\n  - text: Password\n  - textbox [ref=e3]\n  - checkbox [ref=e4]\n  - text: Remember me\n  - text: Phone\n  - textbox [ref=e5]\n  - button \"Sign in\" [ref=e6]\n"},
		{"neighbourhoods that meet are merged", form, proxy.Query{Text: "text: p"},
			"- form [ref=e1]:\n  - text: Email\n  - textbox [ref=e2]\n  - text: Password\n  - textbox [ref=e3]\n  - checkbox [ref=e4]\n  - text: Remember me\n  - text: Phone\n  - textbox [ref=e5]\n  - button \"Sign in\" [ref=e6]\n"},
		{"the lines of a sibling cut from its own line are left out",
			"- form:\n  - group:\n    - textbox [ref=e1]\n    - textbox [ref=e2]\n    - textbox [ref=e3]\n  - text: Target\n  - b\n  - c\n  - d\n  - e\n",
			proxy.Query{Text: "target"},
			"- form:\n  ...\n  - text: Target\n  - b\n  - c\n  - d\n  ...\n"},
		{"a leaf's properties come with it, and count as no children",
			"- nav:\n  - a\n  - b\n  - link \"Deals\" [ref=e3]:\n    - /url: /deals\n  - c\n  - d\n  - e\n  - f\n",
			proxy.Query{Text: "deals\""},
			"- nav:\n  - a\n  - b\n  - link \"Deals\" [ref=e3]:\n    - /url: /deals\n  - c\n  - d\n  - e\n  ...\n"},
		{"a large matching node: its first lines",
			"- list \"Big\":\n  - a\n  - b\n  - c\n  - d\n  - e\n  - f\n  - g\n  - h\n  - i\n",
			proxy.Query{Text: "big"},
			"- list \"Big\":\n  - a\n  - b\n  - c\n  - d\n  - e\n  - f\n  - g\n  ...\n"},
		{"plain text: lines around, as grep -C",
			"alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\n",
			proxy.Query{Text: "echo"},
			"...\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\n...\n"},
		{"multiple matches share their ancestors",
			"- root:\n  - a:\n    - hit 1\n    - x\n    - hit 2\n  - b:\n    - hit 3\n" + strings.Repeat("  - pad\n", 8),
			proxy.Query{Text: "hit"},
			"- root:\n  - a:\n    - hit 1\n    - x\n    - hit 2\n  - b:\n    - hit 3\n"},
		{"a matching ancestor appears once, in place",
			"- hit parent:\n  - hit child\n", proxy.Query{Text: "hit"}, "- hit parent:\n  - hit child\n"},
		{"blank lines do not break ancestry and are not shown",
			"- root:\n\n  - hit\n", proxy.Query{Text: "hit"}, "- root:\n  - hit\n"},
		{"a pattern matching empty lines shows no blank line",
			"- a\n\n- b\n", proxy.Query{Text: "^", Regex: true}, "- a\n- b\n"},
		{"dedent ends the enclosing block",
			"- a:\n  - b:\n    - c\n- d:\n  - hit\n", proxy.Query{Text: "hit"}, "- d:\n  - hit\n"},
		{"CRLF kept", "- a:\r\n  - hit\r\n", proxy.Query{Text: "HIT"}, "- a:\r\n  - hit\r\n"},
		{"last line without newline", "- a:\n  - hit", proxy.Query{Text: "hit"}, "- a:\n  - hit"},
		{"does not match across lines", "- ab\n- cd\n", proxy.Query{Text: "b\n- c"}, ""},
		{"tabs count as indentation", "- a:\n\t- hit\n", proxy.Query{Text: "hit"}, "- a:\n\t- hit\n"},
		{"regexp characters are literal in text", "- a [ref=e1]\n", proxy.Query{Text: "[ref=e1]"}, "- a [ref=e1]\n"},

		{"regex: anchored to the line", shop(12), proxy.Query{Text: `Product 1$`, Regex: true},
			"- main [ref=e1]:\n  - list [ref=e3]:\n" + shopItem(1)},
		{"regex: case-insensitive by default", shop(3), proxy.Query{Text: `product [23]$`, Regex: true},
			"- main [ref=e1]:\n  - list [ref=e3]:\n" + shopItem(2) + shopItem(3)},
		{"regex: case-sensitive", shop(3), proxy.Query{Text: `product [23]$`, Regex: true, CaseSensitive: true}, ""},
		{"regex: alternatives", orders, proxy.Query{Text: `"(ORD-1233|ORD-1235)"`, Regex: true},
			`- table [ref=e1]:
  - rowgroup [ref=e8]:
    - row "ORD-1233 2024-05-01 Shipped 10.00" [ref=e9]:
      - cell "ORD-1233" [ref=e10]
      - cell "2024-05-01" [ref=e11]
      - cell "Shipped" [ref=e12]
      - cell "10.00" [ref=e13]
    - row "ORD-1235 2024-05-03 Shipped 7.00" [ref=e20]:
      - cell "ORD-1235" [ref=e21]
      - cell "2024-05-03" [ref=e22]
      - cell "Shipped" [ref=e23]
      - cell "7.00" [ref=e24]
`},
		{"case-sensitive text", shop(2), proxy.Query{Text: "add to cart", CaseSensitive: true}, ""},
		{"case-sensitive text that matches, in a page small enough to show whole", shop(1), proxy.Query{Text: "Add to cart", CaseSensitive: true},
			shop(1)},
		{"unicode case folding", "- heading \"ÉCOLE\"\n- text: école\n", proxy.Query{Text: "École"}, "- heading \"ÉCOLE\"\n- text: école\n"},
		{"unicode, case-sensitive", "- heading \"ÉCOLE\"\n" + strings.Repeat("- pad\n", 4) + "- text: école\n", proxy.Query{Text: "école", CaseSensitive: true},
			"...\n- pad\n- pad\n- pad\n- text: école\n"},
		{"unicode regex", "- text: 東京\n- text: カート (2)\n", proxy.Query{Text: `カート \(\d\)`, Regex: true}, "- text: 東京\n- text: カート (2)\n"},
		{"invalid UTF-8 lines are kept byte for byte", "- a:\n  - \xff hit \xfe\n", proxy.Query{Text: "hit"}, "- a:\n  - \xff hit \xfe\n"},

		{"cap: exactly MaxMatches, no count", shop(content.MaxMatches), proxy.Query{Text: "add to cart"},
			"- main [ref=e1]:\n  - list [ref=e3]:\n" + items(1, content.MaxMatches)},
		{"cap: one more", shop(content.MaxMatches + 1), proxy.Query{Text: "add to cart"},
			"- main [ref=e1]:\n  - list [ref=e3]:\n" + items(1, content.MaxMatches) + "# 1 more match: narrow the search\n"},
		{"cap: many more", shop(300), proxy.Query{Text: "add to cart"},
			"- main [ref=e1]:\n  - list [ref=e3]:\n" + items(1, content.MaxMatches) + "# 280 more matches: narrow the search\n"},
		{"cap: the count ends a last line without newline", "- a\n- b\n" + strings.Repeat("- hit\n", content.MaxMatches) + "- hit", proxy.Query{Text: "hit"},
			"- a\n- b\n" + strings.Repeat("- hit\n", content.MaxMatches) + "- hit\n# 1 more match: narrow the search\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := content.Search(tt.text, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Search(%+v) (-want +got):\n%s", tt.q, diff)
			}
			if tt.q.Text != "" {
				checkShape(t, tt.text, got)
			}
		})
	}
}

func items(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(shopItem(i))
	}
	return b.String()
}

func TestSearchInvalidRegex(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"(", "a[", `\p{Nope}`, "x{2,1}"} {
		_, err := content.Search("- a\n", proxy.Query{Text: expr, Regex: true})
		if proxy.ErrorCode(err) != proxy.EINVALID || !strings.Contains(err.Error(), "regular expression") {
			t.Errorf("Search(regex %q) error = %v, want INVALID_PARAMETERS naming the regular expression", expr, err)
		}
	}
	// Without Regex the same text is literal.
	if got, err := content.Search("- a(\n", proxy.Query{Text: "("}); err != nil || got != "- a(\n" {
		t.Errorf("Search(text \"(\") = %q, %v", got, err)
	}
}

// TestSearchShape checks, for many queries over several snapshots, what
// every answer must be: lines of the input in their order, none repeated,
// each with its parent, and markers only between them.
// article is a long text: paragraphs of a few hundred bytes each, a
// needle in the middle one.
var article = "- article [ref=e1]:\n" +
	"  - paragraph [ref=e2]: " + strings.Repeat("a", 300) + "\n" +
	"  - paragraph [ref=e3]: " + strings.Repeat("b", 300) + "\n" +
	"  - paragraph [ref=e4]: " + strings.Repeat("c", 150) + " needle " + strings.Repeat("c", 150) + "\n" +
	"  - paragraph [ref=e5]: " + strings.Repeat("d", 300) + "\n"

func TestSearchShape(t *testing.T) {
	t.Parallel()
	texts := map[string]string{
		"snapshot": readSnapshot(t), "shop": shop(30), "own text": ownText(12), "orders": orders,
		"cards": cards, "form": form, "big": bigSnapshot(t, 64<<10),
	}
	for name, text := range texts {
		// Every word of the text, and a few patterns, as queries.
		queries := map[proxy.Query]bool{}
		for _, w := range strings.Fields(text) {
			queries[proxy.Query{Text: w}] = true
			queries[proxy.Query{Text: w, CaseSensitive: true}] = true
		}
		for _, re := range []string{`.`, `^\s*- (button|link)`, `\[ref=e[\d_]*1\]`, `:$`, `^- `} {
			queries[proxy.Query{Text: re, Regex: true}] = true
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for q := range queries {
				got, err := content.Search(text, q)
				if err != nil {
					t.Fatalf("Search(%+v): %v", q, err)
				}
				if got == "" {
					t.Errorf("Search(%+v) = \"\", but the query comes from the text", q)
				}
				checkShape(t, text, got)
			}
		})
	}
}

// checkShape fails t unless every line of got, but for markers and the
// count of matches not shown, is a line of text, in order, none twice,
// and shown with its parent (the nearest line above it with less
// indentation).
func checkShape(t *testing.T, text, got string) {
	t.Helper()
	if got == "" {
		return
	}
	type line struct{ body, parent string }
	var in []line
	var stack []string
	for l := range strings.Lines(text) {
		body := strings.TrimRight(l, "\r\n")
		indent := len(body) - len(strings.TrimLeft(body, " \t"))
		if indent == len(body) {
			continue
		}
		for len(stack) > 0 && indentOf(stack[len(stack)-1]) >= indent {
			stack = stack[:len(stack)-1]
		}
		parent := ""
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		in = append(in, line{body, parent})
		stack = append(stack, body)
	}
	next := 0 // the first input line the next output line may be
	seen := map[string]bool{}
	prevMarker := false
	for i, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		body := strings.TrimRight(l, "\r")
		if strings.TrimSpace(body) == "..." {
			if prevMarker {
				t.Errorf("output line %d: two markers in a row:\n%s", i, got)
			}
			prevMarker = true
			continue
		}
		prevMarker = false
		if strings.HasPrefix(body, "# ") && strings.HasSuffix(body, ": narrow the search") {
			continue
		}
		// A long line shown as context is cut: it is the start of its line.
		cut, isCut := strings.CutSuffix(body, "…")
		same := func(in string) bool {
			if isCut {
				return strings.HasPrefix(in, cut) && len(in) > len(cut)
			}
			return in == body
		}
		j := next
		for j < len(in) && !same(in[j].body) {
			j++
		}
		if j == len(in) {
			t.Fatalf("output line %d %q is not a line of the input after the previous one:\n%s", i, body, got)
		}
		if in[j].parent != "" && !seen[in[j].parent] {
			t.Errorf("output line %d %q is shown without its parent %q:\n%s", i, body, in[j].parent, got)
		}
		seen[in[j].body] = true
		next = j + 1
	}
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }
