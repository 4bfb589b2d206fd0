package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// manyOpsRun is a run without a plan whose one workload ran 42 operations
// ("rule 01" … "rule 42", as a PromQL rules file makes them) for 11 s,
// rule k 50 − k times a second at k ms, while 30 components were sampled.
func manyOpsRun() *view.Run {
	var ivs []*stats.Interval
	for i := range 11 {
		ops := map[string]*stats.OpStats{}
		for k := 1; k <= 42; k++ {
			st := stats.NewOpStats()
			for range 50 - k {
				st.Latency.Record(time.Duration(k) * time.Millisecond)
			}
			st.Classes[stats.OK] = int64(50 - k)
			ops[fmt.Sprintf("rule %02d", k)] = st
		}
		ivs = append(ivs, &stats.Interval{Index: i, Start: t0.Add(sec(float64(i))), End: t0.Add(sec(float64(i + 1))), Ops: ops, Lag: stats.NewHist()})
	}
	w := analysis.Workload{Name: "rules", Driver: "promql", Model: "open", Target: "http://127.0.0.1:9090", TargetRate: 1071,
		Start: t0, LoadEnd: t0.Add(11 * time.Second), End: t0.Add(11 * time.Second),
		Window: analysis.Window{Start: t0.Add(time.Second), End: t0.Add(11 * time.Second), Rule: "test"}}
	s := analysis.Summarize(w, ivs)
	series := map[string]map[string][]analysis.Point{}
	var comps []analysis.Component
	for c := 1; c <= 30; c++ {
		name := fmt.Sprintf("component-%02d", c)
		comps = append(comps, analysis.Component{Name: name, Kind: "run"})
		series[name] = map[string][]analysis.Point{"cpu_cores": ticks(t0.Add(11*time.Second), 11, constant(0.01*float64(c)))}
	}
	p := &view.Phase{Implicit: true, Window: s.Window, Workloads: []*analysis.Summary{s}}
	p.Resources = analysis.SummarizeResources(analysis.ResourceInput{Window: s.Window, Components: comps, Series: series})
	return &view.Run{Name: "rules", Workloads: []*analysis.Summary{s},
		Cells: []*view.Cell{{Implicit: true, Components: comps, Series: series, Phases: []*view.Phase{p}}}}
}

var (
	svgText   = regexp.MustCompile(`(?s)<text x="([-0-9.e]+)" y="[^"]*"[^>]*>([^<]*)</text>`)
	svgPath   = regexp.MustCompile(`<path d="M([^"]*)" style="fill:none;stroke:[^;]*;stroke-width:1.3`)
	svgHeight = regexp.MustCompile(`<svg[^>]* height="([0-9.]+)pt"`)
)

// svgLegend reads a chart's SVG: the legend entries (texts that are
// labels), their leftmost x, and the rightmost x of any data line (a
// line of three points or more; a legend's sample line has two).
func svgLegend(t *testing.T, svg []byte, isLabel func(string) bool) (labels []string, labelX, dataX float64) {
	t.Helper()
	labelX = 1e9
	for _, m := range svgText.FindAllSubmatch(svg, -1) {
		if isLabel(string(m[2])) {
			x, _ := strconv.ParseFloat(string(m[1]), 64)
			labels, labelX = append(labels, string(m[2])), min(labelX, x)
		}
	}
	for _, m := range svgPath.FindAllSubmatch(svg, -1) {
		pts := strings.Split(string(m[1]), "L")
		if len(pts) < 3 {
			continue
		}
		for _, p := range pts {
			x, _ := strconv.ParseFloat(strings.Split(p, ",")[0], 64)
			dataX = max(dataX, x)
		}
	}
	return labels, labelX, dataX
}

// TestChartLegends: the latency spectrum of 42 operations draws the 6
// with the most latencies and the others merged, and every chart's
// legend stands right of its data lines, however many entries it has:
// the CPU chart of 30 components grows taller to hold them.
func TestChartLegends(t *testing.T) {
	charts := Charts(manyOpsRun())
	byKind := map[string]view.Chart{}
	for _, c := range charts[0].Charts {
		byKind[c.Kind] = c
	}
	spectrum, cpu := byKind["spectrum"], byKind["cpu"]
	if spectrum.SVG == nil || cpu.SVG == nil {
		t.Fatalf("charts %v", byKind)
	}
	labels, labelX, dataX := svgLegend(t, spectrum.SVG, func(s string) bool { return strings.HasPrefix(s, "rule ") || strings.HasPrefix(s, "others") })
	want := []string{"rule 01", "rule 02", "rule 03", "rule 04", "rule 05", "rule 06", "others (36 operations)"}
	if strings.Join(labels, ", ") != strings.Join(want, ", ") {
		t.Errorf("spectrum legend %q, want %q", labels, want)
	}
	if dataX == 0 || labelX <= dataX {
		t.Errorf("spectrum legend starts at x %v, inside the data lines (to x %v)", labelX, dataX)
	}
	labels, labelX, dataX = svgLegend(t, cpu.SVG, func(s string) bool { return strings.HasPrefix(s, "component-") })
	if len(labels) != 30 || dataX == 0 || labelX <= dataX {
		t.Errorf("CPU legend: %d entries from x %v; data lines to x %v", len(labels), labelX, dataX)
	}
	m := svgHeight.FindSubmatch(cpu.SVG)
	if h, _ := strconv.ParseFloat(string(m[1]), 64); m == nil || h <= chartHeight {
		t.Errorf("the CPU chart of 30 components is %s pt high", m[1])
	}
}
