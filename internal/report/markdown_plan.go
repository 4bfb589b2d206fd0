package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

// markdownCell writes a cell: with a matrix, a section of its own with its
// variables, state and components; without one, only its components. Then
// its phases, and the sections of a sizing report across them.
func markdownCell(b *strings.Builder, c *view.Cell, matrix bool) {
	level := 2
	if matrix {
		heading(b, 2, "Cell `%s`", cellLabel(c))
		markdownCellFacts(b, c)
		level = 3
	}
	markdownComponents(b, c, level)
	for _, p := range c.Phases {
		markdownPhase(b, p, level)
	}
	markdownCellSummary(b, c, level)
}

func markdownCellFacts(b *strings.Builder, c *view.Cell) {
	for _, f := range cellFacts(c) {
		fmt.Fprintf(b, "- %s\n", mdText(f))
	}
}

// cellFacts are a cell's variables, state and times, with marks.
func cellFacts(c *view.Cell) []string {
	var out []string
	if len(c.Vars) > 0 {
		var vs []string
		for _, v := range c.Vars {
			vs = append(vs, v.Name+" = "+code(v.Value))
		}
		out = append(out, "Variables: "+strings.Join(vs, ", "))
	}
	out = append(out, "State: "+cellStateText(c))
	if !c.Started.IsZero() {
		s := fmt.Sprintf("Started: %s UTC", clock(c.Started))
		if !c.Ended.IsZero() {
			s += fmt.Sprintf(", ended %s UTC (%s)", clock(c.Ended), c.Ended.Sub(c.Started).Round(100*time.Millisecond))
		}
		out = append(out, s)
	}
	if len(c.Phases) == 0 {
		out = append(out, "No profile ran in this cell.")
	}
	return out
}

func cellStateText(c *view.Cell) string {
	return stateOf(c.State, c.Message, "this cell", c.InProgress)
}

// markdownComponents writes the table of a cell's components with how any
// of them exited.
func markdownComponents(b *strings.Builder, c *view.Cell, level int) {
	if t := componentsTable(c, true); t != nil {
		heading(b, level, "%s", t.Title)
		t.markdown(b)
	}
	if ws := killedWarnings(c); len(ws) > 0 {
		b.WriteString("\n")
		for _, w := range ws {
			fmt.Fprintf(b, "- **Warning:** %s\n", w)
		}
	}
}

// killedWarnings says which components of a cell perflab had to kill when
// it stopped them, in Markdown: they may not have written out their data.
func killedWarnings(c *view.Cell) []string {
	var out []string
	for _, comp := range c.Components {
		if s := comp.Stop; s != nil && s.Killed {
			out = append(out, fmt.Sprintf("Component `%s` was killed when its cell ended (%s UTC): %s",
				comp.Name, clock(s.Time), s.How))
		}
	}
	return out
}

// componentsTable is a cell's components with how any of them exited, or
// nil when it has none. marked sets the addresses and directories in code
// and an exit in bold, as Markdown shows them.
func componentsTable(c *view.Cell, marked bool) *table {
	if len(c.Components) == 0 {
		return nil
	}
	asCode, asStrong := code, strong
	if !marked {
		asCode, asStrong = func(s string) string { return s }, func(s string) string { return s }
	}
	orDash := func(s string) string {
		if s == "" {
			return "–"
		}
		return asCode(s)
	}
	t := &table{Title: "Components", Head: []string{"Component", "Group", "Kind", "PID", "Metrics", "Data directories", "Exited during the run"},
		Right: []bool{false, false, false, true}}
	for _, comp := range c.Components {
		exited := "no"
		if !comp.Exited.IsZero() {
			exited = asStrong(fmt.Sprintf("%s UTC: %s", clock(comp.Exited), exitText(comp.ExitText)))
		}
		t.Rows = append(t.Rows, []string{comp.Name, dash(comp.Group), comp.Kind, pidText(comp.PID), orDash(comp.MetricsURL),
			orDash(strings.Join(comp.DataDirs, ", ")), exited})
	}
	return t
}

func exitText(s string) string {
	if s == "" {
		return "no exit status"
	}
	return s
}

func pidText(pid int) string {
	if pid == 0 {
		return "–"
	}
	return fmt.Sprint(pid)
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// markdownPhase writes a profile's section: its workloads, then its
// resources. An implicit phase (a workload of a run without a plan) is the
// workload's section with its resources inside.
func markdownPhase(b *strings.Builder, p *view.Phase, level int) {
	if p.Implicit {
		for _, s := range p.Workloads {
			markdownWorkload(b, s, level)
			markdownDriver(b, p.Drivers[s.Workload.Name], level+1)
		}
		markdownServing(b, p, level+1)
		markdownResources(b, p.Resources, level+1)
		return
	}
	heading(b, level, "Profile `%s`", p.Profile)
	for _, f := range phaseFacts(p) {
		fmt.Fprintf(b, "- %s\n", f)
	}
	if len(p.Workloads) == 0 {
		b.WriteString("- No workload ran in this phase.\n")
	}
	for _, s := range p.Workloads {
		markdownWorkload(b, s, level+1)
		markdownDriver(b, p.Drivers[s.Workload.Name], level+2)
	}
	d := &doc{}
	workersSection(d, p, level+1)
	d.markdown(b)
	markdownServing(b, p, level+1)
	markdownResources(b, p.Resources, level+1)
}

// markdownServing writes the serving engine's own figures, when a
// component has them.
func markdownServing(b *strings.Builder, p *view.Phase, level int) {
	if t := servingTable(p.Resources, p.Workloads); t != nil {
		heading(b, level, "%s", t.Title)
		b.WriteString(mdText(t.Note) + "\n\n")
		t.markdown(b)
	}
}

// phaseFacts are a profile's state, when it did not complete, warm-up and
// steady-state window.
func phaseFacts(p *view.Phase) []string {
	var facts []string
	if p.State != "" && p.State != "completed" {
		facts = append(facts, "State: "+phaseStateText(p))
	}
	if p.Warmup > 0 {
		facts = append(facts, "Warm-up: "+p.Warmup.String())
	}
	if !p.Window.Start.IsZero() {
		facts = append(facts, fmt.Sprintf("Steady-state window: %s–%s UTC (rule: %s)", clock(p.Window.Start), clock(p.Window.End), p.Window.Rule))
	}
	return facts
}

func phaseStateText(p *view.Phase) string {
	return stateOf(p.State, p.Message, "this phase", p.InProgress)
}

// markdownMatrix writes the matrix summary (matrixTable), then a note for
// every cell that did not complete and every component that exited during
// the run.
func markdownMatrix(b *strings.Builder, r *view.Run) {
	heading(b, 2, "Matrix summary")
	t := matrixTable(r)
	b.WriteString(t.Note + "\n\n")
	t.markdown(b)
	markdownMatrixNotes(b, r)
}

// matrixTable is the matrix summary: one row per cell, profile and
// component of the system under test, in the layout of a GOMEMLIMIT/ballast
// comparison. Markdown and HTML show the same table.
func matrixTable(r *view.Run) *table {
	names := varNames(r.AllCells())
	t := &table{Head: append(append([]string{}, names...), "Profile", "Component", "Heap avg", "GC/min avg", "CPU P99 (cores)", "Memory P99"),
		Note: "Each phase's figures over its steady-state window: Go heap in use (average), GC cycles per minute (average), CPU and memory P99."}
	t.Right = rightFrom(len(t.Head), len(names)+2)
	for _, c := range r.AllCells() {
		vars := cellVarValues(c, names)
		for _, p := range c.Phases {
			for _, row := range matrixRows(p) {
				t.Rows = append(t.Rows, append(append(append([]string{}, vars...), p.Profile), row...))
			}
		}
		if len(c.Phases) == 0 {
			t.Rows = append(t.Rows, append(append([]string{}, vars...), "–", "–", "–", "–", "–", "–"))
		}
	}
	return t
}

// matrixRows is the Component … Memory P99 cells of a phase's rows.
func matrixRows(p *view.Phase) [][]string {
	if p.Resources == nil || p.Resources.Ticks == 0 {
		return [][]string{{"(no samples)", "–", "–", "–", "–"}}
	}
	var rows [][]string
	for _, c := range p.Resources.Components {
		if c.Kind == analysis.KindGenerator {
			continue
		}
		heap, gc := "–", "–"
		if c.Heap.N > 0 {
			heap = sizeText(c.Heap.Avg)
		}
		if c.GC.N > 0 {
			gc = num3(c.GC.Avg)
		}
		rows = append(rows, []string{c.Name, heap, gc, p99Text(c.CPU, num3), p99Text(c.Memory, sizeText)})
	}
	return rows
}

// varNames is every matrix variable in the order the cells first give them.
func varNames(cells []*view.Cell) []string {
	var names []string
	seen := map[string]bool{}
	for _, c := range cells {
		for _, v := range c.Vars {
			if !seen[v.Name] {
				seen[v.Name] = true
				names = append(names, v.Name)
			}
		}
	}
	return names
}

func cellVarValues(c *view.Cell, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "–"
		for _, v := range c.Vars {
			if v.Name == n {
				out[i] = v.Value
			}
		}
	}
	return out
}

func markdownMatrixNotes(b *strings.Builder, r *view.Run) {
	notes := matrixNotes(r)
	if len(notes) > 0 {
		b.WriteString("\n")
	}
	for _, n := range notes {
		fmt.Fprintf(b, "- **Note:** %s\n", n)
	}
}

// matrixNotes says which cells did not complete and which components
// exited during the run, in Markdown.
func matrixNotes(r *view.Run) []string {
	var notes []string
	for _, c := range r.AllCells() {
		if c.State != "" && c.State != "completed" {
			n := fmt.Sprintf("Cell `%s` %s", cellLabel(c), cellStateText(c))
			if !c.Ended.IsZero() {
				n += fmt.Sprintf(" (ended %s UTC)", clock(c.Ended))
			}
			notes = append(notes, n)
		}
		for _, comp := range c.Components {
			if !comp.Exited.IsZero() {
				notes = append(notes, fmt.Sprintf("Component `%s` of cell `%s` exited during the run at %s UTC: %s",
					comp.Name, cellLabel(c), clock(comp.Exited), exitText(comp.ExitText)))
			}
			if s := comp.Stop; s != nil && s.Killed {
				notes = append(notes, fmt.Sprintf("Component `%s` of cell `%s` was killed when the cell ended (%s UTC): %s",
					comp.Name, cellLabel(c), clock(s.Time), s.How))
			}
		}
	}
	return notes
}
