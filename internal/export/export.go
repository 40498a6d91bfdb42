// Package export turns the record of one session into documents for other
// tools: a runnable Playwright test of its actions, built from the code
// upstream reports for each call, and the whole record as JSON. It reads
// only what it is given, as recorded (secrets stay masked), and never
// touches the store or a browser.
package export

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// Formats.
const (
	FormatPlaywright = "playwright"
	FormatJSON       = "json"
)

// JSON returns the session's record as an indented JSON document; without
// snapshots, each response's page_snapshot is left out (its size stays),
// which is what a timeline needs.
func JSON(s *proxy.Session, calls []proxy.Call, events []proxy.SessionEvent, snapshots bool) ([]byte, error) {
	if events == nil {
		events = []proxy.SessionEvent{}
	}
	rec := wire.ExportRecord{Session: s, Calls: make([]wire.ExportedCall, 0, len(calls)), Events: events}
	for _, c := range calls {
		rc := read(c)
		if r := c.Response; r != nil {
			rc.DurationMS = r.Timestamp.Sub(c.Request.Timestamp).Milliseconds()
			rc.SnapshotBytes = len(r.PageSnapshot)
			if !snapshots && r.PageSnapshot != "" {
				lean := *r
				lean.PageSnapshot = ""
				rc.Response = &lean
			}
		}
		rec.Calls = append(rec.Calls, rc)
	}
	out, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return append(out, '\n'), nil
}

// read adds to c what its answer says of the page and the code that ran.
func read(c proxy.Call) wire.ExportedCall {
	rc := wire.ExportedCall{Call: c}
	if c.Response == nil || c.Response.Result == "" {
		return rc
	}
	p, err := answer.Parse(json.RawMessage(c.Response.Result))
	if err != nil {
		return rc
	}
	rc.PageURL, rc.PageTitle, rc.Code = p.PageURL, p.PageTitle, p.Code
	return rc
}

// Playwright returns a Playwright test (a .spec.ts file) that replays the
// session's successful calls with the code upstream ran for them, and
// asserts the URL and title each call left the page at whenever they
// changed. Calls that failed, or ran no code (snapshots, reads), appear as
// comments, so the test reads as the session went.
func Playwright(s *proxy.Session, calls []proxy.Call) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// Session %s (created %s), exported by playwright-mcp-proxy.\n", s.ID, s.CreatedAt.UTC().Format(time.RFC3339))
	b.WriteString("// Run it with `npx playwright test`. Values masked when recorded (<secret>…</secret>) stay masked:\n")
	b.WriteString("// put the real ones in, e.g. from process.env, before running it.\n")
	b.WriteString("import { test, expect } from '@playwright/test';\n\n")
	if s.Profile != "" {
		writeProfile(&b, s)
	}
	fmt.Fprintf(&b, "test(%s, async ({ page }) => {\n", jsString("session "+s.ID))
	var url, title string
	steps := 0
	for _, c := range calls {
		rc := read(c)
		label := c.Request.ToolName
		if params := strings.TrimSpace(string(c.Request.Params)); params != "" && params != "{}" && params != "null" {
			label += " " + params
		}
		fmt.Fprintf(&b, "  // %s: %s\n", c.Request.RefID, oneLine(label, 200))
		switch {
		case c.Response == nil:
			b.WriteString("  // (no answer was recorded)\n")
			continue
		case c.Response.Status != proxy.StatusSuccess:
			fmt.Fprintf(&b, "  // failed: %s\n", oneLine(c.Response.ErrorMessage, 200))
			continue
		case rc.Code == "":
			continue
		}
		steps++
		for _, line := range strings.Split(rc.Code, "\n") {
			b.WriteString("  " + line + "\n")
		}
		if rc.PageURL != "" && rc.PageURL != url {
			url = rc.PageURL
			fmt.Fprintf(&b, "  await expect(page).toHaveURL(%s);\n", jsString(url))
		}
		if rc.PageTitle != "" && rc.PageTitle != title {
			title = rc.PageTitle
			fmt.Fprintf(&b, "  await expect(page).toHaveTitle(%s);\n", jsString(title))
		}
	}
	if steps == 0 {
		b.WriteString("  // The session ran no browser action to replay.\n")
	}
	b.WriteString("});\n")
	return []byte(b.String())
}

// writeProfile starts the test from the login profile the session started
// from. The profile's storage state holds credentials, so the export names
// a file in its place and says how the operator gets it: an export is
// meant to be shared, a login is not.
func writeProfile(b *strings.Builder, s *proxy.Session) {
	name := oneLine(s.Profile, 64)
	fmt.Fprintf(b, "// The session started from login profile %s. Its storage state (cookies,\n", name)
	b.WriteString("// localStorage, IndexedDB) is not included: export it with\n")
	fmt.Fprintf(b, "//   proxy-server profile export %s %s.json\n", name, name)
	fmt.Fprintf(b, "// (or GET /profiles/%s/state with the operator's token) and put its path here.\n", name)
	fmt.Fprintf(b, "test.use({ storageState: %s });\n\n", jsText("<path to "+name+".json>"))
}

// jsText is s as a JavaScript string literal that keeps '<' and '>' as
// written, for text the export itself composes.
func jsText(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// jsString is s as a JavaScript string literal: JSON's escaping is valid
// JavaScript.
func jsString(s string) string {
	q, _ := json.Marshal(s) // a string always encodes
	return string(q)
}

// oneLine is s on one line, at most n bytes of it, for a // comment: every
// line terminator JavaScript knows (U+2028 and U+2029 too) is white space
// to strings.Fields, so page text cannot end the comment.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
