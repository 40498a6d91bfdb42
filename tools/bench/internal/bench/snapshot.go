package bench

import (
	"regexp"
	"strconv"
	"strings"
)

// buttonLineRE matches an aria-snapshot line of a button, with its optional
// accessible name and its element ref:
//
//   - button "Add 17" [ref=e57]
//   - button "Save draft" [active] [ref=f1e12]
var buttonLineRE = regexp.MustCompile(`^\s*- button(?: ("(?:[^"\\]|\\.)*"))?(?:\s|:|$).*?\[ref=([A-Za-z0-9_-]+)\]`)

// ButtonRef returns the element ref ("e57") of the first button in an
// @playwright/mcp snapshot (yaml text) whose accessible name is label, or of
// the first button at all when label is empty.
func ButtonRef(snapshot, label string) (string, bool) {
	for _, line := range strings.Split(snapshot, "\n") {
		m := buttonLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if label != "" {
			name, err := strconv.Unquote(m[1])
			if err != nil || name != label {
				continue
			}
		}
		return m[2], true
	}
	return "", false
}
