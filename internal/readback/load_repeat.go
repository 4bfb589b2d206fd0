package readback

import (
	"strconv"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// loadRepeated groups the cells of a repeated run (meta repeat above 1) by
// combination and computes what goes across each combination's
// repetitions: the figures' spreads, sizes from the pooled samples (with
// o) and the side-by-side comparisons with the repetitions as repeated
// runs. A run that ran once has none.
func loadRepeated(meta results.Meta, wd workloadData, cells []*view.Cell, o analysis.InsightOptions) ([]*view.Repeated, error) {
	if meta.Repeat < 2 {
		return nil, nil
	}
	groups := combinations(cells)
	for _, g := range groups {
		g.Profiles = view.RepeatedFigures(g.Repetitions)
		var err error
		if g.Cell.Insights, err = repeatedInsights(g.Repetitions, meta, o); err != nil {
			return nil, err
		}
		if g.Cell.SideBySide, err = sideBySide(meta, wd, g.Repetitions); err != nil {
			return nil, err
		}
	}
	return groups, nil
}

// combinations groups the cells of a repeated run by their variables other
// than results.RepetitionVar, in the order their first repetitions ran,
// and sets each cell's Repetition. A combination's Cell has its name (the
// variables joined as the plan names cells, or plan.DefaultCell without a
// matrix), its variables and its index among the combinations.
func combinations(cells []*view.Cell) []*view.Repeated {
	var out []*view.Repeated
	byName := map[string]*view.Repeated{}
	for _, c := range cells {
		var vars []view.Var
		var parts []string
		for _, v := range c.Vars {
			if v.Name == results.RepetitionVar {
				c.Repetition, _ = strconv.Atoi(v.Value)
				continue
			}
			vars = append(vars, v)
			parts = append(parts, v.Name+"="+v.Value)
		}
		name := strings.Join(parts, ",")
		if len(parts) == 0 {
			name = plan.DefaultCell
		}
		g := byName[name]
		if g == nil {
			g = &view.Repeated{Cell: &view.Cell{Index: len(out), Name: name, Vars: vars}}
			byName[name] = g
			out = append(out, g)
		}
		g.Repetitions = append(g.Repetitions, c)
		g.Cell.Repetitions = len(g.Repetitions)
	}
	return out
}

// repeatedInsights sizes a combination from its repetitions' samples,
// pooled per profile (analysis.PoolRepetitions): nil when no repetition
// sampled the system under test.
func repeatedInsights(reps []*view.Cell, meta results.Meta, o analysis.InsightOptions) (*analysis.Insights, error) {
	var data []analysis.PhaseData
	for _, p := range reps[0].Phases {
		if p.Implicit {
			continue
		}
		var runs []analysis.Repetition
		for _, r := range repetitionsOf(reps, p.Profile) {
			if r.phase.Resources == nil {
				continue
			}
			runs = append(runs, analysis.Repetition{State: r.phase.State, Summaries: r.phase.Workloads,
				Input: analysis.ResourceInput{Window: r.phase.Window, Components: r.cell.Components, Series: r.cell.Series,
					CoresAvailable: float64(meta.GoMaxProcs)}})
		}
		if len(runs) > 0 {
			data = append(data, analysis.PoolRepetitions(p.Profile, runs))
		}
	}
	errorLimits(meta, data)
	return analysis.CellInsights(data, o)
}
