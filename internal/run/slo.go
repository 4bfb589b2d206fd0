package run

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/slo"
)

// CheckSLOWorkloads refuses --slo gates scoped to a workload the plan's
// selected profiles do not have (UnknownSLOWorkloads).
func CheckSLOWorkloads(p *plan.Plan, exprs []string) error {
	gates, names := UnknownSLOWorkloads(p, exprs)
	if len(gates) == 0 {
		return nil
	}
	problems := make([]string, len(gates))
	for i, g := range gates {
		problems[i] = fmt.Sprintf("--slo '%s': the plan's profiles have no workload %q (they have %s)",
			g.Expr, g.Workload, strings.Join(names, ", "))
	}
	return Invalid("invalid SLO gate:\n  %s", strings.Join(problems, "\n  "))
}

// UnknownSLOWorkloads are the gates of exprs (those that parse) scoped to
// a workload p's profiles do not have, and the names of those they have:
// judged after the run, such a gate has insufficient data and fails a run
// that a typo wasted. A gate names a workload by its name in its profile
// ("get") or with the profile's (and the cell's) in front ("low/get"); the
// last part must be one of them. The workloads of an implicit plan are in
// no profile: a gate names them by their names alone.
func UnknownSLOWorkloads(p *plan.Plan, exprs []string) (unknown []slo.Gate, names []string) {
	gates, _ := slo.ParseGates(exprs)
	known := map[string]bool{}
	for _, pr := range p.Profiles {
		for _, w := range pr.Workloads {
			if !known[w.Name] {
				names = append(names, w.Name)
			}
			known[w.Name] = true
		}
	}
	for _, g := range gates {
		scope := g.Workload
		if !p.Implicit {
			scope = scope[strings.LastIndex(scope, "/")+1:]
		}
		if g.Workload != "" && !known[scope] {
			unknown = append(unknown, g)
		}
	}
	return unknown, names
}

// GateSpecs are the gates of a run: those of p's profiles and workloads
// (p may be nil), then the command line's.
func GateSpecs(p *plan.Plan, flags []string) []readback.GateSpec {
	var out []readback.GateSpec
	if p != nil {
		for _, pr := range p.Profiles {
			for _, expr := range pr.SLO {
				out = append(out, readback.GateSpec{Expr: expr, Profile: pr.Name})
			}
			for _, w := range pr.Workloads {
				for _, expr := range w.SLO {
					out = append(out, readback.GateSpec{Expr: expr, Profile: pr.Name, Workload: w.Name})
				}
			}
		}
	}
	for _, expr := range flags {
		out = append(out, readback.GateSpec{Expr: expr})
	}
	return out
}
