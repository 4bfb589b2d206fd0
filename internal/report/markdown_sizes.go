package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
)

// markdownSizes writes the suggested t-shirt sizes: one table of every
// size's components and total, then per size its Kubernetes resources;
// withFiles names the file of the run directory that holds each size.
func markdownSizes(b *strings.Builder, c *Cell, level int, withFiles bool) {
	in := c.Insights
	heading(b, level, "Suggested sizes")
	fmt.Fprintf(b, "Strategy `%s`: %s", in.Strategy.Name, in.Strategy.Doc)
	if s := in.Settings(); s != "" {
		fmt.Fprintf(b, "; here %s", s)
	}
	b.WriteString(". Figures are rounded up to Kubernetes units; a size is named after its profile, and its load is what the profile's workloads achieved.\n\n")
	b.WriteString("| Size | Load | Component | Memory request | Memory limit | CPU request | CPU limit |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|\n")
	for _, t := range in.Sizes {
		for i, r := range append(append([]analysis.TShirtRow{}, t.Components...), t.Total) {
			load, name := "", r.Component
			if i == 0 {
				load = mdEscape(t.Load)
			}
			if name == analysis.TotalComponent {
				name = "**total**"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", t.Size, load, name, qty(r.MemoryRequest),
				qty(r.MemoryLimit), qty(r.CPURequest), cpuLimit(r))
		}
	}
	warnings(b, in.Warnings)
	for _, t := range in.Sizes {
		heading(b, level+1, "Size `%s` — %s", t.Size, t.Load)
		y, err := t.YAML()
		if err != nil {
			fmt.Fprintf(b, "No YAML: %v\n", err)
		} else {
			fmt.Fprintf(b, "```yaml\n%s```\n", y)
		}
		fmt.Fprintf(b, "\nTotal resources: %s.", totalText(t.Total))
		if withFiles {
			fmt.Fprintf(b, " The run directory holds this size as `%s`.", SizeFileName(c, t.Size))
		}
		b.WriteString("\n")
		warnings(b, t.Warnings)
	}
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

// markdownScaling writes how each component's P99 follows the load across
// the profiles; nothing with fewer than two profiles.
func markdownScaling(b *strings.Builder, in *analysis.Insights, level int) {
	if in.Scaling == nil {
		return
	}
	heading(b, level, "Scaling")
	unit := in.Load.Unit()
	k, per := loadScale(unit, maxLoad(in.Loads))
	fmt.Fprintf(b, "Each component's P99 against the load, the achieved %s of workload `%s`, by least squares over the profiles. "+
		"R² below %.1f: not linear; a slope not significantly different from 0 at 95 %%: constant; a verdict needs %d profiles.\n\n",
		unit, in.LoadWorkload, analysis.PoorFitR2, analysis.MinFitPoints)
	if in.LoadNote != "" {
		fmt.Fprintf(b, "Load in bytes/s: %s.\n\n", in.LoadNote)
	}
	fmt.Fprintf(b, "| Component | Resource | Profiles | At no load | %s | R² | Verdict |\n", upperFirst(per))
	b.WriteString("|---|---|---:|---:|---:|---:|---|\n")
	var ws []string
	for _, sc := range in.Scaling {
		ws = append(ws, sc.Warnings...)
		name := sc.Component
		if name == analysis.TotalComponent {
			name = "**total** (summed series)"
		}
		what, f := "memory", sizeText
		if sc.Metric == analysis.MetricCPU {
			what, f = "CPU", cores
		}
		if sc.Fit == nil {
			fmt.Fprintf(b, "| %s | %s | %d | – | – | – | no fit |\n", name, what, len(sc.Points))
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s |\n", name, what, sc.Fit.N, f(sc.Fit.Intercept),
			f(sc.Fit.Slope*k), r2Text(sc.Fit), sc.Verdict())
	}
	warnings(b, ws)
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

// markdownObservations writes the statements the data supports.
func markdownObservations(b *strings.Builder, in *analysis.Insights, level int) {
	heading(b, level, "Observations")
	if len(in.Observations) == 0 {
		b.WriteString("None that the data supports: shares need two or more components, and statements on scaling need three or more profiles.\n")
		return
	}
	for i, o := range in.Observations {
		fmt.Fprintf(b, "%d. %s.\n", i+1, o.Text)
	}
}
