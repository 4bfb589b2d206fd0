package results

import (
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Var is one variable of a matrix cell, e.g. gomemlimit = 2GiB.
type Var struct {
	Name  string
	Value string
}

// Cell is one configuration of a plan's matrix: the components are started
// with its variables and every profile runs against them. A run without a
// plan has no cells rows; its workloads, components and samples are in the
// implicit cell 0.
type Cell struct {
	Index   int    // from 0, unique in the run
	Name    string // e.g. "gomemlimit=2GiB,ballast=0"
	Vars    []Var  // in the plan's order
	State   string // StateRunning, StateCompleted, StateFailed or StateInterrupted
	Message string
	Started time.Time
	Ended   time.Time // zero while running
}

// AddCell records that a cell started. A zero c.Started means now; an empty
// c.State means running.
func (r *Run) AddCell(c Cell) error {
	if err := r.writable(fmt.Sprintf("add cell %d", c.Index)); err != nil {
		return err
	}
	if c.Index < 0 {
		return fmt.Errorf("cannot add cell %d: negative index", c.Index)
	}
	if c.State == "" {
		c.State = StateRunning
	}
	if err := checkState(c.State); err != nil {
		return fmt.Errorf("cannot add cell %d: %w", c.Index, err)
	}
	if c.Started.IsZero() {
		c.Started = time.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.inTx(func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO cells (idx, name, state, message, started_ns, ended_ns) VALUES (?, ?, ?, ?, ?, ?)`,
			c.Index, r.text(c.Name), c.State, r.text(c.Message), c.Started.UnixNano(), nullTime(c.Ended))
		if err != nil {
			return err
		}
		for i, v := range c.Vars {
			if _, err := tx.Exec(`INSERT INTO cell_vars (cell, pos, name, value) VALUES (?, ?, ?, ?)`,
				c.Index, i, v.Name, r.text(v.Value)); err != nil {
				return fmt.Errorf("variable %q: %w", v.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cannot add cell %d: %w", c.Index, err)
	}
	return nil
}

// EndCell records how cell index ended. A zero ended means now.
func (r *Run) EndCell(index int, state, message string, ended time.Time) error {
	if err := r.writable(fmt.Sprintf("end cell %d", index)); err != nil {
		return err
	}
	if err := checkEndState(state); err != nil {
		return fmt.Errorf("cannot end cell %d: %w", index, err)
	}
	if ended.IsZero() {
		ended = time.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := r.db.Exec(`UPDATE cells SET state = ?, message = ?, ended_ns = ? WHERE idx = ?`,
		state, r.text(message), ended.UnixNano(), index)
	if err == nil {
		err = oneRow(res, "no such cell")
	}
	if err != nil {
		return fmt.Errorf("cannot end cell %d: %w", index, err)
	}
	return nil
}

// Cells reads the cells in index order with their variables. A version 1
// store, or a run without a plan, has none.
func (r *Run) Cells() ([]Cell, error) {
	if r.version < 2 {
		return nil, nil
	}
	var out []Cell
	err := r.read(func(tx *sql.Tx) error {
		err := eachRow(tx, `SELECT idx, name, state, message, started_ns, ended_ns FROM cells ORDER BY idx`, nil, func(rows *sql.Rows) error {
			var c Cell
			var started int64
			var ended sql.NullInt64
			if err := rows.Scan(&c.Index, &c.Name, &c.State, &c.Message, &started, &ended); err != nil {
				return err
			}
			c.Started, c.Ended = time.Unix(0, started).UTC(), timeOf(ended)
			out = append(out, c)
			return nil
		})
		if err != nil {
			return err
		}
		return readVars(tx, out)
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read cells: %w", err)
	}
	return out, nil
}

func readVars(tx *sql.Tx, cells []Cell) error {
	at := make(map[int]int, len(cells))
	for i, c := range cells {
		at[c.Index] = i
	}
	return eachRow(tx, `SELECT cell, name, value FROM cell_vars ORDER BY cell, pos`, nil, func(rows *sql.Rows) error {
		var cell int
		var v Var
		if err := rows.Scan(&cell, &v.Name, &v.Value); err != nil {
			return err
		}
		i, ok := at[cell]
		if !ok {
			return fmt.Errorf("variable %q of cell %d, which has no cells row", v.Name, cell)
		}
		cells[i].Vars = append(cells[i].Vars, v)
		return nil
	})
}

// Phase is one profile run in one cell: its timeline, warm-up and the
// steady-state window that resource and latency statistics use.
type Phase struct {
	Cell        int
	Profile     string
	Start       time.Time
	Warmup      time.Duration // as the plan set it
	LoadEnd     time.Time     // zero until the phase ended
	WindowStart time.Time     // zero until the phase ended
	WindowEnd   time.Time
	WindowRule  string
	State       string // StateRunning, StateCompleted, StateFailed or StateInterrupted
	Message     string
}

// AddPhase records that profile p.Profile started in cell p.Cell. A zero
// p.Start means now; an empty p.State means running. End fields already set
// are stored too.
func (r *Run) AddPhase(p Phase) error {
	what := fmt.Sprintf("add phase %q of cell %d", p.Profile, p.Cell)
	if err := r.writable(what); err != nil {
		return err
	}
	if p.State == "" {
		p.State = StateRunning
	}
	if err := checkState(p.State); err != nil {
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	if p.Start.IsZero() {
		p.Start = time.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := r.db.Exec(`INSERT INTO phases (cell, profile, start_ns, warmup_ns, load_end_ns,
		window_start_ns, window_end_ns, window_rule, state, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.Cell, p.Profile, p.Start.UnixNano(), int64(p.Warmup), nullTime(p.LoadEnd),
		nullTime(p.WindowStart), nullTime(p.WindowEnd), r.text(p.WindowRule), p.State, r.text(p.Message))
	if err != nil {
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	return nil
}

// EndPhase records how the phase (p.Cell, p.Profile) ended: its load end,
// steady-state window, state and message. Start and Warmup are not changed.
func (r *Run) EndPhase(p Phase) error {
	what := fmt.Sprintf("end phase %q of cell %d", p.Profile, p.Cell)
	if err := r.writable(what); err != nil {
		return err
	}
	if err := checkEndState(p.State); err != nil {
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := r.db.Exec(`UPDATE phases SET load_end_ns = ?, window_start_ns = ?, window_end_ns = ?,
		window_rule = ?, state = ?, message = ? WHERE cell = ? AND profile = ?`,
		nullTime(p.LoadEnd), nullTime(p.WindowStart), nullTime(p.WindowEnd), r.text(p.WindowRule), p.State, r.text(p.Message),
		p.Cell, p.Profile)
	if err == nil {
		err = oneRow(res, "no such phase")
	}
	if err != nil {
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	return nil
}

// Phases reads every phase of the run in the order they started. A version 1
// store, or a run without a plan, has none.
func (r *Run) Phases() ([]Phase, error) {
	if r.version < 2 {
		return nil, nil
	}
	var out []Phase
	err := r.read(func(tx *sql.Tx) error {
		return eachRow(tx, `SELECT cell, profile, start_ns, warmup_ns, load_end_ns, window_start_ns,
			window_end_ns, window_rule, state, message FROM phases ORDER BY id`, nil, func(rows *sql.Rows) error {
			var p Phase
			var start, warmup int64
			var loadEnd, ws, we sql.NullInt64
			if err := rows.Scan(&p.Cell, &p.Profile, &start, &warmup, &loadEnd, &ws, &we,
				&p.WindowRule, &p.State, &p.Message); err != nil {
				return err
			}
			p.Start, p.Warmup = time.Unix(0, start).UTC(), time.Duration(warmup)
			p.LoadEnd, p.WindowStart, p.WindowEnd = timeOf(loadEnd), timeOf(ws), timeOf(we)
			out = append(out, p)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read phases: %w", err)
	}
	return out, nil
}

func checkState(s string) error {
	if s == StateRunning || checkEndState(s) == nil {
		return nil
	}
	return fmt.Errorf("state %q is not %s, %s, %s or %s", s, StateRunning, StateCompleted, StateInterrupted, StateFailed)
}

func checkEndState(s string) error {
	switch s {
	case StateCompleted, StateInterrupted, StateFailed:
		return nil
	}
	return fmt.Errorf("state %q is not %s, %s or %s", s, StateCompleted, StateInterrupted, StateFailed)
}

// nullTime is a time as a nullable column: NULL when zero.
func nullTime(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

// timeOf reads a nullable time column: NULL is the zero time.
func timeOf(ns sql.NullInt64) time.Time {
	if !ns.Valid {
		return time.Time{}
	}
	return time.Unix(0, ns.Int64).UTC()
}

// oneRow checks that an UPDATE changed exactly one row.
func oneRow(res sql.Result, missing string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return errors.New(missing)
	}
	return nil
}
