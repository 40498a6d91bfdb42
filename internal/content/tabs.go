package content

import (
	"regexp"
	"strings"
)

// Tab is one tab of upstream's tab list.
type Tab struct {
	Index, Title, URL string
	Current           bool
}

// tabLineRE is one line of upstream's tab list: "- 1: (current) [Title](url)".
var tabLineRE = regexp.MustCompile(`^- (\d+): (\(current\) )?\[(.*)\]\((.*)\)$`)

// ParseTabs reads the tab list browser_tabs answers (its whole result);
// ok is false for any other text.
func ParseTabs(text string) (tabs []Tab, ok bool) {
	if text == "" {
		return nil, false
	}
	for _, l := range strings.Split(text, "\n") {
		m := tabLineRE.FindStringSubmatch(l)
		if m == nil {
			return nil, false
		}
		tabs = append(tabs, Tab{Index: m[1], Current: m[2] != "", Title: m[3], URL: m[4]})
	}
	return tabs, true
}
