package plan

import "strings"

// Cell is one combination of matrix values: one run of the plan's profiles.
type Cell struct {
	Index int    // from 0, in the order Cells returns
	Name  string // "gomemlimit=off,ballast=0"; DefaultCell without a matrix
	Vars  []Var  // in matrix order
}

// Var is a matrix variable's value in a cell.
type Var struct {
	Name, Value string
}

// DefaultCell names the only cell of a plan without a matrix.
const DefaultCell = "default"

// Cells returns the cartesian product of the matrix in declaration order:
// the first variable changes slowest, values keep their file order. A plan
// without a matrix has one cell, named DefaultCell. Cells returns nil when
// the product is empty or larger than MaxCells, which Validate reports.
func (p *Plan) Cells() []Cell {
	total := 1
	for _, v := range p.Matrix {
		total *= len(v.Values)
		if total == 0 || total > MaxCells {
			return nil
		}
	}
	cells := make([]Cell, total)
	for i := range cells {
		c := Cell{Index: i, Name: DefaultCell, Vars: make([]Var, len(p.Matrix))}
		rest := i
		for j := len(p.Matrix) - 1; j >= 0; j-- {
			vals := p.Matrix[j].Values
			c.Vars[j] = Var{Name: p.Matrix[j].Name, Value: vals[rest%len(vals)]}
			rest /= len(vals)
		}
		if len(c.Vars) > 0 {
			parts := make([]string, len(c.Vars))
			for j, v := range c.Vars {
				parts[j] = v.Name + "=" + v.Value
			}
			c.Name = strings.Join(parts, ",")
		}
		cells[i] = c
	}
	return cells
}
