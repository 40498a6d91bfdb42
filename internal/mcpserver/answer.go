package mcpserver

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
)

// Answer renders what the model reads of a browser tool call: one line per
// fact it uses, and only the facts that apply. Nothing repeats what the
// model sent (the tool, its session) or holds the same value on every
// call (a timestamp, false flags); the page's URL and title come only when
// they changed. The tool's own result (what browser_evaluate returned, a
// selector tool's value) comes inline when the server let it
// (PROXY_INLINE_RESULT_MAX), so reading a value takes one call; else its
// size. What the call did to the page comes last: the summary of changes
// against the session's previous snapshot, or a new page whole when it is
// small, so an action needs no second read to be verified. The stored
// call is named ref_id, as the argument that reads it back, never to be
// taken for an element's [ref=…]. The HTTP API's /call keeps the full JSON
// for scripts; this is the MCP answer.
//
//	ref_id: 3232f408-800e-4da1-9874-6d0bb8795a7f
//	page: Shop http://127.0.0.1:8080/   (the title alone after browser_navigate)
//	console: 1 error
//	! Failed to load /api/cart: 503
//	result: "Cart: 1"
//	changes: +1 -1 ~1
//	~ paragraph: "Cart: 1" (was "Cart: 0")
//
// A file the call downloaded adds a line "download: report.csv 1.2 KB".
func Answer(res *proxy.CallResult) string {
	var b strings.Builder
	line := func(key, val string) { writeLine(&b, key, val) }
	if res.Status == proxy.StatusError {
		retry := res.Retryable != nil && *res.Retryable
		writeError(&b, res.ErrorCode, retry, res.Error, res.Suggestion)
	}
	line("ref_id", res.RefID)
	if res.Warning != "" {
		line("warning", oneLine(res.Warning))
	}
	md, ch := res.Metadata, res.Changes
	tabs, current := tabList(md.Tool, md.Result)
	if page := pageLine(md, ch, current); page != "" {
		line("page", page)
	}
	if n := md.ConsoleErrorCount; n > 0 {
		line("console", plural(n, "error"))
		for _, e := range res.ConsoleErrors {
			b.WriteString("! ")
			b.WriteString(e)
			b.WriteByte('\n')
		}
	}
	if md.Restored {
		line("restored", "true (refs from before the restore are stale)")
	}
	switch {
	case len(res.Value) > 0 && md.ResultBytes > 0:
		line("value", content.FormatBytes(md.ResultBytes)+readWith)
	case len(res.Value) > 0:
		line("value", string(res.Value))
	case md.ResultBytes > 0:
		line("result", content.FormatBytes(md.ResultBytes)+readWith)
	case tabs != "":
		line("tabs", tabs)
	case strings.Contains(md.Result, "\n"):
		// Text of several lines (a tab list, console messages) keeps its
		// lines, indented so that none reads as a fact of the answer.
		b.WriteString("result:\n")
		for _, l := range strings.Split(md.Result, "\n") {
			b.WriteString(resultIndent)
			b.WriteString(l)
			b.WriteByte('\n')
		}
	case md.Result != "":
		line("result", md.Result)
	}
	if md.HasImage {
		line("image", "get_content(ref_id) returns it")
	}
	for _, d := range res.Downloads {
		line("download", downloadLine(res.RefID, d))
	}
	for _, name := range res.DownloadsPending {
		line("download", oneLine(name)+" started, not finished: stored with this call once a later answer sees it finish")
	}
	switch {
	case ch == nil || !md.HasSnapshot:
	case ch.NewPage && ch.Text != "":
		b.WriteString("snapshot:\n")
		b.WriteString(ch.Text)
		b.WriteByte('\n')
	case ch.NewPage:
		line("snapshot", content.FormatBytes(md.SnapshotBytes)+readWith)
	case ch.Added+ch.Removed+ch.Changed == 0:
		line("changes", "none")
	default:
		counts := fmt.Sprintf("+%d -%d ~%d", ch.Added, ch.Removed, ch.Changed)
		if ch.Over {
			line("changes", counts+", too many to list: read with get_content")
			break
		}
		line("changes", counts)
		b.WriteString(ch.Text)
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// downloadLine is a download as the answer names it: its name (the one
// get_content(ref_id, download) takes) and size, or why it was not kept,
// and the ref it is stored with when that is the earlier call that started
// it rather than ref.
func downloadLine(ref string, d proxy.Download) string {
	v := oneLine(d.Name) + " " + content.FormatSize(d.Size)
	if !d.Stored {
		v += ", not stored: over PROXY_MAX_DOWNLOAD_BYTES"
	}
	if d.RefID != "" && d.RefID != ref {
		v += ", stored with ref_id " + d.RefID + " (the call that started it)"
	}
	return v
}

// tabList renders the tab list browser_tabs answers as one line, the
// current tab with its URL, the others' URLs without the current one's
// origin when they share it: every action on tabs answers the list, and
// a model switching tabs reads it on each. current reports that the
// current tab is in it, which makes a page line say nothing new. A result
// that is not a tab list renders "".
func tabList(tool, result string) (tabs string, current bool) {
	list, ok := content.ParseTabs(result)
	if tool != "browser_tabs" || !ok {
		return "", false
	}
	origin := ""
	for _, t := range list {
		if u, err := url.Parse(t.URL); t.Current && err == nil && u.Host != "" {
			origin, current = u.Scheme+"://"+u.Host, true
		}
	}
	parts := make([]string, len(list))
	for i, t := range list {
		u, mark := t.URL, " "
		if t.Current {
			mark = " (current) "
		} else if rest, ok := strings.CutPrefix(u, origin); ok && origin != "" && strings.HasPrefix(rest, "/") {
			u = rest
		}
		parts[i] = strings.TrimSpace(t.Index + mark + oneLine(t.Title) + " " + u)
	}
	return strings.Join(parts, "; "), current
}

// pageLine is what the answer says of the page: its title and URL when
// it is another page, the title alone when only that is news (the URL is
// the one the model sent, or the previous page's), nothing when the
// model knows both already or the tab list names the current page.
func pageLine(md proxy.CallMetadata, ch *proxy.Changes, tabListed bool) string {
	switch {
	case ch == nil || tabListed || (md.PageURL == "" && md.PageTitle == ""):
		return ""
	case !ch.NewPage && !ch.TitleChanged, ch.SameURL && !ch.TitleChanged:
		return ""
	case !ch.URLAsSent && !ch.SameURL:
		return strings.TrimSpace(oneLine(md.PageTitle) + " " + md.PageURL)
	}
	return oneLine(md.PageTitle)
}

// readWith follows the size of what an answer leaves in the record.
const readWith = ", read with get_content"

// resultIndent starts each line of a result of several lines.
const resultIndent = "  "

// ErrorAnswer renders a refused or failed tool call in the form of a failed
// Answer, so that the model reads every failure alike, whichever layer
// refused it: the code and whether the same call may succeed later, what
// to do, and the ref_id when the call was recorded (the record has it).
//
//	error: DOMAIN_BLOCKED: navigation to evil.example is blocked by policy
//	suggestion: Navigate only to the allowed domains.
func ErrorAnswer(e *proxy.Error) string {
	var b strings.Builder
	writeError(&b, e.Code, e.Retryable, e.Message, e.Suggestion)
	if ref, ok := e.Details["ref_id"].(string); ok && ref != "" {
		if lost, _ := e.Details["not_recorded"].(bool); !lost {
			writeLine(&b, "ref_id", ref)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func writeLine(b *strings.Builder, key, val string) {
	b.WriteString(key)
	b.WriteString(": ")
	b.WriteString(val)
	b.WriteByte('\n')
}

// writeError writes the error line (the code, when there is one, and
// whether to retry, then the message) and the suggestion.
func writeError(b *strings.Builder, code string, retryable bool, message, suggestion string) {
	head := message
	if code != "" {
		if retryable {
			code += retryMark
		}
		head = code + ": " + message
	}
	writeLine(b, "error", oneLine(head))
	if suggestion != "" {
		writeLine(b, "suggestion", oneLine(suggestion))
	}
}

const retryMark = " (retryable)"

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// oneLine keeps an upstream message or a page title from breaking the
// answer's one-fact-per-line shape.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Parsed is what ParseAnswer reads back from an Answer or an ErrorAnswer.
type Parsed struct {
	// RefID is the stored call's; "" for a call refused before it was
	// recorded.
	RefID string
	// Error is the error line ("" on success): the code, when there is
	// one, then the message. ErrorCode, Retryable and ErrorMessage are its
	// parts.
	Error        string
	ErrorCode    string
	Retryable    bool
	ErrorMessage string
	Suggestion   string
	// PageTitle and PageURL are set when the answer has a page line (the
	// page changed).
	PageTitle, PageURL string
	ConsoleErrors      int
	Restored           bool
	// Warning is set when the call ran but its answer is not in the
	// record.
	Warning string
	// Value (one of the proxy's tools) or Result (upstream's tools) is the
	// tool's own result when it came inline; ResultSize ("12.3 KB") when
	// it was too large to and is one get_content away.
	Value, Result string
	ResultSize    string
	// Tabs is browser_tabs' list as the answer gives it: "0 Title /path;
	// 1 (current) Title http://…".
	Tabs  string
	Image bool
	// Downloads are the values of the download lines, in order.
	Downloads []string
	// Body is what follows the facts: the snapshot or the changes, with
	// their header line.
	Body string
}

// errorHead is the error line of a failure with a code.
var errorHead = regexp.MustCompile(`^([A-Z][A-Z_]*)( \(retryable\))?: `)

// sizeVal is a size line's value: what the record holds instead.
var sizeVal = regexp.MustCompile(`^\d+(\.\d)? K?B$`)

// ParseAnswer reads the facts of an Answer (or an ErrorAnswer) back, for
// clients and tests that script the proxy through MCP.
func ParseAnswer(text string) (Parsed, error) {
	var p Parsed
	lines := strings.Split(text, "\n")
	sized := func(val string) (string, bool) {
		size, ok := strings.CutSuffix(val, readWith)
		return size, ok && sizeVal.MatchString(size)
	}
	for i := 0; i < len(lines) && p.Body == ""; i++ {
		l := lines[i]
		if l == "result:" {
			var block []string
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], resultIndent) {
				i++
				block = append(block, strings.TrimPrefix(lines[i], resultIndent))
			}
			p.Result = strings.Join(block, "\n")
			continue
		}
		key, val, _ := strings.Cut(l, ": ")
		switch key {
		case "ref_id":
			p.RefID = val
		case "error":
			p.Error, p.ErrorMessage = val, val
			if m := errorHead.FindStringSubmatch(val); m != nil {
				p.ErrorCode, p.Retryable, p.ErrorMessage = m[1], m[2] != "", val[len(m[0]):]
			}
		case "suggestion":
			p.Suggestion = val
		case "page":
			p.PageTitle, p.PageURL = val, ""
			if j := strings.LastIndexByte(val, ' '); strings.Contains(val[j+1:], ":") {
				p.PageTitle, p.PageURL = strings.TrimSpace(val[:max(j, 0)]), val[j+1:]
			}
		case "console":
			n, _, _ := strings.Cut(val, " ")
			p.ConsoleErrors, _ = strconv.Atoi(n)
		case "restored":
			p.Restored = strings.HasPrefix(val, "true")
		case "warning":
			p.Warning = val
		case "value":
			if size, ok := sized(val); ok {
				p.ResultSize = size
				break
			}
			p.Value = val
		case "result":
			if size, ok := sized(val); ok {
				p.ResultSize = size
				break
			}
			p.Result = val
		case "tabs":
			p.Tabs = val
		case "image":
			p.Image = true
		case "download":
			p.Downloads = append(p.Downloads, val)
		case "snapshot:", "changes", "snapshot":
			p.Body = strings.Join(lines[i:], "\n")
		}
	}
	if p.RefID == "" && p.Error == "" {
		return p, fmt.Errorf("mcpserver: neither a ref_id nor an error line in the answer %q", text)
	}
	return p, nil
}
