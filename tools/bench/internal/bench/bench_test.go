package bench

import (
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"one value", []float64{7}, 50, 7},
		{"one value p95", []float64{7}, 95, 7},
		{"odd median", []float64{3, 1, 2}, 50, 2},
		{"even median is the mean of the middle two", []float64{4, 1, 3, 2}, 50, 2.5},
		{"min", []float64{5, 9, 1}, 0, 1},
		{"max", []float64{5, 9, 1}, 100, 9},
		{"p95 of 1..20 interpolates", seq(20), 95, 19.05},
		{"p95 of 1..100", seq(100), 95, 95.05},
		{"p50 of 1..100", seq(100), 50, 50.5},
		{"p90 of two", []float64{10, 20}, 90, 19},
		{"below 0 clamps", []float64{2, 4}, -5, 2},
		{"above 100 clamps", []float64{2, 4}, 150, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.xs...)
			got := Percentile(tt.xs, tt.p)
			if math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.xs[i] {
					t.Fatalf("Percentile modified its input: %v, was %v", tt.xs, in)
				}
			}
		})
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("Percentile(nil) = %v, want NaN", got)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"four", []float64{40, 10, 30, 20}, Summary{N: 4, Min: 10, Median: 25, P95: 38.5, Max: 40, Mean: 25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Summarize(tt.xs); got != tt.want {
				t.Errorf("Summarize(%v) = %+v, want %+v", tt.xs, got, tt.want)
			}
		})
	}
}

func seq(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}

// catalogueSearch is what GET /content/{ref}?search_for=Add 17 returned for
// the catalogue page (@playwright/mcp 0.0.83): matching lines with their yaml
// ancestors.
const catalogueSearch = `- generic [active] [ref=e1]:
  - main [ref=e3]:
    - generic [ref=e4]:
      - list [ref=e6]:
        - listitem [ref=e55]:
          - button "Add 17" [ref=e57]
        - listitem [ref=e514]:
          - button "Add 170" [ref=e517]
`

const formSnapshot = `- generic [ref=e1]:
  - heading "Sign up" [level=1] [ref=e2]
  - textbox "Full name" [ref=e5]
  - button "Say \"hi\"" [ref=e20]
  - button [ref=e21]
  - button "Save draft" [active] [ref=e22] [cursor=pointer]
  - button "Validate" [ref=f1e23]:
    - img [ref=e24]
  - link "button \"Preview\"" [ref=e30]
  - buttonish "Preview" [ref=e31]
`

func TestButtonRef(t *testing.T) {
	tests := []struct {
		name, snapshot, label string
		want                  string
		ok                    bool
	}{
		{"exact name, not its prefix", catalogueSearch, "Add 17", "e57", true},
		{"longer name", catalogueSearch, "Add 170", "e517", true},
		{"absent name", catalogueSearch, "Add 1", "", false},
		{"any button", catalogueSearch, "", "e57", true},
		{"escaped quotes in the name", formSnapshot, `Say "hi"`, "e20", true},
		{"attributes between name and ref", formSnapshot, "Save draft", "e22", true},
		{"frame ref, button with children", formSnapshot, "Validate", "f1e23", true},
		{"not a button role", formSnapshot, "Preview", "", false},
		{"first button of any name", formSnapshot, "", "e20", true},
		{"empty snapshot", "", "", "", false},
		{"button without a ref", `- button "Go"`, "Go", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ButtonRef(tt.snapshot, tt.label)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ButtonRef(%q) = %q, %v; want %q, %v", tt.label, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestLoopbackOnly(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:34501", true},
		{"[::1]:80", true},
		{"0.0.0.0:34501", false},
		{"10.0.0.5:34501", false},
		{"example.com:80", false},
		{"127.0.0.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if err := loopbackOnly(tt.addr); (err == nil) != tt.ok {
				t.Errorf("loopbackOnly(%q) = %v, want ok=%v", tt.addr, err, tt.ok)
			}
		})
	}
}
