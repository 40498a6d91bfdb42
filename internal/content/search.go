package content

import (
	"bytes"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// The bounds of a search answer. They exist for the model's context: one
// search should locate an element and show what is needed to act on it,
// never grow with the page.
const (
	// MaxMatches is how many matching lines are shown with their
	// neighbourhood; the answer then says how many more matched, since a
	// search that matches more than this is too wide to read anyway.
	MaxMatches = 20
	// itemLines is the size of a small block: the enclosing node shown
	// whole around a match (a list item, a table row of typical width with
	// a button in one cell, a product card), and how much of a matching
	// node's own block is shown when it is larger.
	itemLines = 8
	// siblingLines is how many lines on each side of a matching leaf are
	// shown within its parent when no small block encloses it: enough for
	// a form field after its label, the checkbox before "Remember me", as
	// upstream's browser_find shows ±3 lines around a match.
	siblingLines = 3
)

// elision stands for lines left out of a block that is shown in part.
const elision = "..."

// Search returns what a search of a playwright yaml snapshot shows: each
// line that matches q, preceded by its yaml ancestors (the lines above it
// with less indentation that enclose it), and its neighbourhood, so that
// the element refs a match is about come with it:
//
//   - when the match lies in a small block (at most itemLines lines, such
//     as `- listitem:` holding `- text: Product 7` and `- button "Add to
//     cart" [ref=e9]`, a table row and its cells, a product card), the
//     largest such block is shown whole;
//   - otherwise a matching node with children is shown with them (its
//     first itemLines lines when it has more), and a matching leaf with up
//     to siblingLines lines on each side of it within its parent.
//
// Lines keep their original bytes and order and none is repeated, but a
// line shown only as context longer than contextMax bytes is cut and ends
// in "…"; a line "..." at some indentation marks where a block shown in
// part goes on.
// At most MaxMatches matches are shown; a last line "# N more matches: …"
// counts the others. No match gives ""; an empty q.Text gives yamlText
// unchanged. An invalid regular expression is INVALID_PARAMETERS.
func Search(yamlText string, q proxy.Query) (string, error) {
	if q.Text == "" {
		return yamlText, nil
	}
	m, err := compile(q)
	if err != nil {
		return "", err
	}
	return m.search(yamlText), nil
}

func (m *matcher) search(text string) string {
	hits, more := m.scan(text)
	if len(hits) == 0 {
		return ""
	}
	var pieces []piece
	for _, h := range hits {
		pieces = h.neighbourhood(text, pieces)
	}
	matched := make(map[int]bool, len(hits))
	for _, h := range hits {
		matched[h.line.start] = true
	}
	out := render(text, pieces, matched, more)
	if m.outline {
		out = outline(out, m.match) + "\n"
	}
	return out
}

// matcher decides whether a line matches a query.
type matcher struct {
	mode mode
	text string // the query, lower-cased for foldText
	// textB is text as bytes for the ASCII fast path; textASCII says
	// whether text is ASCII (an ASCII line cannot contain a non-ASCII
	// query).
	textB     []byte
	textASCII bool
	re        *regexp.Regexp
	outline   bool // answer as Query.Outline asks
	// scratch holds the lower-cased copy of the current ASCII line.
	scratch []byte
}

type mode int

const (
	foldText mode = iota
	exactText
	regex
)

func compile(q proxy.Query) (*matcher, error) {
	m, err := newMatcher(q)
	if err != nil {
		return nil, err
	}
	m.outline = q.Outline
	return m, nil
}

func newMatcher(q proxy.Query) (*matcher, error) {
	switch {
	case q.Regex:
		expr := q.Text
		if !q.CaseSensitive {
			expr = "(?i)" + expr
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, proxy.Errorf(proxy.EINVALID, "search_for is not a valid regular expression: %v", err)
		}
		return &matcher{mode: regex, re: re}, nil
	case q.CaseSensitive:
		return &matcher{mode: exactText, text: q.Text}, nil
	default:
		lq := strings.ToLower(q.Text)
		return &matcher{mode: foldText, text: lq, textB: []byte(lq), textASCII: isASCII(lq)}, nil
	}
}

func (m *matcher) match(body string) bool {
	switch m.mode {
	case exactText:
		return strings.Contains(body, m.text)
	case regex:
		return m.re.MatchString(body)
	}
	// ASCII lines (nearly all of a snapshot) are lower-cased into one
	// reused buffer rather than through strings.ToLower, which would
	// allocate a copy of most lines. Only lines with other characters pay
	// for Unicode lower-casing.
	if isASCII(body) {
		if !m.textASCII {
			return false
		}
		m.scratch = asciiLower(m.scratch[:0], body)
		return bytes.Contains(m.scratch, m.textB)
	}
	return strings.Contains(strings.ToLower(body), m.text)
}

// line is one non-blank line of the text: its bytes are text[start:end],
// line break included, and indent is the length of its leading blanks.
type line struct {
	start, end, indent int
}

// hit is a matching line and its ancestors, outermost first.
type hit struct {
	line      line
	ancestors []line
}

// scan finds the first MaxMatches matching lines with their ancestors and
// counts the matches after them.
func (m *matcher) scan(text string) (hits []hit, more int) {
	var stack []line // the enclosing lines of the current one, outermost first
	for start := 0; start < len(text); {
		end := lineEnd(text, start)
		body := strings.TrimRight(text[start:end], "\r\n")
		indent := indentOf(body)
		if indent == len(body) {
			// A blank line is no node: there is nothing to show of it, even
			// for a pattern that matches an empty line.
			start = end
			continue
		}
		if len(hits) == MaxMatches {
			// Past the cap only the count is needed, not the structure.
			if m.match(body) {
				more++
			}
			start = end
			continue
		}
		match := m.match(body)
		// Whatever is not indented deeper than this line is not its
		// ancestor, nor will it be the ancestor of anything below.
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		l := line{start: start, end: end, indent: indent}
		if match {
			hits = append(hits, hit{line: l, ancestors: slices.Clone(stack)})
		}
		stack = append(stack, l)
		start = end
	}
	return hits, more
}

// piece is a line to show, or an elision marker standing where the line
// starting at off is left out.
type piece struct {
	off    int
	end    int    // of a line
	pad    string // the indentation of a marker
	marker bool
}

func shown(l line) piece { return piece{off: l.start, end: l.end} }

// elided is a marker where at is left out, indented as the line like
// starts: the blanks of like, which may be at itself.
func elided(text string, at, like line) piece {
	return piece{off: at.start, pad: text[like.start : like.start+like.indent], marker: true}
}

// neighbourhood appends to ps the lines a hit shows: its ancestors and its
// neighbourhood (see Search).
func (h hit) neighbourhood(text string, ps []piece) []piece {
	for _, a := range h.ancestors {
		ps = append(ps, shown(a))
	}
	own, next, cut := block(text, h.line, itemLines, make([]line, 0, itemLines))
	if cut {
		// A large node: its first lines say what it is.
		for _, l := range own {
			ps = append(ps, shown(l))
		}
		return append(ps, elided(text, next, next))
	}
	// The largest small block around the match is the item it belongs to.
	item, k := own, 0
	// Two buffers in turn: the block tried never overwrites the item found.
	bufs := [2][]line{make([]line, 0, itemLines), make([]line, 0, itemLines)}
	for i := len(h.ancestors) - 1; i >= 0; i-- {
		b, _, cut := block(text, h.ancestors[i], itemLines, bufs[k%2][:0])
		if cut {
			break
		}
		item, k = b, k+1
	}
	for _, l := range item {
		ps = append(ps, shown(l))
	}
	// A node with children of its own is described by them; a leaf (at
	// most properties such as `- /url: /cart` below it) is described by its
	// neighbours: the control after its label, the checkbox before it.
	if k > 0 || !leaf(text, own) {
		return ps
	}

	// No small item: the match's neighbours within its parent.
	parent := -1
	if n := len(h.ancestors); n > 0 {
		parent = h.ancestors[n-1].indent
	}
	var before []line
	for l, ok := prevLine(text, h.line.start); ok && l.indent > parent && len(before) < siblingLines; l, ok = prevLine(text, l.start) {
		before = append(before, l)
	}
	// Lines deeper than the match at the start of the window belong to a
	// sibling whose own line is not in it: they would read as orphans.
	for len(before) > 0 && before[len(before)-1].indent > h.line.indent {
		before = before[:len(before)-1]
	}
	first := h.line.start
	if len(before) > 0 {
		first = before[len(before)-1].start
	}
	if l, ok := prevLine(text, first); ok && l.indent > parent {
		ps = append(ps, elided(text, l, h.line))
	}
	for _, l := range before {
		ps = append(ps, shown(l))
	}
	l, ok := next, next.end > 0
	for i := 0; ok && l.indent > parent; i++ {
		if i == siblingLines {
			ps = append(ps, elided(text, l, l))
			break
		}
		ps = append(ps, shown(l))
		l, ok = nextLine(text, l.end)
	}
	return ps
}

// leaf reports whether a node's block holds no node but itself: only
// properties, the lines of the form `- /name: value`.
func leaf(text string, block []line) bool {
	for _, l := range block[1:] {
		if !strings.HasPrefix(text[l.start+l.indent:l.end], "- /") {
			return false
		}
	}
	return true
}

// block returns the first lines (up to limit, l included) of l's block: l
// and the lines below it that are indented deeper, appended to buf. next is the line after
// those returned (next.end is 0 at the end of the text) and cut says
// whether it is still in the block.
func block(text string, l line, limit int, buf []line) (lines []line, next line, cut bool) {
	lines = append(buf, l)
	for {
		n, ok := nextLine(text, lines[len(lines)-1].end)
		if !ok {
			return lines, line{}, false
		}
		if n.indent <= l.indent {
			return lines, n, false
		}
		if len(lines) == limit {
			return lines, n, true
		}
		lines = append(lines, n)
	}
}

// nextLine returns the first non-blank line starting at or after off.
func nextLine(text string, off int) (line, bool) {
	for off < len(text) {
		end := lineEnd(text, off)
		body := strings.TrimRight(text[off:end], "\r\n")
		if in := indentOf(body); in < len(body) {
			return line{start: off, end: end, indent: in}, true
		}
		off = end
	}
	return line{}, false
}

// prevLine returns the last non-blank line ending at or before off, which
// is the start of a line.
func prevLine(text string, off int) (line, bool) {
	for off > 0 {
		start := strings.LastIndexByte(text[:off-1], '\n') + 1
		body := strings.TrimRight(text[start:off], "\r\n")
		if in := indentOf(body); in < len(body) {
			return line{start: start, end: off, indent: in}, true
		}
		off = start
	}
	return line{}, false
}

// contextMax bounds a line shown only as context (an ancestor or a
// neighbour, not a match): its ref and name come first and are kept, the
// rest of a long text (a paragraph beside the sentence searched for) is
// cut, since it would cost more than the match itself.
const contextMax = 120

// render writes the pieces in document order, each line once, a marker
// only where its line is left out, and the count of matches not shown.
// Lines that are not matches are cut at contextMax bytes.
func render(text string, ps []piece, matched map[int]bool, more int) string {
	slices.SortStableFunc(ps, func(a, b piece) int {
		if a.off != b.off {
			return a.off - b.off
		}
		// A line is shown rather than elided.
		switch {
		case a.marker == b.marker:
			return 0
		case b.marker:
			return -1
		}
		return 1
	})
	var b strings.Builder
	last := -1 // offset of the last piece taken
	// Markers in a row (where the neighbourhoods of two matches leave off
	// and the next begins) are one, at the shallowest indentation of them:
	// it is the outermost block that goes on.
	var (
		pending bool
		pad     string
	)
	flush := func() {
		if pending {
			endLine(&b)
			b.WriteString(pad)
			b.WriteString(elision + "\n")
			pending = false
		}
	}
	for _, p := range ps {
		if p.off == last {
			continue
		}
		last = p.off
		if p.marker {
			if !pending || len(p.pad) < len(pad) {
				pending, pad = true, p.pad
			}
			continue
		}
		flush()
		l := text[p.off:p.end]
		if body := strings.TrimRight(l, "\r\n"); !matched[p.off] && len(body) > contextMax {
			l = truncateUTF8(body, contextMax) + "…\n"
		}
		b.WriteString(l)
	}
	flush()
	if more > 0 {
		endLine(&b)
		word := "matches"
		if more == 1 {
			word = "match"
		}
		b.WriteString("# " + strconv.Itoa(more) + " more " + word + ": narrow the search\n")
	}
	return b.String()
}

// endLine ends the last line written if it has no line break (the last
// line of a text need not).
func endLine(b *strings.Builder) {
	if s := b.String(); s != "" && s[len(s)-1] != '\n' {
		b.WriteByte('\n')
	}
}

func lineEnd(text string, start int) int {
	if i := strings.IndexByte(text[start:], '\n'); i >= 0 {
		return start + i + 1
	}
	return len(text)
}

func indentOf(body string) int {
	return len(body) - len(strings.TrimLeft(body, " \t"))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLower appends s to dst with A-Z lower-cased.
func asciiLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}
