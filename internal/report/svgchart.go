package report

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"strconv"
	"strings"
)

// A line chart written as SVG text. perflab drew its charts with
// gonum/plot until 2026-11: the library parses its twelve fonts when the
// program starts, so every perflab process, a load at 10,000/s included,
// carried 7 MiB of its pages for charts drawn after the load
// (BENCHMARKS.md). The charts need lines, ticks, a shaded band and a
// legend; this draws those and nothing else.

// xy is one point of a line, in data units.
type xy struct{ X, Y float64 }

// chartLine is one named line of a chart.
type chartLine struct {
	name   string
	pts    []xy
	colour color.RGBA
	dash   []float64 // stroke-dasharray in points; nil draws it solid
}

// tick is one labelled mark of an axis.
type tick struct {
	value float64
	label string
}

// lineChart is a chart of lines over x, its y axis from 0 (or a tidy
// value below the lowest point) up to a tidy value above the highest
// point (at least yFloor). Every point added is drawn: the axes widen to
// the data, as gonum/plot's did.
type lineChart struct {
	title, xLabel, yLabel string
	fixedX                bool    // x spans at least [xMin, xMax]; otherwise the data's range
	xMin, xMax            float64 // data units (before the log, for logX)
	logX                  bool
	xTicks                func(lo, hi float64) []tick // nil: linearTicks
	yFloor                float64
	band                  *[2]float64 // an x range shaded under the lines
	markers               bool        // a dot at every point, for lines of a few measured points
	lines                 []chartLine
}

// add adds a line named name, without the points that cannot be drawn
// (not finite; at or below 0 on a log axis); a line left without points
// is left out, legend entry and all.
func (c *lineChart) add(name string, pts []xy, col color.RGBA, dash []float64) {
	var keep []xy
	for _, p := range pts {
		if finite(p.X) && finite(p.Y) && (!c.logX || p.X > 0) {
			keep = append(keep, p)
		}
	}
	if len(keep) > 0 {
		c.lines = append(c.lines, chartLine{legendLabel(name), keep, col, dash})
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Sizes, in points (the SVG's user unit).
const (
	chartWidth   = 640
	chartHeight  = 280
	tickFont     = 10
	labelFont    = 11
	titleFont    = 12
	legendFont   = 10
	legendRow    = 13
	legendSample = 22 // the sample line and the space after it
	legendGap    = 10 // between the data area and the legend
	// charEm is the width of a character in ems, a little over Liberation
	// Sans' (and Arial's) average, so that estimated text is never short.
	charEm = 0.6
)

// textWidth estimates s's width at size points.
func textWidth(s string, size float64) float64 {
	return float64(len([]rune(s))) * size * charEm
}

// chartFonts are the fonts the charts' text asks for. Nothing is
// embedded or fetched; text widths are estimated for fonts of Arial's
// metrics (Liberation Sans has the same), with room to spare.
const chartFonts = "Liberation Sans,Arial,Helvetica,sans-serif"

// chartArea is where the data is drawn, and the scales onto it.
type chartArea struct {
	left, right, top, bottom float64
	x0, x1, y0, y1           float64 // data range, after the log for logX
	logX                     bool
}

func (a chartArea) px(x float64) float64 {
	if a.logX {
		x = math.Log10(x)
	}
	return a.left + (x-a.x0)/(a.x1-a.x0)*(a.right-a.left)
}

func (a chartArea) py(y float64) float64 {
	return a.bottom - (y-a.y0)/(a.y1-a.y0)*(a.bottom-a.top)
}

// xRange is the chart's x range in data units.
func (c *lineChart) xRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	if c.fixedX {
		lo, hi = c.xMin, c.xMax
	}
	for _, l := range c.lines {
		for _, p := range l.pts {
			lo, hi = math.Min(lo, p.X), math.Max(hi, p.X)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 1
	}
	if hi <= lo {
		if c.logX {
			hi = lo * 10
		} else {
			hi = lo + 1
		}
	}
	return lo, hi
}

// yTicks are the y axis' ticks, from 0 (or a tidy value at or below the
// lowest point) to a tidy value at or above the highest point and yFloor.
func (c *lineChart) yTicks() []tick {
	lo, hi := 0.0, c.yFloor
	for _, l := range c.lines {
		for _, p := range l.pts {
			lo, hi = math.Min(lo, p.Y), math.Max(hi, p.Y)
		}
	}
	if hi <= lo {
		hi = lo + 1
	}
	step := tidyStep((hi - lo) / 5)
	return stepTicks(step, math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9))
}

// stepTicks are the ticks at first·step, (first+1)·step, … last·step.
func stepTicks(step, first, last float64) []tick {
	var ts []tick
	for i := first; i <= last; i++ {
		v := i*step + 0 // no "-0"
		ts = append(ts, tick{v, formatTick(v, step)})
	}
	return ts
}

// tidyStep is the smallest step of 1, 2, 2.5 or 5 times a power of ten
// that is at least raw; 2.5 only from 25 up, where it needs no decimals.
func tidyStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m == 2.5 && mag < 10 {
			continue
		}
		if s := m * mag; s >= raw*(1-1e-9) {
			return s
		}
	}
	return 10 * mag
}

// formatTick writes v with as many decimals as step needs: steps of 0.5
// read 0.0, 0.5, 1.0; steps of 5000 read 0, 5000, 10000.
func formatTick(v, step float64) string {
	dec := 0
	for s := step; s < 1-1e-9 && dec < 9; s *= 10 {
		dec++
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// linearTicks are tidy ticks from lo up to hi, about six of them.
func linearTicks(lo, hi float64) []tick {
	step := tidyStep((hi - lo) / 6)
	return stepTicks(step, math.Ceil(lo/step-1e-9), math.Floor(hi/step+1e-9))
}

// svgBuf writes SVG elements.
type svgBuf struct{ bytes.Buffer }

func num(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func rgb(c color.RGBA) string { return fmt.Sprintf("rgb(%d,%d,%d)", c.R, c.G, c.B) }

func (b *svgBuf) text(x, y, size float64, anchor, extra, s string) {
	fmt.Fprintf(&b.Buffer, `<text x="%s" y="%s" style="font-family:%s;font-size:%gpx" text-anchor="%s"%s>%s</text>`+"\n",
		num(x), num(y), chartFonts, size, anchor, extra, html.EscapeString(s))
}

func (b *svgBuf) path(pts [][2]float64, style string) {
	b.WriteString(`<path d="`)
	for i, p := range pts {
		if i == 0 {
			b.WriteString("M")
		} else {
			b.WriteString("L")
		}
		b.WriteString(num(p[0]) + "," + num(p[1]))
	}
	b.WriteString(`" style="` + style + `"/>` + "\n")
}

func lineStyle(l chartLine) string {
	s := "fill:none;stroke:" + rgb(l.colour) + ";stroke-width:1.3;stroke-linejoin:round"
	if len(l.dash) > 0 {
		var ds []string
		for _, d := range l.dash {
			ds = append(ds, num(d))
		}
		s += ";stroke-dasharray:" + strings.Join(ds, ",")
	}
	return s
}

// windowShade fills the steady-state window.
var windowShade = color.RGBA{0, 114, 178, 28}

// svg draws the chart as a standalone SVG document: its title first and
// in an aria-label, so browsers and screen readers name it; the legend to
// the right of the data, level with its top, so that no line is hidden
// under it however many entries it has; the chart grows taller when the
// legend needs it.
func (c *lineChart) svg() []byte {
	xlo, xhi := c.xRange()
	yts := c.yTicks()
	xtf := c.xTicks
	if xtf == nil {
		xtf = linearTicks
	}
	var xts []tick
	for _, t := range xtf(xlo, xhi) {
		if t.value >= xlo-1e-9*(xhi-xlo) && t.value <= xhi+1e-9*(xhi-xlo) {
			xts = append(xts, t)
		}
	}
	var tickW, legendW float64
	for _, t := range yts {
		tickW = math.Max(tickW, textWidth(t.label, tickFont))
	}
	for _, l := range c.lines {
		legendW = math.Max(legendW, legendSample+textWidth(l.name, legendFont))
	}
	height := float64(chartHeight)
	a := chartArea{left: 8 + labelFont + 6 + tickW + 5, right: chartWidth - 10, top: 8 + titleFont + 10,
		x0: xlo, x1: xhi, y0: yts[0].value, y1: yts[len(yts)-1].value, logX: c.logX}
	if c.logX {
		a.x0, a.x1 = math.Log10(xlo), math.Log10(xhi)
	}
	if legendW > 0 {
		a.right -= legendW + legendGap
	}
	a.bottom = height - (6 + labelFont + 6 + tickFont + 6)
	if need := float64(len(c.lines)) * legendRow; need > a.bottom-a.top {
		height += need - (a.bottom - a.top)
		a.bottom += need - (a.bottom - a.top)
	}

	var b svgBuf
	t := html.EscapeString(c.title)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<svg role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg" width="%dpt" height="%spt" viewBox="0 0 %d %s">`+"\n",
		t, chartWidth, num(height), chartWidth, num(height))
	fmt.Fprintf(&b, "<title>%s</title>\n", t)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%s" style="fill:rgb(255,255,255)"/>`+"\n", chartWidth, num(height))
	b.text((a.left+a.right)/2, 8+titleFont, titleFont, "middle", "", c.title)
	if c.band != nil {
		x0 := a.px(math.Max(c.band[0], xlo))
		x1 := a.px(math.Min(c.band[1], xhi))
		if x1 > x0 {
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" style="fill:%s;fill-opacity:%.3f"/>`+"\n",
				num(x0), num(a.top), num(x1-x0), num(a.bottom-a.top), rgb(windowShade), float64(windowShade.A)/255)
		}
	}
	const grid = "fill:none;stroke:rgb(224,224,224);stroke-width:0.5"
	for _, t := range yts {
		y := a.py(t.value)
		b.path([][2]float64{{a.left, y}, {a.right, y}}, grid)
		b.text(a.left-5, y+tickFont*0.35, tickFont, "end", "", t.label)
	}
	for _, t := range xts {
		x := a.px(t.value)
		b.path([][2]float64{{x, a.top}, {x, a.bottom}}, grid)
		b.text(x, a.bottom+6+tickFont, tickFont, "middle", "", t.label)
	}
	b.path([][2]float64{{a.left, a.top}, {a.left, a.bottom}, {a.right, a.bottom}}, "fill:none;stroke:rgb(0,0,0);stroke-width:0.8")
	b.text((a.left+a.right)/2, height-6, labelFont, "middle", "", c.xLabel)
	ly, lx := (a.top+a.bottom)/2, 8.0+labelFont
	b.text(lx, ly, labelFont, "middle", fmt.Sprintf(` transform="rotate(-90 %s %s)"`, num(lx), num(ly)), c.yLabel)
	for _, l := range c.lines {
		var pts [][2]float64
		for _, p := range l.pts {
			pts = append(pts, [2]float64{a.px(p.X), a.py(p.Y)})
		}
		if len(pts) == 1 { // a lone point is drawn as a short flat line
			pts = append(pts, [2]float64{pts[0][0] + 1, pts[0][1]})
		}
		b.path(pts, lineStyle(l))
		for _, p := range pts[:len(l.pts)] {
			if c.markers {
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" style="fill:%s"/>`+"\n", num(p[0]), num(p[1]), rgb(l.colour))
			}
		}
	}
	lx = a.right + legendGap
	for i, l := range c.lines {
		y := a.top + float64(i)*legendRow + legendRow/2
		b.path([][2]float64{{lx, y}, {lx + legendSample - 6, y}}, lineStyle(l))
		b.text(lx+legendSample, y+legendFont*0.35, legendFont, "start", "", l.name)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}
