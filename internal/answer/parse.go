package answer

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Parsed is what a tool-call result says, read from its markdown sections
// (### Error, ### Result, ### Page, ### Snapshot, ### Events, …).
//
// The sections are generated text with page-controlled content inside
// (console messages, evaluate results): a page can print a fake "### …"
// header. Like upstream's own parser, a later section of the same name
// wins, so real sections (which follow ### Result) beat fakes inside it;
// file paths taken from here are still untrusted, see Ingest.
type Parsed struct {
	IsError bool
	// ErrorText is the ### Error text (ANSI colour codes removed), or the
	// whole text when isError is set without that section. Empty unless
	// IsError.
	ErrorText string
	// ResultText is the ### Result text.
	ResultText string
	// Code is the Playwright code upstream ran for the call (its "Ran
	// Playwright code" section, without the fence).
	Code string
	// Text is every text part, joined with "\n".
	Text string

	PageURL, PageTitle             string
	ConsoleErrors, ConsoleWarnings int

	// SnapshotInline is the yaml inside the ### Snapshot fence, exactly.
	SnapshotInline string
	// SnapshotFile is the page-*.yml the ### Snapshot section links to.
	SnapshotFile string

	// ConsoleFile and the 1-based inclusive line range come from
	// "- New console entries: path#Lx-Ly".
	ConsoleFile            string
	ConsoleFrom, ConsoleTo int

	// LinkedFiles are the absolute paths of every markdown link
	// ("- [Screenshot](/abs/page-….png)") and download in the text, in
	// order, without duplicates. The console log is not among them.
	LinkedFiles []string

	// Downloads are the downloads the ### Events section says finished, in
	// order; Pending names those it says started and did not finish. The
	// names are the page's (suggested by the server), the paths upstream's.
	Downloads []ParsedDownload
	Pending   []string

	// Images are the inline image parts, decoded.
	Images []ParsedImage
}

// ParsedDownload is one finished download: the file name the page
// suggested and the absolute path upstream saved it to. Late: the answer
// says it finished but not that it started, so an earlier call started it.
type ParsedDownload struct {
	Name, Path string
	Late       bool
}

// ParsedImage is one inline image part of a result.
type ParsedImage struct {
	MimeType string
	Data     []byte
}

// Section titles written by @playwright/mcp 0.0.83.
const (
	secError    = "Error"
	secResult   = "Result"
	secPage     = "Page"
	secSnapshot = "Snapshot"
	secEvents   = "Events"
	secCode     = "Ran Playwright code"
)

var (
	// linkRe matches a markdown link target, as upstream's own parser does.
	linkRe = regexp.MustCompile(`\]\(([^)\n]+)\)`)
	// snapshotLinkRe is upstream's own pattern for a linked snapshot.
	snapshotLinkRe = regexp.MustCompile(`\[Snapshot\]\(([^)\n]+)\)`)
	// downloadRe matches `- Downloaded file NAME to "PATH"`.
	downloadRe = regexp.MustCompile(`(?m)^- Downloaded file .* to "([^"\n]+)"$`)
	// downloadEventRe reads the same line's name and path.
	downloadEventRe = regexp.MustCompile(`^- Downloaded file (.*) to "([^"\n]+)"$`)
	// ansiRe matches the CSI colour codes Playwright puts in call logs.
	ansiRe = regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]")
)

// decodeContent decodes the result's content parts. The whole result is
// decoded once in the usual case; only when that fails are the parts decoded
// one by one, skipping those that do not decode (a big snapshot would
// otherwise be scanned twice).
func decodeContent(raw json.RawMessage) ([]contentPart, bool, error) {
	var fast struct {
		Content []contentPart `json:"content"`
		IsError bool          `json:"isError"`
	}
	if err := json.Unmarshal(raw, &fast); err == nil && fast.Content != nil {
		return fast.Content, fast.IsError, nil
	}
	var res struct {
		Content []json.RawMessage `json:"content"`
		IsError bool              `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, false, fmt.Errorf("parse tool result: %w", err)
	}
	if res.Content == nil {
		if trimmed := strings.TrimSpace(string(raw)); !strings.HasPrefix(trimmed, "{") {
			return nil, false, errors.New("parse tool result: not a JSON object")
		}
	}
	parts := make([]contentPart, 0, len(res.Content))
	for _, rawPart := range res.Content {
		var part contentPart
		if json.Unmarshal(rawPart, &part) == nil {
			parts = append(parts, part)
		}
	}
	return parts, res.IsError, nil
}

// contentPart is one element of a CallToolResult's content.
type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

// Parse reads a tools/call result (the JSON-RPC `result`). Unknown or missing
// sections and undecodable parts are skipped; only a result that is not a
// JSON object with a content array is an error.
func Parse(raw json.RawMessage) (*Parsed, error) {
	parts, isError, err := decodeContent(raw)
	if err != nil {
		return nil, err
	}
	p := &Parsed{IsError: isError}
	var texts []string
	sections := map[string]string{}
	for _, part := range parts {
		switch part.Type {
		case "text":
			texts = append(texts, part.Text)
			for _, s := range splitSections(part.Text) {
				sections[s.title] = s.body
			}
		case "image":
			if img, ok := decodeImage(part); ok {
				p.Images = append(p.Images, img)
			}
		}
	}
	p.Text = strings.Join(texts, "\n")

	if p.IsError {
		if body, ok := sections[secError]; ok {
			p.ErrorText = cleanText(body)
		} else {
			p.ErrorText = cleanText(p.Text)
		}
	}
	if body, ok := sections[secResult]; ok {
		p.ResultText = strings.Trim(body, "\r\n")
	}
	if body, ok := sections[secPage]; ok {
		p.parsePage(body)
	}
	if body, ok := sections[secCode]; ok {
		p.Code = unfence(body)
	}
	if body, ok := sections[secSnapshot]; ok {
		p.parseSnapshot(body)
	}
	if body, ok := sections[secEvents]; ok {
		p.parseEvents(body)
	}
	// An inline snapshot is page content: links in it are the page's, never
	// files upstream wrote, and scanning it dominated Parse on big pages.
	scan := p.Text
	if p.SnapshotInline != "" {
		scan = strings.Replace(scan, p.SnapshotInline, "", 1)
	}
	p.LinkedFiles = linkedFiles(scan)
	return p, nil
}

type section struct{ title, body string }

// splitSections splits markdown at lines starting with "### ". A body is the
// text between its header line and the newline before the next header.
func splitSections(text string) []section {
	var starts []int
	if strings.HasPrefix(text, "### ") {
		starts = append(starts, 0)
	}
	for i := 0; ; {
		j := strings.Index(text[i:], "\n### ")
		if j < 0 {
			break
		}
		i += j + 1
		starts = append(starts, i)
	}
	out := make([]section, 0, len(starts))
	for k, s := range starts {
		end := len(text)
		if k+1 < len(starts) {
			end = starts[k+1] - 1
		}
		title, body, _ := strings.Cut(text[s+len("### "):end], "\n")
		out = append(out, section{title: strings.TrimSpace(title), body: body})
	}
	return out
}

// cleanText trims and removes ANSI escapes: error texts are shown to a
// model, which gains nothing from terminal colours.
func cleanText(s string) string {
	return strings.TrimSpace(ansiRe.ReplaceAllString(s, ""))
}

func (p *Parsed) parsePage(body string) {
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "- Page URL: "):
			p.PageURL = strings.TrimPrefix(line, "- Page URL: ")
		case strings.HasPrefix(line, "- Page Title: "):
			p.PageTitle = strings.TrimPrefix(line, "- Page Title: ")
		case strings.HasPrefix(line, "- Console: "):
			p.ConsoleErrors, p.ConsoleWarnings = parseConsoleCounts(strings.TrimPrefix(line, "- Console: "))
		}
	}
}

// parseConsoleCounts reads "2 errors, 1 warnings".
func parseConsoleCounts(s string) (errs, warns int) {
	for part := range strings.SplitSeq(s, ",") {
		num, word, ok := strings.Cut(strings.TrimSpace(part), " ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			continue
		}
		switch strings.TrimSpace(word) {
		case "error", "errors":
			errs = n
		case "warning", "warnings":
			warns = n
		}
	}
	return errs, warns
}

func (p *Parsed) parseSnapshot(body string) {
	if yaml, ok := fencedBody(body); ok {
		p.SnapshotInline = yaml
		return
	}
	if m := snapshotLinkRe.FindStringSubmatch(body); m != nil {
		p.SnapshotFile = strings.TrimSpace(m[1])
		return
	}
	// Neither fence nor link: a format we do not know; keep the text.
	p.SnapshotInline = strings.Trim(body, "\r\n")
}

// fencedBody returns what is inside a ``` fence that opens the body,
// byte-exact: upstream writes "```yaml\n" + yaml + "\n```".
func fencedBody(body string) (string, bool) {
	if !strings.HasPrefix(body, "```") {
		return "", false
	}
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return "", true
	}
	rest := body[nl+1:]
	closed := strings.TrimRight(rest, " \t\r\n")
	switch {
	case closed == "```":
		return "", true
	case strings.HasSuffix(closed, "\n```"):
		return closed[:len(closed)-len("\n```")], true
	}
	return rest, true // unterminated: keep everything rather than nothing
}

func (p *Parsed) parseEvents(body string) {
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimRight(line, "\r")
		if m := downloadEventRe.FindStringSubmatch(line); m != nil {
			i := slices.Index(p.Pending, m[1])
			p.Downloads = append(p.Downloads, ParsedDownload{Name: m[1], Path: m[2], Late: i < 0})
			if i >= 0 {
				p.Pending = slices.Delete(p.Pending, i, i+1)
			}
			continue
		}
		if name, ok := strings.CutPrefix(line, "- Downloading file "); ok {
			p.Pending = append(p.Pending, strings.TrimSuffix(name, " ..."))
			continue
		}
		ref, ok := strings.CutPrefix(line, "- New console entries: ")
		if !ok {
			continue
		}
		if file, from, to, ok := parseLineRef(ref); ok {
			p.ConsoleFile, p.ConsoleFrom, p.ConsoleTo = file, from, to
		}
	}
}

// parseLineRef reads "path#L3" or "path#L3-L7".
func parseLineRef(ref string) (file string, from, to int, ok bool) {
	i := strings.LastIndex(ref, "#L")
	if i <= 0 {
		return "", 0, 0, false
	}
	file = strings.TrimSpace(ref[:i])
	fromStr, toStr, hasTo := strings.Cut(ref[i+2:], "-L")
	from, err := strconv.Atoi(strings.TrimSpace(fromStr))
	if err != nil || from < 1 {
		return "", 0, 0, false
	}
	to = from
	if hasTo {
		if to, err = strconv.Atoi(strings.TrimSpace(toStr)); err != nil || to < from {
			return "", 0, 0, false
		}
	}
	return file, from, to, file != ""
}

// linkedFiles lists absolute file paths linked from text.
func linkedFiles(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = strings.TrimSpace(p)
		if filepath.IsAbs(p) && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	for _, m := range downloadRe.FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	return out
}

func decodeImage(part contentPart) (ParsedImage, bool) {
	data, err := base64.StdEncoding.DecodeString(part.Data)
	if err != nil {
		if data, err = base64.RawStdEncoding.DecodeString(part.Data); err != nil {
			return ParsedImage{}, false
		}
	}
	if len(data) == 0 {
		return ParsedImage{}, false
	}
	mime := part.MimeType
	if mime == "" {
		mime = http.DetectContentType(data)
	}
	return ParsedImage{MimeType: mime, Data: data}, true
}

// ParseConsoleLine parses one entry of a console-*.log, e.g.
//
//	[     173ms] [WARNING] warn line @ http://127.0.0.1:8765/index.html:3
//
// (the time prefix is optional, as in browser_console_messages output). An
// entry may span lines: a message with newlines continues on the following
// lines, and the location comes after its last line. An entry with a time
// prefix but no [LEVEL] tag is an uncaught page error printed as its stack.
// ok is false for a line that does not start an entry (a continuation).
// Timestamp is left zero; RefID is for the caller.
func ParseConsoleLine(line string) (proxy.ConsoleEntry, bool) {
	e, _, _, ok := parseConsoleEntry(line)
	return e, ok
}

// parseConsoleEntry is ParseConsoleLine plus the entry's time offset (ms
// since the log file was started), when it has one.
func parseConsoleEntry(text string) (e proxy.ConsoleEntry, offsetMS int64, hasOffset, ok bool) {
	offsetMS, rest, hasOffset := splitTimePrefix(text)
	if !hasOffset {
		rest = text
	}
	tag, msg, hasTag := splitLevelTag(rest)
	if !hasOffset && !hasTag {
		return proxy.ConsoleEntry{}, 0, false, false
	}
	if !hasTag {
		e.Level = proxy.LevelError
		e.Message = strings.TrimRight(rest, "\r\n")
		return e, offsetMS, hasOffset, true
	}
	e.Level = normalizeLevel(tag)
	e.Message, e.Location = splitLocation(strings.TrimRight(msg, "\r\n"))
	return e, offsetMS, hasOffset, true
}

// splitTimePrefix reads "[     173ms] " (negative for messages that predate
// the log file).
func splitTimePrefix(s string) (int64, string, bool) {
	if !strings.HasPrefix(s, "[") {
		return 0, "", false
	}
	end := strings.Index(s, "ms]")
	if end < 2 || end > 24 {
		return 0, "", false
	}
	ms, err := strconv.ParseInt(strings.TrimSpace(s[1:end]), 10, 64)
	if err != nil {
		return 0, "", false
	}
	return ms, strings.TrimPrefix(s[end+len("ms]"):], " "), true
}

// splitLevelTag reads "[WARNING] rest": upstream writes the upper-cased
// console message type.
func splitLevelTag(s string) (tag, rest string, ok bool) {
	if !strings.HasPrefix(s, "[") {
		return "", "", false
	}
	end := strings.IndexByte(s, ']')
	if end < 2 || end > 32 {
		return "", "", false
	}
	tag = s[1:end]
	for _, c := range tag {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return "", "", false
		}
	}
	return tag, strings.TrimPrefix(s[end+1:], " "), true
}

// normalizeLevel maps a console message type onto the four stored levels,
// following upstream's own grouping (consoleLevelForMessageType).
func normalizeLevel(tag string) string {
	switch strings.ToUpper(tag) {
	case "ERROR", "ASSERT":
		return proxy.LevelError
	case "WARNING", "WARN":
		return proxy.LevelWarn
	case "DEBUG", "VERBOSE", "TRACE", "CLEAR", "STARTGROUP", "STARTGROUPCOLLAPSED",
		"ENDGROUP", "PROFILE", "PROFILEEND":
		return proxy.LevelDebug
	default: // LOG, INFO, DIR, TABLE, COUNT, TIME, TIMEEND, unknown
		return proxy.LevelInfo
	}
}

// consoleLocation is the stored shape of a console message's source.
type consoleLocation struct {
	URL          string `json:"url"`
	LineNumber   int    `json:"lineNumber"`
	ColumnNumber *int   `json:"columnNumber,omitempty"`
}

// splitLocation cuts a trailing " @ url:line[:col]" off msg. Upstream writes
// url:line; a trailing :N is a column only when the url has a path, so a
// bare "http://host:8080:3" keeps its port. An empty url (" @ :0", a message
// without a source) is cut but yields no location.
func splitLocation(msg string) (string, json.RawMessage) {
	i := strings.LastIndex(msg, " @ ")
	if i < 0 {
		return msg, nil
	}
	loc := msg[i+len(" @ "):]
	if strings.ContainsAny(loc, " \n\t") {
		return msg, nil
	}
	url, line, ok := cutTrailingNumber(loc)
	if !ok {
		return msg, nil
	}
	l := consoleLocation{URL: url, LineNumber: line}
	if u2, n2, ok := cutTrailingNumber(url); ok && hasURLPath(u2) {
		col := line
		l.URL, l.LineNumber, l.ColumnNumber = u2, n2, &col
	}
	if l.URL == "" {
		return msg[:i], nil
	}
	b, err := json.Marshal(l)
	if err != nil {
		return msg, nil
	}
	return msg[:i], b
}

// cutTrailingNumber splits "x:12" into "x", 12.
func cutTrailingNumber(s string) (string, int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || i == len(s)-1 {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return s[:i], n, true
}

// hasURLPath reports whether u has something after its authority, so a
// trailing ":N" on it cannot be a port.
func hasURLPath(u string) bool {
	if _, after, ok := strings.Cut(u, "://"); ok {
		return strings.Contains(after, "/")
	}
	return u != ""
}

// unfence returns what the first ``` fence in s holds, or s trimmed when it
// has none.
func unfence(s string) string {
	s = strings.Trim(s, "\r\n")
	if !strings.HasPrefix(s, "```") {
		return s
	}
	if nl := strings.IndexByte(s, '\n'); nl >= 0 {
		s = s[nl+1:]
	} else {
		return ""
	}
	if end := strings.LastIndex(s, "```"); end >= 0 {
		s = s[:end]
	}
	return strings.TrimRight(s, "\r\n")
}
