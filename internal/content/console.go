package content

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// severity ranks console levels; higher is more severe.
type severity int

const (
	sevDebug severity = iota
	sevInfo
	sevWarn
	sevError
)

// parseLevel reads a level argument: debug, info, warn, error (any case),
// with the browser's names "log" and "warning" as aliases. "" is all levels.
func parseLevel(level string) (severity, error) {
	switch strings.ToLower(strings.TrimSpace(level)) {
	case "", proxy.LevelDebug:
		return sevDebug, nil
	case proxy.LevelInfo, "log":
		return sevInfo, nil
	case proxy.LevelWarn, "warning":
		return sevWarn, nil
	case proxy.LevelError:
		return sevError, nil
	}
	return 0, proxy.Errorf(proxy.EINVALID,
		"invalid console level %q: use one of debug, info, warn, error (or leave it empty for all)", level)
}

// entrySeverity ranks a stored entry. Entries carry whatever the browser
// reported, so beyond the four levels and their aliases: "verbose" is debug,
// "assert" is an error (Chromium reports failed console.assert as one), and
// every other type (dir, table, trace, …) counts as info, so a filter never
// silently drops something it cannot place below info.
func entrySeverity(level string) severity {
	switch strings.ToLower(level) {
	case proxy.LevelDebug, "verbose":
		return sevDebug
	case proxy.LevelWarn, "warning":
		return sevWarn
	case proxy.LevelError, "assert":
		return sevError
	}
	return sevInfo
}

// FilterConsole returns the entries at minLevel or more severe, in their
// order; minLevel "" keeps all. An unknown minLevel is EINVALID. entries is
// not modified.
func FilterConsole(entries []proxy.ConsoleEntry, minLevel string) ([]proxy.ConsoleEntry, error) {
	floor, err := parseLevel(minLevel)
	if err != nil {
		return nil, err
	}
	out := make([]proxy.ConsoleEntry, 0, len(entries))
	for _, e := range entries {
		if entrySeverity(e.Level) >= floor {
			out = append(out, e)
		}
	}
	return out, nil
}

// Console returns refID's console entries at level or more severe, in full
// (console reads have no diff cursor), one per line as
// "[LEVEL] message @ url:line". A ref without entries gives ""; an unknown
// ref is the store's EREFMISSING; an unknown level is EINVALID.
func (s *Service) Console(ctx context.Context, refID, level string) (string, error) {
	if _, err := parseLevel(level); err != nil {
		return "", err // before any I/O: bad input changes and costs nothing
	}
	if err := s.visible(ctx, refID); err != nil {
		return "", err
	}
	entries, err := s.store.ListConsole(ctx, refID)
	if err != nil {
		return "", fmt.Errorf("content: console %s: %w", refID, err)
	}
	if len(entries) == 0 {
		// No entries and no such ref look the same to ListConsole; only
		// this rarer path pays for telling them apart.
		if _, err := s.store.GetResponse(ctx, refID); err != nil {
			return "", err
		}
		return "", nil
	}
	entries, err = FilterConsole(entries, level)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(formatConsoleEntry(e))
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// location is the shape of ConsoleEntry.Location.
type location struct {
	URL        string `json:"url"`
	LineNumber *int64 `json:"lineNumber"`
}

// MaxErrorLines and maxErrorLine bound the console errors a call's answer
// carries: enough to diagnose a page, never a log.
const (
	MaxErrorLines = 5
	maxErrorLine  = 200
)

// ErrorLines are the console errors of one call as its answer shows them:
// at most MaxErrorLines, each its message cut at maxErrorLine bytes and,
// when it was logged by another script than the page, where ("@ url:3",
// as get_console_content says it; a
// line of the page's own HTML, which the model never sees, is left out);
// then how many more there were. Other levels are never shown:
// get_console_content has them, with every location.
func ErrorLines(entries []proxy.ConsoleEntry, pageURL string) []string {
	var out []string
	n := 0
	for _, e := range entries {
		if entrySeverity(e.Level) < sevError {
			continue
		}
		if n++; n > MaxErrorLines {
			continue
		}
		msg := strings.Join(strings.Fields(e.Message), " ")
		if len(msg) > maxErrorLine {
			msg = truncateUTF8(msg, maxErrorLine) + "…"
		}
		var loc location
		if json.Unmarshal(e.Location, &loc) == nil && loc.LineNumber != nil && loc.URL != "" && loc.URL != pageURL {
			msg += " @ " + loc.URL + ":" + strconv.FormatInt(*loc.LineNumber, 10)
		}
		out = append(out, msg)
	}
	if n > MaxErrorLines {
		out = append(out, strconv.Itoa(n-MaxErrorLines)+" more: get_console_content(ref_id, level: error)")
	}
	return out
}

// formatConsoleEntry renders one entry as "[LEVEL] message @ url:line",
// the form @playwright/mcp itself uses. The location part is left out when
// the entry has no usable location, and ":line" when it has no line.
func formatConsoleEntry(e proxy.ConsoleEntry) string {
	s := "[" + strings.ToUpper(e.Level) + "] " + e.Message
	var loc location
	if len(e.Location) == 0 || json.Unmarshal(e.Location, &loc) != nil || loc.URL == "" {
		return s
	}
	s += " @ " + loc.URL
	if loc.LineNumber != nil {
		s += ":" + strconv.FormatInt(*loc.LineNumber, 10)
	}
	return s
}
