package report

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/stats"
)

// palette is the colours of the lines, in order: the Okabe–Ito colours,
// which stay apart for readers with colour blindness.
var palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
}

func colour(i int) color.Color { return palette[i%len(palette)] }

// dashes tell apart the workloads when colours tell apart quantiles.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}

// windowShade fills the steady-state window.
var windowShade = color.RGBA{0, 114, 178, 28}

// styleFonts sets every text of pl in Liberation Sans.
func styleFonts(pl *plot.Plot) {
	sans := func(f *font.Font) { f.Typeface, f.Variant = "Liberation", "Sans" }
	sans(&pl.Title.TextStyle.Font)
	sans(&pl.X.Label.TextStyle.Font)
	sans(&pl.Y.Label.TextStyle.Font)
	sans(&pl.X.Tick.Label.Font)
	sans(&pl.Y.Tick.Label.Font)
	sans(&pl.Legend.TextStyle.Font)
	pl.Legend.TextStyle.Font.Size = vg.Points(10)
}

// newTimePlot is a plot over the seconds of a phase, with its steady-state
// window shaded (drawn first, under the lines).
func newTimePlot(ylabel string, sp chartSpan) *plot.Plot {
	pl := plot.New()
	pl.X.Label.Text = "seconds since the start of the load (shaded: steady-state window)"
	pl.Y.Label.Text = ylabel
	pl.X.Tick.Marker, pl.Y.Tick.Marker = tidyTicks{plot.DefaultTicks{}}, tidyTicks{plot.DefaultTicks{}}
	pl.Y.Min = 0
	pl.X.Min, pl.X.Max = 0, math.Max(sp.x(sp.end), 1)
	pl.Legend.Top = true
	pl.Add(plotter.NewGrid())
	if !sp.window.Start.IsZero() && sp.window.End.After(sp.window.Start) {
		pl.Add(&band{x0: sp.x(sp.window.Start), x1: sp.x(sp.window.End), fill: windowShade})
	}
	return pl
}

// band shades the x range [x0, x1] over the whole height of a plot. It
// has no data range, so it does not widen the axes.
type band struct {
	x0, x1 float64
	fill   color.Color
}

func (b *band) Plot(c draw.Canvas, pl *plot.Plot) {
	trX, _ := pl.Transforms(&c)
	x0, x1 := trX(math.Max(b.x0, pl.X.Min)), trX(math.Min(b.x1, pl.X.Max))
	if x1 <= x0 {
		return
	}
	c.FillPolygon(b.fill, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}

// addLine adds a line named name to pl.
func addLine(pl *plot.Plot, name string, xys plotter.XYs, c color.Color, dash []vg.Length) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color, l.Dashes, l.Width = c, dash, vg.Points(1.3)
	pl.Add(l)
	pl.Legend.Add(legendLabel(name), l)
	return nil
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
// workload (its grace period): shorter than half a second, their rates
// would be noise.
func (w workloadTimeline) points(sp chartSpan, f func(analysis.IntervalFigures) (float64, bool)) plotter.XYs {
	var xys plotter.XYs
	for _, iv := range w.figures {
		if iv.End.Sub(iv.Start) < time.Second/2 {
			continue
		}
		if v, ok := f(iv); ok {
			mid := iv.Start.Add(iv.End.Sub(iv.Start) / 2)
			xys = append(xys, plotter.XY{X: sp.x(mid), Y: v})
		}
	}
	return xys
}

func throughputPlot(tls []workloadTimeline, sp chartSpan) (*plot.Plot, error) {
	pl := newTimePlot("operations/s", sp)
	for i, w := range tls {
		xys := w.points(sp, func(f analysis.IntervalFigures) (float64, bool) { return f.Rate, true })
		if err := addLine(pl, w.name, xys, colour(i), nil); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

func latencyPlot(tls []workloadTimeline, sp chartSpan) (*plot.Plot, error) {
	pl := newTimePlot("latency (ms)", sp)
	quantiles := []struct {
		name string
		of   func(analysis.IntervalFigures) time.Duration
	}{
		{"p50", func(f analysis.IntervalFigures) time.Duration { return f.P50 }},
		{"p90", func(f analysis.IntervalFigures) time.Duration { return f.P90 }},
		{"p99", func(f analysis.IntervalFigures) time.Duration { return f.P99 }},
	}
	for i, w := range tls {
		for j, q := range quantiles {
			xys := w.points(sp, func(f analysis.IntervalFigures) (float64, bool) {
				return ms(q.of(f)), f.Latencies > 0
			})
			name := q.name
			if len(tls) > 1 {
				name += " " + w.name
			}
			if err := addLine(pl, name, xys, colour(j), dashes[i%len(dashes)]); err != nil {
				return nil, err
			}
		}
	}
	return pl, nil
}

func errorsPlot(tls []workloadTimeline, sp chartSpan) (*plot.Plot, error) {
	pl := newTimePlot("per second", sp)
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
		if err := addLine(pl, "errors"+suffix, errs, colour(1), dashes[i%len(dashes)]); err != nil {
			return nil, err
		}
		if err := addLine(pl, "dropped arrivals"+suffix, dropped, colour(3), dashes[i%len(dashes)]); err != nil {
			return nil, err
		}
	}
	pl.Y.Max = math.Max(pl.Y.Max, 1)
	return pl, nil
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
	xys  plotter.XYs
}

// componentSeries are the samples of every component of the cell (the
// generator last) that fall in the phase's chartSpan, read from the metric the
// phase's resource figures use.
func componentSeries(c *Cell, p *Phase, rc resourceChart, sp chartSpan) []namedSeries {
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
		var xys plotter.XYs
		for _, pt := range c.Series[name][m] {
			if sp.contains(pt.T) {
				xys = append(xys, plotter.XY{X: sp.x(pt.T), Y: pt.V / rc.scale})
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

func resourcePlot(series []namedSeries, rc resourceChart, sp chartSpan) (*plot.Plot, error) {
	pl := newTimePlot(rc.ylabel, sp)
	for i, s := range series {
		if err := addLine(pl, s.name, s.xys, colour(i), nil); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// maxSpectra is the most operations the latency spectrum draws one by
// one; the others are drawn together, their histograms merged.
const maxSpectra = 6

// phaseSpectra are the latency spectra of the operations of the phase's
// workloads over their windows: the maxSpectra with the most latencies,
// and, when there are more, one of all the others together.
func phaseSpectra(p *Phase) []namedSpectrum {
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

// spectrumPlot draws latency against the percentile on HdrHistogram's log
// scale of 1/(1−q): 90 %, 99 %, 99.9 % equally spaced.
func spectrumPlot(spectra []namedSpectrum) (*plot.Plot, error) {
	pl := plot.New()
	pl.X.Label.Text = "percentile"
	pl.Y.Label.Text = "latency (ms)"
	pl.X.Scale = plot.LogScale{}
	pl.X.Tick.Marker, pl.Y.Tick.Marker = percentileTicks{}, tidyTicks{plot.DefaultTicks{}}
	pl.Y.Min = 0
	pl.Legend.Top, pl.Legend.Left = true, true
	pl.Add(plotter.NewGrid())
	for i, s := range spectra {
		var xys plotter.XYs
		for _, p := range s.points {
			xys = append(xys, plotter.XY{X: 1 / (1 - p.Q), Y: ms(p.Value)})
		}
		if err := addLine(pl, s.name, xys, colour(i), nil); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// tidyTicks drops the decimal zeros that every label of a Ticker shares:
// gonum's DefaultTicks writes steps of 2.5 with two decimals at any
// magnitude (0.00, 25000.00, 50000.00); tidied they read 0, 25000, 50000,
// and 0.00, 2.50, 5.00 read 0.0, 2.5, 5.0.
type tidyTicks struct{ plot.Ticker }

func (t tidyTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := t.Ticker.Ticks(lo, hi)
	for {
		trim, dot := false, false
		for _, tk := range ticks {
			if tk.Label == "" {
				continue
			}
			if !strings.Contains(tk.Label, ".") || strings.ContainsAny(tk.Label, "eE") || !strings.HasSuffix(tk.Label, "0") && !strings.HasSuffix(tk.Label, ".") {
				return ticks
			}
			trim, dot = true, strings.HasSuffix(tk.Label, ".")
		}
		if !trim {
			return ticks
		}
		for i := range ticks {
			if ticks[i].Label != "" {
				ticks[i].Label = ticks[i].Label[:len(ticks[i].Label)-1]
			}
		}
		if dot {
			return ticks
		}
	}
}

// percentileTicks mark 1/(1−q) = 10^k as the percentile q: 90 %, 99 %, ….
type percentileTicks struct{}

func (percentileTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := []plot.Tick{{Value: 2, Label: "50%"}}
	for k := 1; math.Pow(10, float64(k)) <= hi*1.0001; k++ {
		v := math.Pow(10, float64(k))
		ticks = append(ticks, plot.Tick{Value: v, Label: percentileLabel(k)})
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
