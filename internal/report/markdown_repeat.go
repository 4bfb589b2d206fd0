package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// repeatText says how a repeated run ran its cells.
func repeatText(n int) string {
	return fmt.Sprintf("%d: every cell ran %d times, interleaved (repetition 1 of every combination, then repetition 2, …)", n, n)
}

// repeatedSections is what a repeated run shows before its cells, in
// place of the matrix summary: the summary across repetitions, then for
// each combination what is computed across its repetitions.
func repeatedSections(r *view.Run) *doc {
	d, _ := repeatedDoc(r)
	return d
}

// repeatedDoc is repeatedSections with the links of a table of contents to
// its headings, each below a combination's heading naming the combination.
func repeatedDoc(r *view.Run) (*doc, []htmlLink) {
	d := &doc{}
	repeatedSummary(d, r)
	links := d.anchors()
	for _, g := range r.Repeated {
		cd := &doc{}
		combinationSection(cd, g)
		for i, l := range cd.anchors() {
			if i > 0 {
				l.Text += " — " + cellLabel(g.Cell)
			}
			links = append(links, l)
		}
		d.blocks = append(d.blocks, cd.blocks...)
	}
	return d, links
}

// repeatedSummary is, per combination, profile and component of the system
// under test, then per operation of each workload, each figure as the mean
// over the repetitions with the lowest and highest; then a note for every
// cell that did not complete and every component that exited.
func repeatedSummary(d *doc, r *view.Run) {
	d.headingID(2, "repeated", "Summary across repetitions")
	d.paraf("Every cell ran %d times. Each figure is the mean over the repetitions, with the lowest and highest in brackets "+
		"(and how many repetitions had the figure when not all did); each repetition's own figures are in its cell's section below. "+
		"Resources: each phase's figures over its steady-state window: Go heap in use (average), GC cycles per minute (average), CPU and memory P99.",
		r.Repeat)
	names := repeatedVarNames(r)
	t := &table{Head: append(append([]string{}, names...), "Profile", "Component", "Heap avg", "GC/min avg", "CPU P99 (cores)", "Memory P99")}
	t.Right = rightFrom(len(t.Head), len(names)+2)
	for _, g := range r.Repeated {
		t.Rows = append(t.Rows, repeatedComponentRows(g, names)...)
	}
	d.table(t)
	d.para("Workloads: each operation's rate and latency (from the intended start) over each repetition's window.")
	t = &table{Head: append(append([]string{}, names...), "Profile", "Workload", "Operation", "Rate", "p50", "p99")}
	t.Right = rightFrom(len(t.Head), len(names)+3)
	for _, g := range r.Repeated {
		t.Rows = append(t.Rows, repeatedOpRows(g, names)...)
	}
	d.table(t)
	var notes []item
	for _, n := range matrixNotes(r) {
		notes = append(notes, item{text: strong("Note:") + " " + codeMarks(n)})
	}
	d.list(notes...)
}

// rightFrom marks the columns from the first figure's on as figures.
func rightFrom(n, first int) []bool {
	right := make([]bool, n)
	for i := first; i < n; i++ {
		right[i] = true
	}
	return right
}

// repeatedVarNames is the matrix variables of the combinations; without a
// matrix, a column naming the one combination.
func repeatedVarNames(r *view.Run) []string {
	var cells []*view.Cell
	for _, g := range r.Repeated {
		cells = append(cells, g.Cell)
	}
	if names := varNames(cells); len(names) > 0 {
		return names
	}
	return []string{"Cell"}
}

func combinationValues(g *view.Repeated, names []string) []string {
	if len(g.Cell.Vars) == 0 {
		return []string{g.Cell.Name}
	}
	return cellVarValues(g.Cell, names)
}

func repeatedComponentRows(g *view.Repeated, names []string) [][]string {
	vars := combinationValues(g, names)
	n := len(g.Repetitions)
	var rows [][]string
	for _, p := range g.Profiles {
		for _, c := range p.Components {
			rows = append(rows, append(append([]string{}, vars...), p.Profile, c.Name,
				spreadText(c.Heap, n, sizeText), spreadText(c.GC, n, num3), spreadText(c.CPU, n, num3), spreadText(c.Memory, n, sizeText)))
		}
		if len(p.Components) == 0 {
			rows = append(rows, append(append([]string{}, vars...), p.Profile, "(no samples)", "–", "–", "–", "–"))
		}
	}
	return rows
}

func repeatedOpRows(g *view.Repeated, names []string) [][]string {
	vars := combinationValues(g, names)
	n := len(g.Repetitions)
	durText := func(v float64) string { return dur(seconds(v)) }
	var rows [][]string
	for _, p := range g.Profiles {
		for _, op := range p.Workloads {
			rows = append(rows, append(append([]string{}, vars...), p.Profile, op.Workload, op.Operation,
				spreadText(op.Rate, n, func(v float64) string { return fmt.Sprintf("%.1f/s", v) }),
				spreadText(op.P50, n, durText), spreadText(op.P99, n, durText)))
		}
	}
	return rows
}

// spreadText is "mean (lowest–highest)", with "k of n" when only k of the
// n repetitions had the figure, or "–" when none had it.
func spreadText(s analysis.Spread, n int, f func(float64) string) string {
	if s.N() == 0 || math.IsNaN(s.Mean) {
		return "–"
	}
	t := f(s.Mean)
	if s.N() > 1 {
		t += " (" + f(s.Min) + "–" + f(s.Max)
		if s.N() < n {
			t += fmt.Sprintf("; %d of %d", s.N(), n)
		}
		t += ")"
	} else if n > 1 {
		t += fmt.Sprintf(" (1 of %d)", n)
	}
	return t
}

// combinationSection is what is computed across the repetitions of one
// combination: suggested sizes from their pooled samples, scaling fits,
// observations, and the side-by-side comparisons with the repetitions as
// repeated runs.
func combinationSection(d *doc, g *view.Repeated) {
	c := g.Cell
	d.headingID(2, fmt.Sprintf("combination%d", c.Index), fmt.Sprintf("Across %d repetitions: %s", c.Repetitions, code(cellLabel(c))))
	cells := make([]string, len(g.Repetitions))
	for i, rc := range g.Repetitions {
		cells[i] = code(cellLabel(rc))
	}
	facts := []item{{text: "Repetitions: " + strings.Join(cells, ", ")}}
	if c.Insights != nil {
		facts = append(facts, item{text: fmt.Sprintf("Sizes, scaling and observations pool the samples of the %d repetitions: "+
			"a P99 is over every sample inside any repetition's steady-state window, and a size's load is the workloads' requests over the windows' total length.",
			c.Repetitions)})
	}
	d.list(facts...)
	if c.Insights != nil {
		sizesSection(d, c, 3, true)
		scalingSection(d, c.Insights, 3)
		observationsSection(d, c.Insights, 3)
	}
	sideBySideSection(d, c, 3)
	if c.Insights == nil && len(c.SideBySide) == 0 {
		d.para("Nothing to size or compare: no repetition sampled the system under test.")
	}
}

// sideBySideMethod is the paragraph that says how a side-by-side
// comparison's intervals were made: from one run's per-interval samples,
// or from repetitions.
func sideBySideMethod(s view.SideBySide) string {
	if s.Repetitions >= analysis.MinRuns {
		return fmt.Sprintf("The two ran at the same time, on the same machine and the same load, in each of %d repetitions: "+
			"%s / %s of the mean over the %d repetitions of each one's figure (the mean of its window's samples for resources and request rates, "+
			"its latency quantile over the window for latency), with Fieller's 95 %% interval for the ratio of two means, "+
			"so the interval comes from the variation between the %d repetitions; ~ when it includes 1 or the difference is under %.0f %%, "+
			"since two systems side by side differ by a few percent whatever their work, which the repetitions do not see.",
			s.Repetitions, s.B, s.A, s.Repetitions, s.Repetitions, 100*analysis.MinRunEffect)
	}
	return fmt.Sprintf("The two ran at the same time, on the same machine and the same load: %s / %s of the means of each window's samples "+
		"(resources every sample, rates every interval) and of the latency quantiles, with 95 %% intervals by block bootstrap over time; "+
		"a difference under %.0f %% is shown as ~, since the interval sees only the variation within this run.", s.B, s.A, 100*analysis.MinRunEffect)
}

// terminalRepeated writes, for each combination of a repeated run, its
// components' CPU and memory P99 and its operations' p99 latency across
// the repetitions, then its suggested sizes and side-by-side comparisons.
func terminalRepeated(w io.Writer, r *view.Run) error {
	for _, g := range r.Repeated {
		n := len(g.Repetitions)
		fmt.Fprintf(w, "\nacross the %d repetitions of %s (mean, lowest–highest):\n", n, cellLabel(g.Cell))
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "profile\tcomponent\tcpu p99\tmemory p99\t")
		for _, p := range g.Profiles {
			for _, c := range p.Components {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", p.Profile, c.Name, spreadText(c.CPU, n, num3), spreadText(c.Memory, n, sizeText))
			}
		}
		fmt.Fprintln(tw, "profile\toperation\trate\tp99\t")
		for _, p := range g.Profiles {
			for _, op := range p.Workloads {
				fmt.Fprintf(tw, "%s\t%s %s\t%s\t%s\t\n", p.Profile, op.Workload, op.Operation,
					spreadText(op.Rate, n, func(v float64) string { return fmt.Sprintf("%.1f/s", v) }),
					spreadText(op.P99, n, func(v float64) string { return dur(seconds(v)) }))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := terminalInsights(w, g.Cell, true); err != nil {
			return err
		}
	}
	return nil
}

// seconds turns a spread of seconds into a duration for dur.
func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
