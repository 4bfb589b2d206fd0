package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/slo"
)

const sloUsage = `SLO gate judged on every workload over its steady-state window, e.g. 'p99 < 200ms', 'error_rate < 0.1%', 'dropped == 0' (repeatable); the command exits 1 when a gate fails or has insufficient data`

// checkSLOFlags parses the --slo expressions, reporting every one that
// does not parse as a usage error.
func checkSLOFlags(exprs []string) error {
	_, errs := slo.ParseGates(exprs)
	if len(errs) == 0 {
		return nil
	}
	lines := make([]string, len(errs))
	for i, err := range errs {
		lines[i] = "--slo: " + err.Error()
	}
	return usageErrorf("invalid SLO gate:\n  %s", strings.Join(lines, "\n  "))
}

// checkSLOWorkloads refuses --slo gates scoped to a workload the plan's
// selected profiles do not have: judged after the run, such a gate has
// insufficient data and fails a run that a typo wasted. A gate names a
// workload by its name in its profile ("get") or with the profile's (and
// the cell's) in front ("low/get"); the last part must be one of them.
func checkSLOWorkloads(p *plan.Plan, exprs []string) error {
	gates, _ := slo.ParseGates(exprs)
	known := map[string]bool{}
	var names []string
	for _, pr := range p.Profiles {
		for _, w := range pr.Workloads {
			if !known[w.Name] {
				names = append(names, w.Name)
			}
			known[w.Name] = true
		}
	}
	var problems []string
	for _, g := range gates {
		if g.Workload == "" {
			continue
		}
		if last := g.Workload[strings.LastIndex(g.Workload, "/")+1:]; !known[last] {
			problems = append(problems, fmt.Sprintf("--slo '%s': the plan's profiles have no workload %q (they have %s)",
				g.Expr, g.Workload, strings.Join(names, ", ")))
		}
	}
	if len(problems) > 0 {
		return usageErrorf("invalid SLO gate:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// gateSpecs are the gates of a run: those of p's profiles and workloads
// (p may be nil), then the command line's.
func gateSpecs(p *plan.Plan, flags []string) []readback.GateSpec {
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

// judgeSLO turns a run that completed but did not meet its SLO into exit
// status 1 with a hint; a run that failed for another reason keeps that.
func judgeSLO(r *report.Run, status results.Status, runErr error) (results.Status, error) {
	if runErr != nil || status.State != results.StateCompleted || report.SLOMet(r.SLO) {
		return status, runErr
	}
	var missed []string
	for _, g := range r.SLO {
		if g.State == analysis.GatePass {
			continue
		}
		what := "failed"
		if g.State == analysis.GateInsufficient {
			what = "had insufficient data"
		}
		m := fmt.Sprintf("%s %s", g.Expr, what)
		if g.Workload != "" {
			m += " on " + g.Workload
		}
		if g.Measured != "" {
			m += " (" + g.Measured + ")"
		}
		missed = append(missed, m)
	}
	if len(missed) > 3 {
		missed = append(missed[:3], fmt.Sprintf("and %d more", len(missed)-3))
	}
	status.Message = "SLO not met: " + strings.Join(missed, "; ")
	status.ExitCode = ExitFailed
	return status, &runError{err: errors.New(status.Message), code: ExitFailed,
		hint: "the report's SLO section lists every gate with its measured value; insufficient data needs a longer window or more load"}
}

// shellJoin joins a command's arguments as a shell would need them:
// arguments with spaces or shell characters in single quotes, so that a
// stored command such as perflab run plan.yaml --slo 'p99 < 200ms' can be
// run again as shown.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n<>|&;()$`\\\"'*?[]#~{}!") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
