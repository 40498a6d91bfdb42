package bench

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPairedDiffs(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		want []float64
	}{
		{"empty", []float64{}, []float64{}, []float64{}},
		{"B minus A, pair by pair", []float64{10, 20, 30}, []float64{12, 19, 35}, []float64{2, -1, 5}},
		{"lengths differ", []float64{1, 2}, []float64{1}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pairedDiffs(tt.a, tt.b)
			if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("pairedDiffs(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestMedianCI(t *testing.T) {
	rev := func(n int) []float64 { s := seq(n); slices.Reverse(s); return s }
	tests := []struct {
		name   string
		xs     []float64
		conf   float64
		lo, hi float64
		ok     bool
	}{
		// Ranks from Binomial(n, ½): n=10 → x(2)…x(9), n=20 → x(6)…x(15),
		// n=200 → x(86)…x(115).
		{"n=10", seq(10), 0.95, 2, 9, true},
		{"n=20", seq(20), 0.95, 6, 15, true},
		{"n=200", seq(200), 0.95, 86, 115, true},
		{"unsorted input", rev(20), 0.95, 6, 15, true},
		{"n=6 is the smallest with a 95% interval", seq(6), 0.95, 1, 6, true},
		{"n=5 has none", seq(5), 0.95, 0, 0, false},
		{"empty", nil, 0.95, 0, 0, false},
		{"bad confidence", seq(10), 1, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.xs)
			lo, hi, ok := medianCI(tt.xs, tt.conf)
			if lo != tt.lo || hi != tt.hi || ok != tt.ok {
				t.Errorf("medianCI = %v, %v, %v; want %v, %v, %v", lo, hi, ok, tt.lo, tt.hi, tt.ok)
			}
			if !slices.Equal(in, tt.xs) {
				t.Error("medianCI modified its input")
			}
		})
	}
}

func TestSummarizeKind(t *testing.T) {
	tests := []struct {
		name                      string
		plain, proxy              []float64
		added                     float64
		pairs                     int
		wantPlainP50, wantProxy50 float64
	}{
		{
			// The median of the paired differences is not the difference
			// of the medians.
			name: "paired median vs difference of medians", plain: []float64{10, 20, 30}, proxy: []float64{12, 21, 35},
			added: 2, pairs: 3, wantPlainP50: 20, wantProxy50: 21,
		},
		{
			name: "even count interpolates", plain: []float64{10, 20, 30, 40}, proxy: []float64{11, 22, 33, 44},
			added: 2.5, pairs: 4, wantPlainP50: 25, wantProxy50: 27.5,
		},
		{name: "no pairs", pairs: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := summarizeKind("browser_evaluate", tt.plain, tt.proxy)
			if r.Pairs != tt.pairs || math.Abs(r.Added.MS-tt.added) > 1e-9 {
				t.Errorf("pairs %d added %v; want %d %v", r.Pairs, r.Added.MS, tt.pairs, tt.added)
			}
			if r.Plain.Median != tt.wantPlainP50 || r.Proxy.Median != tt.wantProxy50 {
				t.Errorf("medians %v / %v, want %v / %v", r.Plain.Median, r.Proxy.Median, tt.wantPlainP50, tt.wantProxy50)
			}
		})
	}
}

// TestSummarizeProxyPath: sides E (another bridge) and F (a client of
// /mcp) are compared with A and with B call by call, the same rounds.
func TestSummarizeProxyPath(t *testing.T) {
	plain := []float64{10, 20, 30, 40, 50}
	proxy := []float64{13, 23, 33, 43, 53}
	tests := []struct {
		name string
		side []float64
		want []float64 // side median, side − A, B − side
	}{
		{"E, a slower bridge", []float64{14, 25, 34, 45, 54}, []float64{34, 4, -1}},
		{"F, over /mcp", []float64{12, 22, 33, 42, 52}, []float64{33, 2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := splitAt(plain, tt.side, proxy)
			if r == nil {
				t.Fatal("no result for three sides of five rounds")
			}
			got := []float64{r.Side.Median, r.First.MS, r.Second.MS}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("side median, side − A, B − side (-want +got):\n%s", diff)
			}
			held := r.First.Low <= r.First.MS && r.First.MS <= r.First.High && r.Second.Low <= r.Second.MS && r.Second.MS <= r.Second.High
			if r.First.CIOK && r.Second.CIOK && !held {
				t.Errorf("intervals do not hold their medians: %+v", r)
			}
		})
	}
	if splitAt(nil, nil, nil) != nil {
		t.Error("a result from no rounds")
	}
}

// catalogueSnapshot is a part of @playwright/mcp 0.0.83's browser_snapshot
// answer for the catalogue page.
const catalogueSnapshot = "### Page\n- Page URL: http://127.0.0.1:1/catalogue\n- Page Title: Catalogue\n### Snapshot\n```yaml\n" +
	`- generic [active] [ref=e1]:
  - heading "Catalogue" [level=1] [ref=e2]
  - status [ref=e3]: "Cart: 0 items"
  - main [ref=e4]:
    - generic [ref=e5]:
      - heading "Products" [level=2] [ref=e6]
      - list [ref=e7]:
        - listitem [ref=e2228]:
          - link "Item 741" [ref=e2229] [cursor=pointer]:
            - /url: /item/741
          - text: €81.41
          - button "Add 741" [ref=e2230]
        - listitem [ref=e2231]:
          - link "Item 742" [ref=e2232] [cursor=pointer]:
            - /url: /item/742
          - text: €82.42
          - button "Add 742" [ref=e2233]
        - listitem [ref=e2234]:
          - link "Item 7420" [ref=e2235] [cursor=pointer]:
            - /url: /item/7420
          - button "Add 7420" [ref=e2236]
` + "```\n"

// findAnswer is what browser_find("Item 742") answered.
const findAnswer = `### Result
Found 1 match for "Item 742":

- generic [active] [ref=e1]:
  - main [ref=e4]:
    - generic [ref=e5]:
      - list [ref=e7]:
        - listitem [ref=e2228]:
          ...
          - text: €81.41
          - button "Add 741" [ref=e2230]
        - listitem [ref=e2231]:
          - link "Item 742" [ref=e2232] [cursor=pointer]:
            - /url: /item/742
          - text: €82.42
          - button "Add 742" [ref=e2233]`

// contentSearch is get_content(search_for "Item 742"): ancestors only, so
// no button.
const contentSearch = `- generic [active] [ref=e1]:
  - main [ref=e4]:
    - generic [ref=e5]:
      - list [ref=e7]:
        - listitem [ref=e2231]:
          - link "Item 742" [ref=e2232] [cursor=pointer]:
`

func TestButtonNear(t *testing.T) {
	tests := []struct {
		name, text, item string
		want             string
		ok               bool
	}{
		{"full snapshot", SnapshotYAML(catalogueSnapshot), "Item 742", "e2233", true},
		{"exact name, not a longer one", SnapshotYAML(catalogueSnapshot), "Item 7420", "e2236", true},
		{"first item", SnapshotYAML(catalogueSnapshot), "Item 741", "e2230", true},
		{"browser_find answer, with its ... line", findAnswer, "Item 742", "e2233", true},
		{"search result without siblings", contentSearch, "Item 742", "", false},
		{"absent item", SnapshotYAML(catalogueSnapshot), "Item 9", "", false},
		{"top-level element has no parent", `- button "Item 742" [ref=e1]`, "Item 742", "", false},
		{"empty", "", "Item 742", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ButtonNear(tt.text, tt.item)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ButtonNear(%q) = %q, %v; want %q, %v", tt.item, got, ok, tt.want, tt.ok)
			}
		})
	}
}

const formYAML = `- generic [active] [ref=e1]:
  - heading "Sign up" [level=1] [ref=e2]
  - generic [ref=e3]:
    - paragraph [ref=e4]:
      - generic [ref=e5]:
        - text: Full name
        - textbox "Full name" [ref=e6]
    - paragraph [ref=e13]:
      - generic [ref=e14]:
        - text: Country
        - combobox "Country" [ref=e15]:
          - option "France" [selected]
          - option "Japan"
    - group "Plan" [ref=e16]:
      - generic [ref=e18]:
        - radio "Free" [checked] [ref=e19]
      - generic [ref=e20]:
        - radio "Pro" [ref=e21]
    - paragraph [ref=e22]:
      - generic [ref=e23]:
        - checkbox "Send me the newsletter" [ref=e24]
    - link "[ref=e99] Submit" [ref=e40]
    - paragraph [ref=e28]:
      - button "Save draft" [ref=e29]
      - button "Submit" [ref=e32]
    - status [ref=e33]: Not saved
`

func TestElementRef(t *testing.T) {
	tests := []struct {
		role, name string
		want       string
		ok         bool
	}{
		{"textbox", "Full name", "e6", true},
		{"combobox", "Country", "e15", true},
		{"radio", "Pro", "e21", true},
		{"checkbox", "Send me the newsletter", "e24", true},
		{"button", "Submit", "e32", true},
		{"link", "[ref=e99] Submit", "e40", true}, // the ref is after the name, not in it
		{"option", "Japan", "", false},            // options have no ref
		{"textbox", "Email", "", false},
		{"button", "Sub", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.role+" "+tt.name, func(t *testing.T) {
			got, ok := ElementRef(formYAML, tt.role, tt.name)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ElementRef(%s %q) = %q, %v; want %q, %v", tt.role, tt.name, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSnapshotYAML(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"inline block", "### Page\n- Page URL: x\n### Snapshot\n```yaml\n- a [ref=e1]\n- b\n```\n### Events\n", "- a [ref=e1]\n- b"},
		{"no block: the text itself", "- a [ref=e1]\n", "- a [ref=e1]\n"},
		{"unterminated block", "```yaml\n- a\n", "- a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SnapshotYAML(tt.in); got != tt.want {
				t.Errorf("SnapshotYAML = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEvaluateResult(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{"string", "### Result\n\"Catalogue\"\n### Ran Playwright code\n```js\nawait page.evaluate('() => document.title');\n```", "Catalogue", false},
		{"escaped string", "### Result\n\"Cart: 1 items|Added \\\"742\\\"\"\n", `Cart: 1 items|Added "742"`, false},
		{"number as written", "### Result\n42\n### Ran Playwright code\n", "42", false},
		{"no result section", `{"ref_id":"x"}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EvaluateResult(tt.in)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("EvaluateResult = %q, %v; want %q, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestRefIDOf(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"ref_id: e9dfcdbb-4ff4\npage: Home http://127.0.0.1/\nsnapshot: 12.0 KB, read with get_content", "e9dfcdbb-4ff4", false},
		{`{"error":"SESSION_NOT_FOUND"}`, "", true},
		{"### Result\n1", "", true},
	}
	for _, tt := range tests {
		got, err := RefIDOf(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("RefIDOf(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestFormSubmitted(t *testing.T) {
	good := "?name=Ada+Lovelace&email=ada%40example.com&password=bench-Passw0rd-42&country=Japan&plan=pro&news=on&about=Benchmark+run"
	tests := []struct {
		name, search string
		wantErr      string
	}{
		{"all fields", good, ""},
		{"no leading ?", strings.TrimPrefix(good, "?"), ""},
		{"plan not chosen", strings.Replace(good, "plan=pro", "plan=free", 1), "plan"},
		{"checkbox not ticked", strings.Replace(good, "&news=on", "", 1), "news"},
		{"not submitted", "", "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := formSubmitted(tt.search)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("formSubmitted(%q) = %v, want an error about %q", tt.search, err, tt.wantErr)
			}
		})
	}
}

func TestPlainArgs(t *testing.T) {
	tests := []struct {
		name   string
		settle int
		root   bool
		want   []string
	}{
		{"settle 0 as root", 0, true, []string{"--timeout-settle=0", "--no-sandbox"}},
		{"upstream's default settle", -1, false, nil},
	}
	base := []string{"--headless", "--isolated", "--executable-path", "/usr/bin/chromium", "--output-dir", "/tmp/o", "--file-paths", "absolute", "--config", "/tmp/c.json"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plainArgs("/usr/bin/chromium", "/tmp/o", "/tmp/c.json", tt.settle, tt.root)
			if want := append(slices.Clone(base), tt.want...); !slices.Equal(got, want) {
				t.Errorf("plainArgs = %q, want %q", got, want)
			}
		})
	}
}

func TestTailWriter(t *testing.T) {
	w := newTailWriter(8)
	for _, s := range []string{"abc", "defgh", "ijk"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := w.String(); got != "defghijk" {
		t.Errorf("tail = %q, want the last 8 bytes", got)
	}
}

func TestChildEnv(t *testing.T) {
	got := childEnv([]string{"A=1", "NODE_OPTIONS=--x", "B=2"}, map[string]string{"NODE_OPTIONS": "--y", "C": "3"})
	want := []string{"A=1", "B=2", "C=3", "NODE_OPTIONS=--y"}
	if !slices.Equal(got, want) {
		t.Errorf("childEnv = %q, want %q", got, want)
	}
}

func TestSummarizeSides(t *testing.T) {
	// Ten rounds. Side C is 3 ms over A and B 1 ms over C (the hop); side
	// D is 0.5 ms over C, so B is 0.5 ms over D (the relay floor).
	var a, b, c, d []float64
	for i := range 10 {
		x := float64(10 + i)
		a, c, d, b = append(a, x), append(c, x+3), append(d, x+3.5), append(b, x+4)
	}
	type split struct {
		Side          float64 // the extra side's median
		First, Second Paired
	}
	// Each summary as a split, nil when it has none.
	asSplit := func(r *SplitResult) *split {
		if r == nil {
			return nil
		}
		return &split{r.Side.Median, r.First, r.Second}
	}
	hop := func(cs []float64) *split { return asSplit(splitAt(a, cs, b)) }
	floor := func(ds []float64) *split { return asSplit(splitAt(c, ds, b)) }
	for _, tc := range []struct {
		name       string
		got, short *split // all ten rounds; the extra side's first three only
		want       split
	}{
		// C is 13..22: median interpolated.
		{"hop: C − A and B − C", hop(c), hop(c[:3]), split{17.5, Paired{3, 3, 3, true}, Paired{1, 1, 1, true}}},
		{"floor: D − C and B − D", floor(d), floor(d[:3]), split{18, Paired{0.5, 0.5, 0.5, true}, Paired{0.5, 0.5, 0.5, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got == nil {
				t.Fatal("no result")
			}
			if diff := cmp.Diff(tc.want, *tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.short != nil {
				t.Error("rounds of different lengths: want no result")
			}
		})
	}
}

func TestEndpointArgs(t *testing.T) {
	got := strings.Join(endpointArgs("ws://127.0.0.1:9/x", "/tmp/o", 0), " ")
	want := "--isolated --endpoint ws://127.0.0.1:9/x --output-dir /tmp/o --file-paths absolute --timeout-settle=0"
	if got != want {
		t.Errorf("endpointArgs = %q, want %q", got, want)
	}
	if got := strings.Join(endpointArgs("ws://e", "/o", -1), " "); strings.Contains(got, "settle") {
		t.Errorf("negative settle must leave upstream's default: %q", got)
	}
}

func TestOverheadTextOnePerWorker(t *testing.T) {
	split := &SplitResult{Side: Summary{Median: 20.5, P95: 30}, First: Paired{MS: 6.5}, Second: Paired{MS: -0.5, Low: -1.5, High: 0.75, CIOK: true}}
	r := &OverheadResult{
		Kinds:     []OverheadKindResult{{Tool: "browser_evaluate", Pairs: 10, OnePerWorker: split}},
		CleanupK1: &StopReport{Signal: "SIGTERM", Exit: "0", Tracked: 7},
	}
	var b strings.Builder
	r.writeText(&b)
	for _, want := range []string{
		"one per worker G−A 6.5",
		"sharing a node process B−G -0.5  -1.5…0.8",
		"cleanup, G's server: proxy-server stopped with SIGTERM",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, b.String())
		}
	}
	without := &OverheadResult{Kinds: []OverheadKindResult{{Tool: "browser_evaluate", Pairs: 10}}}
	b.Reset()
	without.writeText(&b)
	if strings.Contains(b.String(), "B−G") || strings.Contains(b.String(), "G's server") {
		t.Errorf("without -k1 the report shows a side G:\n%s", b.String())
	}
}
