package view

import (
	"time"

	"github.com/perflab/perflab/internal/analysis"
)

// Run is everything a report shows of one run.
type Run struct {
	Name    string
	Dir     string
	Command string
	Tool    string
	Host    string
	Started time.Time
	Ended   time.Time
	State   string // completed, interrupted, failed, running (a killed run)
	Message string
	// InProgress is set on a run that reads running because it still
	// runs (its perflab process is alive), not because it was killed; so
	// on its cells and phases that are running.
	InProgress bool
	// Workloads is every workload of every phase in the order they were
	// added: the flat list summary.json's "workloads" holds.
	Workloads []*analysis.Summary
	// SLO is every gate's verdict on every workload it applies to; nil
	// when the run has no gates.
	SLO []Gate
	// Timelines are each workload's per-interval figures, by workload
	// name, for charts; nil draws none.
	Timelines map[string][]analysis.IntervalFigures
	// OpTimelines are each operation's per-interval figures, by workload
	// then operation (perflab report --format csv).
	OpTimelines map[string]map[string][]analysis.IntervalFigures
	// Charts are the charts drawn of the run (report.Charts), written
	// beside report.md, which links them; nil when none were written.
	Charts []PhaseCharts
	// Cells are the matrix cells with their phases; a run without a plan has
	// one implicit cell. When Cells is empty, AllCells treats Workloads as one
	// implicit cell with one implicit phase per workload.
	Cells []*Cell
	// Overheads are the gateway overheads measured by workloads that ran
	// straight to an upstream and through a gateway in front of it.
	Overheads []*analysis.Overhead
	// Search is the capacity search the run made, when it is one; its
	// steps are the run's phases.
	Search *Search
	// Repeat is how many times every cell ran (perflab run --repeat); 0
	// or 1: once.
	Repeat int
	// Repeated groups the cells of a repeated run by combination, with
	// what is computed across the repetitions; nil when Repeat < 2.
	Repeated []*Repeated
	// Exports say, one line a target, what the run's live exports sent
	// and what failed (internal/export's Report).
	Exports []string
}

// Var is one variable of a matrix cell.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Cell is one configuration of the matrix and what ran in it.
type Cell struct {
	Index      int
	Name       string
	Vars       []Var
	Implicit   bool   // the cell of a run without a plan: it has no name, state or times of its own
	State      string // running (killed), completed, failed, interrupted
	Message    string
	InProgress bool // running, and its perflab still runs (Run.InProgress)
	Started    time.Time
	Ended      time.Time
	Components []analysis.Component
	Phases     []*Phase
	// Series are the cell's resource samples (component → metric →
	// points in time order), for charts; nil draws none.
	Series map[string]map[string][]analysis.Point
	// Insights are the cell's suggested sizes, scaling fits and
	// observations; nil when nothing was sampled to size from.
	Insights *analysis.Insights
	// SideBySide compares the systems the plan ran side by side in the
	// cell (its compare pairs).
	SideBySide []SideBySide
	// Repetition is which repetition of its combination the cell is, from
	// 1, in a repeated run; else 0.
	Repetition int
	// Repetitions is, for a combination of a repeated run (Repeated.Cell),
	// how many repetitions its figures pool; else 0.
	Repetitions int
}

// Phase is one profile run in one cell, or, in a run without a plan, one
// workload.
type Phase struct {
	Profile    string // "" for an implicit phase
	Implicit   bool   // one workload of a run without a plan
	State      string
	Message    string
	InProgress bool // running, and its perflab still runs (Run.InProgress)
	Start      time.Time
	LoadEnd    time.Time
	Warmup     time.Duration
	Window     analysis.Window // the window of Resources
	Workloads  []*analysis.Summary
	Resources  *analysis.Resources // nil when nothing was sampled
	// Drivers is what the drivers of its workloads told, by workload name;
	// a workload whose driver told nothing has no entry.
	Drivers map[string]*DriverNotes
	// Workers are the workers of a distributed run, by index; none when
	// one process made the load.
	Workers []Worker
	// Held is whether the system held the phase's load (readback, HeldOf:
	// the verdict of its size where the cell's insights sized it, the one
	// the report shows); nil for a phase not judged: it did not complete,
	// or ran no workload.
	Held *analysis.Held
}

// AllCells is r.Cells, or for a Run built without them, one implicit
// cell with an implicit phase per workload.
func (r *Run) AllCells() []*Cell {
	if len(r.Cells) > 0 {
		return r.Cells
	}
	c := &Cell{Implicit: true}
	for _, s := range r.Workloads {
		c.Phases = append(c.Phases, &Phase{Implicit: true, Window: s.Window, Workloads: []*analysis.Summary{s}})
	}
	return []*Cell{c}
}

// PhaseResources are the resource figures of the phase that ran profile;
// nil when it has none.
func (r *Run) PhaseResources(profile string) *analysis.Resources {
	for _, c := range r.Cells {
		for _, p := range c.Phases {
			if p.Profile == profile {
				return p.Resources
			}
		}
	}
	return nil
}

// ComponentNames is every component of the system under test with
// samples in any of the phases, in the order they first appear.
func ComponentNames(phases []*Phase) []string {
	var names []string
	seen := map[string]bool{}
	for _, p := range phases {
		if p.Resources == nil {
			continue
		}
		for _, c := range p.Resources.Components {
			if c.Kind != analysis.KindGenerator && !seen[c.Name] && (c.MemoryMetric != "" || c.CPUMetric != "") {
				seen[c.Name] = true
				names = append(names, c.Name)
			}
		}
	}
	return names
}
