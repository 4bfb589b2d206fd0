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
	// Stop is how perflab stopped it at the end of its cell; nil when it
	// did not (attached, the generator, it exited by itself, or a store
	// written before component_stops). Written by ComponentStopped.
	Stop *Stop
}

// stopSchema is the table of how perflab stopped the components it
// started. It is additive to format version 3 (docs/format/results.md): a
// store written before it has none, and reads as having no stops.
const stopSchema = `
CREATE TABLE component_stops (
	component_id INTEGER PRIMARY KEY REFERENCES components (id),
	time_ns      INTEGER NOT NULL,
	grace_ns     INTEGER NOT NULL,
	killed       INTEGER NOT NULL,
	how          TEXT NOT NULL
);
`

// Stop is how perflab stopped a component it started, at the end of its
// cell: SIGTERM to its process group, then SIGKILL if anything in it was
// still running when the stop grace ended.
type Stop struct {
	Time  time.Time     // when its processes were gone
	Grace time.Duration // its stop grace
	// Killed is true when perflab had to SIGKILL it: still running when
	// the grace ended, or perflab was told to stop at once.
	Killed bool
	How    string // in words, e.g. "still running 10s after SIGTERM (its stop grace): killed with SIGKILL"
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

// ComponentStopped records how perflab stopped a component of a cell,
// replacing what was recorded before.
func (r *Run) ComponentStopped(cell int, name string, s Stop) error {
	what := fmt.Sprintf("record stop of component %q of cell %d", name, cell)
	if err := r.writable(what); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.componentID(cell, name)
	if err == nil {
		_, err = r.db.Exec(`INSERT OR REPLACE INTO component_stops (component_id, time_ns, grace_ns, killed, how)
			VALUES (?, ?, ?, ?, ?)`, id, s.Time.UnixNano(), int64(s.Grace), s.Killed, r.text(s.How))
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
		err := eachRow(tx, `SELECT name, group_name, kind, pid, metrics_url, data_dirs, exited_ns, exit_text
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
		if err == nil {
			err = readStops(tx, cell, out)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read components of cell %d: %w", cell, err)
	}
	return out, nil
}

// readStops sets the Stop of the components of cell that have one, when
// the store has the table.
func readStops(tx *sql.Tx, cell int, comps []Component) error {
	if ok, err := hasTable(tx, "component_stops"); !ok || err != nil {
		return err
	}
	byName := map[string]*Component{}
	for i := range comps {
		byName[comps[i].Name] = &comps[i]
	}
	return eachRow(tx, `SELECT c.name, s.time_ns, s.grace_ns, s.killed, s.how FROM component_stops s
		JOIN components c ON c.id = s.component_id WHERE c.cell = ?`, cell, func(rows *sql.Rows) error {
		var name string
		var at, grace int64
		st := &Stop{}
		if err := rows.Scan(&name, &at, &grace, &st.Killed, &st.How); err != nil {
			return err
		}
		st.Time, st.Grace = time.Unix(0, at).UTC(), time.Duration(grace)
		if c := byName[name]; c != nil {
			c.Stop = st
		}
		return nil
	})
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
