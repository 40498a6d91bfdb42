package content

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTabs(t *testing.T) {
	tests := []struct {
		name, text string
		want       []Tab
		ok         bool
	}{
		{"two tabs", "- 0: [Shop](http://h/shop)\n- 1: (current) [](about:blank)",
			[]Tab{{Index: "0", Title: "Shop", URL: "http://h/shop"}, {Index: "1", Current: true, URL: "about:blank"}}, true},
		{"a title with brackets", "- 0: (current) [a [b] c](http://h/)", []Tab{{Index: "0", Current: true, Title: "a [b] c", URL: "http://h/"}}, true},
		{"other text", "No open tabs.", nil, false},
		{"a list with other lines", "- 0: [Shop](http://h/shop)\nmore", nil, false},
		{"empty", "", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseTabs(tt.text)
			if diff := cmp.Diff(tt.want, got); diff != "" || ok != tt.ok {
				t.Errorf("ParseTabs = %v (-want +got):\n%s", ok, diff)
			}
		})
	}
}
