package cli

import (
	"fmt"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
)

// loadRun reads a run directory's store into what reports show. It works on
// finished runs and on runs killed mid-way.
func loadRun(store *results.Run) (*report.Run, error) {
	meta, err := store.Meta()
	if err != nil {
		return nil, err
	}
	status, err := store.Status()
	if err != nil {
		return nil, err
	}
	ws, err := store.Workloads()
	if err != nil {
		return nil, err
	}
	ends, err := store.WorkloadEnds()
	if err != nil {
		return nil, err
	}
	r := &report.Run{Name: meta.Name, Dir: store.Dir(), Command: meta.Command, Tool: meta.Tool, Host: meta.Host,
		Started: meta.Started, Ended: status.Ended, State: status.State, Message: status.Message}
	for _, w := range ws {
		ivs, err := store.Intervals(w.Name)
		if err != nil {
			return nil, fmt.Errorf("cannot read intervals of workload %q: %w", w.Name, err)
		}
		a := analysis.Workload{Name: w.Name, Driver: w.Driver, Model: w.Model, Target: w.Target, TargetRate: w.Rate,
			VUsMin: w.VUsMin, VUsMax: w.VUsMax}
		if end, ok := ends[w.Name]; ok {
			a.Start, a.LoadEnd, a.End, a.Scheduled, a.MaxVUs = end.Start, end.LoadEnd, end.End, end.Scheduled, end.MaxVUs
			a.Window = analysis.Window{Start: end.WindowStart, End: end.WindowEnd, Rule: end.WindowRule}
		} else if len(ivs) > 0 {
			// Killed before the workload ended: take what was recorded, minus the first interval.
			a.Start, a.LoadEnd = ivs[0].Start, ivs[len(ivs)-1].End
			a.Window = analysis.Window{Start: ivs[0].End, End: a.LoadEnd, Rule: "run killed: recorded intervals after the first"}
		}
		if w.Model == "closed" {
			a.VUsMax = w.Concurrency
		}
		r.Workloads = append(r.Workloads, analysis.Summarize(a, ivs))
	}
	return r, nil
}
