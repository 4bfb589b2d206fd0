package report

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// palette is the colours of the lines, in order: the Okabe–Ito colours,
// which stay apart for readers with colour blindness.
var palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
}

func colour(i int) color.RGBA { return palette[i%len(palette)] }

// dashes tell apart the workloads when colours tell apart quantiles.
var dashes = [][]float64{nil, {6, 3}, {2, 2}, {8, 2, 2, 2}}

// newTimeChart is a chart over the seconds of a phase, with its
// steady-state window shaded (drawn first, under the lines).
func newTimeChart(ylabel string, sp chartSpan) *lineChart {
	c := &lineChart{xLabel: "seconds since the start of the load (shaded: steady-state window)", yLabel: ylabel,
		fixedX: true, xMin: 0, xMax: math.Max(sp.x(sp.end), 1)}
	if !sp.window.Start.IsZero() && sp.window.End.After(sp.window.Start) {
		c.band = &[2]float64{sp.x(sp.window.Start), sp.x(sp.window.End)}
	}
	return c
}

// maxLegendLabel is the longest legend entry, in characters: longer names
// (a PromQL query as an operation name) are cut, so that the legend leaves
// the plot its width.
const maxLegendLabel = 40

// legendLabel is name, cut to maxLegendLabel characters with "…".
func legendLabel(name string) string {
	if r := []rune(name); len(r) > maxLegendLabel {
		return string(r[:maxLegendLabel-1]) + "…"
	}
	return name
}

// workloadTimeline is one workload's per-interval figures.
type workloadTimeline struct {
	name    string
	figures []analysis.IntervalFigures
}

// points are (seconds at the middle of each interval, f of it), leaving
// out intervals where f has no value and the stub intervals that end a
// workload (its grace period): shorter than half the workload's interval
// (its longest: 1 s, or the plan's result_interval), their rates would be
// noise.
func (w workloadTimeline) points(sp chartSpan, f func(analysis.IntervalFigures) (float64, bool)) []xy {
	var full time.Duration
	for _, iv := range w.figures {
		full = max(full, iv.End.Sub(iv.Start))
	}
	var xys []xy
	for _, iv := range w.figures {
		if iv.End.Sub(iv.Start) < full/2 {
			continue
		}
		if v, ok := f(iv); ok {
			mid := iv.Start.Add(iv.End.Sub(iv.Start) / 2)
			xys = append(xys, xy{X: sp.x(mid), Y: v})
		}
	}
	return xys
}

func throughputChart(tls []workloadTimeline, sp chartSpan) *lineChart {
	c := newTimeChart("operations/s", sp)
	for i, w := range tls {
		xys := w.points(sp, func(f analysis.IntervalFigures) (float64, bool) { return f.Rate, true })
		c.add(w.name, xys, colour(i), nil)
	}
	return c
}

func latencyChart(tls []workloadTimeline, sp chartSpan) *lineChart {
	c := newTimeChart("latency (ms)", sp)
	quantiles := []struct {
		name string
		q    float64
		of   func(analysis.IntervalFigures) time.Duration
	}{
		{"p50", 0.5, func(f analysis.IntervalFigures) time.Duration { return f.P50 }},
		{"p90", 0.9, func(f analysis.IntervalFigures) time.Duration { return f.P90 }},
		{"p99", 0.99, func(f analysis.IntervalFigures) time.Duration { return f.P99 }},
	}
	for i, w := range tls {
		for j, q := range quantiles {
			// an interval of too few latencies has no such quantile
			// apart from its top (a p99 of 10 is their max)
			xys := w.points(sp, func(f analysis.IntervalFigures) (float64, bool) {
				return ms(q.of(f)), f.Latencies >= analysis.MinCountFor(q.q)
			})
			name := q.name
			if len(tls) > 1 {
				name += " " + w.name
			}
			c.add(name, xys, colour(j), dashes[i%len(dashes)])
		}
	}
	return c
}

func errorsChart(tls []workloadTimeline, sp chartSpan) *lineChart {
	c := newTimeChart("per second", sp)
	for i, w := range tls {
		perSec := func(n int64, f analysis.IntervalFigures) float64 {
			if secs := f.End.Sub(f.Start).Seconds(); secs > 0 {
				return float64(n) / secs
			}
			return 0
		}
		errs := w.points(sp, func(f analysis.IntervalFigures) (float64, bool) { return perSec(f.Errors, f), true })
		dropped := w.points(sp, func(f analysis.IntervalFigures) (float64, bool) { return perSec(f.Dropped, f), true })
		suffix := ""
		if len(tls) > 1 {
			suffix = " " + w.name
		}
		c.add("errors"+suffix, errs, colour(1), dashes[i%len(dashes)])
		c.add("dropped arrivals"+suffix, dropped, colour(3), dashes[i%len(dashes)])
	}
	c.yFloor = 1
	return c
}

// resourceChart is how one resource is read and shown.
type resourceChart struct {
	kind, title, ylabel string
	def                 string // the metric read when the phase's resources do not say
	of                  func(analysis.ComponentResources) string
	scale               float64 // divides the samples
}

var (
	cpuChart = resourceChart{kind: "cpu", title: "CPU by component", ylabel: "cores", def: observe.CPUCores,
		of: func(c analysis.ComponentResources) string { return c.CPUMetric }, scale: 1}
	memoryChart = resourceChart{kind: "memory", title: "Memory by component", ylabel: "MiB", def: observe.RSSBytes,
		of: func(c analysis.ComponentResources) string { return c.MemoryMetric }, scale: 1 << 20}
)

// namedSeries is one component's samples of one metric.
type namedSeries struct {
	name string
	xys  []xy
}

// componentSeries are the samples of every component of the cell (the
// generator last) that fall in the phase's chartSpan, read from the metric the
// phase's resource figures use.
func componentSeries(c *view.Cell, p *view.Phase, rc resourceChart, sp chartSpan) []namedSeries {
	metric := map[string]string{}
	if p.Resources != nil {
		for _, cr := range p.Resources.Components {
			metric[cr.Name] = rc.of(cr)
		}
	}
	var names []string
	for name := range c.Series {
		names = append(names, name)
	}
	kinds := map[string]string{}
	for _, comp := range c.Components {
		kinds[comp.Name] = comp.Kind
	}
	sort.Slice(names, func(i, j int) bool {
		gi, gj := kinds[names[i]] == analysis.KindGenerator, kinds[names[j]] == analysis.KindGenerator
		return gi != gj && gj || gi == gj && names[i] < names[j]
	})
	var out []namedSeries
	for _, name := range names {
		m, ok := metric[name]
		if !ok {
			m = rc.def
		}
		var xys []xy
		for _, pt := range c.Series[name][m] {
			if sp.contains(pt.T) {
				xys = append(xys, xy{X: sp.x(pt.T), Y: pt.V / rc.scale})
			}
		}
		if len(xys) > 0 {
			label := name
			if kinds[name] == analysis.KindGenerator {
				label += " (generator)"
			}
			out = append(out, namedSeries{label, xys})
		}
	}
	return out
}

func componentChart(series []namedSeries, rc resourceChart, sp chartSpan) *lineChart {
	c := newTimeChart(rc.ylabel, sp)
	for i, s := range series {
		c.add(s.name, s.xys, colour(i), nil)
	}
	return c
}

// maxSpectra is the most operations the latency spectrum draws one by
// one; the others are drawn together, their histograms merged.
const maxSpectra = 6

// phaseSpectra are the latency spectra of the operations of the phase's
// workloads over their windows: the maxSpectra with the most latencies,
// and, when there are more, one of all the others together.
func phaseSpectra(p *view.Phase) []namedSpectrum {
	type opHist struct {
		name string
		hist *stats.Hist
	}
	var ops []opHist
	for _, s := range p.Workloads {
		for _, op := range s.Ops {
			if op.Whole == nil || op.Whole.Latency == nil || op.Whole.Latency.Count() == 0 {
				continue
			}
			name := op.Name
			if len(p.Workloads) > 1 {
				name = s.Workload.DisplayName() + " " + name
			}
			ops = append(ops, opHist{name, op.Whole.Latency})
		}
	}
	if len(ops) > maxSpectra {
		sort.SliceStable(ops, func(i, j int) bool { return ops[i].hist.Count() > ops[j].hist.Count() })
		others := stats.NewHist()
		for _, o := range ops[maxSpectra:] {
			others.Merge(o.hist)
		}
		ops = append(ops[:maxSpectra], opHist{fmt.Sprintf("others (%d operations)", len(ops)-maxSpectra), others})
	}
	var out []namedSpectrum
	for _, o := range ops {
		if pts := analysis.Spectrum(o.hist); len(pts) > 1 {
			out = append(out, namedSpectrum{o.name, pts})
		}
	}
	return out
}

type namedSpectrum struct {
	name   string
	points []analysis.SpectrumPoint
}

// spectrumChart draws latency against the percentile on HdrHistogram's log
// scale of 1/(1−q): 90 %, 99 %, 99.9 % equally spaced.
func spectrumChart(spectra []namedSpectrum) *lineChart {
	c := &lineChart{xLabel: "percentile", yLabel: "latency (ms)", logX: true, xTicks: percentileTicks}
	for i, s := range spectra {
		var xys []xy
		for _, p := range s.points {
			xys = append(xys, xy{X: 1 / (1 - p.Q), Y: ms(p.Value)})
		}
		c.add(s.name, xys, colour(i), nil)
	}
	return c
}

// percentileTicks mark 1/(1−q) = 10^k as the percentile q: 90 %, 99 %, ….
func percentileTicks(lo, hi float64) []tick {
	ticks := []tick{{2, "50%"}}
	for k := 1; math.Pow(10, float64(k)) <= hi*1.0001; k++ {
		v := math.Pow(10, float64(k))
		ticks = append(ticks, tick{v, percentileLabel(k)})
	}
	return ticks
}

// percentileLabel is the percentile 1 − 10^−k: 90%, 99%, 99.9%, ….
func percentileLabel(k int) string {
	switch k {
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", k-2) + "%"
}
