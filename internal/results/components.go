package results

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The kinds of component.
const (
	KindRun       = "run"       // started by perflab
	KindAttach    = "attach"    // already running; perflab only watches it
	KindGenerator = "generator" // perflab itself, sampled like the others
	// KindPrometheus is a component perflab neither started nor found
	// running here: its figures are read from a Prometheus-compatible API.
	KindPrometheus = "prometheus"
)

// Component is one process of the system under test in one cell, or the
// generator. Names are unique within a cell.
type Component struct {
	Cell       int
	Name       string
	Group      string // e.g. "ingester"; "" when the plan gives none
	Kind       string // KindRun, KindAttach, KindGenerator or KindPrometheus
	PID        int    // 0 when unknown (e.g. a remote component)
	MetricsURL string // already redacted by the caller; "" when not scraped
	DataDirs   []string
	Exited     time.Time // when it exited during the run; zero if it did not
	ExitText   string    // how it exited, e.g. "exit status 2" or "signal: killed"
}

type compKey struct {
	cell int
	name string
}

// AddComponent records a component of a cell. Samples refer to it by cell
// and name.
func (r *Run) AddComponent(c Component) error {
	what := fmt.Sprintf("add component %q of cell %d", c.Name, c.Cell)
	if err := r.writable(what); err != nil {
		return err
	}
	if err := checkComponent(c); err != nil {
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	var dirs any
	if len(c.DataDirs) > 0 {
		b, err := json.Marshal(c.DataDirs)
		if err != nil {
			return fmt.Errorf("cannot %s: %w", what, err)
		}
		dirs = r.text(string(b))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := r.db.Exec(`INSERT INTO components (cell, name, group_name, kind, pid, metrics_url, data_dirs,
		exited_ns, exit_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.Cell, c.Name, c.Group, c.Kind, c.PID, r.text(c.MetricsURL), dirs, nullTime(c.Exited), r.text(c.ExitText))
	if err != nil {
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	r.comps[compKey{c.Cell, c.Name}] = id
	return nil
}

func checkComponent(c Component) error {
	if c.Name == "" {
		return errors.New("empty name")
	}
	if c.Cell < 0 {
		return fmt.Errorf("cell %d is negative", c.Cell)
	}
	switch c.Kind {
	case KindRun, KindAttach, KindGenerator, KindPrometheus:
		return nil
	}
	return fmt.Errorf("kind %q is not %s, %s, %s or %s", c.Kind, KindRun, KindAttach, KindGenerator, KindPrometheus)
}

// ComponentExited records that a component exited during the run, at at,
// as text says (e.g. "exit status 2"). A zero at means now.
func (r *Run) ComponentExited(cell int, name string, at time.Time, text string) error {
	what := fmt.Sprintf("record exit of component %q of cell %d", name, cell)
	if err := r.writable(what); err != nil {
		return err
	}
	if at.IsZero() {
		at = time.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := r.db.Exec(`UPDATE components SET exited_ns = ?, exit_text = ? WHERE cell = ? AND name = ?`,
		at.UnixNano(), r.text(text), cell, name)
	if err == nil {
		err = oneRow(res, "no such component")
	}
	if err != nil {
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	return nil
}

// Components reads the components of a cell in the order they were added. A
// version 1 store has none.
func (r *Run) Components(cell int) ([]Component, error) {
	if r.version < 2 {
		return nil, nil
	}
	var out []Component
	err := r.read(func(tx *sql.Tx) error {
		return eachRow(tx, `SELECT name, group_name, kind, pid, metrics_url, data_dirs, exited_ns, exit_text
			FROM components WHERE cell = ? ORDER BY id`, cell, func(rows *sql.Rows) error {
			c := Component{Cell: cell}
			var dirs sql.NullString
			var exited sql.NullInt64
			if err := rows.Scan(&c.Name, &c.Group, &c.Kind, &c.PID, &c.MetricsURL, &dirs, &exited, &c.ExitText); err != nil {
				return err
			}
			if dirs.Valid {
				if err := json.Unmarshal([]byte(dirs.String), &c.DataDirs); err != nil {
					return fmt.Errorf("component %q: data_dirs: %w", c.Name, err)
				}
			}
			c.Exited = timeOf(exited)
			out = append(out, c)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read components of cell %d: %w", cell, err)
	}
	return out, nil
}

// componentID maps (cell, name) to components.id, asking the database when
// the component was added through another handle. r.mu must be held.
func (r *Run) componentID(cell int, name string) (int64, error) {
	k := compKey{cell, name}
	if id, ok := r.comps[k]; ok {
		return id, nil
	}
	var id int64
	err := r.db.QueryRow(`SELECT id FROM components WHERE cell = ? AND name = ?`, cell, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("unknown component %q in cell %d", name, cell)
	}
	if err != nil {
		return 0, err
	}
	r.comps[k] = id
	return id, nil
}
