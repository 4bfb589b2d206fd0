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
		name := phaseName(p)
		in := analysis.ResourceInput{Window: p.Window, Components: c.Components, Series: series}
		data = append(data, analysis.PhaseData{Profile: name, State: p.State, Resources: p.Resources,
			Summaries: p.Workloads, Sizing: analysis.SizingInputs(in, p.Warmup)})
	}
	errorLimits(meta, data)
	return analysis.CellInsights(data, o)
}

// judgeHeld sets Held on each finished phase of c that ran a workload:
// its size's verdict where c's insights sized it (under the name the
// sizes give it), else analysis.JudgeHeld over those phases in order,
// with the error bounds of the plan's gates, as the sizes are judged.
func judgeHeld(c *view.Cell, meta results.Meta) {
	var phases []*view.Phase
	var data []analysis.PhaseData
	for _, p := range c.Phases {
		if (p.State == "" || p.State == "completed") && len(p.Workloads) > 0 {
			phases = append(phases, p)
			data = append(data, analysis.PhaseData{Profile: phaseName(p), State: p.State, Resources: p.Resources, Summaries: p.Workloads})
		}
	}
	errorLimits(meta, data)
	sized := map[string]analysis.Held{}
	if c.Insights != nil {
		for _, s := range c.Insights.Sizes {
			sized[s.Size] = s.Held
		}
	}
	for i, h := range analysis.JudgeHeld(data) {
		if s, ok := sized[data[i].Profile]; ok {
			h = s
		}
		phases[i].Held = &h
	}
}

// phaseName is the name a phase's size has: its profile's, or for a
// phase of a run without a plan its workload's.
func phaseName(p *view.Phase) string {
	if p.Implicit && len(p.Workloads) > 0 {
		return p.Workloads[0].Workload.DisplayName()
	}
	return p.Profile
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
		judgeHeld(c, meta)
	}
	return attachVerified(store, r)
}
