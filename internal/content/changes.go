package content

import (
	"regexp"
	"strconv"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Page is one page snapshot as the session saw it: what a call's answer is
// compared against.
type Page struct {
	URL, Title string
	Snapshot   string // upstream's yaml
}

// Changes summarises what a call did to the page: prev is the session's
// previous snapshot (zero when it has none, or when its element refs no
// longer hold, as after a restore), next the one the call recorded. The
// summary is what the model reads instead of a second snapshot, so it is
// bounded: when it would take more than budget bytes, only the counts are
// kept (Over) and the model reads the ref itself.
//
// On the same page (same URL) the summary lists the lines that were added,
// removed or changed. Element lines are matched by their ref: upstream
// keeps an element's ref for as long as its role and name hold, so a line
// whose ref survives with other text (a status line, a field's value, a
// checkbox) is one change, not a removal and an addition. A change of focus
// alone ([active]) is not reported: it follows every click and tells the
// model nothing. A new page (another URL, or no previous snapshot) is given
// whole when it fits the budget, without the lines of the page it replaced;
// so is a page most of whose lines were replaced at the same URL.
// When next has no snapshot, only the page and title changes are said.
func Changes(prev, next Page, budget int) *proxy.Changes {
	c := &proxy.Changes{
		NewPage:      prev.Snapshot == "" || prev.URL != next.URL,
		TitleChanged: prev.Title != next.Title,
	}
	if next.Snapshot == "" {
		// A call that reported the page but took no snapshot of it: only
		// whether it is another page can be said.
		c.NewPage = prev.URL != next.URL
		return c
	}
	if c.NewPage {
		c.Added = countLines(next.Snapshot)
		c.Text, c.Over = wholePage(next.Snapshot, budget)
		return c
	}
	if prev.Snapshot == next.Snapshot {
		return c
	}
	oldNodes, curNodes := parseNodes(prev.Snapshot), parseNodes(next.Snapshot)
	d := diffLines(oldNodes, curNodes)
	c.Added, c.Removed, c.Changed = d.added, d.removed, d.changed
	if 2*d.removed >= len(oldNodes) && 2*d.added >= len(curNodes) {
		// Most of the page went and most of it is new (a form replaced by
		// its confirmation at the same URL): it is a new page, and the
		// lines of the one it replaced are noise.
		c.NewPage = true
		c.Text, c.Over = wholePage(next.Snapshot, budget)
		return c
	}
	if len(d.text) > budget {
		c.Over = true
	} else {
		c.Text = d.text
	}
	return c
}

// outlineRatio bounds how much smaller than its snapshot an outline gets:
// a page more than this many budgets long cannot fit, and is not outlined
// on every call to find that out.
const outlineRatio = 8

// wholePage is a new page as an answer gives it: its outline when that
// fits budget, else over.
func wholePage(snapshot string, budget int) (text string, over bool) {
	if len(snapshot) > outlineRatio*budget {
		return "", true
	}
	if page := Outline(snapshot); len(page) <= budget {
		return page, false
	}
	return "", true
}

// Outline is a snapshot as a model reads it in an answer: the same tree
// with the lines that say nothing left out and the refs only where the
// model can act. Left out are wrappers with neither name nor text
// (`generic [ref=e5]:`, a nameless paragraph or group; their children move
// up), a `text:` line that only repeats the name of an element beside it
// (a field's label), focus and cursor marks, and the refs of elements no
// tool acts on (headings, paragraphs, cells). Every element a tool can act
// on keeps its line and its ref, which work in upstream's tools as they
// are; the whole snapshot stays one get_content away.
func Outline(yaml string) string { return outline(yaml, nil) }

// outline is Outline, but a line for which keep is true is shown as it is.
func outline(yaml string, keep func(line string) bool) string {
	nodes := parseNodes(yaml)
	hide := hidden(nodes)
	var b strings.Builder
	paired := false // the node before was a term shown with this definition
	for i, n := range nodes {
		kept := keep != nil && keep(n.line)
		if paired {
			paired = false
			if !kept {
				continue
			}
		}
		if hide[i] && !kept {
			continue
		}
		depth := 0
		for p := n.parent; p >= 0; p = nodes[p].parent {
			if !hide[p] {
				depth++
			}
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat("  ", depth))
		trimmed := strings.TrimLeft(n.line, " ")
		switch {
		case kept:
			// A match keeps its ref; marks go if it still matches.
			if short := strings.Replace(withoutFocus(trimmed), " [cursor=pointer]", "", 1); keep(short) {
				trimmed = short
			}
			b.WriteString(trimmed)
		case !strings.HasPrefix(trimmed, "- "):
			b.WriteString(trimmed) // not an element: a search's "..." marker
		case isPair(nodes, i) && (keep == nil || !keep(nodes[i+1].line)):
			// A description list reads as "term: definition".
			_, term := splitValue(n.body)
			_, def := splitValue(nodes[i+1].body)
			b.WriteString("- " + term + ": " + def)
			paired = true
		default:
			b.WriteString("- ")
			b.WriteString(terse(n.body))
		}
	}
	return b.String()
}

// isPair reports whether nodes[i] is a term with its definition right
// after it, both one line of text.
func isPair(nodes []node, i int) bool {
	if i+1 >= len(nodes) || roleOf(nodes[i].body) != "term" || roleOf(nodes[i+1].body) != "definition" {
		return false
	}
	t, d := nodes[i], nodes[i+1]
	_, tv := splitValue(t.body)
	_, dv := splitValue(d.body)
	return tv != "" && dv != "" && d.parent == t.parent && (i+2 >= len(nodes) || nodes[i+2].parent != i+1)
}

// wrappers are the roles of elements that only group others: without a
// name or text of their own they are left out of an outline.
var wrappers = map[string]bool{"generic": true, "paragraph": true, "group": true, "none": true, "presentation": true,
	"main": true, "region": true, "section": true, "article": true, "contentinfo": true, "banner": true, "complementary": true}

// actionable are the roles a tool acts on by ref; other elements' refs are
// left out of an outline.
var actionable = map[string]bool{"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true,
	"radio": true, "combobox": true, "listbox": true, "option": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "tab": true, "switch": true, "slider": true, "spinbutton": true, "treeitem": true,
	"img": true, "dialog": true, "alertdialog": true, "iframe": true}

// roleOf is the role a snapshot line starts with ("button" of
// `button "Go" [ref=e4]`), "" for a text or property line.
func roleOf(body string) string {
	end := strings.IndexAny(body, " :")
	if end < 0 {
		end = len(body)
	}
	return body[:end]
}

// hidden says which nodes an outline leaves out: nameless wrappers and
// labels repeated by the element beside them.
func hidden(nodes []node) []bool {
	hide := make([]bool, len(nodes))
	names := map[int]map[string]bool{} // parent → the names of its children
	for _, n := range nodes {
		if name, ok := quotedName(n.body); ok {
			if names[n.parent] == nil {
				names[n.parent] = map[string]bool{}
			}
			names[n.parent][name] = true
		}
	}
	for i, n := range nodes {
		head, value := splitValue(n.body)
		switch {
		case n.ref != "" && wrappers[roleOf(n.body)] && value == "" && !strings.Contains(head, `"`):
			hide[i] = true
		case strings.HasPrefix(n.body, "text: "):
			hide[i] = names[n.parent][strings.Trim(strings.TrimPrefix(n.body, "text: "), `"`)]
		}
	}
	return hide
}

// quotedName is the accessible name of an element line, if it has one.
func quotedName(body string) (string, bool) {
	i := strings.IndexByte(body, '"')
	if i < 0 {
		return "", false
	}
	j := strings.IndexByte(body[i+1:], '"')
	if j < 0 {
		return "", false
	}
	return body[i+1 : i+1+j], true
}

// terse is a line of an outline: without focus and cursor marks, without
// its ref unless a tool can act on the element, and a heading written as
// markdown writes it.
func terse(body string) string {
	body = strings.Replace(withoutFocus(body), " [cursor=pointer]", "", 1)
	if ref := refOf(body); ref != "" && !actionable[roleOf(body)] {
		body = strings.Replace(body, " [ref="+ref+"]", "", 1)
	}
	return markdownHeading(body)
}

// headingRE is a heading line without a ref: its quoted name, its level,
// and whatever follows (":" before children, ": text").
var headingRE = regexp.MustCompile(`^heading ("(?:[^"\\]|\\.)*") \[level=([1-6])\](:.*)?$`)

// markdownHeading writes `heading "Summary" [level=2]` as `## Summary`: the
// same facts in a third of the bytes, in the form a model reads most.
// Anything else about the line (a ref, another attribute, a name it cannot
// unquote) leaves it as it is. Children stay below it, indented.
func markdownHeading(body string) string {
	m := headingRE.FindStringSubmatch(body)
	if m == nil {
		return body
	}
	name, err := strconv.Unquote(m[1])
	if err != nil || name == "" || strings.ContainsAny(name, "\n\r") {
		return body
	}
	level := int(m[2][0] - '0')
	out := strings.Repeat("#", level) + " " + name
	if rest := strings.TrimPrefix(m[3], ":"); strings.TrimSpace(rest) != "" {
		out += ":" + rest
	}
	return out
}

// node is one non-blank line of a snapshot.
type node struct {
	line   string // as it is in the snapshot
	indent int
	body   string // the line without its indentation and yaml "- " marker
	ref    string // its element ref, "" for text lines such as "- text: …"
	key    string // identity across snapshots: the ref, or the text under its closest element
	parent int    // index of the enclosing node, -1 at the top
}

func parseNodes(yaml string) []node {
	out := make([]node, 0, strings.Count(yaml, "\n")+1)
	var stack []int // enclosing nodes, outermost first
	for line := range strings.SplitSeq(yaml, "\n") {
		line = strings.TrimRight(line, "\r")
		body := strings.TrimLeft(line, " ")
		if body == "" {
			continue
		}
		indent := len(line) - len(body)
		body = strings.TrimPrefix(body, "- ")
		for len(stack) > 0 && out[stack[len(stack)-1]].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		n := node{line: line, indent: indent, body: body, ref: refOf(body), parent: -1}
		if len(stack) > 0 {
			n.parent = stack[len(stack)-1]
		}
		if n.ref != "" {
			n.key = "ref " + n.ref
		} else {
			// A text line is known by what it says and the element it is
			// in; repeats under one element are told apart by their count.
			owner := ""
			for p := n.parent; p >= 0; p = out[p].parent {
				if out[p].ref != "" {
					owner = out[p].ref
					break
				}
			}
			n.key = owner + "\x00" + body
		}
		stack = append(stack, len(out))
		out = append(out, n)
	}
	return out
}

// refOf returns the ref of an element line ("button \"Go\" [ref=e4]" → e4).
func refOf(body string) string {
	i := strings.Index(body, "[ref=")
	if i < 0 {
		return ""
	}
	rest := body[i+len("[ref="):]
	j := strings.IndexByte(rest, ']')
	if j <= 0 {
		return ""
	}
	return rest[:j]
}

// withoutFocus is body with upstream's focus marker taken out.
func withoutFocus(body string) string {
	return strings.Replace(body, " [active]", "", 1)
}

type lineDiff struct {
	added, removed, changed int
	text                    string
}

// diffLines compares two snapshots by the identity of their lines rather
// than by position: cheap on any size (one pass and two maps), and right
// for what the model needs, which elements appeared, went or now say
// something else. It does not report moves.
func diffLines(old, cur []node) lineDiff {
	oldBy := make(map[string][]int, len(old))
	for i, n := range old {
		oldBy[n.key] = append(oldBy[n.key], i)
	}
	matched := make([]bool, len(old))
	added := make([]bool, len(cur))
	var (
		d     lineDiff
		b     strings.Builder
		lines int
	)
	emit := func(mark byte, indent int, s string) {
		if lines > 0 {
			b.WriteByte('\n')
		}
		lines++
		b.WriteByte(mark)
		b.WriteByte(' ')
		b.WriteString(strings.Repeat(" ", indent))
		b.WriteString(s)
	}
	hideCur, hideOld := hidden(cur), hidden(old)
	for i, n := range cur {
		cands := oldBy[n.key]
		if len(cands) == 0 {
			added[i] = true
			d.added++
			if hideCur[i] {
				continue
			}
			// An added subtree keeps its shape under the line it hangs from.
			depth := 0
			for p := n.parent; p >= 0 && added[p]; p = cur[p].parent {
				if !hideCur[p] {
					depth++
				}
			}
			emit('+', 2*depth, terse(n.body))
			continue
		}
		j := cands[0]
		oldBy[n.key] = cands[1:]
		matched[j] = true
		if n.ref != "" && withoutFocus(old[j].body) != withoutFocus(n.body) {
			d.changed++
			emit('~', 0, terse(n.body)+was(old[j].body, n.body))
		}
	}
	for j, n := range old {
		if matched[j] {
			continue
		}
		d.removed++
		// A removed subtree is shown by its top line: its children went
		// with it. A wrapper says nothing; its first lines that do stand
		// for it.
		top := true
		for p := n.parent; p >= 0 && !matched[p]; p = old[p].parent {
			if !hideOld[p] {
				top = false
				break
			}
		}
		if top && !hideOld[j] {
			emit('-', 0, removedLine(old, hideOld, j))
		}
	}
	d.text = b.String()
	return d
}

// removedLine is how a removed node is shown: a nameless one (a list item)
// by what its first line below says, since that is what went.
func removedLine(nodes []node, hide []bool, j int) string {
	body := terse(nodes[j].body)
	if _, named := quotedName(body); named || !strings.HasSuffix(body, ":") {
		return body
	}
	for k := j + 1; k < len(nodes) && nodes[k].indent > nodes[j].indent; k++ {
		if !hide[k] {
			return strings.TrimSuffix(body, ":") + " > " + terse(nodes[k].body)
		}
	}
	return body
}

// was names what a changed line said before, in the fewest words: its old
// value when only the value changed (`paragraph [ref=e3]: "Cart: 1"` after
// `"Cart: 0"` gives ` (was "Cart: 0")`), else the words of its old head
// that differ (a checkbox that lost `[checked]`).
func was(old, cur string) string {
	oh, ov := splitValue(withoutFocus(old))
	ch, _ := splitValue(withoutFocus(cur))
	var rest string
	if oh == ch {
		rest = ov
		if rest == "" {
			rest = "empty"
		}
	} else {
		oh = strings.Replace(oh, " [ref="+refOf(oh)+"]", "", 1)
		ch = strings.Replace(ch, " [ref="+refOf(ch)+"]", "", 1)
		i := 0
		for i < len(oh) && i < len(ch) && oh[i] == ch[i] {
			i++
		}
		// Back to a word boundary, so no word is cut in two.
		for i > 0 && !boundary(oh, i) && !boundary(ch, i) {
			i--
		}
		rest = strings.TrimSpace(oh[i:])
		if rest == "" {
			// Only words added: a checkbox that got [checked].
			rest = "without " + strings.TrimSpace(ch[i:])
		}
	}
	const maxWas = 80
	if len(rest) > maxWas {
		rest = truncateUTF8(rest, maxWas) + "…"
	}
	return " (was " + rest + ")"
}

// boundary reports whether s parts into words at i.
func boundary(s string, i int) bool {
	return i == 0 || i >= len(s) || s[i-1] == ' ' || s[i] == ' '
}

// splitValue splits an element line into its head (role, name, attributes)
// and its inline value: `textbox "Email" [ref=e5]: ada@example.com`.
func splitValue(body string) (head, value string) {
	from := strings.Index(body, "[ref=")
	if from < 0 {
		from = 0
	}
	i := strings.Index(body[from:], ": ")
	if i < 0 {
		return strings.TrimSuffix(body, ":"), ""
	}
	return body[:from+i], body[from+i+2:]
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func countLines(s string) int {
	n := 0
	for line := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}

// FormatBytes writes n as the model reads sizes: "812 B", "48.2 KB".
func FormatBytes(n int) string {
	if n < 1000 {
		return strconv.Itoa(n) + " B"
	}
	return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " KB"
}
