package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// terminalResources writes a compact resource table per phase: P99 of CPU,
// memory and Go heap, and the average GC rate, per component, with the two
// totals; then the resource warnings, a note per cell that did not
// complete, and each cell's suggested sizes and observations.
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
	fmt.Fprintln(tw, "component\tgroup\tcpu p99\tmemory p99\theap p99\tgc/min\t")
	var gens []analysis.ComponentResources
	for _, c := range res.Components {
		if c.Kind == analysis.KindGenerator {
			gens = append(gens, c)
			continue
		}
		terminalRow(tw, c.Name, c)
	}
	if res.Memory.Components > 1 || res.CPU.Components > 1 {
		fmt.Fprintf(tw, "total: sum of P99s\t\t%s\t%s\t\t\t\n", p99OrMax(res.CPU.Sum, num3), p99OrMax(res.Memory.Sum, sizeText))
		fmt.Fprintf(tw, "total: P99 of the sum\t\t%s\t%s\t\t\t\n", p99OrMax(res.CPU.Summed, num3), p99OrMax(res.Memory.Summed, sizeText))
	}
	for _, c := range gens {
		terminalRow(tw, c.Name+" (generator)", c)
	}
	return tw.Flush()
}

func terminalRow(tw io.Writer, name string, c analysis.ComponentResources) {
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
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", name, c.Group, cpu, mem, heap, gc)
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
