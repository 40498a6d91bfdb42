package content

import (
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
// whole when it fits the budget, without the lines of the page it replaced.
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
		if len(next.Snapshot) <= budget {
			c.Text = strings.TrimRight(next.Snapshot, "\n")
		} else {
			c.Over = true
		}
		return c
	}
	if prev.Snapshot == next.Snapshot {
		return c
	}
	d := diffLines(parseNodes(prev.Snapshot), parseNodes(next.Snapshot))
	c.Added, c.Removed, c.Changed = d.added, d.removed, d.changed
	if len(d.text) > budget {
		c.Over = true
	} else {
		c.Text = d.text
	}
	return c
}

// node is one non-blank line of a snapshot.
type node struct {
	indent int
	body   string // the line without its indentation and yaml "- " marker
	ref    string // its element ref, "" for text lines such as "- text: …"
	key    string // identity across snapshots: the ref, or the text under its closest element
	parent int    // index of the enclosing node, -1 at the top
}

func parseNodes(yaml string) []node {
	var (
		out   []node
		stack []int // enclosing nodes, outermost first
	)
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
		n := node{indent: indent, body: body, ref: refOf(body), parent: -1}
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
	for i, n := range cur {
		cands := oldBy[n.key]
		if len(cands) == 0 {
			added[i] = true
			d.added++
			// An added subtree keeps its shape under the line it hangs from.
			depth := 0
			for p := n.parent; p >= 0 && added[p]; p = cur[p].parent {
				depth++
			}
			emit('+', 2*depth, n.body)
			continue
		}
		j := cands[0]
		oldBy[n.key] = cands[1:]
		matched[j] = true
		if n.ref != "" && withoutFocus(old[j].body) != withoutFocus(n.body) {
			d.changed++
			emit('~', 0, n.body+was(old[j].body, n.body))
		}
	}
	for j, n := range old {
		if matched[j] {
			continue
		}
		d.removed++
		// A removed subtree is shown by its top line: its children went
		// with it.
		if p := n.parent; p >= 0 && !matched[p] {
			continue
		}
		emit('-', 0, n.body)
	}
	d.text = b.String()
	return d
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
