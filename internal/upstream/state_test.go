//go:build unix

package upstream

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTabLine(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		want   tabLine
		wantOK bool
	}{
		{"current", "- 0: (current) [Home](http://127.0.0.1:8080/)", tabLine{url: "http://127.0.0.1:8080/", title: "Home", current: true}, true},
		{"not current", "- 12: [Other](https://example.com/a?b=c#d)", tabLine{url: "https://example.com/a?b=c#d", title: "Other"}, true},
		{"blank page, empty title", "- 0: (current) [](about:blank)", tabLine{url: "about:blank", current: true}, true},
		{"crashed", "- 1: (current) [Gone](https://example.com/) [crashed]", tabLine{url: "https://example.com/", title: "Gone", current: true}, true},
		{"title with brackets and a fake link", "- 0: (current) [see [x](http://evil/) now](https://real.example/)",
			tabLine{url: "https://real.example/", title: "see [x](http://evil/) now", current: true}, true},
		{"title with a fake current marker", "- 1: [ (current) [t](http://evil/)](https://real.example/)",
			tabLine{url: "https://real.example/", title: " (current) [t](http://evil/)"}, true},
		{"url containing ](", "- 0: (current) [T](https://example.com/a](b)",
			tabLine{url: "https://example.com/a](b", title: "T", current: true}, true},
		{"url with parentheses", "- 0: [W](https://en.wikipedia.org/wiki/Go_(language))",
			tabLine{url: "https://en.wikipedia.org/wiki/Go_(language)", title: "W"}, true},
		{"chrome error page", "- 0: (current) [127.0.0.1](chrome-error://chromewebdata/)",
			tabLine{url: "chrome-error://chromewebdata/", title: "127.0.0.1", current: true}, true},
		{"no tabs", "No open tabs. Navigate to a URL to create one.", tabLine{}, false},
		{"not a list item", "### Result", tabLine{}, false},
		{"index not a number", "- a: [T](https://example.com/)", tabLine{}, false},
		{"no link", "- 0: (current) Title", tabLine{}, false},
		{"no URL with a scheme", "- 0: [T](relative/path)", tabLine{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseTabLine(tt.line)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(tabLine{})); diff != "" {
				t.Errorf("parseTabLine (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseCurrentTab(t *testing.T) {
	tests := []struct {
		name   string
		result string
		want   tabLine
		wantOK bool
	}{
		{"the current one wins", "- 0: [A](https://a.example/)\n- 1: (current) [B](https://b.example/)\r\n- 2: [C](https://c.example/)",
			tabLine{url: "https://b.example/", title: "B", current: true}, true},
		{"none current: the first", "- 0: [A](https://a.example/)\n- 1: [B](https://b.example/)",
			tabLine{url: "https://a.example/", title: "A"}, true},
		{"garbage lines are skipped", "noise\n- 0: (current) [A](https://a.example/)", tabLine{url: "https://a.example/", title: "A", current: true}, true},
		{"no tabs", "No open tabs. Navigate to a URL to create one.", tabLine{}, false},
		{"empty", "", tabLine{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseCurrentTab(tt.result)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(tabLine{})); diff != "" {
				t.Errorf("parseCurrentTab (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRestorableURL(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"https://example.com/a?b#c", "https://example.com/a?b#c", true},
		{"HTTP://example.com/", "HTTP://example.com/", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"", "", false},
		{"about:blank", "", false},
		{"data:text/html,<p>hi</p>", "", false},
		{"chrome-error://chromewebdata/", "", false},
		{"file:///etc/passwd", "", false},
		{"javascript:alert(1)", "", false},
		{"http:///no-host", "", false},
		{"https://exa mple.com/", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := restorableURL(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("restorableURL(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}
