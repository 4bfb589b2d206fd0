package readback

import (
	"fmt"
	"slices"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// phaseRef is where a workload ran in one run.
type phaseRef struct {
	run   *Compared
	cell  *view.Cell
	phase *view.Phase
	sum   *analysis.Summary
}

// findWorkloads is where the workload compared by name (Compared.base)
// ran in r: once, or in each repetition of a repeated run.
func findWorkloads(r *Compared, name string) []phaseRef {
	var out []phaseRef
	for _, c := range r.run.Cells {
		for _, p := range c.Phases {
			for _, s := range p.Workloads {
				if r.base[s.Workload.Name] == name {
					out = append(out, phaseRef{run: r, cell: c, phase: p, sum: s})
				}
			}
		}
	}
	return out
}

// refs finds the workload in each run, in every repetition of a repeated
// run, each a run of the comparison; false when a run lacks it.
func refs(runs []*Compared, name string) ([]phaseRef, bool) {
	var out []phaseRef
	for _, r := range runs {
		found := findWorkloads(r, name)
		if len(found) == 0 {
			return nil, false
		}
		out = append(out, found...)
	}
	return out, true
}

// comparePhases compares, for each phase of A's first run that ran one of
// the common workloads, the components of the system under test, then each
// common workload of the phase.
func comparePhases(a, b []*Compared, common []string) []view.ComparisonGroup {
	var groups []view.ComparisonGroup
	index := map[*view.Phase]int{}
	for _, name := range common {
		ra, okA := refs(a, name)
		rb, okB := refs(b, name)
		if !okA || !okB {
			continue // a repeated run lacks it
		}
		gi, seen := index[ra[0].phase]
		if !seen {
			gi = len(groups)
			index[ra[0].phase] = gi
			groups = append(groups, view.ComparisonGroup{Name: phaseTitle(ra[0]), Comparisons: oneInvocation(compareComponents(ra, rb), ra, rb)})
		}
		label := "workload " + ra[0].sum.Workload.DisplayName()
		groups[gi].Comparisons = append(groups[gi].Comparisons, oneInvocation(compareWorkload(label, ra, rb), ra, rb)...)
	}
	return groups
}

// oneInvocation applies analysis.OneInvocationGuard to comparisons of runs
// where a side's several runs all come from one run directory (the
// repetitions of one perflab run --repeat N).
func oneInvocation(cs []analysis.Comparison, ra, rb []phaseRef) []analysis.Comparison {
	for _, side := range []struct {
		name string
		refs []phaseRef
	}{{"A", ra}, {"B", rb}} {
		if len(side.refs) < 2 || !oneDir(side.refs) {
			continue
		}
		for i := range cs {
			cs[i] = analysis.OneInvocationGuard(cs[i], side.name)
		}
	}
	return cs
}

// oneDir says whether every run of refs is in the same run directory.
func oneDir(refs []phaseRef) bool {
	for _, r := range refs {
		if r.run.dir != refs[0].run.dir {
			return false
		}
	}
	return true
}

func phaseTitle(r phaseRef) string {
	if r.phase.Implicit {
		return fmt.Sprintf("Workload `%s`", r.sum.Workload.DisplayName())
	}
	if g := r.run.combo[r.cell.Index]; g != nil { // a repeated run: the combination, not the repetition
		if len(r.run.run.Repeated) > 1 || len(g.Vars) > 0 {
			return fmt.Sprintf("Cell `%s`, profile `%s`", g.Name, r.phase.Profile)
		}
		return fmt.Sprintf("Profile `%s`", r.phase.Profile)
	}
	if len(r.run.run.Cells) > 1 || len(r.cell.Vars) > 0 {
		return fmt.Sprintf("Cell `%s`, profile `%s`", r.cell.Name, r.phase.Profile)
	}
	return fmt.Sprintf("Profile `%s`", r.phase.Profile)
}

// subject is what a row compares: one component, a group, or all the
// components of the system under test, chosen in each run by members.
type subject struct {
	label   string
	members func(*analysis.Resources) []string
}

// componentSubjects are the components both sides have, by name; each
// group with more than one member on a side; and all components, when a
// side has several or the two sides' components differ.
func componentSubjects(ra, rb *analysis.Resources) []subject {
	ca, cb := sutComponents(ra), sutComponents(rb)
	var out []subject
	for _, c := range ca {
		if contains(cb, c.Name) {
			name := c.Name
			out = append(out, subject{label: name, members: func(*analysis.Resources) []string { return []string{name} }})
		}
	}
	for _, g := range groupsOf(ca) {
		if len(members(ca, g)) > 1 || len(members(cb, g)) > 1 {
			group := g
			out = append(out, subject{label: "group " + g, members: func(r *analysis.Resources) []string { return members(sutComponents(r), group) }})
		}
	}
	if len(ca) > 1 || len(cb) > 1 || !sameNames(ca, cb) {
		out = append(out, subject{label: "all components", members: func(r *analysis.Resources) []string { return members(sutComponents(r), "") }})
	}
	return out
}

func sutComponents(r *analysis.Resources) []analysis.ComponentResources {
	if r == nil {
		return nil
	}
	var out []analysis.ComponentResources
	for _, c := range r.Components {
		if c.Kind != analysis.KindGenerator && (c.CPUMetric != "" || c.MemoryMetric != "") {
			out = append(out, c)
		}
	}
	return out
}

func contains(cs []analysis.ComponentResources, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

// members is the names of cs in group g, or of all of cs for "".
func members(cs []analysis.ComponentResources, g string) []string {
	var out []string
	for _, c := range cs {
		if g == "" || c.Group == g {
			out = append(out, c.Name)
		}
	}
	return out
}

func groupsOf(cs []analysis.ComponentResources) []string {
	var out []string
	for _, c := range cs {
		if c.Group != "" && !slices.Contains(out, c.Group) {
			out = append(out, c.Group)
		}
	}
	return out
}

func sameNames(a, b []analysis.ComponentResources) bool {
	if len(a) != len(b) {
		return false
	}
	for _, c := range a {
		if !contains(b, c.Name) {
			return false
		}
	}
	return true
}

// compareComponents compares the CPU, memory and disk of each subject over
// each run's phase window.
func compareComponents(ra, rb []phaseRef) []analysis.Comparison {
	var out []analysis.Comparison
	for _, s := range componentSubjects(ra[0].phase.Resources, rb[0].phase.Resources) {
		for _, res := range analysis.CompareResources() {
			sa, okA := subjectSamples(ra, s, res)
			sb, okB := subjectSamples(rb, s, res)
			if okA && okB {
				out = append(out, analysis.CompareResource(s.label, res, sa, sb, analysis.DefaultBootstrap()))
			}
		}
	}
	return out
}

// subjectSamples is the subject's samples of a resource in each run; false
// when a run has none.
func subjectSamples(refs []phaseRef, s subject, resource string) ([][]float64, bool) {
	var out [][]float64
	for _, r := range refs {
		names := s.members(r.phase.Resources)
		if len(names) == 0 {
			return nil, false
		}
		vs := analysis.ResourceSamples(r.run.series[r.cell.Index], r.phase.Window, names, resource)
		if len(vs) == 0 {
			return nil, false
		}
		out = append(out, vs)
	}
	return out, true
}

// compareWorkload compares a workload's request rate, error rate and p50
// and p99 latency over each run's window: the latency is of successful
// requests only, so the error rate beside it says how many it leaves out.
func compareWorkload(label string, ra, rb []phaseRef) []analysis.Comparison {
	side := func(refs []phaseRef) (rates [][]float64, lat [][]*stats.Hist, ivs [][]*stats.Interval) {
		for _, r := range refs {
			in := analysis.InWindow(r.run.ivs[r.sum.Workload.Name], r.sum.Window)
			rates, lat, ivs = append(rates, analysis.IntervalRates(in)), append(lat, analysis.IntervalLatencies(in)), append(ivs, in)
		}
		return rates, lat, ivs
	}
	rateA, latA, ivsA := side(ra)
	rateB, latB, ivsB := side(rb)
	cs := workloadComparisons(label, rateA, rateB, latA, latB)
	cs = slices.Insert(cs, 1, analysis.CompareErrorRate(label, ivsA, ivsB))
	warns := clientBoundWarnings("A", ra)
	warns = append(warns, clientBoundWarnings("B", rb)...)
	cs[0].Ratio.Warnings = append(cs[0].Ratio.Warnings, warns...) // once, on the workload's first row
	return cs
}

// clientBoundWarnings say of each run of a side whose workload was
// client-bound that its figures may be the generator's limit, not the
// system's: a difference then says nothing of the systems.
func clientBoundWarnings(side string, refs []phaseRef) []string {
	var out []string
	for _, r := range refs {
		if r.sum.ClientBound {
			out = append(out, fmt.Sprintf("%s (%s) was client-bound: %s; this workload's figures there may be the generator's limit, not the system's",
				side, r.run.dir, r.sum.ClientWhy))
		}
	}
	return out
}

// workloadComparisons compares two sides' request rates and p50 and p99
// latencies, each side one series per run (or phase).
func workloadComparisons(label string, rateA, rateB [][]float64, latA, latB [][]*stats.Hist) []analysis.Comparison {
	o := analysis.DefaultBootstrap()
	return []analysis.Comparison{
		analysis.CompareRate(label, rateA, rateB, o),
		analysis.CompareQuantile(label, 0.5, latA, latB, o),
		analysis.CompareQuantile(label, 0.99, latA, latB, o),
	}
}
