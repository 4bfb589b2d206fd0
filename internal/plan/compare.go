package plan

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Pair is two systems that run side by side on the same load, which the
// report compares: B against A. Each side names components (a component,
// or a group: every component with that group) or a workload (by name,
// in every profile that has it); both sides name the same kind.
//
//	compare:
//	  - {a: prometheus, b: victoria-metrics}   # groups or components
//	  - {a: write-prom, b: write-vm}           # workloads
type Pair struct {
	A, B string
	at   where
}

// The kinds of thing a side of a Pair names.
const (
	SideComponents = "components" // a component or a group
	SideWorkload   = "workload"
)

const pairKeys = "a, b"

// pairs decodes the compare list.
func (d *decoder) pairs(n *yaml.Node) []Pair {
	var out []Pair
	err := d.list("compare", n, func(item *yaml.Node) {
		pr := Pair{at: where{}}
		m := d.fields(item, "compare", pr.at, pairKeys)
		d.field(m, pr.at, "a", func(n *yaml.Node) (err error) { pr.A, err = scalar("a", n); return })
		d.field(m, pr.at, "b", func(n *yaml.Node) (err error) { pr.B, err = scalar("b", n); return })
		out = append(out, pr)
	})
	if err != nil {
		d.errorf(n, "%v", err)
	}
	return out
}

// SideKind says what name means in p: SideComponents when it is a
// component or a group, SideWorkload when it is a workload, "" when it is
// neither (and "ambiguous" when it is both).
func (p *Plan) SideKind(name string) string {
	comp := len(p.SideComponents(name)) > 0
	work := false
	for _, pr := range p.Profiles {
		for _, w := range pr.Workloads {
			work = work || w.Name == name
		}
	}
	switch {
	case comp && work:
		return "ambiguous"
	case comp:
		return SideComponents
	case work:
		return SideWorkload
	}
	return ""
}

// SideComponents is the components a side names: those of the group name,
// or else the component called name.
func (p *Plan) SideComponents(name string) []string {
	var out []string
	for _, c := range p.Components {
		if c.Group == name {
			out = append(out, c.Name)
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, c := range p.Components {
		if c.Name == name {
			return []string{c.Name}
		}
	}
	return nil
}

// pairs checks each compare pair: both sides given, different, naming the
// same kind of thing, components that do not overlap, or workloads that
// run in the same profiles with the same driver and load.
func (v *validator) pairs(p *Plan) {
	for _, pr := range p.Compare {
		ok := true
		for _, side := range []struct{ key, name string }{{"a", pr.A}, {"b", pr.B}} {
			switch kind := p.SideKind(side.name); {
			case side.name == "":
				v.at(pr.at, side.key, "compare: %s needs a component, a group or a workload", side.key)
				ok = false
			case kind == "":
				v.at(pr.at, side.key, "compare: %s %q is not a component, a group or a workload of the plan", side.key, side.name)
				ok = false
			case kind == "ambiguous":
				v.at(pr.at, side.key, "compare: %s %q names both a workload and a component or group; rename one", side.key, side.name)
				ok = false
			}
		}
		if !ok {
			continue
		}
		ka, kb := p.SideKind(pr.A), p.SideKind(pr.B)
		switch {
		case pr.A == pr.B:
			v.at(pr.at, "b", "compare: a and b are both %q", pr.A)
		case ka != kb:
			v.at(pr.at, "b", "compare: a %q is a %s and b %q a %s; compare components with components, workloads with workloads",
				pr.A, kindNoun(ka), pr.B, kindNoun(kb))
		case ka == SideComponents:
			for _, c := range p.SideComponents(pr.B) {
				if slices.Contains(p.SideComponents(pr.A), c) {
					v.at(pr.at, "b", "compare: component %s is on both sides (a %q, b %q)", c, pr.A, pr.B)
				}
			}
		default:
			v.pairedWorkloads(p, pr)
		}
	}
}

func kindNoun(kind string) string {
	if kind == SideWorkload {
		return "workload"
	}
	return "component or group"
}

// pairedWorkloads checks that the two workloads of a pair run in the same
// profiles with the same driver, model and load.
func (v *validator) pairedWorkloads(p *Plan, pr Pair) {
	for _, prof := range p.Profiles {
		a, b := findWorkload(prof, pr.A), findWorkload(prof, pr.B)
		switch {
		case a == nil && b == nil:
		case a == nil || b == nil:
			v.at(pr.at, "b", "compare: profile %s runs only one of the workloads %s and %s", prof.Name, pr.A, pr.B)
		case a.Driver != b.Driver || a.Model != b.Model || a.Rate != b.Rate || a.Concurrency != b.Concurrency ||
			a.StartRate != b.StartRate || a.StartConcurrency != b.StartConcurrency || !slices.EqualFunc(a.Stages, b.Stages, sameStage):
			v.at(pr.at, "b", "compare: in profile %s the workloads %s and %s differ in driver, model or load; a side-by-side comparison needs the same load",
				prof.Name, pr.A, pr.B)
		}
	}
}

func sameStage(a, b Stage) bool {
	return a.Duration == b.Duration && a.Rate == b.Rate && a.Concurrency == b.Concurrency
}

func findWorkload(pr Profile, name string) *Workload {
	for i := range pr.Workloads {
		if pr.Workloads[i].Name == name {
			return &pr.Workloads[i]
		}
	}
	return nil
}

// pairJSON is a Pair in Describe.
type pairJSON struct {
	A string `json:"a"`
	B string `json:"b"`
}

func describePairs(ps []Pair) []pairJSON {
	var out []pairJSON
	for _, p := range ps {
		out = append(out, pairJSON{A: p.A, B: p.B})
	}
	return out
}

// String is "b against a".
func (p Pair) String() string { return fmt.Sprintf("%s against %s", p.B, p.A) }
