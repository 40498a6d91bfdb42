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

// Chart is one generated SVG file.
type Chart struct {
	// Name is the file name, e.g. "concurrency-memory.svg".
	Name string
	SVG  []byte
}

// ReadReport reads a report written by -json.
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

// WriteCharts writes every chart into dir (created if missing) and returns
// the paths written.
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
	levels := make([]float64, len(res.Levels))
	for i, l := range res.Levels {
		levels[i] = float64(l.Level)
	}
	sub := fmt.Sprintf("bench concurrency: %.0f s of load per level; pages %s", res.DurationMS/1000, strings.Join(res.Pages, ", "))
	var charts []Chart

	// Pages in the order the run used them, then any other, sorted.
	var pages []string
	for _, p := range res.Pages {
		if !slices.Contains(pages, p) {
			pages = append(pages, p)
		}
	}
	var extra []string
	for _, l := range res.Levels {
		for _, t := range l.Tools {
			if t.Page != "" && !slices.Contains(pages, t.Page) && !slices.Contains(extra, t.Page) {
				extra = append(extra, t.Page)
			}
		}
	}
	slices.Sort(extra)
	pages = append(pages, extra...)
	for _, page := range pages {
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
			p95 := series{name: tool + " p95", color: palette[i%len(palette)], dashed: true}
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
		if len(ss) == 0 {
			continue
		}
		svg := figure{
			title:    fmt.Sprintf("Latency vs concurrent sessions: %s page", page),
			subtitle: sub + "; successful calls; p50 solid, p95 dashed",
			panels: []panel{{xLabel: "concurrent sessions", yLabel: "latency, ms (log scale)", logY: true,
				xTicks: levels, xInteger: true, series: ss}},
		}.render()
		charts = append(charts, Chart{Name: "concurrency-latency-" + fileSafe(page) + ".svg", SVG: svg})
	}

	rate := series{name: "successful calls/s, all sessions", color: palette[0]}
	per := series{name: "successful calls/s per session", color: palette[1], dashed: true}
	for _, l := range res.Levels {
		rate.points = append(rate.points, point{float64(l.Level), l.CallsPerSec})
		if l.Created > 0 {
			per.points = append(per.points, point{float64(l.Level), l.CallsPerSec / float64(l.Created)})
		}
	}
	charts = append(charts, Chart{Name: "concurrency-throughput.svg", SVG: figure{
		title:    "Throughput vs concurrent sessions",
		subtitle: sub + "; calls = POST /call (navigate, snapshot, click)",
		panels: []panel{{xLabel: "concurrent sessions", yLabel: "calls/s", yFromZero: true, xTicks: levels, xInteger: true,
			valueLabels: true, series: []series{rate, per}}},
	}.render()})

	total := series{name: "total PSS, end of load", color: palette[0]}
	base := series{name: "total PSS, 0 sessions (baseline)", color: palette[6], dashed: true}
	perPSS := series{name: "PSS per session", color: palette[1]}
	for _, l := range res.Levels {
		x := float64(l.Level)
		total.points = append(total.points, point{x, float64(l.End.PSSKB) / 1024})
		base.points = append(base.points, point{x, float64(l.Baseline.PSSKB) / 1024})
		if l.Created > 0 {
			perPSS.points = append(perPSS.points, point{x, l.PerSessionPSSKB / 1024})
		}
	}
	charts = append(charts, Chart{Name: "concurrency-memory.svg", SVG: figure{
		title: "Memory vs concurrent sessions",
		subtitle: sub + "; PSS of the whole process tree (proxy-server, node workers, browser), " +
			"per session = (end − baseline) / sessions",
		panels: []panel{
			{title: "total", xLabel: "concurrent sessions", yLabel: "PSS, MB", yFromZero: true, xTicks: levels, xInteger: true,
				valueLabels: true, series: []series{total, base}},
			{title: "per session", xLabel: "concurrent sessions", yLabel: "PSS per session, MB", yFromZero: true, xTicks: levels, xInteger: true,
				valueLabels: true, series: []series{perPSS}},
		},
	}.render()})
	return charts, nil
}

// SoakCharts draws the soak samples: memory and descriptors over time, with
// the sessions' states for context.
func SoakCharts(res *SoakResult) ([]Chart, error) {
	if res == nil || len(res.Samples) == 0 {
		return nil, fmt.Errorf("the report has no soak samples")
	}
	sub := fmt.Sprintf("bench soak: %d sessions, idle timeout %.0f s, sample 0 after warm-up; verdict: %s",
		res.Sessions, res.IdleTimeoutMS/1000, res.Verdict)
	line := func(name string, color string, dashed bool, f func(SoakSample) float64) series {
		s := series{name: name, color: color, dashed: dashed}
		for _, x := range res.Samples {
			if v := f(x); v >= 0 {
				s.points = append(s.points, point{x.ElapsedS / 60, v})
			}
		}
		return s
	}
	const xl = "minutes since the first sample"
	sessions := panel{title: "sessions", xLabel: xl, yLabel: "sessions", yFromZero: true, yInteger: true, series: []series{
		line("active", palette[2], false, func(s SoakSample) float64 { return s.activeSessions() }),
		line("suspended", palette[4], true, func(s SoakSample) float64 { return float64(s.Suspended) }),
	}}
	server := []series{line("proxy-server RSS", palette[1], false, func(s SoakSample) float64 { return float64(s.ServerRSSKB) / 1024 })}
	if heap := line("proxy-server Go heap in use", palette[3], true, func(s SoakSample) float64 {
		if s.HeapInuseKB < 0 {
			return -1
		}
		return float64(s.HeapInuseKB) / 1024
	}); len(heap.points) > 0 {
		server = append(server, heap)
	}
	memory := figure{
		title:    "Soak: memory over time",
		subtitle: sub,
		panels: []panel{
			{title: "process tree", xLabel: xl, yLabel: "MB", yFromZero: true, series: []series{
				line("tree RSS", palette[0], false, func(s SoakSample) float64 { return float64(s.Memory.RSSKB) / 1024 }),
				line("tree PSS", palette[5], true, func(s SoakSample) float64 { return float64(s.Memory.PSSKB) / 1024 }),
			}},
			{title: "proxy-server", xLabel: xl, yLabel: "MB", yFromZero: true, series: server},
			sessions,
		},
	}
	fds := figure{
		title:    "Soak: open file descriptors over time",
		subtitle: sub,
		panels: []panel{
			{title: "process tree", xLabel: xl, yLabel: "descriptors", yFromZero: true, yInteger: true, series: []series{
				line("tree fds", palette[0], false, func(s SoakSample) float64 { return float64(s.TreeFDs) }),
			}},
			{title: "proxy-server", xLabel: xl, yLabel: "descriptors", yFromZero: true, yInteger: true, series: []series{
				line("proxy-server fds", palette[1], false, func(s SoakSample) float64 { return float64(s.ServerFDs) }),
			}},
			sessions,
		},
	}
	return []Chart{
		{Name: "soak-memory.svg", SVG: memory.render()},
		{Name: "soak-fds.svg", SVG: fds.render()},
	}, nil
}

func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// palette is Okabe & Ito's colour-blind-safe set (yellow left out: too
// pale on white).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#555555"}

type point struct{ x, y float64 }

type series struct {
	name   string
	color  string
	dashed bool
	points []point
}

type panel struct {
	title          string
	xLabel, yLabel string
	// logY draws y on a log10 scale (values ≤ 0 are left out).
	logY bool
	// yFromZero starts a linear y axis at 0 (honest for amounts).
	yFromZero bool
	// xTicks, when set, are extra x values that must be in the domain.
	xTicks []float64
	// xInteger and yInteger keep ticks on whole numbers (sessions,
	// descriptors: 0.5 of one means nothing).
	xInteger, yInteger bool
	// valueLabels writes each point's y value next to it.
	valueLabels bool
	series      []series
}

type figure struct {
	title, subtitle string
	panels          []panel
	// bars are bar-chart panels, drawn after panels.
	bars []barPanel
}

// barPanel is a grouped bar chart: one group of bars per category, one bar
// per series in each group.
type barPanel struct {
	title, xLabel, yLabel string
	// logY draws y on a log10 scale; bars then start at the lowest tick.
	logY       bool
	categories []string
	series     []barSeries
}

// barSeries is one bar of every category; values[i] goes with
// categories[i] (a negative value draws no bar).
type barSeries struct {
	name   string
	color  string
	values []float64
}

// Layout, in SVG user units.
const (
	svgWidth     = 900
	headerHeight = 64
	panelHeight  = 330
	plotLeft     = 80
	plotRight    = svgWidth - 250 // the legend goes on the right
	panelTop     = 34             // panel title above the plot
	panelBottom  = 56             // tick labels and the x label below
)

// render writes the figure as a standalone SVG document. Output depends
// only on the figure: no maps, no clocks, fixed number formats.
func (f figure) render() []byte {
	height := headerHeight + panelHeight*(len(f.panels)+len(f.bars)) + 10
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(f.title))
	fmt.Fprintf(&b, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", svgWidth, height)
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"26\" font-size=\"18\" font-weight=\"bold\">%s</text>\n", plotLeft-60, esc(f.title))
	for i, line := range wrap(f.subtitle, 130) {
		if i == 2 {
			break
		}
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#444444\">%s</text>\n", plotLeft-60, 44+14*i, esc(line))
	}
	for i, p := range f.panels {
		p.render(&b, headerHeight+i*panelHeight)
	}
	for i, p := range f.bars {
		p.render(&b, headerHeight+(len(f.panels)+i)*panelHeight)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

func (p panel) render(b *strings.Builder, top int) {
	x0, x1 := float64(plotLeft), float64(plotRight)
	y0, y1 := float64(top+panelTop), float64(top+panelHeight-panelBottom) // y0 top, y1 bottom
	fmt.Fprintf(b, "<g class=\"panel\">\n")
	panelTitle(b, p.title, x0, y0)

	// Domains.
	var xs, ys []float64
	xs = append(xs, p.xTicks...)
	for _, s := range p.series {
		for _, pt := range s.points {
			if p.logY && pt.y <= 0 {
				continue
			}
			xs = append(xs, pt.x)
			ys = append(ys, pt.y)
		}
	}
	if len(xs) == 0 {
		xs = []float64{0, 1}
	}
	if len(ys) == 0 {
		ys = []float64{0, 1}
		if p.logY {
			ys = []float64{1, 10}
		}
	}
	xt := niceTicksStep(math.Min(0, slices.Min(xs)), slices.Max(xs), 6, stepIf(p.xInteger))
	xlo, xhi := xt[0], xt[len(xt)-1]
	var yt []float64
	var ylo, yhi float64
	var ypos func(float64) float64
	if p.logY {
		yt = logTicks(slices.Min(ys), slices.Max(ys))
		ylo, yhi = math.Log10(yt[0]), math.Log10(yt[len(yt)-1])
		ypos = func(v float64) float64 { return y1 - (math.Log10(v)-ylo)/(yhi-ylo)*(y1-y0) }
	} else {
		lo := slices.Min(ys)
		if p.yFromZero {
			lo = math.Min(0, lo)
		}
		yt = niceTicksStep(lo, slices.Max(ys), 6, stepIf(p.yInteger))
		ylo, yhi = yt[0], yt[len(yt)-1]
		ypos = func(v float64) float64 { return y1 - (v-ylo)/(yhi-ylo)*(y1-y0) }
	}
	xpos := func(v float64) float64 { return x0 + (v-xlo)/(xhi-xlo)*(x1-x0) }

	frame(b, x0, x1, y0, y1, yt, tickDecimals(yt, p.logY), ypos, p.xLabel, p.yLabel, func() {
		xdec := tickDecimals(xt, false)
		for _, v := range xt {
			x := xpos(v)
			fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#333333\"/>\n", num(x), num(y1), num(x), num(y1+5))
			fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" class=\"xtick\">%s</text>\n", num(x), num(y1+19), formatTick(v, xdec))
		}
	})

	// Series.
	for _, s := range p.series {
		var pts []string
		var kept []point
		for _, pt := range s.points {
			if p.logY && pt.y <= 0 {
				continue
			}
			kept = append(kept, pt)
			pts = append(pts, num(xpos(pt.x))+","+num(ypos(pt.y)))
		}
		fmt.Fprintf(b, "<g class=\"series\" data-name=\"%s\">\n", esc(s.name))
		if len(pts) > 1 {
			fmt.Fprintf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>\n", s.color, dashAttr(s.dashed), strings.Join(pts, " "))
		}
		for _, pt := range kept {
			x, y := xpos(pt.x), ypos(pt.y)
			fill := s.color
			if s.dashed {
				fill = "#ffffff"
			}
			fmt.Fprintf(b, "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\" stroke=\"%s\"><title>%s: x=%s, y=%s</title></circle>\n",
				num(x), num(y), fill, s.color, esc(s.name), formatValue(pt.x), formatValue(pt.y))
			if p.valueLabels {
				fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" font-size=\"10\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n",
					num(x), num(y-7), s.color, formatValue(pt.y))
			}
		}
		b.WriteString("</g>\n")
	}

	for i, s := range p.series {
		legend(b, i, s.name, x1, y0, func(lx, ly float64) string {
			return fmt.Sprintf("<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", num(lx), num(ly), num(lx+26), num(ly), s.color, dashAttr(s.dashed))
		})
	}
	b.WriteString("</g>\n")
}

func (p barPanel) render(b *strings.Builder, top int) {
	x0, x1 := float64(plotLeft), float64(plotRight)
	y0, y1 := float64(top+panelTop), float64(top+panelHeight-panelBottom)
	fmt.Fprintf(b, "<g class=\"bars\">\n")
	panelTitle(b, p.title, x0, y0)
	var ys []float64
	for _, s := range p.series {
		for _, v := range s.values {
			if v > 0 || (!p.logY && v == 0) {
				ys = append(ys, v)
			}
		}
	}
	if len(ys) == 0 {
		ys = []float64{1}
	}
	var yt []float64
	var ypos func(float64) float64
	if p.logY {
		yt = logTicks(slices.Min(ys), slices.Max(ys))
		lo, hi := math.Log10(yt[0]), math.Log10(yt[len(yt)-1])
		ypos = func(v float64) float64 { return y1 - (math.Log10(v)-lo)/(hi-lo)*(y1-y0) }
	} else {
		// Headroom over the tallest bar for its label.
		yt = niceTicksStep(0, slices.Max(ys)*1.1, 6, 0)
		lo, hi := yt[0], yt[len(yt)-1]
		ypos = func(v float64) float64 { return y1 - (v-lo)/(hi-lo)*(y1-y0) }
	}
	frame(b, x0, x1, y0, y1, yt, tickDecimals(yt, p.logY), ypos, p.xLabel, p.yLabel, func() {})

	// Each category gets an equal slot; its bars fill 80 % of it.
	n := max(1, len(p.categories))
	slot := (x1 - x0) / float64(n)
	barW := slot * 0.8 / float64(max(1, len(p.series)))
	for i, c := range p.categories {
		cx := x0 + slot*(float64(i)+0.5)
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" class=\"xtick\">%s</text>\n", num(cx), num(y1+19), esc(c))
	}
	for k, s := range p.series {
		fmt.Fprintf(b, "<g class=\"series\" data-name=\"%s\">\n", esc(s.name))
		for i, v := range s.values {
			if i >= len(p.categories) || v < 0 || (p.logY && v <= 0) {
				continue
			}
			bx := x0 + slot*float64(i) + slot*0.1 + barW*float64(k)
			top := ypos(v)
			fmt.Fprintf(b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"%s\"><title>%s, %s: %s</title></rect>\n",
				num(bx), num(top), num(barW-1), num(y1-top), s.color, esc(s.name), esc(p.categories[i]), formatValue(v))
			label, lx, ly := shortValue(v), bx+barW/2, top-3
			// About 5.5 units a character at this size: a label wider
			// than its bar runs up the bar's axis instead of into the
			// next bar's label.
			if float64(len(label))*5.5 > barW {
				fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" font-size=\"9\" text-anchor=\"start\" transform=\"rotate(-90 %s %s)\" fill=\"%s\">%s</text>\n",
					num(lx+3), num(ly), num(lx+3), num(ly), s.color, label)
			} else {
				fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" font-size=\"9\" text-anchor=\"middle\" fill=\"%s\">%s</text>\n",
					num(lx), num(ly), s.color, label)
			}
		}
		b.WriteString("</g>\n")
	}
	for i, s := range p.series {
		legend(b, i, s.name, x1, y0, func(lx, ly float64) string {
			return fmt.Sprintf("<rect x=\"%s\" y=\"%s\" width=\"26\" height=\"10\" fill=\"%s\"/>\n", num(lx), num(ly-5), s.color)
		})
	}
	b.WriteString("</g>\n")
}

func panelTitle(b *strings.Builder, title string, x0, y0 float64) {
	if title != "" {
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" font-size=\"13\" font-weight=\"bold\">%s</text>\n", num(x0), num(y0-10), esc(title))
	}
}

// frame draws a plot's grid and y ticks, its x ticks (xTicks), then its
// axes and axis labels.
func frame(b *strings.Builder, x0, x1, y0, y1 float64, yt []float64, ydec int, ypos func(float64) float64, xLabel, yLabel string, xTicks func()) {
	for _, v := range yt {
		y := ypos(v)
		fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#e3e3e3\"/>\n", num(x0), num(y), num(x1), num(y))
		fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#333333\"/>\n", num(x0-5), num(y), num(x0), num(y))
		fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"end\" class=\"ytick\">%s</text>\n", num(x0-8), num(y+4), formatTick(v, ydec))
	}
	xTicks()
	fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#333333\"/>\n", num(x0), num(y0), num(x0), num(y1))
	fmt.Fprintf(b, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#333333\"/>\n", num(x0), num(y1), num(x1), num(y1))
	fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" class=\"xlabel\">%s</text>\n", num((x0+x1)/2), num(y1+40), esc(xLabel))
	fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" text-anchor=\"middle\" transform=\"rotate(-90 %s %s)\" class=\"ylabel\">%s</text>\n",
		num(x0-58), num((y0+y1)/2), num(x0-58), num((y0+y1)/2), esc(yLabel))
}

// legend writes the i-th legend entry right of the plot: its mark, then
// its name.
func legend(b *strings.Builder, i int, name string, x1, y0 float64, mark func(lx, ly float64) string) {
	lx, ly := x1+20, y0+8+float64(i)*18
	b.WriteString(mark(lx, ly))
	fmt.Fprintf(b, "<text x=\"%s\" y=\"%s\" class=\"legend\">%s</text>\n", num(lx+32), num(ly+4), esc(name))
}

func dashAttr(dashed bool) string {
	if dashed {
		return " stroke-dasharray=\"7 4\""
	}
	return ""
}

// niceTicks returns about n evenly spaced round ticks (steps of 1, 2 or 5
// × 10^k) whose first is ≤ lo and last ≥ hi.
func niceTicks(lo, hi float64, n int) []float64 { return niceTicksStep(lo, hi, n, 0) }

func stepIf(integer bool) float64 {
	if integer {
		return 1
	}
	return 0
}

// niceTicksStep is niceTicks with a step of at least minStep.
func niceTicksStep(lo, hi float64, n int, minStep float64) []float64 {
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		if lo == 0 {
			hi = 1
		} else {
			d := math.Abs(lo) * 0.1
			lo, hi = lo-d, hi+d
		}
	}
	step := max(minStep, niceStep((hi-lo)/float64(max(1, n-1))))
	start := math.Floor(lo/step) * step
	end := math.Ceil(hi/step) * step
	var out []float64
	for i := 0; ; i++ {
		v := start + float64(i)*step
		// Round away the float error that i × step accumulates.
		v = math.Round(v/step) * step
		out = append(out, v)
		if v >= end-step*1e-9 || i > 100 {
			break
		}
	}
	return out
}

// niceStep rounds x up to 1, 2 or 5 × 10^k.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	e := math.Floor(math.Log10(x))
	f := x / math.Pow(10, e)
	switch {
	case f <= 1:
		f = 1
	case f <= 2:
		f = 2
	case f <= 5:
		f = 5
	default:
		f = 10
	}
	return f * math.Pow(10, e)
}

// logTicks covers [lo, hi] with whole decades; within each decade 2 and 5
// are ticks too when the range spans at most three decades.
func logTicks(lo, hi float64) []float64 {
	a, z := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if z <= a {
		z = a + 1
	}
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

// tickDecimals is the number of decimals that tells ticks apart.
func tickDecimals(ticks []float64, logScale bool) int {
	if logScale || len(ticks) < 2 {
		return max(0, -int(math.Floor(math.Log10(ticks[0]))))
	}
	step := ticks[1] - ticks[0]
	return max(0, -int(math.Floor(math.Log10(step)+1e-9)))
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
	dec := max(0, 2-int(math.Floor(math.Log10(math.Abs(v)))))
	s := strconv.FormatFloat(v, 'f', dec, 64)
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

// num writes a coordinate with at most two decimals.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// wrap splits s into lines of at most width runes at spaces.
func wrap(s string, width int) []string {
	var lines []string
	var cur []string
	n := 0
	for _, w := range strings.Fields(s) {
		l := len([]rune(w))
		if n > 0 && n+1+l > width {
			lines = append(lines, strings.Join(cur, " "))
			cur, n = nil, 0
		}
		if n > 0 {
			n++
		}
		cur = append(cur, w)
		n += l
	}
	if len(cur) > 0 {
		lines = append(lines, strings.Join(cur, " "))
	}
	return lines
}
