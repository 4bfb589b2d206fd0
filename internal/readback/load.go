package readback

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// Load reads a run directory's store into what reports show: every
// workload's summary, and the cells with their phases, components and
// resource figures. It works on finished runs, on runs killed mid-way, and
// on version 1 stores. A run without a plan (no cells rows) is one implicit
// cell 0 in which each workload is its own phase.
func Load(store *results.Run) (*view.Run, error) {
	r, _, err := readRun(store)
	return r, err
}

// workloadData is every workload's definition and intervals, by name, as
// readRun read them once for all the figures derived from them.
type workloadData struct {
	defs map[string]results.Workload
	ivs  map[string][]*stats.Interval
}

// readRun is loadRun, also giving the workloads' data it read.
func readRun(store *results.Run) (*view.Run, workloadData, error) {
	wd := workloadData{defs: map[string]results.Workload{}, ivs: map[string][]*stats.Interval{}}
	meta, err := store.Meta()
	if err != nil {
		return nil, wd, err
	}
	status, err := store.Status()
	if err != nil {
		return nil, wd, err
	}
	ws, err := store.Workloads()
	if err != nil {
		return nil, wd, err
	}
	ends, err := store.WorkloadEnds()
	if err != nil {
		return nil, wd, err
	}
	r := &view.Run{Name: meta.Name, Dir: store.Dir(), Command: meta.Command, Tool: meta.Tool, Host: meta.Host,
		Started: meta.Started, Ended: status.Ended, State: status.State, Message: status.Message, Repeat: meta.Repeat}
	for _, w := range ws {
		if err := readWorkload(store, w, ends, r, wd); err != nil {
			return nil, wd, err
		}
	}
	if r.Cells, err = loadCells(store, meta, wd, r.Workloads); err != nil {
		return nil, wd, err
	}
	if r.Repeated, err = loadRepeated(meta, wd, r.Cells, analysis.DefaultInsightOptions()); err != nil {
		return nil, wd, err
	}
	if err := loadDriverNotes(store, r); err != nil {
		return nil, wd, err
	}
	if err := attachVerified(store, r); err != nil {
		return nil, wd, err
	}
	if r.SLO, err = loadSLO(store, meta, r.Workloads); err != nil {
		return nil, wd, err
	}
	r.Overheads = gatewayOverheads(wd, ws, r.Workloads, r.Cells)
	if r.State == results.StateRunning && runIsLive(store, meta) {
		markInProgress(r)
	}
	if r.Exports, err = loadExports(store); err != nil {
		return nil, wd, err
	}
	return r, wd, nil
}

// readWorkload reads one workload's intervals into wd and adds its summary
// and timelines to r.
func readWorkload(store *results.Run, w results.Workload, ends map[string]results.WorkloadEnd, r *view.Run, wd workloadData) error {
	ivs, err := store.Intervals(w.Name)
	if err != nil {
		return fmt.Errorf("cannot read intervals of workload %q: %w", w.Name, err)
	}
	wd.defs[w.Name], wd.ivs[w.Name] = w, ivs
	end, ended := ends[w.Name]
	aw := analysisWorkload(w, end, ended, ivs)
	if aw.Schedule, err = analysis.ParseSchedule(w.Stages); err != nil {
		return fmt.Errorf("workload %q: %w", w.Name, err)
	}
	r.Workloads = append(r.Workloads, analysis.Summarize(aw, ivs))
	if r.Timelines == nil {
		r.Timelines = map[string][]analysis.IntervalFigures{}
	}
	r.Timelines[w.Name] = analysis.Timeline(ivs)
	if r.OpTimelines == nil {
		r.OpTimelines = map[string]map[string][]analysis.IntervalFigures{}
	}
	r.OpTimelines[w.Name] = analysis.OpTimelines(ivs)
	return nil
}

// loadExports is what the run's live exports sent and what failed: the
// message of each event of kind "export" (run.EventExport).
func loadExports(store *results.Run) ([]string, error) {
	events, err := store.Events()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range events {
		if e.Kind == "export" {
			out = append(out, e.Message)
		}
	}
	return out, nil
}

func analysisWorkload(w results.Workload, end results.WorkloadEnd, ended bool, ivs []*stats.Interval) analysis.Workload {
	a := analysis.Workload{Name: w.Name, Short: w.Short, Cell: w.Cell, Profile: w.Profile, Driver: w.Driver, Params: string(w.Params),
		Model: w.Model, Target: w.Target, TargetRate: w.Rate, VUsMin: w.VUsMin, VUsMax: w.VUsMax}
	if ended {
		a.Start, a.LoadEnd, a.End, a.Scheduled, a.MaxVUs = end.Start, end.LoadEnd, end.End, end.Scheduled, end.MaxVUs
		a.Unissued = end.Unissued
		a.Window = analysis.Window{Start: end.WindowStart, End: end.WindowEnd, Rule: end.WindowRule}
	} else if len(ivs) > 0 {
		// Killed before the workload ended: take what was recorded, minus the first interval.
		a.Start, a.LoadEnd = ivs[0].Start, ivs[len(ivs)-1].End
		a.Window = analysis.Window{Start: ivs[0].End, End: a.LoadEnd, Rule: killedRule}
	}
	if w.Model == results.ModelClosed {
		a.VUsMax = w.Concurrency
	}
	return a
}

// loadCells builds the report's cells: those the store has rows for, and an
// implicit one for any cell index only workloads refer to (cell 0 of a run
// without a plan).
func loadCells(store *results.Run, meta results.Meta, wd workloadData, sums []*analysis.Summary) ([]*view.Cell, error) {
	rows, err := store.Cells()
	if err != nil {
		return nil, err
	}
	phases, err := store.Phases()
	if err != nil {
		return nil, err
	}
	shards, err := store.Shards()
	if err != nil {
		return nil, err
	}
	byIndex := map[int]*view.Cell{}
	for _, c := range rows {
		byIndex[c.Index] = &view.Cell{Index: c.Index, Name: c.Name, Vars: reportVars(c.Vars), State: c.State,
			Message: c.Message, Started: c.Started, Ended: c.Ended}
	}
	for _, s := range sums {
		if byIndex[s.Workload.Cell] == nil {
			byIndex[s.Workload.Cell] = &view.Cell{Index: s.Workload.Cell, Implicit: true}
		}
	}
	if len(byIndex) == 0 {
		byIndex[0] = &view.Cell{Implicit: true} // nothing ran; samples may still be there
	}
	warns, err := store.PhaseWarnings()
	if err != nil {
		return nil, err
	}
	var out []*view.Cell
	for _, idx := range cellIndices(byIndex) {
		c := byIndex[idx]
		if err := fillCell(store, meta, wd, c, phases, shards, sums); err != nil {
			return nil, err
		}
		addPhaseWarnings(c, warns)
		if err := addUnexposedWarnings(meta, c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// addPhaseWarnings adds what the cell's resource sources warned of when
// they were read (Prometheus queries) to its phases' resource warnings.
func addPhaseWarnings(c *view.Cell, warns []results.PhaseWarning) {
	for _, p := range c.Phases {
		if p.Resources == nil {
			continue
		}
		for _, w := range warns {
			if w.Cell == c.Index && w.Profile == p.Profile {
				p.Resources.Warnings = append(p.Resources.Warnings, fmt.Sprintf("%s (from Prometheus): %s", w.Component, w.Message))
			}
		}
	}
}

// addUnexposedWarnings says, in each phase's resource warnings, which
// metric the plan listed for a component (metric_names) its /metrics never
// exposed during the phase: left out silently, a misspelt name would read
// as a figure nobody measured.
func addUnexposedWarnings(meta results.Meta, c *view.Cell) error {
	listed, err := planMetricNames(meta)
	if err != nil || len(listed) == 0 {
		return err
	}
	for _, p := range c.Phases {
		if p.Resources == nil {
			continue
		}
		for _, comp := range p.Resources.Components {
			for _, name := range listed[comp.Name] {
				if !slices.ContainsFunc(comp.Named, func(m analysis.NamedMetric) bool { return m.Name == name }) {
					p.Resources.Warnings = append(p.Resources.Warnings, fmt.Sprintf("component %s: metric_names lists %s, which its /metrics never exposed in this phase "+
						"(check the name; a histogram or summary is read by its _count or _sum)", comp.Name, name))
				}
			}
		}
	}
	return nil
}

// planMetricNames is the metric_names of each component of the plan the
// run ran, by component; none for a run without a plan.
func planMetricNames(meta results.Meta) (map[string][]string, error) {
	text, ok := meta.Extra["plan"]
	if !ok {
		return nil, nil
	}
	var p struct {
		Components []struct {
			Name        string   `json:"name"`
			MetricNames []string `json:"metric_names"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		return nil, fmt.Errorf("cannot read the plan stored with the run: %w", err)
	}
	out := map[string][]string{}
	for _, c := range p.Components {
		if len(c.MetricNames) > 0 {
			out[c.Name] = c.MetricNames
		}
	}
	return out, nil
}

// fillCell reads a cell's components and samples and builds its phases with
// their resource figures.
func fillCell(store *results.Run, meta results.Meta, wd workloadData, c *view.Cell, phases []results.Phase,
	shards []results.Shard, sums []*analysis.Summary) error {
	comps, err := store.Components(c.Index)
	if err != nil {
		return err
	}
	for _, comp := range comps {
		ac := analysis.Component{Name: comp.Name, Group: comp.Group, Kind: comp.Kind,
			PID: comp.PID, MetricsURL: comp.MetricsURL, DataDirs: comp.DataDirs, Exited: comp.Exited, ExitText: comp.ExitText}
		if s := comp.Stop; s != nil {
			ac.Stop = &analysis.Stop{Time: s.Time, Grace: s.Grace, Killed: s.Killed, How: s.How}
		}
		c.Components = append(c.Components, ac)
	}
	samples, err := store.Samples(c.Index)
	if err != nil {
		return err
	}
	series := analysisSeries(samples)
	c.Series = series
	c.Phases = cellPhases(c.Index, phases, sums)
	attachWorkers(c, shards)
	for _, p := range c.Phases {
		if len(series) == 0 || p.Window.End.IsZero() {
			continue
		}
		p.Resources = analysis.SummarizeResources(analysis.ResourceInput{Window: p.Window, Components: c.Components,
			Series: series, CoresAvailable: float64(meta.GoMaxProcs)})
		analysis.MarkClientBound(p.Resources, p.Workloads)
	}
	if meta.Repeat > 1 {
		judgeHeld(c, meta) // sized and compared across the repetitions of its combination (loadRepeated)
		return nil
	}
	if c.Insights, err = cellInsights(c, meta, series, analysis.DefaultInsightOptions()); err != nil {
		return err
	}
	judgeHeld(c, meta)
	c.SideBySide, err = sideBySide(meta, wd, []*view.Cell{c})
	return err
}

// cellPhases is the cell's phases in the order they ran, each with its
// workloads; a workload whose profile has no phase row (every workload of a
// run without a plan) is an implicit phase of its own, with its own window.
func cellPhases(cell int, phases []results.Phase, sums []*analysis.Summary) []*view.Phase {
	var out []*view.Phase
	byProfile := map[string]*view.Phase{}
	for _, p := range phases {
		if p.Cell != cell {
			continue
		}
		rp := &view.Phase{Profile: p.Profile, State: p.State, Message: p.Message, Start: p.Start, LoadEnd: p.LoadEnd,
			Warmup: p.Warmup, Window: analysis.Window{Start: p.WindowStart, End: p.WindowEnd, Rule: p.WindowRule}}
		byProfile[p.Profile] = rp
		out = append(out, rp)
	}
	for _, s := range sums {
		if s.Workload.Cell != cell {
			continue
		}
		if rp := byProfile[s.Workload.Profile]; rp != nil {
			rp.Workloads = append(rp.Workloads, s)
			continue
		}
		out = append(out, &view.Phase{Implicit: true, Window: s.Window, Workloads: []*analysis.Summary{s}})
	}
	for _, rp := range out {
		if !rp.Implicit && rp.Window.Start.IsZero() {
			rp.Window = workloadsWindow(rp.Workloads)
		}
	}
	return out
}

// workloadsWindow is the span of the workloads' windows: the resource window
// of a phase that never recorded its own (its process was killed).
func workloadsWindow(sums []*analysis.Summary) analysis.Window {
	var w analysis.Window
	for _, s := range sums {
		if w.Start.IsZero() || s.Window.Start.Before(w.Start) {
			w.Start = s.Window.Start
		}
		if s.Window.End.After(w.End) {
			w.End = s.Window.End
		}
	}
	w.Rule = phaseKilledRule
	return w
}

func analysisSeries(samples map[string]map[string][]results.TimePoint) map[string]map[string][]analysis.Point {
	out := make(map[string]map[string][]analysis.Point, len(samples))
	for comp, metrics := range samples {
		out[comp] = make(map[string][]analysis.Point, len(metrics))
		for m, ps := range metrics {
			out[comp][m] = analysisPoints(ps)
		}
	}
	return out
}

func analysisPoints(ps []results.TimePoint) []analysis.Point {
	pts := make([]analysis.Point, len(ps))
	for i, p := range ps {
		pts[i] = analysis.Point{T: p.T, V: p.V}
	}
	return pts
}

func reportVars(vs []results.Var) []view.Var {
	var out []view.Var
	for _, v := range vs {
		out = append(out, view.Var{Name: v.Name, Value: v.Value})
	}
	return out
}

func cellIndices(m map[int]*view.Cell) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
