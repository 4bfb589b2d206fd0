package view

import "github.com/perflab/perflab/internal/analysis"

// Repeated is one combination of the matrix in a repeated run (perflab run
// --repeat N; a plan without a matrix has one combination): its
// repetitions and what is computed across them.
type Repeated struct {
	// Cell is the combination: its name and variables (without the
	// repetition), Insights sized from the repetitions' pooled samples and
	// SideBySide with the repetitions as repeated runs. It has no phases
	// or components of its own; Repetitions says how many it pools.
	Cell *Cell
	// Repetitions are its cells, one per repetition in order; each is in
	// Run.Cells too, with its own figures.
	Repetitions []*Cell
	// Profiles are each profile's figures across the repetitions.
	Profiles []RepeatedProfile
}

// RepeatedProfile is one profile's figures across the repetitions of a
// combination, each the spread of the repetitions' figures.
type RepeatedProfile struct {
	Profile    string
	Components []RepeatedComponent
	Workloads  []RepeatedOp
}

// RepeatedComponent is a component of the system under test across the
// repetitions: the CPU and memory P99 and the Go heap and GC averages of
// each repetition's phase window.
type RepeatedComponent struct {
	Name   string
	CPU    analysis.Spread // cores
	Memory analysis.Spread // bytes
	Heap   analysis.Spread // bytes
	GC     analysis.Spread // cycles per minute
}

// RepeatedOp is one operation of a workload across the repetitions: its
// rate and latency p50 and p99 over each repetition's window.
type RepeatedOp struct {
	Workload  string // display name
	Operation string
	Rate      analysis.Spread // operations per second
	P50, P99  analysis.Spread // seconds
}

// RepeatedFigures gathers the figures of the repetitions of one
// combination, profile by profile in the order they ran: for each
// component and operation the spread of the repetitions' figures. A
// repetition without a figure (no samples, too few for a P99, a phase that
// did not run) is left out of that figure's spread.
func RepeatedFigures(reps []*Cell) []RepeatedProfile {
	var out []RepeatedProfile
	for _, profile := range repeatedProfiles(reps) {
		var phases []*Phase
		for _, c := range reps {
			if p := phaseOf(c, profile); p != nil {
				phases = append(phases, p)
			}
		}
		out = append(out, RepeatedProfile{Profile: profile, Components: repeatedComponents(phases), Workloads: repeatedOps(phases)})
	}
	return out
}

func repeatedProfiles(reps []*Cell) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range reps {
		for _, p := range c.Phases {
			if !p.Implicit && !seen[p.Profile] {
				seen[p.Profile] = true
				out = append(out, p.Profile)
			}
		}
	}
	return out
}

func phaseOf(c *Cell, profile string) *Phase {
	for _, p := range c.Phases {
		if !p.Implicit && p.Profile == profile {
			return p
		}
	}
	return nil
}

func repeatedComponents(phases []*Phase) []RepeatedComponent {
	var out []RepeatedComponent
	for _, name := range ComponentNames(phases) {
		var cpu, mem, heap, gc []float64
		for _, p := range phases {
			c, ok := componentIn(p.Resources, name)
			if !ok {
				continue
			}
			if c.CPUMetric != "" && c.CPU.HasP99() {
				cpu = append(cpu, c.CPU.P99)
			}
			if c.MemoryMetric != "" && c.Memory.HasP99() {
				mem = append(mem, c.Memory.P99)
			}
			if c.Heap.N > 0 {
				heap = append(heap, c.Heap.Avg)
			}
			if c.GC.N > 0 {
				gc = append(gc, c.GC.Avg)
			}
		}
		out = append(out, RepeatedComponent{Name: name, CPU: analysis.SpreadOf(cpu), Memory: analysis.SpreadOf(mem),
			Heap: analysis.SpreadOf(heap), GC: analysis.SpreadOf(gc)})
	}
	return out
}

func componentIn(r *analysis.Resources, name string) (analysis.ComponentResources, bool) {
	if r == nil {
		return analysis.ComponentResources{}, false
	}
	for _, c := range r.Components {
		if c.Name == name {
			return c, true
		}
	}
	return analysis.ComponentResources{}, false
}

func repeatedOps(phases []*Phase) []RepeatedOp {
	type key struct{ workload, op string }
	var keys []key
	figs := map[key]*[3][]float64{}
	for _, p := range phases {
		for _, s := range p.Workloads {
			for _, op := range s.Ops {
				k := key{s.Workload.DisplayName(), op.Name}
				if figs[k] == nil {
					figs[k] = &[3][]float64{}
					keys = append(keys, k)
				}
				f := figs[k]
				f[0] = append(f[0], op.Rate)
				if op.Latency.Count >= analysis.MinCountFor(0.5) {
					f[1] = append(f[1], op.Latency.P50.Seconds())
				}
				if op.Latency.Count >= analysis.MinCountFor(0.99) {
					f[2] = append(f[2], op.Latency.P99.Seconds())
				}
			}
		}
	}
	var out []RepeatedOp
	for _, k := range keys {
		f := figs[k]
		out = append(out, RepeatedOp{Workload: k.workload, Operation: k.op, Rate: analysis.SpreadOf(f[0]),
			P50: analysis.SpreadOf(f[1]), P99: analysis.SpreadOf(f[2])})
	}
	return out
}

// InsightCells are the cells whose insights and side-by-side comparisons
// the reports show and the sizes files hold: every cell of the run, or in
// a repeated run each combination's (Repeated[].Cell).
func (r *Run) InsightCells() []*Cell {
	if len(r.Repeated) == 0 {
		return r.AllCells()
	}
	out := make([]*Cell, len(r.Repeated))
	for i, g := range r.Repeated {
		out[i] = g.Cell
	}
	return out
}
