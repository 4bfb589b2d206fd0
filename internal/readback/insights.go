package readback

import (
	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// cellInsights sizes a cell's phases from its samples and fits and
// observes them (analysis.CellInsights). A phase of a run without a plan
// is named after its workload.
func cellInsights(c *view.Cell, meta results.Meta, series map[string]map[string][]analysis.Point, o analysis.InsightOptions) (*analysis.Insights, error) {
	var data []analysis.PhaseData
	for _, p := range c.Phases {
		if p.Resources == nil {
			continue
		}
		name := p.Profile
		if p.Implicit && len(p.Workloads) > 0 {
			name = p.Workloads[0].Workload.DisplayName()
		}
		in := analysis.ResourceInput{Window: p.Window, Components: c.Components, Series: series}
		data = append(data, analysis.PhaseData{Profile: name, State: p.State, Resources: p.Resources,
			Summaries: p.Workloads, Sizing: analysis.SizingInputs(in, p.Warmup)})
	}
	errorLimits(meta, data)
	return analysis.CellInsights(data, o)
}

// Reinsight computes every cell's insights again with o, from the store's
// samples; in a repeated run, every combination's from its repetitions'.
func Reinsight(store *results.Run, r *view.Run, o analysis.InsightOptions) error {
	meta, err := store.Meta()
	if err != nil {
		return err
	}
	if len(r.Repeated) > 0 {
		for _, g := range r.Repeated {
			if g.Cell.Insights, err = repeatedInsights(g.Repetitions, meta, o); err != nil {
				return err
			}
		}
		return nil
	}
	for _, c := range r.Cells {
		samples, err := store.Samples(c.Index)
		if err != nil {
			return err
		}
		if c.Insights, err = cellInsights(c, meta, analysisSeries(samples), o); err != nil {
			return err
		}
	}
	return attachVerified(store, r)
}
