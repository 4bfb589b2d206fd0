package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/units"
	"github.com/perflab/perflab/internal/view"
)

// sizesSection is the suggested t-shirt sizes: one table of every size's
// components and total, then per size its Kubernetes resources; withFiles
// names the file of the run directory that holds each size.
func sizesSection(d *doc, c *view.Cell, level int, withFiles bool) {
	in := c.Insights
	d.headingID(level, fmt.Sprintf("cell%d-sizes", c.Index), "Suggested sizes")
	rule := fmt.Sprintf("Strategy %s: %s", code(in.Strategy.Name), in.Strategy.Doc)
	if s := in.Settings(); s != "" {
		rule += "; here " + s
	}
	d.para(rule + ". Figures are rounded up to Kubernetes units; a size is named after its profile, and its load is what the profile's workloads achieved.")
	t := &table{Head: []string{"Size", "Load", "Component", "Memory request", "Memory limit", "CPU request", "CPU limit"},
		Right: []bool{false, false, false, true, true, true, true}}
	var held []string
	for _, ts := range in.Sizes {
		for i, r := range append(append([]analysis.TShirtRow{}, ts.Components...), ts.Total) {
			size, load, name := ts.Size, "", r.Component
			if i == 0 {
				size, load = ts.Size+heldMark(ts), ts.Load
			}
			if name == analysis.TotalComponent {
				name = strong("total") + heldMark(ts) // the total is of the same load, marked as its components
			}
			t.Rows = append(t.Rows, []string{size, load, name, qty(r.MemoryRequest), qty(r.MemoryLimit), qty(r.CPURequest), cpuLimit(r)})
		}
		held = append(held, heldLines(ts)...)
	}
	d.table(t)
	d.warnings(append(held, in.Warnings...))
	boundsTable(d, in)
	for _, ts := range in.Sizes {
		d.heading(level+1, fmt.Sprintf("Size %s — %s%s", code(ts.Size), ts.Load, heldMark(ts)))
		if y, err := ts.YAML(); err != nil {
			d.paraf("No YAML: %v", err)
		} else {
			d.code("yaml", string(y))
		}
		total := fmt.Sprintf("Total resources: %s.", totalText(ts.Total))
		if withFiles {
			total += fmt.Sprintf(" The run directory holds this size as %s.", code(SizeFileName(c, ts.Size)))
		}
		d.para(total)
		d.warnings(ts.Warnings)
	}
	verifiedSection(d, in, level)
	for _, ts := range in.Sizes {
		for _, c := range ts.Curves {
			curveSection(d, ts, c, level+1)
		}
	}
}

// curveSection is a size's limit-response curve of one resource (perflab
// size --search-limits): each limit run, what it held, the knee, and in
// report.html the curve against the limit, the knee's bracket shaded.
func curveSection(d *doc, ts analysis.TShirt, c *analysis.LimitCurve, level int) {
	d.heading(level, fmt.Sprintf("Limit-response curve of size %s: %s", code(ts.Size), c.Resource))
	found := fmt.Sprintf("no %s limit up to %s held", c.Resource, c.LimitText(maxLimit(c)))
	if c.Stopped {
		found = "the search stopped at a step it could not verify, the machine too busy"
	}
	if c.Smallest > 0 {
		found = fmt.Sprintf("the smallest %s that holds is %s (%s × the size's)", c.Resource, c.LimitText(c.Smallest*c.SizeLimit()), units.Sig3(c.Smallest))
	}
	other := "memory"
	if c.Resource == analysis.LimitMemory {
		other = "CPU"
	}
	d.paraf("At %s, the size's %s limits (%s in all) scaled by one factor, %s unconfined, by bisection, %d confined runs: %s.",
		c.Load, c.Resource, c.LimitText(c.SizeLimit()), other, len(c.Points), found)
	if k := c.KneeText(); k != "" {
		d.para(upperFirst(k) + ".")
	}
	t := &table{Head: []string{c.Resource + " limit", "Verdict", "Achieved", "p99", "Throttled", "CPU used", "Peak", "OOM kills", "GC/min"},
		Right: []bool{true, false, true, true, true, true, true, true, true}}
	var p99s, achieved, throttled, gc []xy
	for _, p := range c.ByLimit() {
		x := c.Limit(p)
		if c.Resource == analysis.LimitMemory {
			x /= 1 << 20
		}
		p99 := "–" // the load never ran at this limit
		if p.Achieved > 0 {
			p99 = units.Sig3(p.P99Ms) + " ms"
		}
		t.Rows = append(t.Rows, []string{c.LimitText(c.Limit(p)), p.Verdict(), units.Sig3(p.Achieved) + "/s", p99,
			fmt.Sprintf("%.0f %%", 100*p.Throttled), p.CPUUsedText(), p.PeakText(), fmt.Sprint(p.OOMKills), units.Sig3(p.GCPerMin)})
		if p.Achieved > 0 {
			p99s = append(p99s, xy{x, p.P99Ms})
		}
		if c.Target > 0 {
			achieved = append(achieved, xy{x, 100 * p.Achieved / c.Target})
		}
		throttled = append(throttled, xy{x, 100 * p.Throttled})
		gc = append(gc, xy{x, p.GCPerMin})
	}
	d.table(t)
	xLabel := "CPU limit (cores)"
	if c.Resource == analysis.LimitMemory {
		xLabel = "memory limit (MiB)"
	}
	band := kneeBand(c)
	lat := &lineChart{title: "p99 against the " + c.Resource + " limit — size " + ts.Size, xLabel: xLabel, yLabel: "p99 (ms)", band: band}
	lat.add("p99", p99s, colour(0), nil)
	d.chart(lat.svg())
	share := &lineChart{title: "what the limit gave — size " + ts.Size, xLabel: xLabel, yLabel: "%", band: band}
	share.add("achieved, % of the target rate", achieved, colour(1), nil)
	share.add("throttled, % of periods", throttled, colour(2), []float64{4, 3})
	if c.Resource == analysis.LimitMemory {
		share = &lineChart{title: "GC against the memory limit — size " + ts.Size, xLabel: xLabel, yLabel: "GC/min", band: band}
		share.add("GC/min", gc, colour(1), nil)
	}
	d.chart(share.svg())
}

// kneeBand is the limits between which a curve's knee lies, in the
// chart's unit; nil when it is not bracketed.
func kneeBand(c *analysis.LimitCurve) *[2]float64 {
	k := c.Knee
	if k == nil || k.Broke == 0 || k.Held == 0 {
		return nil
	}
	b := [2]float64{k.Broke, k.Held}
	if c.Resource == analysis.LimitMemory {
		b = [2]float64{k.Broke / (1 << 20), k.Held / (1 << 20)}
	}
	return &b
}

func maxLimit(c *analysis.LimitCurve) float64 {
	var m float64
	for _, p := range c.Points {
		m = max(m, c.Limit(p))
	}
	return m
}

// verifiedSection is what perflab size --verify found of each size it ran
// inside its limits: the verdict, the latency against the unconfined run,
// and each component's evidence; nothing when no size was verified.
func verifiedSection(d *doc, in *analysis.Insights, level int) {
	t := &table{Head: []string{"Size", "Load", "Verdict", "p50", "p99", "Evidence"}, Right: []bool{false, false, false, true, true, false}}
	var reasons []string
	for _, ts := range in.Sizes {
		v := ts.Verified
		if v == nil {
			continue
		}
		verdict := strong(v.Verdict())
		if !v.Holds {
			for _, r := range v.Reasons {
				reasons = append(reasons, fmt.Sprintf("size %s, %s: %s", ts.Size, strings.Trim(verdict, "*"), r))
			}
		}
		var ev []string
		for _, c := range v.Components {
			ev = append(ev, c.Component+": "+c.Evidence())
		}
		t.Rows = append(t.Rows, []string{code(ts.Size), v.Load, verdict, latencyCell(v, 0), latencyCell(v, 1), strings.Join(ev, "; ")})
		for _, w := range v.Warnings {
			reasons = append(reasons, fmt.Sprintf("size %s: %s", ts.Size, w))
		}
	}
	if len(t.Rows) == 0 {
		return
	}
	d.heading(level, "Verified")
	d.para("Each size's profile ran again with every component perflab starts held to the size's limits (a CFS quota, a hard memory limit; " +
		"perflab size --verify). A size holds when the load was held, the SLO gates passed (without gates: the latency p50 and p99 not slower than " +
		"unconfined beyond the tolerance, by a 95 % interval), no component was OOM-killed or ended, and each peak stayed below its limit.")
	d.table(t)
	d.warnings(reasons)
}

// latencyCell is quantile i of v, confined, and its ratio to unconfined.
func latencyCell(v *analysis.Verified, i int) string {
	if i >= len(v.Latency) {
		return ""
	}
	return v.Latency[i].Text()
}

// boundsTable is the VPA recommender's lower and upper bounds around each
// request, which the vpa strategy reports but does not apply; nothing for
// the other strategies.
func boundsTable(d *doc, in *analysis.Insights) {
	has := false
	for _, ts := range in.Sizes {
		has = has || ts.HasBounds()
	}
	if !has {
		return
	}
	d.para("VPA bounds: the recommender's lower bound (P50 × 1.15) and upper bound (P95 × 1.15) around each target (the request, P90 × 1.15), " +
		"rounded up as requests are. They are reported, not applied: the VPA updater evicts a pod only when its requests fall outside them.")
	t := &table{Head: []string{"Size", "Component", "Memory lower bound", "Memory target", "Memory upper bound", "CPU lower bound", "CPU target", "CPU upper bound"},
		Right: []bool{false, false, true, true, true, true, true, true}}
	for _, ts := range in.Sizes {
		for _, r := range append(append([]analysis.TShirtRow{}, ts.Components...), ts.Total) {
			name := r.Component
			if name == analysis.TotalComponent {
				name = strong("total")
			}
			t.Rows = append(t.Rows, []string{ts.Size, name, qty(r.MemoryLower), qty(r.MemoryRequest), qty(r.MemoryUpper),
				qty(r.CPULower), qty(r.CPURequest), qty(r.CPUUpper)})
		}
	}
	d.table(t)
}

// warnings writes a list of warnings after a blank line.
func warnings(b *strings.Builder, ws []string) {
	if len(ws) > 0 {
		b.WriteString("\n")
	}
	for _, w := range ws {
		fmt.Fprintf(b, "- **Warning:** %s\n", mdEscape(w))
	}
}

// qty is a quantity as a manifest writes it, or "–" when the data can't
// support a figure.
func qty(q analysis.Quantity) string {
	if q.IsZero() {
		return "–"
	}
	return q.String()
}

func cpuLimit(r analysis.TShirtRow) string {
	if r.NoCPULimit {
		return "none"
	}
	return qty(r.CPULimit)
}

// totalText is "requests 448 MiB memory, 0.32 cores; limits 704 MiB
// memory, 0.49 cores".
func totalText(r analysis.TShirtRow) string {
	side := func(mem, cpu analysis.Quantity, noCPU bool) string {
		m, c := "no memory figure", "no CPU figure"
		if !mem.IsZero() {
			m = sizeText(mem.Value()) + " memory"
		}
		switch {
		case noCPU:
			c = "no CPU limit"
		case !cpu.IsZero():
			c = cores(cpu.Value())
		}
		return m + ", " + c
	}
	return "requests " + side(r.MemoryRequest, r.CPURequest, false) + "; limits " + side(r.MemoryLimit, r.CPULimit, r.NoCPULimit)
}

// scalingSection is how each component's P99 follows the load across
// the profiles; nothing with fewer than two profiles.
func scalingSection(d *doc, in *analysis.Insights, level int) {
	if in.Scaling == nil {
		return
	}
	d.heading(level, "Scaling")
	unit := in.Load.Unit()
	k, per := loadScale(unit, maxLoad(in.Loads))
	d.paraf("Each component's P99 against the load, the achieved %s of workload %s, by least squares over the profiles. "+
		"R² below %.1f: not linear; a slope not significantly different from 0 at 95 %%: constant; a verdict needs %d profiles.",
		unit, code(in.LoadWorkload), analysis.PoorFitR2, analysis.MinFitPoints)
	if in.LoadNote != "" {
		d.paraf("Load in bytes/s: %s.", in.LoadNote)
	}
	if left := leftOutOfFits(in, code); left != "" {
		d.paraf("Left out of the fits: %s: the system did not hold their load, or the machine set their figures (see the warnings under the sizes).", left)
	}
	t := &table{Head: []string{"Component", "Resource", "Profiles", "At no load", upperFirst(per), "R²", "Verdict"},
		Right: []bool{false, false, true, true, true, true, false}}
	var ws []string
	for _, sc := range in.Scaling {
		ws = append(ws, sc.Warnings...)
		name := sc.Component
		if name == analysis.TotalComponent {
			name = strong("total") + " (summed series)"
		}
		what, f := "memory", fitBytes
		if sc.Metric == analysis.MetricCPU {
			what, f = "CPU", fitCores
		}
		if sc.Fit == nil {
			t.Rows = append(t.Rows, []string{name, what, fmt.Sprint(len(sc.Points)), "–", "–", "–", "no fit"})
			continue
		}
		t.Rows = append(t.Rows, []string{name, what, fmt.Sprint(sc.Fit.N), atLeastZero(sc.Fit.Intercept, f), f(sc.Fit.Slope * k), r2Text(sc.Fit), sc.Verdict()})
	}
	d.table(t)
	d.warnings(ws)
}

// r2Text is a fit's R², or "–" with fewer than three points: a line
// through two points fits them perfectly and says nothing.
func r2Text(f *analysis.Fit) string {
	if f.N < analysis.MinFitPoints {
		return "–"
	}
	return fmt.Sprintf("%.2f", f.R2)
}

func maxLoad(loads []float64) float64 {
	m := 0.0
	for _, l := range loads {
		m = max(m, l)
	}
	return m
}

// loadScale is the unit of load a slope is shown per: a power of ten of
// requests/s at or below the largest load ("per 100 requests/s"), or MiB/s
// (KiB/s below 1 MiB/s) of bytes.
func loadScale(unit string, largest float64) (float64, string) {
	if unit == analysis.LoadBytes.Unit() {
		if largest >= 1<<20 {
			return 1 << 20, "per MiB/s"
		}
		return 1024, "per KiB/s"
	}
	k := 1.0
	if largest >= 10 {
		k = math.Pow(10, math.Floor(math.Log10(largest)))
	}
	return k, fmt.Sprintf("per %g %s", k, unit)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// observationsSection is the statements the data supports.
func observationsSection(d *doc, in *analysis.Insights, level int) {
	d.heading(level, "Observations")
	if len(in.Observations) == 0 {
		d.para("None that the data supports: shares need two or more components, and statements on scaling need three or more profiles.")
		return
	}
	var texts []string
	for _, o := range in.Observations {
		texts = append(texts, o.Text+".")
	}
	d.ordered(texts)
}
