package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// terminalInsights writes a cell's suggested sizes, its scaling verdicts
// and its observations, compactly (the YAML is in report.md and sizes/),
// then its side-by-side comparisons.
func terminalInsights(w io.Writer, c *view.Cell, matrix bool) error {
	if err := terminalSizes(w, c, matrix); err != nil {
		return err
	}
	terminalSideBySide(w, c, matrix)
	return nil
}

func terminalSizes(w io.Writer, c *view.Cell, matrix bool) error {
	in := c.Insights
	if in == nil {
		return nil
	}
	of := insightOf(c, matrix, " of cell ")
	settings := in.Strategy.Name
	if s := in.Settings(); s != "" {
		settings += ", " + s
	}
	fmt.Fprintf(w, "\nsuggested sizes%s (%s):\n", of, settings)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tcomponent\tmemory request\tmemory limit\tcpu request\tcpu limit\t")
	var held []string
	for _, t := range in.Sizes {
		for i, r := range append(append([]analysis.TShirtRow{}, t.Components...), t.Total) {
			size := t.Size
			if i == 0 {
				size += heldMark(t)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", size, r.Component, qty(r.MemoryRequest), qty(r.MemoryLimit), qty(r.CPURequest), cpuLimit(r))
		}
		held = append(held, heldLines(t)...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := terminalBounds(w, in); err != nil {
		return err
	}
	for _, warn := range append(held, in.Warnings...) {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	for _, t := range in.Sizes {
		for _, warn := range t.Warnings {
			fmt.Fprintf(w, "warning: %s\n", warn)
		}
	}
	if err := terminalScaling(w, in); err != nil {
		return err
	}
	if len(in.Observations) > 0 {
		fmt.Fprintf(w, "observations%s:\n", of)
	}
	for i, o := range in.Observations {
		fmt.Fprintf(w, "  %d. %s\n", i+1, o.Text)
	}
	return nil
}

// terminalBounds writes the VPA bounds of each size, when it has them.
func terminalBounds(w io.Writer, in *analysis.Insights) error {
	has := false
	for _, t := range in.Sizes {
		has = has || t.HasBounds()
	}
	if !has {
		return nil
	}
	fmt.Fprintln(w, "vpa bounds (lower P50 × 1.15, upper P95 × 1.15; reported, not applied):")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tcomponent\tmemory lower\tmemory upper\tcpu lower\tcpu upper\t")
	for _, t := range in.Sizes {
		for _, r := range append(append([]analysis.TShirtRow{}, t.Components...), t.Total) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", t.Size, r.Component, qty(r.MemoryLower), qty(r.MemoryUpper), qty(r.CPULower), qty(r.CPUUpper))
		}
	}
	return tw.Flush()
}

func terminalScaling(w io.Writer, in *analysis.Insights) error {
	if in.Scaling == nil {
		return nil
	}
	k, per := loadScale(in.Load.Unit(), maxLoad(in.Loads))
	left := ""
	if l := leftOutOfFits(in, plain); l != "" {
		left = "; left out: " + l
	}
	fmt.Fprintf(w, "scaling (P99 against the %s of %s%s):\n", in.Load.Unit(), in.LoadWorkload, left)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "component\tresource\tat no load\t%s\tR²\tverdict\t\n", per)
	for _, sc := range in.Scaling {
		what, f := "memory", fitBytes
		if sc.Metric == analysis.MetricCPU {
			what, f = "cpu", fitCores
		}
		if sc.Fit == nil {
			fmt.Fprintf(tw, "%s\t%s\t–\t–\t–\tno fit\t\n", sc.Component, what)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", sc.Component, what, atLeastZero(sc.Fit.Intercept, f), f(sc.Fit.Slope*k), r2Text(sc.Fit), sc.Verdict())
	}
	return tw.Flush()
}

// terminalSideBySide writes a line per profile of each side-by-side
// comparison of a cell: every figure with its verdict.
func terminalSideBySide(w io.Writer, c *view.Cell, matrix bool) {
	for _, s := range c.SideBySide {
		fmt.Fprintf(w, "side by side%s, %s against %s:\n", insightOf(c, matrix, " in cell "), s.B, s.A)
		for _, g := range s.Groups {
			var parts []string
			for _, cmp := range g.Comparisons {
				parts = append(parts, cmp.What+": "+verdictText(cmp, s.B))
			}
			fmt.Fprintf(w, "  %s: %s\n", plainName(g.Name), strings.Join(parts, "; "))
		}
	}
}

// insightOf names the cell whose insights a line is of: "" without a
// matrix, prep + the cell's name with one, and for a combination of a
// repeated run "across the 3 repetitions of NAME".
func insightOf(c *view.Cell, matrix bool, prep string) string {
	switch {
	case c.Repetitions > 0:
		return fmt.Sprintf(" across the %d repetitions of %s", c.Repetitions, cellLabel(c))
	case matrix:
		return prep + cellLabel(c)
	}
	return ""
}

// plainName is a group name without its Markdown code marks and capital:
// "profile small".
func plainName(s string) string {
	s = strings.ReplaceAll(s, "`", "")
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
