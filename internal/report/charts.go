package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// chartSpec is a chart that the run's data supports, before it is written.
type chartSpec struct {
	kind, title string
	chart       *lineChart
}

// Charts draws every chart of every phase of r: throughput, latency
// p50/p90/p99, errors and dropped arrivals per interval, each component's
// CPU and memory, all over time with the steady-state window shaded; and
// the latency spectrum over the window. A chart the run has no data for
// is left out.
func Charts(r *view.Run) []view.PhaseCharts {
	var out []view.PhaseCharts
	matrix := isMatrix(r)
	for ci, c := range r.AllCells() {
		for pi, p := range c.Phases {
			pc := view.PhaseCharts{Cell: c, Phase: p, Label: chartLabel(c, p, matrix)}
			for _, spec := range phaseChartSpecs(r, c, p, pc.Label) {
				spec.chart.title = spec.title
				id := fmt.Sprintf("cell%d-phase%d-%s", ci, pi, spec.kind)
				pc.Charts = append(pc.Charts, view.Chart{ID: id, Kind: spec.kind, Title: spec.title, SVG: spec.chart.svg()})
			}
			if len(pc.Charts) > 0 {
				out = append(out, pc)
			}
		}
	}
	return out
}

// chartLabel names a phase in chart titles.
func chartLabel(c *view.Cell, p *view.Phase, matrix bool) string {
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
func phaseChartSpecs(r *view.Run, c *view.Cell, p *view.Phase, label string) []chartSpec {
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
			chartSpec{"throughput", "Throughput — " + label, throughputChart(tls, sp)},
			chartSpec{"latency", "Latency p50, p90, p99 per interval — " + label, latencyChart(tls, sp)},
			chartSpec{"errors", "Errors and dropped arrivals — " + label, errorsChart(tls, sp)})
	}
	for _, rs := range []resourceChart{cpuChart, memoryChart} {
		if series := componentSeries(c, p, rs, sp); len(series) > 0 {
			specs = append(specs, chartSpec{rs.kind, rs.title + " — " + label, componentChart(series, rs, sp)})
		}
	}
	if spectra := phaseSpectra(p); len(spectra) > 0 {
		specs = append(specs, chartSpec{"spectrum", "Latency spectrum over the steady-state window — " + label, spectrumChart(spectra)})
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
func phaseChartSpan(p *view.Phase) chartSpan {
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

var svgStart = regexp.MustCompile(`<svg[^>]*>`)

var xmlns = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)

// inlineSVG is the chart's SVG element for an HTML page: without the XML
// declaration and comment that a standalone file starts with, and without
// the namespace declarations, which HTML implies (so the page names no
// address but the run's own).
func inlineSVG(c view.Chart) []byte {
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
func markdownCharts(b *strings.Builder, r *view.Run) {
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
