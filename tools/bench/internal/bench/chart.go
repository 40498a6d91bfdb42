package bench

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

type Chart struct {
	Name string
	SVG  []byte
}

func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decoding report %s: %w", path, err)
	}
	return &r, nil
}

func WriteCharts(dir string, charts []Chart) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("chart directory: %w", err)
	}
	var paths []string
	for _, c := range charts {
		p := filepath.Join(dir, c.Name)
		if err := os.WriteFile(p, c.SVG, 0o644); err != nil {
			return paths, fmt.Errorf("writing chart: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// ConcurrencyCharts draws the concurrency results: latency (p50, p95) of
// each tool against the number of sessions, one chart per page; calls/s;
// memory (total PSS and PSS per session).
func ConcurrencyCharts(res *ConcurrencyResult) ([]Chart, error) {
	if res == nil || len(res.Levels) == 0 {
		return nil, fmt.Errorf("the report has no concurrency levels")
	}
	var levels []float64
	for _, l := range res.Levels {
		levels = append(levels, float64(l.Level))
	}
	sub := fmt.Sprintf("bench concurrency: %.0f s of load per level; pages %s", res.DurationMS/1000, strings.Join(res.Pages, ", "))
	sessions := func(p panel) panel {
		p.xLabel, p.xTicks, p.xStep = "concurrent sessions", levels, 1
		return p
	}
	var charts []Chart
	for _, page := range res.Pages {
		var tools []string
		for _, l := range res.Levels {
			for _, t := range l.Tools {
				if t.Page == page && !slices.Contains(tools, t.Tool) {
					tools = append(tools, t.Tool)
				}
			}
		}
		slices.SortFunc(tools, func(a, b string) int { return byToolPage(a, "", b, "") })
		var ss []series
		for i, tool := range tools {
			p50 := series{name: tool + " p50", color: palette[i%len(palette)]}
			p95 := series{name: tool + " p95", color: p50.color, dashed: true}
			for _, l := range res.Levels {
				for _, t := range l.Tools {
					if t.Page == page && t.Tool == tool && t.Latency.N > 0 {
						p50.points = append(p50.points, point{float64(l.Level), t.Latency.Median})
						p95.points = append(p95.points, point{float64(l.Level), t.Latency.P95})
					}
				}
			}
			ss = append(ss, p50, p95)
		}
		charts = append(charts, Chart{Name: "concurrency-latency-" + page + ".svg", SVG: figure{
			title:    "Latency vs concurrent sessions: " + page + " page",
			subtitle: sub + "; successful calls; p50 solid, p95 dashed",
			panels:   []panel{sessions(panel{yLabel: "latency, ms (log scale)", logY: true, series: ss})},
		}.render()})
	}

	rate := series{name: "successful calls/s, all sessions", color: palette[0]}
	per := series{name: "successful calls/s per session", color: palette[1], dashed: true}
	total := series{name: "total PSS, end of load", color: palette[0]}
	base := series{name: "total PSS, 0 sessions (baseline)", color: palette[6], dashed: true}
	perPSS := series{name: "PSS per session", color: palette[1]}
	for _, l := range res.Levels {
		x := float64(l.Level)
		rate.points = append(rate.points, point{x, l.CallsPerSec})
		total.points = append(total.points, point{x, float64(l.End.PSSKB) / 1024})
		base.points = append(base.points, point{x, float64(l.Baseline.PSSKB) / 1024})
		if l.Created > 0 {
			per.points = append(per.points, point{x, l.CallsPerSec / float64(l.Created)})
			perPSS.points = append(perPSS.points, point{x, l.PerSessionPSSKB / 1024})
		}
	}
	return append(charts, Chart{Name: "concurrency-throughput.svg", SVG: figure{
		title:    "Throughput vs concurrent sessions",
		subtitle: sub + "; calls = POST /call (navigate, snapshot, click)",
		panels:   []panel{sessions(panel{yLabel: "calls/s", yFromZero: true, valueLabels: true, series: []series{rate, per}})},
	}.render()}, Chart{Name: "concurrency-memory.svg", SVG: figure{
		title: "Memory vs concurrent sessions",
		subtitle: sub + "; PSS of the whole process tree (proxy-server, node workers, browser), " +
			"per session = (end − baseline) / sessions",
		panels: []panel{
			sessions(panel{title: "total", yLabel: "PSS, MB", yFromZero: true, valueLabels: true, series: []series{total, base}}),
			sessions(panel{title: "per session", yLabel: "PSS per session, MB", yFromZero: true, valueLabels: true, series: []series{perPSS}}),
		},
	}.render()}), nil
}

// SoakCharts draws the soak samples: memory and descriptors over time, with
// the sessions' states for context.
func SoakCharts(res *SoakResult) ([]Chart, error) {
	if res == nil || len(res.Samples) == 0 {
		return nil, fmt.Errorf("the report has no soak samples")
	}
	sub := fmt.Sprintf("bench soak: %d sessions, idle timeout %.0f s, sample 0 after warm-up; verdict: %s",
		res.Sessions, res.IdleTimeoutMS/1000, res.Verdict)
	// Negative values were not measured.
	line := func(name string, color int, dashed bool, f func(SoakSample) float64) series {
		s := series{name: name, color: palette[color], dashed: dashed}
		for _, x := range res.Samples {
			if v := f(x); v >= 0 {
				s.points = append(s.points, point{x.ElapsedS / 60, v})
			}
		}
		return s
	}
	over := func(title, yLabel string, yStep float64, ss ...series) panel {
		return panel{title: title, xLabel: "minutes since the first sample", yLabel: yLabel, yFromZero: true, yStep: yStep, series: ss}
	}
	sessions := over("sessions", "sessions", 1,
		line("active", 2, false, SoakSample.activeSessions),
		line("suspended", 4, true, func(s SoakSample) float64 { return float64(s.Suspended) }))
	server := over("proxy-server", "MB", 0, line("proxy-server RSS", 1, false, func(s SoakSample) float64 { return float64(s.ServerRSSKB) / 1024 }))
	if heap := line("proxy-server Go heap in use", 3, true, func(s SoakSample) float64 { return float64(s.HeapInuseKB) / 1024 }); len(heap.points) > 0 {
		server.series = append(server.series, heap)
	}
	return []Chart{
		{Name: "soak-memory.svg", SVG: figure{title: "Soak: memory over time", subtitle: sub, panels: []panel{
			over("process tree", "MB", 0,
				line("tree RSS", 0, false, func(s SoakSample) float64 { return float64(s.Memory.RSSKB) / 1024 }),
				line("tree PSS", 5, true, func(s SoakSample) float64 { return float64(s.Memory.PSSKB) / 1024 })),
			server, sessions,
		}}.render()},
		{Name: "soak-fds.svg", SVG: figure{title: "Soak: open file descriptors over time", subtitle: sub, panels: []panel{
			over("process tree", "descriptors", 1, line("tree fds", 0, false, func(s SoakSample) float64 { return float64(s.TreeFDs) })),
			over("proxy-server", "descriptors", 1, line("proxy-server fds", 1, false, func(s SoakSample) float64 { return float64(s.ServerFDs) })),
			sessions,
		}}.render()},
	}, nil
}

// palette is Okabe & Ito's colour-blind-safe set (yellow left out: too
// pale on white).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#555555"}

type point struct{ x, y float64 }

type series struct {
	name, color string
	dashed      bool
	points      []point
}

// panel is a line chart. yFromZero starts a linear y axis at 0 (honest for
// amounts); xStep and yStep are the least tick steps: 1 keeps ticks on
// whole numbers (sessions, descriptors: 0.5 of one means nothing); xTicks
// must be in the domain.
type panel struct {
	title, xLabel, yLabel string
	logY, yFromZero       bool
	xTicks                []float64
	xStep, yStep          float64
	valueLabels           bool
	series                []series
}

// barPanel is a grouped bar chart: one group per category, one bar per
// series in each; a negative value draws no bar.
type barPanel struct {
	title, xLabel, yLabel string
	logY                  bool
	categories            []string
	series                []barSeries
}

type barSeries struct {
	name, color string
	values      []float64
}

// figure is panels, then bar panels, one under the other.
type figure struct {
	title, subtitle string
	panels          []panel
	bars            []barPanel
}

// Layout, in SVG user units: the legend goes right of the plots.
const (
	svgWidth, headerHeight, panelHeight = 900, 64, 330
	plotLeft, plotRight                 = 80, svgWidth - 250
	panelTop, panelBottom               = 34, 56 // title above a plot; ticks and x label below
)

// svg is a document being written. Output depends only on what is drawn:
// no maps, no clocks, fixed number formats.
type svg struct{ strings.Builder }

func (s *svg) line(x1, y1, x2, y2 float64, attrs string) {
	fmt.Fprintf(s, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" %s/>\n", num(x1), num(y1), num(x2), num(y2), attrs)
}

func (s *svg) text(x, y float64, attrs, text string) {
	fmt.Fprintf(s, "<text x=\"%s\" y=\"%s\" %s>%s</text>\n", num(x), num(y), attrs, esc(text))
}

// scale maps data values to positions from a (first tick) to b (last).
type scale struct {
	ticks []float64
	log   bool
	a, b  float64
}

func newScale(vals []float64, log, fromZero bool, step, a, b float64) scale {
	s := scale{log: log, a: a, b: b}
	if log {
		vals = slices.DeleteFunc(slices.Clone(vals), func(v float64) bool { return v <= 0 })
	}
	if len(vals) == 0 {
		vals = map[bool][]float64{true: {1, 10}, false: {0, 1}}[log]
	}
	lo, hi := slices.Min(vals), slices.Max(vals)
	if log {
		s.ticks = logTicks(lo, hi)
		return s
	}
	if fromZero {
		lo = min(0, lo)
	}
	s.ticks = niceTicksStep(lo, hi, 6, step)
	return s
}

func (s scale) pos(v float64) float64 {
	f := func(x float64) float64 {
		if s.log {
			return math.Log10(x)
		}
		return x
	}
	lo, hi := f(s.ticks[0]), f(s.ticks[len(s.ticks)-1])
	return s.a + (f(v)-lo)/(hi-lo)*(s.b-s.a)
}

func (f figure) render() []byte {
	height := headerHeight + panelHeight*(len(f.panels)+len(f.bars)) + 10
	var s svg
	fmt.Fprintf(&s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %[1]d %[2]d\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n", svgWidth, height)
	fmt.Fprintf(&s, "<title>%s</title>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", esc(f.title), svgWidth, height)
	s.text(plotLeft-60, 26, `font-size="18" font-weight="bold"`, f.title)
	for i, line := range wrap(f.subtitle, 130)[:min(2, len(wrap(f.subtitle, 130)))] {
		s.text(plotLeft-60, float64(44+14*i), `font-size="11" fill="#444444"`, line)
	}
	for i, p := range f.panels {
		p.render(&s, y0(i))
	}
	for i, p := range f.bars {
		p.render(&s, y0(len(f.panels)+i))
	}
	s.WriteString("</svg>\n")
	return []byte(s.String())
}

func y0(i int) float64 { return float64(headerHeight + i*panelHeight + panelTop) }

func (p panel) render(s *svg, top float64) {
	var xs, ys []float64
	for _, sr := range p.series {
		for _, pt := range sr.points {
			if !p.logY || pt.y > 0 {
				xs, ys = append(xs, pt.x), append(ys, pt.y)
			}
		}
	}
	x := newScale(append(xs, p.xTicks...), false, true, p.xStep, plotLeft, plotRight)
	y := frame(s, "panel", p.title, p.xLabel, p.yLabel, top, newScale(ys, p.logY, p.yFromZero, p.yStep, 0, 0))
	for _, v := range x.ticks {
		s.line(x.pos(v), y.a, x.pos(v), y.a+5, `stroke="#333333"`)
		s.text(x.pos(v), y.a+19, `text-anchor="middle" class="xtick"`, formatTick(v, tickDecimals(x.ticks, false)))
	}
	for i, sr := range p.series {
		fmt.Fprintf(s, "<g class=\"series\" data-name=\"%s\">\n", esc(sr.name))
		var pts []string
		var marks svg
		for _, pt := range sr.points {
			if p.logY && pt.y <= 0 {
				continue
			}
			cx, cy := x.pos(pt.x), y.pos(pt.y)
			pts = append(pts, num(cx)+","+num(cy))
			fmt.Fprintf(&marks, "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\" stroke=\"%s\"><title>%s: x=%s, y=%s</title></circle>\n",
				num(cx), num(cy), map[bool]string{false: sr.color, true: "#ffffff"}[sr.dashed], sr.color, esc(sr.name), formatValue(pt.x), formatValue(pt.y))
			if p.valueLabels {
				marks.text(cx, cy-7, `font-size="10" text-anchor="middle" fill="`+sr.color+`"`, formatValue(pt.y))
			}
		}
		if len(pts) > 1 {
			fmt.Fprintf(s, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>\n", sr.color, dashAttr(sr.dashed), strings.Join(pts, " "))
		}
		s.WriteString(marks.String() + "</g>\n")
		legend(s, i, top, sr.name, fmt.Sprintf(`<line x1="%[1]s" y1="%[2]s" x2="%[3]s" y2="%[2]s" stroke="%[4]s" stroke-width="2"%[5]s/>`,
			num(plotRight+20), num(top+8+float64(i)*18), num(plotRight+46), sr.color, dashAttr(sr.dashed)))
	}
	s.WriteString("</g>\n")
}

func (p barPanel) render(s *svg, top float64) {
	var ys []float64
	for _, sr := range p.series {
		for _, v := range sr.values {
			if v > 0 || (!p.logY && v == 0) {
				ys = append(ys, v)
			}
		}
	}
	if !p.logY && len(ys) > 0 {
		ys = []float64{0, slices.Max(ys) * 1.1} // headroom for the tallest bar's label
	}
	y := frame(s, "bars", p.title, p.xLabel, p.yLabel, top, newScale(ys, p.logY, true, 0, 0, 0))
	// Each category gets an equal slot; its bars fill 80 % of it.
	slot := float64(plotRight-plotLeft) / float64(max(1, len(p.categories)))
	barW := slot * 0.8 / float64(max(1, len(p.series)))
	for i, c := range p.categories {
		s.text(plotLeft+slot*(float64(i)+0.5), y.a+19, `text-anchor="middle" class="xtick"`, c)
	}
	for k, sr := range p.series {
		fmt.Fprintf(s, "<g class=\"series\" data-name=\"%s\">\n", esc(sr.name))
		for i, v := range sr.values {
			if i >= len(p.categories) || v < 0 || (p.logY && v <= 0) {
				continue
			}
			bx, by := plotLeft+slot*(float64(i)+0.1)+barW*float64(k), y.pos(v)
			fmt.Fprintf(s, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"><title>%s, %s: %s</title></rect>\n",
				num(bx), num(by), num(barW-1), num(y.a-by), sr.color, esc(sr.name), esc(p.categories[i]), formatValue(v))
			// About 5.5 units a character at this size: a label wider than
			// its bar runs up the bar instead of into the next bar's label.
			label, lx, ly, attrs := shortValue(v), bx+barW/2, by-3, `text-anchor="middle"`
			if float64(len(label))*5.5 > barW {
				lx += 3
				attrs = fmt.Sprintf(`text-anchor="start" transform="rotate(-90 %s %s)"`, num(lx), num(ly))
			}
			s.text(lx, ly, `font-size="9" `+attrs+` fill="`+sr.color+`"`, label)
		}
		s.WriteString("</g>\n")
		legend(s, k, top, sr.name, fmt.Sprintf(`<rect x="%s" y="%s" width="26" height="10" fill="%s"/>`, num(plotRight+20), num(top+3+float64(k)*18), sr.color))
	}
	s.WriteString("</g>\n")
}

// frame opens a plot's group and draws its title, grid, y ticks, axes and
// axis labels; it returns y placed on the plot (a is the bottom).
func frame(s *svg, class, title, xLabel, yLabel string, top float64, y scale) scale {
	bottom := top + panelHeight - panelTop - panelBottom
	y.a, y.b = bottom, top
	fmt.Fprintf(s, "<g class=%q>\n", class)
	if title != "" {
		s.text(plotLeft, top-10, `font-size="13" font-weight="bold"`, title)
	}
	for _, v := range y.ticks {
		s.line(plotLeft, y.pos(v), plotRight, y.pos(v), `stroke="#e3e3e3"`)
		s.line(plotLeft-5, y.pos(v), plotLeft, y.pos(v), `stroke="#333333"`)
		s.text(plotLeft-8, y.pos(v)+4, `text-anchor="end" class="ytick"`, formatTick(v, tickDecimals(y.ticks, y.log)))
	}
	s.line(plotLeft, top, plotLeft, bottom, `stroke="#333333"`)
	s.line(plotLeft, bottom, plotRight, bottom, `stroke="#333333"`)
	s.text((plotLeft+plotRight)/2, bottom+40, `text-anchor="middle" class="xlabel"`, xLabel)
	mid := num((top + bottom) / 2)
	s.text(plotLeft-58, (top+bottom)/2, `text-anchor="middle" transform="rotate(-90 `+num(plotLeft-58)+` `+mid+`)" class="ylabel"`, yLabel)
	return y
}

func legend(s *svg, i int, top float64, name, mark string) {
	s.WriteString(mark + "\n")
	s.text(plotRight+52, top+12+float64(i)*18, `class="legend"`, name)
}

func dashAttr(dashed bool) string {
	if dashed {
		return ` stroke-dasharray="7 4"`
	}
	return ""
}

// niceTicks returns about n evenly spaced round ticks (steps of 1, 2 or 5
// × 10^k) whose first is ≤ lo and last ≥ hi.
func niceTicks(lo, hi float64, n int) []float64 { return niceTicksStep(lo, hi, n, 0) }

func niceTicksStep(lo, hi float64, n int, minStep float64) []float64 {
	lo, hi = min(lo, hi), max(lo, hi)
	switch d := math.Abs(lo) * 0.1; {
	case hi == lo && lo == 0:
		hi = 1
	case hi == lo:
		lo, hi = lo-d, hi+d
	}
	x := (hi - lo) / float64(max(1, n-1))
	e := math.Pow(10, math.Floor(math.Log10(x)))
	step := 10 * e
	for _, f := range []float64{1, 2, 5} {
		if x <= f*e {
			step = f * e
			break
		}
	}
	step = max(step, minStep)
	var out []float64
	for i := 0.0; len(out) <= 100; i++ {
		v := math.Round(math.Floor(lo/step)+i) * step // no float error accumulated
		out = append(out, v)
		if v >= math.Ceil(hi/step)*step-step*1e-9 {
			break
		}
	}
	return out
}

// logTicks covers [lo, hi] with whole decades; within each decade 2 and 5
// are ticks too when the range spans at most three decades.
func logTicks(lo, hi float64) []float64 {
	a, z := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	z = max(z, a+1)
	var out []float64
	for e := a; e <= z; e++ {
		d := math.Pow(10, e)
		out = append(out, d)
		if z-a <= 3 && e < z {
			out = append(out, 2*d, 5*d)
		}
	}
	return out
}

func tickDecimals(ticks []float64, logScale bool) int {
	if logScale || len(ticks) < 2 {
		return max(0, -int(math.Floor(math.Log10(ticks[0]))))
	}
	return max(0, -int(math.Floor(math.Log10(ticks[1]-ticks[0])+1e-9)))
}

func formatTick(v float64, decimals int) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// formatValue writes a data value with three significant digits, trailing
// zeros dropped (no exponent for the ranges charted here).
func formatValue(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	s := strconv.FormatFloat(v, 'f', max(0, 2-int(math.Floor(math.Log10(math.Abs(v))))), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// shortValue is formatValue in thousands from 10,000 up ("20.3k"), so
// that the labels of neighbouring bars do not run into each other.
func shortValue(v float64) string {
	if math.Abs(v) >= 10000 {
		return formatValue(v/1000) + "k"
	}
	return formatValue(v)
}

func num(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func wrap(s string, width int) []string {
	var lines []string
	for _, w := range strings.Fields(s) {
		if n := len(lines); n > 0 && len([]rune(lines[n-1]))+1+len([]rune(w)) <= width {
			lines[n-1] += " " + w
		} else {
			lines = append(lines, w)
		}
	}
	return lines
}
