package plan

import (
	"strconv"
	"strings"
)

// Cell is one combination of matrix values: one run of the plan's profiles.
// In a repeated run (RunCells) a cell is one repetition of a combination.
type Cell struct {
	Index int    // from 0, in the order Cells (or RunCells) returns
	Name  string // "gomemlimit=off,ballast=0"; DefaultCell without a matrix
	Vars  []Var  // the matrix variables, in matrix order
	// Repetition is which run of its combination the cell is, from 1, in
	// a repeated run; 0 when every combination runs once.
	Repetition int
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

// RunCells returns the cells a run of p with n repetitions goes through,
// in order. With n ≤ 1 they are Cells(). With more, every combination of
// the matrix runs n times, interleaved: repetition 1 of every combination,
// then repetition 2, and so on, so that a slow spell of a shared machine
// falls on every combination alike. A repeated cell's index is
// (repetition − 1) × combinations + the combination's index, and its name
// is the combination's with ",repetition=r" (without a matrix just
// "repetition=r"). RunCells returns nil when Cells does or when the run
// would have more than MaxCells cells.
func (p *Plan) RunCells(n int) []Cell {
	combos := p.Cells()
	if n <= 1 || combos == nil {
		return combos
	}
	if len(combos)*n > MaxCells {
		return nil
	}
	out := make([]Cell, 0, len(combos)*n) // equivalent mutants: a capacity
	for r := 1; r <= n; r++ {
		for _, c := range combos {
			rep := BuiltinRepetition + "=" + strconv.Itoa(r)
			name := rep
			if len(c.Vars) > 0 {
				name = c.Name + "," + rep
			}
			out = append(out, Cell{Index: len(out), Name: name, Vars: c.Vars, Repetition: r})
		}
	}
	return out
}
