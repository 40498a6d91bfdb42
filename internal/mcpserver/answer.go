package mcpserver

import (
	"fmt"
	"strconv"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
)

// Answer renders what the model reads of a browser tool call: one line per
// fact it uses, and only the facts that apply. Nothing repeats what the
// model sent (the tool, its session) or holds the same value on every
// call (a timestamp, false flags); the page's URL and title come only when
// they changed. What the call did to the page comes last: the summary of
// changes against the session's previous snapshot, or a new page whole when
// it is small, so an action needs no second read to be verified. The HTTP
// API's /call keeps the full JSON for scripts; this is the MCP answer.
//
//	ref_id: 3232f408-800e-4da1-9874-6d0bb8795a7f
//	page: Shop http://127.0.0.1:8080/   (the title alone after browser_navigate)
//	console: 1 error
//	! Failed to load /api/cart: 503
//	changes: +1 -1 ~1
//	~ paragraph: "Cart: 1" (was "Cart: 0")
func Answer(res *proxy.CallResult) string {
	var b strings.Builder
	line := func(key, val string) {
		b.WriteString(key)
		b.WriteString(": ")
		b.WriteString(val)
		b.WriteByte('\n')
	}
	if res.Status == proxy.StatusError {
		head := res.Error
		if res.ErrorCode != "" {
			code := res.ErrorCode
			if res.Retryable != nil && *res.Retryable {
				code += " (retryable)"
			}
			head = code + ": " + res.Error
		}
		line("error", oneLine(head))
		if res.Suggestion != "" {
			line("suggestion", oneLine(res.Suggestion))
		}
	}
	line("ref_id", res.RefID)
	if res.Warning != "" {
		line("warning", oneLine(res.Warning))
	}
	md, ch := res.Metadata, res.Changes
	if ch != nil && (ch.NewPage || ch.TitleChanged) && (md.PageURL != "" || md.PageTitle != "") {
		switch {
		case !ch.URLAsSent:
			line("page", strings.TrimSpace(oneLine(md.PageTitle)+" "+md.PageURL))
		case md.PageTitle != "":
			line("page", oneLine(md.PageTitle)) // the URL is the one the model sent
		}
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
	if len(res.Value) > 0 {
		line("value", string(res.Value))
	}
	if md.Result != "" {
		line("result", md.Result)
	}
	if md.HasImage {
		line("image", "get_content(ref_id) returns it")
	}
	switch {
	case ch == nil || !md.HasSnapshot:
	case ch.NewPage && ch.Text != "":
		b.WriteString("snapshot:\n")
		b.WriteString(ch.Text)
		b.WriteByte('\n')
	case ch.NewPage:
		line("snapshot", content.FormatBytes(md.SnapshotBytes)+", read with get_content")
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

// Parsed is what ParseAnswer reads back from an Answer.
type Parsed struct {
	RefID string
	// Error is the error line ("" on success): the code, when there is
	// one, then the message.
	Error string
	// PageTitle and PageURL are set when the answer has a page line (the
	// page changed).
	PageTitle, PageURL string
	ConsoleErrors      int
	Restored           bool
	// Warning is set when the call ran but its answer is not in the
	// record.
	Warning       string
	Value, Result string
	Image         bool
	// Body is what follows the facts: the snapshot or the changes, with
	// their header line.
	Body string
}

// ParseAnswer reads the facts of an Answer back, for clients and tests
// that script the proxy through MCP.
func ParseAnswer(text string) (Parsed, error) {
	var p Parsed
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		key, val, _ := strings.Cut(l, ": ")
		switch key {
		case "ref_id":
			p.RefID = val
		case "error":
			p.Error = val
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
			p.Value = val
		case "result":
			p.Result = val
		case "image":
			p.Image = true
		case "snapshot:", "changes", "snapshot":
			p.Body = strings.Join(lines[i:], "\n")
		}
		if p.Body != "" {
			break
		}
	}
	if p.RefID == "" {
		return p, fmt.Errorf("mcpserver: no ref_id line in the answer %q", text)
	}
	return p, nil
}
