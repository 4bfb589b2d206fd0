package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/slo"
)

// sloMetaKey is the run meta key that holds the run's SLO gates (JSON), so
// that `perflab report` judges them again from the store.
const sloMetaKey = "slo"

const sloUsage = `SLO gate judged on every workload over its steady-state window, e.g. 'p99 < 200ms', 'error_rate < 0.1%', 'dropped == 0' (repeatable); the command exits 1 when a gate fails or has insufficient data`

// gateSpec is one SLO gate as stored with a run, with the workloads it
// applies to: every workload (no profile), a profile's, or one workload
// of a profile.
type gateSpec struct {
	Expr     string `json:"expr"`
	Profile  string `json:"profile,omitempty"`
	Workload string `json:"workload,omitempty"` // the workload's name in its profile
}

// source says where the gate came from, for reports.
func (g gateSpec) source() string {
	switch {
	case g.Workload != "":
		return "plan: workload " + g.Profile + "/" + g.Workload
	case g.Profile != "":
		return "plan: profile " + g.Profile
	}
	return "command line"
}

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
func gateSpecs(p *plan.Plan, flags []string) []gateSpec {
	var out []gateSpec
	if p != nil {
		for _, pr := range p.Profiles {
			for _, expr := range pr.SLO {
				out = append(out, gateSpec{Expr: expr, Profile: pr.Name})
			}
			for _, w := range pr.Workloads {
				for _, expr := range w.SLO {
					out = append(out, gateSpec{Expr: expr, Profile: pr.Name, Workload: w.Name})
				}
			}
		}
	}
	for _, expr := range flags {
		out = append(out, gateSpec{Expr: expr})
	}
	return out
}

// withSLO adds the gates to a run's meta extras; none adds nothing.
func withSLO(extra map[string]string, specs []gateSpec) map[string]string {
	if len(specs) == 0 {
		return extra
	}
	if extra == nil {
		extra = map[string]string{}
	}
	b, _ := json.Marshal(specs)
	extra[sloMetaKey] = string(b)
	return extra
}

// loadSLO judges the gates stored with a run on its workloads' summaries.
// Figures a gate may name besides the built-in metrics come from the
// workloads' read-back checks: lost_<check> is expected − found.
func loadSLO(store *results.Run, meta results.Meta, sums []*analysis.Summary) ([]report.Gate, error) {
	text := meta.Extra[sloMetaKey]
	if text == "" {
		return nil, nil
	}
	var specs []gateSpec
	if err := json.Unmarshal([]byte(text), &specs); err != nil {
		return nil, fmt.Errorf("cannot read the run's SLO gates: %w", err)
	}
	checks, err := store.Checks()
	if err != nil {
		return nil, err
	}
	return judgeGates(specs, sums, checkFigures(checks)), nil
}

// checkFigures are the figures each workload's checks supply, by workload
// name: lost_<check> = expected − found, or 0 when more was found (as
// the report's shortfall); none, with the reason, for a
// check that is unverified, so that a gate on it has insufficient data.
func checkFigures(checks map[string][]results.Check) map[string]map[string]analysis.Supplied {
	out := map[string]map[string]analysis.Supplied{}
	for w, cs := range checks {
		out[w] = map[string]analysis.Supplied{}
		for _, c := range cs {
			f := analysis.Supplied{Value: max(c.Expected-c.Found, 0)} // more found than acknowledged is no loss
			if c.State == results.CheckUnverified {
				f = analysis.Supplied{Why: fmt.Sprintf("the read-back of %s is unverified: %s", c.Name, c.Reason)}
			}
			out[w]["lost_"+c.Name] = f
		}
	}
	return out
}

// judgeGates evaluates every gate on the summaries it applies to. A gate
// on a figure the run supplies is judged on each of those workloads that
// supplies it; when none does, its verdict is insufficient data.
func judgeGates(specs []gateSpec, sums []*analysis.Summary, figures map[string]map[string]analysis.Supplied) []report.Gate {
	var out []report.Gate
	for _, spec := range specs {
		add := func(vs ...analysis.Verdict) {
			for _, v := range vs {
				out = append(out, report.Gate{Verdict: v, Source: spec.source()})
			}
		}
		g, err := slo.ParseGate(spec.Expr)
		if err != nil {
			add(analysis.Verdict{Expr: spec.Expr, State: analysis.GateInsufficient, Note: err.Error()})
			continue
		}
		scoped := gateScope(spec, sums)
		if _, builtin := slo.KindOf(g.Metric); builtin {
			vs, _ := analysis.EvaluateGates([]slo.Gate{g}, scoped, nil) // built-in metrics: no error
			add(vs...)
			continue
		}
		add(suppliedVerdicts(g, scoped, figures)...)
	}
	return out
}

// suppliedVerdicts judges a gate on a figure the run supplies on each
// workload that supplies it.
func suppliedVerdicts(g slo.Gate, sums []*analysis.Summary, figures map[string]map[string]analysis.Supplied) []analysis.Verdict {
	var out []analysis.Verdict
	var supplied []string
	for _, s := range sums {
		fs := figures[s.Workload.Name]
		for k := range fs {
			supplied = append(supplied, k)
		}
		if _, ok := fs[g.Metric]; !ok {
			continue
		}
		vs, err := analysis.EvaluateGates([]slo.Gate{g}, nil, fs)
		if err != nil {
			continue
		}
		for _, v := range vs {
			v.Workload = s.Workload.Name
			out = append(out, v)
		}
	}
	if len(out) > 0 {
		return out
	}
	note := fmt.Sprintf("no workload supplies %s; built-in metrics are %s", g.Metric, strings.Join(slo.Metrics(), ", "))
	if len(supplied) > 0 {
		slices.Sort(supplied)
		note += "; the workloads supply " + strings.Join(slices.Compact(supplied), ", ")
	}
	return []analysis.Verdict{{Expr: g.Expr, Gate: g, State: analysis.GateInsufficient, Note: note}}
}

// gateScope is the summaries a gate applies to.
func gateScope(spec gateSpec, sums []*analysis.Summary) []*analysis.Summary {
	if spec.Profile == "" {
		return sums
	}
	var out []*analysis.Summary
	for _, s := range sums {
		if s.Workload.Profile == spec.Profile && (spec.Workload == "" || s.Workload.DisplayName() == spec.Workload) {
			out = append(out, s)
		}
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
