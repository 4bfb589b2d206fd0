package view

import "github.com/perflab/perflab/internal/analysis"

// Gate is one SLO gate's verdict on one workload, with where the gate came
// from.
type Gate struct {
	analysis.Verdict
	Source string // "plan: profile small", "plan: workload small/get", "command line"
}

// SLOMet reports whether every gate passed; false when any failed or had
// insufficient data, true when there are none.
func SLOMet(gates []Gate) bool {
	for _, g := range gates {
		if g.State != analysis.GatePass {
			return false
		}
	}
	return true
}
