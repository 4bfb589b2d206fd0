package cli

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
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

// sideBySide compares each pair of the plan in every profile of the cell:
// components (or groups) by their CPU, memory and disk, workloads by their
// request rate and p50 and p99 latency.
func sideBySide(store *results.Run, meta results.Meta, c *report.Cell, series map[string]map[string][]analysis.Point) ([]report.SideBySide, error) {
	pairs, err := planPairs(meta)
	if err != nil || len(pairs) == 0 {
		return nil, err
	}
	var defs map[string]results.Workload
	var out []report.SideBySide
	for _, pr := range pairs {
		s := report.SideBySide{A: pr.A, B: pr.B}
		ma, mb := sideMembers(c, pr.A), sideMembers(c, pr.B)
		for _, p := range c.Phases {
			if p.Implicit {
				continue
			}
			g := report.ComparisonGroup{Name: fmt.Sprintf("Profile `%s`", p.Profile)}
			if len(ma) > 0 && len(mb) > 0 {
				g.Comparisons = compareMembers(series, p.Window, ma, mb)
			} else if wa, wb := workloadIn(p, pr.A), workloadIn(p, pr.B); wa != nil && wb != nil {
				if g.Comparisons, err = comparePairedWorkloads(store, wa, wb); err != nil {
					return nil, err
				}
				if defs == nil {
					if defs, err = workloadDefs(store); err != nil {
						return nil, err
					}
				}
				s.Notes = append(s.Notes, paramNotes(defs[wa.Workload.Name], defs[wb.Workload.Name])...)
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

// sideMembers is the components a side names in the cell: its group, or
// else the component of that name (as plan.SideComponents).
func sideMembers(c *report.Cell, name string) []string {
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

func workloadIn(p *report.Phase, short string) *analysis.Summary {
	for _, s := range p.Workloads {
		if s.Workload.DisplayName() == short {
			return s
		}
	}
	return nil
}

// compareMembers compares the summed CPU, memory and disk of two sets of
// components over a window.
func compareMembers(series map[string]map[string][]analysis.Point, w analysis.Window, a, b []string) []analysis.Comparison {
	var out []analysis.Comparison
	for _, res := range []string{analysis.CompareCPU, analysis.CompareMemory, analysis.CompareDisk} {
		sa := analysis.ResourceSamples(series, w, a, res)
		sb := analysis.ResourceSamples(series, w, b, res)
		if len(sa) > 0 && len(sb) > 0 {
			out = append(out, analysis.CompareResource("components", res, [][]float64{sa}, [][]float64{sb}, analysis.DefaultBootstrap()))
		}
	}
	return out
}

// comparePairedWorkloads compares two workloads of one phase, each over
// its window.
func comparePairedWorkloads(store *results.Run, a, b *analysis.Summary) ([]analysis.Comparison, error) {
	side := func(s *analysis.Summary) ([][]float64, [][]*stats.Hist, error) {
		ivs, err := store.Intervals(s.Workload.Name)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot read intervals of workload %q: %w", s.Workload.Name, err)
		}
		ivs = analysis.InWindow(ivs, s.Window)
		return [][]float64{analysis.IntervalRates(ivs)}, [][]*stats.Hist{analysis.IntervalLatencies(ivs)}, nil
	}
	ra, la, err := side(a)
	if err != nil {
		return nil, err
	}
	rb, lb, err := side(b)
	if err != nil {
		return nil, err
	}
	o := analysis.DefaultBootstrap()
	return []analysis.Comparison{
		analysis.CompareRate("workload", ra, rb, o),
		analysis.CompareQuantile("workload", 0.5, la, lb, o),
		analysis.CompareQuantile("workload", 0.99, la, lb, o),
	}, nil
}

func workloadDefs(store *results.Run) (map[string]results.Workload, error) {
	ws, err := store.Workloads()
	if err != nil {
		return nil, err
	}
	out := map[string]results.Workload{}
	for _, w := range ws {
		out[w.Name] = w
	}
	return out, nil
}

// paramNotes says which params of two paired workloads differ, beyond
// where each sends its load.
func paramNotes(a, b results.Workload) []string {
	pa, pb := paramMap(a.Params), paramMap(b.Params)
	var keys []string
	for k := range pa {
		keys = append(keys, k)
	}
	for k := range pb {
		if _, ok := pa[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		if slices.Contains(placeParams[a.Driver], k) || reflect.DeepEqual(pa[k], pb[k]) {
			continue
		}
		out = append(out, fmt.Sprintf("the workloads' param %s differs: %s for %s, %s for %s",
			k, paramText(pa[k]), a.Short, paramText(pb[k]), b.Short))
	}
	return out
}
