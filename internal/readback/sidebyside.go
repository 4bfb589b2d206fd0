package readback

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// planPair is a compare pair as the plan's description in the run's meta
// holds it.
type planPair struct {
	A string `json:"a"`
	B string `json:"b"`
}

// planPairs reads the compare pairs of the plan the run ran; none for a
// run without a plan or a plan without pairs.
func planPairs(meta results.Meta) ([]planPair, error) {
	text, ok := meta.Extra["plan"]
	if !ok {
		return nil, nil
	}
	var p struct {
		Compare []planPair `json:"compare"`
	}
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		return nil, fmt.Errorf("cannot read the plan stored with the run: %w", err)
	}
	return p.Compare, nil
}

// sideBySide compares each pair of the plan in every profile of the cells:
// components (or groups) by their CPU, memory and disk, workloads by their
// request rate and p50 and p99 latency. cells is one cell, whose
// per-interval samples give the intervals, or the repetitions of one
// combination of a repeated run, which are compared as repeated runs.
func sideBySide(meta results.Meta, wd workloadData, cells []*view.Cell) ([]view.SideBySide, error) {
	pairs, err := planPairs(meta)
	if err != nil || len(pairs) == 0 || len(cells) == 0 {
		return nil, err
	}
	var out []view.SideBySide
	for _, pr := range pairs {
		s := view.SideBySide{A: pr.A, B: pr.B}
		if len(cells) > 1 {
			s.Repetitions = len(cells)
		}
		for _, p := range cells[0].Phases {
			if p.Implicit {
				continue
			}
			reps := repetitionsOf(cells, p.Profile)
			g := view.ComparisonGroup{Name: fmt.Sprintf("Profile `%s`", p.Profile)}
			if len(sideMembers(cells[0], pr.A)) > 0 && len(sideMembers(cells[0], pr.B)) > 0 {
				g.Comparisons = compareMembers(reps, pr.A, pr.B)
			} else if wa, wb := workloadIn(p, pr.A), workloadIn(p, pr.B); wa != nil && wb != nil {
				g.Comparisons = comparePairedWorkloads(wd.ivs, reps, pr.A, pr.B)
				s.Notes = append(s.Notes, paramNotes(wd.defs[wa.Workload.Name], wd.defs[wb.Workload.Name])...)
			}
			if s.Repetitions > 0 {
				for i := range g.Comparisons {
					g.Comparisons[i] = analysis.SideBySideGuard(g.Comparisons[i])
				}
			}
			if len(g.Comparisons) > 0 {
				s.Groups = append(s.Groups, g)
			}
		}
		s.Notes = dedupe(s.Notes)
		out = append(out, s)
	}
	return out, nil
}

// phaseIn is one cell's phase of a profile.
type phaseIn struct {
	cell  *view.Cell
	phase *view.Phase
}

// repetitionsOf is the phase of the profile in each of cells that ran it.
func repetitionsOf(cells []*view.Cell, profile string) []phaseIn {
	var out []phaseIn
	for _, c := range cells {
		for _, p := range c.Phases {
			if !p.Implicit && p.Profile == profile {
				out = append(out, phaseIn{c, p})
			}
		}
	}
	return out
}

// sideMembers is the components a side names in the cell: its group, or
// else the component of that name (as plan.SideComponents).
func sideMembers(c *view.Cell, name string) []string {
	var out []string
	for _, comp := range c.Components {
		if comp.Group == name {
			out = append(out, comp.Name)
		}
	}
	if len(out) == 0 {
		for _, comp := range c.Components {
			if comp.Name == name {
				out = append(out, comp.Name)
			}
		}
	}
	return out
}

func workloadIn(p *view.Phase, short string) *analysis.Summary {
	for _, s := range p.Workloads {
		if s.Workload.DisplayName() == short {
			return s
		}
	}
	return nil
}

// compareMembers compares the summed CPU, memory and disk of the
// components of sides a and b over each phase's window: one series per
// side and phase.
func compareMembers(reps []phaseIn, a, b string) []analysis.Comparison {
	var out []analysis.Comparison
	for _, res := range analysis.CompareResources() {
		var sa, sb [][]float64
		for _, r := range reps {
			if vs := analysis.ResourceSamples(r.cell.Series, r.phase.Window, sideMembers(r.cell, a), res); len(vs) > 0 {
				sa = append(sa, vs)
			}
			if vs := analysis.ResourceSamples(r.cell.Series, r.phase.Window, sideMembers(r.cell, b), res); len(vs) > 0 {
				sb = append(sb, vs)
			}
		}
		if len(sa) > 0 && len(sb) > 0 {
			out = append(out, analysis.CompareResource("components", res, sa, sb, analysis.DefaultBootstrap()))
		}
	}
	return out
}

// comparePairedWorkloads compares the workloads a and b (display names)
// of each phase, each over its window.
func comparePairedWorkloads(ivs map[string][]*stats.Interval, reps []phaseIn, a, b string) []analysis.Comparison {
	var rates [2][][]float64
	var lats [2][][]*stats.Hist
	for _, r := range reps {
		for i, name := range []string{a, b} {
			s := workloadIn(r.phase, name)
			if s == nil {
				continue
			}
			in := analysis.InWindow(ivs[s.Workload.Name], s.Window)
			rates[i], lats[i] = append(rates[i], analysis.IntervalRates(in)), append(lats[i], analysis.IntervalLatencies(in))
		}
	}
	return workloadComparisons("workload", rates[0], rates[1], lats[0], lats[1])
}

// paramNotes says which params of two paired workloads differ, beyond
// where each sends its load.
func paramNotes(a, b results.Workload) []string {
	pa, pb := paramMap(a.Params), paramMap(b.Params)
	var out []string
	for _, k := range unionKeys(pa, pb) {
		if isPlace(a, b, k) || reflect.DeepEqual(pa[k], pb[k]) {
			continue
		}
		out = append(out, fmt.Sprintf("the workloads' param %s differs: %s for %s, %s for %s",
			k, paramText(pa[k]), a.Short, paramText(pb[k]), b.Short))
	}
	return out
}
