package readback

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/slo"
	"github.com/perflab/perflab/internal/view"
)

// SLOMetaKey is the run meta key that holds the run's SLO gates (JSON), so
// that `perflab report` judges them again from the store.
const SLOMetaKey = "slo"

// GateSpec is one SLO gate as stored with a run, with the workloads it
// applies to: every workload (no profile), a profile's, or one workload
// of a profile.
type GateSpec struct {
	Expr     string `json:"expr"`
	Profile  string `json:"profile,omitempty"`
	Workload string `json:"workload,omitempty"` // the workload's name in its profile
}

// source says where the gate came from, for reports.
func (g GateSpec) source() string {
	switch {
	case g.Workload != "":
		return "plan: workload " + g.Profile + "/" + g.Workload
	case g.Profile != "":
		return "plan: profile " + g.Profile
	}
	return "command line"
}

// WithSLO adds the gates to a run's meta extras; none adds nothing.
func WithSLO(extra map[string]string, specs []GateSpec) map[string]string {
	if len(specs) == 0 {
		return extra
	}
	if extra == nil {
		extra = map[string]string{}
	}
	b, _ := json.Marshal(specs)
	extra[SLOMetaKey] = string(b)
	return extra
}

// loadSLO judges the gates stored with a run on its workloads' summaries.
// Figures a gate may name besides the built-in metrics come from the
// workloads' read-back checks: lost_<check> is expected − found.
func loadSLO(store *results.Run, meta results.Meta, sums []*analysis.Summary) ([]view.Gate, error) {
	text := meta.Extra[SLOMetaKey]
	if text == "" {
		return nil, nil
	}
	var specs []GateSpec
	if err := json.Unmarshal([]byte(text), &specs); err != nil {
		return nil, fmt.Errorf("cannot read the run's SLO gates: %w", err)
	}
	checks, err := store.Checks()
	if err != nil {
		return nil, err
	}
	return JudgeGates(specs, sums, CheckFigures(checks)), nil
}

// CheckFigures are the figures each workload's checks supply, by workload
// name: lost_<check> = expected − found, or 0 when more was found (as
// the report's shortfall); none, with the reason, for a
// check that is unverified, so that a gate on it has insufficient data.
func CheckFigures(checks map[string][]driver.Check) map[string]map[string]analysis.Supplied {
	out := map[string]map[string]analysis.Supplied{}
	for w, cs := range checks {
		out[w] = map[string]analysis.Supplied{}
		for _, c := range cs {
			f := analysis.Supplied{Value: max(c.Expected-c.Found, 0)} // more found than acknowledged is no loss
			if c.State == driver.CheckUnverified {
				f = analysis.Supplied{Why: fmt.Sprintf("the read-back of %s is unverified: %s", c.Name, c.Reason)}
			}
			out[w]["lost_"+c.Name] = f
		}
	}
	return out
}

// JudgeGates evaluates every gate on the summaries it applies to. A gate
// on a figure the run supplies is judged on each of those workloads that
// supplies it; when none does, its verdict is insufficient data.
func JudgeGates(specs []GateSpec, sums []*analysis.Summary, figures map[string]map[string]analysis.Supplied) []view.Gate {
	var out []view.Gate
	for _, spec := range specs {
		add := func(vs ...analysis.Verdict) {
			for _, v := range vs {
				out = append(out, view.Gate{Verdict: v, Source: spec.source()})
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
func gateScope(spec GateSpec, sums []*analysis.Summary) []*analysis.Summary {
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

// errorLimits sets each phase's ErrorLimit to the bound the run's
// error_rate gates put on its profile (the smallest, of gates on every
// profile and on its own): a load that failed more than that is not
// held. A phase that no such gate covers keeps analysis.ErrorLimit.
func errorLimits(meta results.Meta, data []analysis.PhaseData) {
	var specs []GateSpec
	if json.Unmarshal([]byte(meta.Extra[SLOMetaKey]), &specs) != nil {
		return // no gates, or none readable: loadSLO says which
	}
	for i := range data {
		for _, spec := range specs {
			g, err := slo.ParseGate(spec.Expr)
			if err != nil || g.Metric != "error_rate" || g.Op != "" || !strings.HasPrefix(g.Cmp, "<") ||
				spec.Profile != "" && spec.Profile != data[i].Profile {
				continue
			}
			if l := &data[i].ErrorLimit; *l == 0 || g.Threshold < *l {
				*l = g.Threshold
			}
		}
	}
}
