package plan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/perflab/perflab/internal/slo"
)

// gates reads an slo list: SLO gate expressions such as "p99 < 200ms",
// recording in at, under slo.0, slo.1, …, where each expression's text
// starts (after the opening quote of a quoted scalar), so that a problem
// in it can be reported at its own column.
func (d *decoder) gates(n *yaml.Node, at where) ([]string, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf(`slo: want a list of gates like ["p99 < 200ms", "error_rate < 0.1%%"], got %s`, kindName(n))
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		if item = d.node(item); item == nil {
			break
		}
		k := "slo." + strconv.Itoa(i)
		p := posOf(item)
		if item.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			p.Col++
		}
		at[k] = p
		s, err := scalar(k, item)
		if err != nil {
			d.errorf(item, "%v", err)
			at[k+"!"] = p
		}
		out = append(out, s)
	}
	return out, nil
}

// Pos is Workload.Pos for a profile ("duration", "slo.0", …).
func (p Profile) Pos(key string) Pos { return p.at.pos(key) }

// gate parses the i-th gate of a list at w and reports a problem at the
// column it starts; ok is false when the gate does not parse.
func (v *validator) gate(w where, i int, expr string) (slo.Gate, bool) {
	key := "slo." + strconv.Itoa(i)
	g, err := slo.ParseGate(expr)
	if err == nil {
		return g, true
	}
	if w.bad(key) {
		return g, false
	}
	p := w.pos(key)
	msg := err.Error()
	var ge *slo.GateError
	if errors.As(err, &ge) {
		p.Col += ge.Column - 1
		msg = fmt.Sprintf("slo %q: %s", ge.Expr, ge.Msg)
	}
	v.errs = append(v.errs, Error{File: v.file, Line: p.Line, Col: p.Col, Flag: p.Flag, Msg: msg})
	return g, false
}

// workloadGates checks a workload's gates: each must parse, and one that
// names a workload must name this one.
func (v *validator) workloadGates(w *Workload) {
	for i, expr := range w.SLO {
		g, ok := v.gate(w.at, i, expr)
		if ok && g.Workload != "" && g.Workload != w.Name {
			v.at(w.at, "slo."+strconv.Itoa(i), "slo %q names workload %q, but it is a gate of workload %q: move it to the profile's slo", expr, g.Workload, w.Name)
		}
	}
}

// profileGates checks a profile's gates: each must parse, and one that
// names a workload must name one of the profile's.
func (v *validator) profileGates(p *Profile) {
	var names []string
	for _, w := range p.Workloads {
		names = append(names, w.Name)
	}
	for i, expr := range p.SLO {
		g, ok := v.gate(p.at, i, expr)
		if !ok || g.Workload == "" {
			continue
		}
		found := false
		for _, n := range names {
			found = found || n == g.Workload
		}
		if !found {
			v.at(p.at, "slo."+strconv.Itoa(i), "slo %q names workload %q, which is not in %s (workloads: %s)",
				expr, g.Workload, label("profile", p.Name), strings.Join(names, ", "))
		}
	}
}
