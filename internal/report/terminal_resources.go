package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/view"
)

// terminalResources writes a compact resource table per phase: P99 of CPU,
// memory and Go heap, the average GC rate and the observers' metrics that
// have a column, per component, with the two totals; then the resource
// warnings, a note per cell that did not complete, and each cell's
// suggested sizes and observations.
func terminalResources(w io.Writer, r *view.Run) error {
	matrix := isMatrix(r)
	for _, c := range r.AllCells() {
		for _, p := range c.Phases {
			if p.Resources == nil || p.Resources.Ticks == 0 {
				continue
			}
			fmt.Fprintf(w, "\nresources of %s (%s):\n", phaseLabel(c, p, matrix), windowText(p.Resources))
			if err := terminalResourceTable(w, p.Resources); err != nil {
				return err
			}
			for _, warn := range p.Resources.Warnings {
				fmt.Fprintf(w, "warning: %s\n", warn)
			}
		}
		if matrix && c.State != "" && c.State != "completed" {
			fmt.Fprintf(w, "cell %s: %s\n", cellLabel(c), cellStateText(c))
		}
		if err := terminalInsights(w, c, matrix); err != nil {
			return err
		}
	}
	return terminalRepeated(w, r)
}

func phaseLabel(c *view.Cell, p *view.Phase, matrix bool) string {
	var label string
	switch {
	case p.Implicit && len(p.Workloads) > 0:
		label = p.Workloads[0].Workload.DisplayName()
	case p.Implicit:
		label = "the run"
	default:
		label = "profile " + p.Profile
	}
	if matrix {
		label += " in cell " + cellLabel(c)
	}
	return label
}

func terminalResourceTable(w io.Writer, res *analysis.Resources) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	cols := terminalColumns(res)
	fmt.Fprint(tw, "component\tgroup\tcpu p99\tmemory p99\theap p99\tgc/min avg\t")
	for _, m := range cols {
		fmt.Fprintf(tw, "%s\t", m.Column)
	}
	fmt.Fprintln(tw)
	var gens []analysis.ComponentResources
	for _, c := range res.Components {
		if c.Kind == analysis.KindGenerator {
			gens = append(gens, c)
			continue
		}
		terminalRow(tw, c.Name, c, cols)
	}
	if res.Memory.Components > 1 || res.CPU.Components > 1 {
		empty := strings.Repeat("\t", len(cols))
		fmt.Fprintf(tw, "total: sum of P99s\t\t%s\t%s\t\t\t%s\n", p99OrMax(res.CPU.Sum, num3), p99OrMax(res.Memory.Sum, sizeText), empty)
		fmt.Fprintf(tw, "total: P99 of the sum\t\t%s\t%s\t\t\t%s\n", p99OrMax(res.CPU.Summed, num3), p99OrMax(res.Memory.Summed, sizeText), empty)
	}
	for _, c := range gens {
		terminalRow(tw, c.Name+" (generator)", c, cols)
	}
	return tw.Flush()
}

// terminalColumns are the observers' metrics that have a column in the
// terminal's table (observe.Metric's Column) and that some component has.
func terminalColumns(res *analysis.Resources) []observe.Metric {
	var out []observe.Metric
	for _, m := range res.Declared {
		if m.Column != "" {
			out = append(out, m)
		}
	}
	return out
}

func terminalRow(tw io.Writer, name string, c analysis.ComponentResources, cols []observe.Metric) {
	cpu, mem, heap, gc := "–", "–", "–", "–"
	if c.CPUMetric != "" {
		cpu = p99OrMax(c.CPU, num3)
	}
	if c.MemoryMetric != "" {
		mem = p99OrMax(c.Memory, sizeText)
	}
	if c.Heap.N > 0 {
		heap = p99OrMax(c.Heap, sizeText)
	}
	if c.GC.N > 0 {
		gc = num3(c.GC.Avg)
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t", name, c.Group, cpu, mem, heap, gc)
	for _, m := range cols {
		fmt.Fprintf(tw, "%s\t", observedText(c, m))
	}
	fmt.Fprintln(tw)
}

// observedText is a component's figure of a declared metric in the
// terminal's table: the last value of a Level, else the P99 (of the rate
// of a Counter); "–" when it has none.
func observedText(c analysis.ComponentResources, m observe.Metric) string {
	o, ok := c.Observed[m.Name]
	switch {
	case !ok:
		return "–"
	case m.Kind == observe.Level:
		return observedValue(m)(o.End)
	}
	return p99OrMax(o.Stat, observedValue(m))
}

// p99OrMax is the P99, or, when the sample cannot support one, the maximum
// marked as such.
func p99OrMax(s analysis.Stat, f func(float64) string) string {
	if s.N == 0 {
		return "–"
	}
	if !s.HasP99() {
		return "max " + f(s.Max)
	}
	return f(s.P99)
}
