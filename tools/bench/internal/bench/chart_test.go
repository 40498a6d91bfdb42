package bench

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Set BENCH_UPDATE_GOLDEN=1 to rewrite testdata/charts/*.svg from the
// fixtures (then look at them before committing).
const updateGoldenEnv = "BENCH_UPDATE_GOLDEN"

func TestCharts(t *testing.T) {
	conc, err := ReadReport(filepath.Join("testdata", "concurrency.json"))
	if err != nil {
		t.Fatal(err)
	}
	soak, err := ReadReport(filepath.Join("testdata", "soak.json"))
	if err != nil {
		t.Fatal(err)
	}
	cc, err := ConcurrencyCharts(conc.Concurrency)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := SoakCharts(soak.Soak)
	if err != nil {
		t.Fatal(err)
	}
	charts := map[string]Chart{}
	for _, c := range append(cc, sc...) {
		charts[c.Name] = c
	}
	tests := []struct {
		name string
		// series are the names every chart must draw (legend and data).
		series []string
		// texts must appear somewhere (titles, labels, tick values).
		texts []string
	}{
		{"concurrency-latency-catalogue.svg",
			[]string{"browser_navigate p50", "browser_navigate p95", "get_content p50", "browser_snapshot p95", "browser_click p50"},
			[]string{"Latency vs concurrent sessions: catalogue page", "latency, ms (log scale)", "concurrent sessions", ">10000<", "x=10, y=7229"}},
		{"concurrency-latency-form.svg",
			[]string{"browser_navigate p50", "browser_navigate p95"},
			[]string{"form page", "x=1, y=310"}},
		{"concurrency-throughput.svg",
			[]string{"successful calls/s, all sessions", "successful calls/s per session"},
			[]string{"calls/s", ">2.14<", ">0.214<"}},
		{"concurrency-memory.svg",
			[]string{"total PSS, end of load", "total PSS, 0 sessions (baseline)", "PSS per session"},
			[]string{"PSS per session, MB", ">2153<", ">473<", ">186<"}},
		{"soak-memory.svg",
			[]string{"tree RSS", "tree PSS", "proxy-server RSS", "proxy-server Go heap in use", "active", "suspended"},
			[]string{"minutes since the first sample", "verdict: no upward trend"}},
		{"soak-fds.svg",
			[]string{"tree fds", "proxy-server fds", "active"},
			[]string{"descriptors", "x=4, y=902"}},
	}
	var names []string
	for _, tt := range tests {
		names = append(names, tt.name)
		t.Run(tt.name, func(t *testing.T) {
			c, ok := charts[tt.name]
			if !ok {
				t.Fatalf("no chart %s; got %v", tt.name, keys(charts))
			}
			drawn := wellFormedSVG(t, c.SVG)
			for _, s := range tt.series {
				if !slices.Contains(drawn, s) {
					t.Errorf("series %q not drawn; drawn: %q", s, drawn)
				}
				if !bytes.Contains(c.SVG, []byte(">"+esc(s)+"</text>")) {
					t.Errorf("series %q has no legend entry", s)
				}
			}
			for _, s := range tt.texts {
				if !bytes.Contains(c.SVG, []byte(s)) {
					t.Errorf("%q not in the SVG", s)
				}
			}
			golden(t, filepath.Join("testdata", "charts", tt.name), c.SVG)
		})
	}
	slices.Sort(names)
	if got := keys(charts); !slices.Equal(got, names) {
		t.Errorf("charts = %v, want %v", got, names)
	}

	// Same input, same bytes.
	again, err := ConcurrencyCharts(conc.Concurrency)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again {
		if !bytes.Equal(c.SVG, charts[c.Name].SVG) {
			t.Errorf("%s: output differs between two renders", c.Name)
		}
	}
}

func TestChartsNoData(t *testing.T) {
	if _, err := ConcurrencyCharts(nil); err == nil {
		t.Error("ConcurrencyCharts(nil): want an error")
	}
	if _, err := ConcurrencyCharts(&ConcurrencyResult{}); err == nil {
		t.Error("ConcurrencyCharts(no levels): want an error")
	}
	if _, err := SoakCharts(&SoakResult{}); err == nil {
		t.Error("SoakCharts(no samples): want an error")
	}
}

func keys(m map[string]Chart) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// wellFormedSVG decodes the whole document with encoding/xml, checks the
// root is an svg element, and returns the data-name of every series group.
func wellFormedSVG(t *testing.T, b []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var root string
	var series []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Space + " " + se.Name.Local
		}
		if se.Name.Local == "g" {
			for _, a := range se.Attr {
				if a.Name.Local == "data-name" {
					series = append(series, a.Value)
				}
			}
		}
	}
	if root != "http://www.w3.org/2000/svg svg" {
		t.Fatalf("root element %q, want svg in the SVG namespace", root)
	}
	return series
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if os.Getenv(updateGoldenEnv) != "" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with %s=1 to create it)", err, updateGoldenEnv)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with %s=1 to update it, then look at it)", path, updateGoldenEnv)
	}
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		n      int
		want   []float64
	}{
		{0, 50, 6, []float64{0, 10, 20, 30, 40, 50}},
		{1, 50, 6, []float64{0, 10, 20, 30, 40, 50}},
		{0, 2.14, 6, []float64{0, 0.5, 1, 1.5, 2, 2.5}},
		{0, 7.3, 6, []float64{0, 2, 4, 6, 8}},
		{0, 0, 6, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{100, 100, 3, []float64{90, 100, 110}},
		{0, 2153, 6, []float64{0, 500, 1000, 1500, 2000, 2500}},
	}
	for _, tt := range tests {
		got := niceTicks(tt.lo, tt.hi, tt.n)
		if !slices.EqualFunc(got, tt.want, func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }) {
			t.Errorf("niceTicks(%v, %v, %d) = %v, want %v", tt.lo, tt.hi, tt.n, got, tt.want)
		}
	}
	// Whole numbers only: one session level, a count of 0..2.
	for _, tt := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 1, []float64{0, 1}},
		{0, 2, []float64{0, 1, 2}},
		{0, 50, []float64{0, 10, 20, 30, 40, 50}},
	} {
		if got := niceTicksStep(tt.lo, tt.hi, 6, 1); !slices.Equal(got, tt.want) {
			t.Errorf("niceTicksStep(%v, %v, 6, 1) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []float64
	}{
		{6.2, 10135, []float64{1, 10, 100, 1000, 10000, 100000}},
		{310, 1292, []float64{100, 200, 500, 1000, 2000, 5000, 10000}},
		{100, 100, []float64{100, 200, 500, 1000}},
	}
	for _, tt := range tests {
		if got := logTicks(tt.lo, tt.hi); !slices.Equal(got, tt.want) {
			t.Errorf("logTicks(%v, %v) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0, "0"}, {7229, "7229"}, {2.14, "2.14"}, {0.214, "0.214"}, {185.5, "186"}, {12.345, "12.3"}, {-3.5, "-3.5"}, {10, "10"}, {1.0001, "1"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.v); got != tt.want {
			t.Errorf("formatValue(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("aaa bbb ccc ddd", 7)
	if want := []string{"aaa bbb", "ccc ddd"}; !slices.Equal(got, want) {
		t.Errorf("wrap = %q, want %q", got, want)
	}
	if got := wrap("", 7); len(got) != 0 {
		t.Errorf("wrap(\"\") = %q, want nothing", got)
	}
	if got := strings.Join(wrap("x <&> y", 80), ""); got != "x <&> y" {
		t.Errorf("wrap changed the text: %q", got)
	}
}
