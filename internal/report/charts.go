package report

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/perflab/perflab/internal/analysis"
)

// Chart is one chart of a phase: an SVG document drawn with gonum/plot.
type Chart struct {
	ID    string // unique in the run, a file name stem: cell0-phase1-latency
	Kind  string // throughput, latency, errors, cpu, memory, spectrum
	Title string
	SVG   []byte // a standalone SVG document, with its title
}

// File is where the chart is written beside report.md.
func (c Chart) File() string { return "charts/" + c.ID + ".svg" }

// PhaseCharts are the charts of one phase.
type PhaseCharts struct {
	Cell   *Cell
	Phase  *Phase
	Label  string // "profile small in cell ballast=0", "workload http"
	Charts []Chart
}

// chartSpec is a chart that the run's data supports, not drawn yet.
type chartSpec struct {
	kind, title string
	draw        func() (*plot.Plot, error)
}

// Chart sizes, in points.
const (
	chartWidth  = 640
	chartHeight = 280
)

// Charts draws every chart of every phase of r: throughput, latency
// p50/p90/p99, errors and dropped arrivals per interval, each component's
// CPU and memory, all over time with the steady-state window shaded; and
// the latency spectrum over the window. A chart the run has no data for
// is left out.
func Charts(r *Run) ([]PhaseCharts, error) {
	var out []PhaseCharts
	matrix := r.isMatrix()
	for ci, c := range r.cells() {
		for pi, p := range c.Phases {
			pc := PhaseCharts{Cell: c, Phase: p, Label: chartLabel(c, p, matrix)}
			for _, spec := range phaseChartSpecs(r, c, p, pc.Label) {
				pl, err := spec.draw()
				if err != nil {
					return nil, fmt.Errorf("cannot draw the %s chart of %s: %w", spec.kind, pc.Label, err)
				}
				id := fmt.Sprintf("cell%d-phase%d-%s", ci, pi, spec.kind)
				pl.Title.Text = spec.title
				svg, err := renderSVG(pl, spec.title)
				if err != nil {
					return nil, fmt.Errorf("cannot draw the %s chart of %s: %w", spec.kind, pc.Label, err)
				}
				pc.Charts = append(pc.Charts, Chart{ID: id, Kind: spec.kind, Title: spec.title, SVG: svg})
			}
			if len(pc.Charts) > 0 {
				out = append(out, pc)
			}
		}
	}
	return out, nil
}

// chartLabel names a phase in chart titles.
func chartLabel(c *Cell, p *Phase, matrix bool) string {
	label := "profile " + p.Profile
	if p.Implicit && len(p.Workloads) > 0 {
		label = "workload " + p.Workloads[0].Workload.DisplayName()
	}
	if matrix {
		label += " in cell " + cellLabel(c)
	}
	return label
}

// phaseChartSpecs are the charts a phase's data supports.
func phaseChartSpecs(r *Run, c *Cell, p *Phase, label string) []chartSpec {
	sp := phaseChartSpan(p)
	var specs []chartSpec
	var tls []workloadTimeline
	for _, s := range p.Workloads {
		if tl := r.Timelines[s.Workload.Name]; len(tl) > 0 {
			tls = append(tls, workloadTimeline{name: s.Workload.DisplayName(), figures: tl})
		}
	}
	if len(tls) > 0 {
		specs = append(specs,
			chartSpec{"throughput", "Throughput — " + label, func() (*plot.Plot, error) { return throughputPlot(tls, sp) }},
			chartSpec{"latency", "Latency p50, p90, p99 per interval — " + label, func() (*plot.Plot, error) { return latencyPlot(tls, sp) }},
			chartSpec{"errors", "Errors and dropped arrivals — " + label, func() (*plot.Plot, error) { return errorsPlot(tls, sp) }})
	}
	for _, rs := range []resourceChart{cpuChart, memoryChart} {
		if series := componentSeries(c, p, rs, sp); len(series) > 0 {
			specs = append(specs, chartSpec{rs.kind, rs.title + " — " + label,
				func() (*plot.Plot, error) { return resourcePlot(series, rs, sp) }})
		}
	}
	if spectra := phaseSpectra(p); len(spectra) > 0 {
		specs = append(specs, chartSpec{"spectrum", "Latency spectrum over the steady-state window — " + label,
			func() (*plot.Plot, error) { return spectrumPlot(spectra) }})
	}
	return specs
}

// chartSpan is the time a phase's charts cover, with its steady-state window.
type chartSpan struct {
	start, end time.Time
	window     analysis.Window
}

func (s chartSpan) x(t time.Time) float64 { return t.Sub(s.start).Seconds() }

func (s chartSpan) contains(t time.Time) bool {
	return !t.Before(s.start.Add(-time.Second)) && !t.After(s.end.Add(time.Second))
}

// phaseChartSpan is from the phase's start (or its first workload's) to the end
// of its load (or its last workload's), at least its window.
func phaseChartSpan(p *Phase) chartSpan {
	sp := chartSpan{start: p.Start, end: p.LoadEnd, window: p.Window}
	for _, s := range p.Workloads {
		w := s.Workload
		if p.Start.IsZero() && !w.Start.IsZero() && (sp.start.IsZero() || w.Start.Before(sp.start)) {
			sp.start = w.Start
		}
		if p.LoadEnd.IsZero() && w.LoadEnd.After(sp.end) {
			sp.end = w.LoadEnd
		}
	}
	if sp.start.IsZero() || sp.start.After(p.Window.Start) && !p.Window.Start.IsZero() {
		sp.start = p.Window.Start
	}
	if sp.end.Before(p.Window.End) {
		sp.end = p.Window.End
	}
	return sp
}

// renderSVG draws pl as a standalone SVG document titled title, its
// legend beside the plot (chartLayout).
func renderSVG(pl *plot.Plot, title string) ([]byte, error) {
	styleFonts(pl)
	lay := newChartLayout(pl)
	c := vgsvg.New(vg.Length(chartWidth), lay.height)
	lay.draw(draw.New(c), pl)
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	svg := bytes.ReplaceAll(b.Bytes(), []byte("font-family:Liberation Sans;"), []byte("font-family:"+chartFonts+";"))
	return titled(svg, title), nil
}

// legendGap is the space between a chart's plot and its legend.
const legendGap = vg.Length(10)

// chartLayout puts a chart's legend to the right of its plot, level with
// the top of the data area, so that no line is hidden under it however
// many entries it has; the chart grows taller when the legend needs it.
type chartLayout struct {
	legend       plot.Legend // taken out of the plot, which draws none
	legendWidth  vg.Length   // 0 without entries
	legendHeight vg.Length
	height       vg.Length // of the whole chart
}

// newChartLayout takes pl's legend out of it and sizes the chart.
func newChartLayout(pl *plot.Plot) chartLayout {
	lay := chartLayout{legend: pl.Legend, height: chartHeight}
	lay.legend.Top, lay.legend.Left, lay.legend.Padding = true, true, vg.Points(2)
	empty := plot.NewLegend()
	empty.TextStyle = pl.Legend.TextStyle
	pl.Legend = empty
	probe := draw.New(vgsvg.New(chartWidth, chartHeight))
	if r := lay.legend.Rectangle(probe); r.Size().X > 0 {
		// Measured in Liberation Sans; a fallback font may be a fifth wider.
		lay.legendWidth, lay.legendHeight = r.Size().X*1.2, r.Size().Y
	}
	data, _ := lay.areas(probe, pl)
	if room := data.Max.Y - probe.Min.Y - legendGap; lay.legendHeight > room {
		lay.height += lay.legendHeight - room
	}
	return lay
}

// areas are the plot's data area on c and the legend's rectangle.
func (lay chartLayout) areas(c draw.Canvas, pl *plot.Plot) (data, legend vg.Rectangle) {
	plotC := c
	if lay.legendWidth > 0 {
		plotC.Max.X -= lay.legendWidth + legendGap
	}
	data = pl.DataCanvas(plotC).Rectangle
	legend = vg.Rectangle{Min: vg.Point{X: plotC.Max.X + legendGap, Y: data.Max.Y - lay.legendHeight},
		Max: vg.Point{X: plotC.Max.X + legendGap + lay.legendWidth, Y: data.Max.Y}}
	return data, legend
}

// draw draws pl and its legend on c.
func (lay chartLayout) draw(c draw.Canvas, pl *plot.Plot) {
	plotC := c
	if lay.legendWidth > 0 {
		plotC.Max.X -= lay.legendWidth + legendGap
	}
	pl.Draw(plotC)
	if lay.legendWidth == 0 {
		return
	}
	_, r := lay.areas(c, pl)
	legC := c
	legC.Rectangle = r
	lay.legend.Draw(legC)
}

// chartFonts are the fonts the charts' text asks for: gonum/plot lays it
// out with Liberation Sans's metrics and embeds no font, so a viewer
// without it falls back to Arial, which has the same metrics, and then to
// any sans-serif font it has; nothing is fetched.
const chartFonts = "Liberation Sans,Arial,Helvetica,sans-serif"

var svgStart = regexp.MustCompile(`<svg[^>]*>`)

// titled puts a <title> first in the SVG document, and an aria-label and
// role on its root, so browsers and screen readers name the chart.
func titled(svg []byte, title string) []byte {
	loc := svgStart.FindIndex(svg)
	if loc == nil {
		return svg
	}
	t := html.EscapeString(title)
	open := strings.Replace(string(svg[loc[0]:loc[1]]), "<svg ", `<svg role="img" aria-label="`+t+`" `, 1)
	var b bytes.Buffer
	b.Write(svg[:loc[0]])
	b.WriteString(open)
	b.WriteString("\n<title>" + t + "</title>")
	b.Write(svg[loc[1]:])
	return b.Bytes()
}

var xmlns = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)

// InlineSVG is the chart's SVG element for an HTML page: without the XML
// declaration and comment that a standalone file starts with, and without
// the namespace declarations, which HTML implies (so the page names no
// address but the run's own).
func (c Chart) InlineSVG() []byte {
	svg := c.SVG
	if i := bytes.Index(svg, []byte("<svg")); i >= 0 {
		svg = svg[i:]
	}
	loc := svgStart.FindIndex(svg)
	if loc == nil {
		return svg
	}
	return append(xmlns.ReplaceAll(svg[:loc[1]:loc[1]], nil), svg[loc[1]:]...)
}

// markdownCharts links the charts written beside report.md, one line per
// phase; nothing when none were written (r.Charts is nil).
func markdownCharts(b *strings.Builder, r *Run) {
	if len(r.Charts) == 0 {
		return
	}
	heading(b, 2, "Charts")
	b.WriteString("SVG files in `charts/` beside this report (report.html shows them inline); the steady-state window is shaded.\n\n")
	for _, pc := range r.Charts {
		var links []string
		for _, c := range pc.Charts {
			links = append(links, fmt.Sprintf("[%s](%s)", chartKindNames[c.Kind], c.File()))
		}
		fmt.Fprintf(b, "- %s: %s\n", mdEscape(pc.Label), strings.Join(links, " · "))
	}
}

// chartKindNames name the charts in links.
var chartKindNames = map[string]string{
	"throughput": "throughput", "latency": "latency p50/p90/p99", "errors": "errors and dropped",
	"cpu": "CPU", "memory": "memory", "spectrum": "latency spectrum",
}
