package results

import (
	"database/sql"
	"fmt"
	"math"
)

// driverSchema is the tables of what drivers tell about their workloads.
// They are additive to format version 2 (docs/format/results.md): a store
// written before them has neither, and reads as having no facts and no
// checks.
const driverSchema = `
CREATE TABLE facts (
	workload_id INTEGER NOT NULL REFERENCES workloads (id),
	name        TEXT NOT NULL,
	value       TEXT NOT NULL
);
CREATE TABLE checks (
	workload_id INTEGER NOT NULL REFERENCES workloads (id),
	name        TEXT NOT NULL,
	expected    REAL NOT NULL,
	found       REAL NOT NULL,
	unit        TEXT NOT NULL,
	lost        INTEGER NOT NULL,
	note        TEXT NOT NULL
);
`

// Fact is one named figure about a workload, as a driver (or perflab, for
// a rate it derived) states it, formatted for people.
type Fact struct {
	Name, Value string
}

// Check is one read-back check of a workload: how much of what its driver
// wrote was found again. Lost is true when written data was not read back.
type Check struct {
	Name            string
	Expected, Found float64
	Unit            string
	Lost            bool
	Note            string
}

// AddFacts records facts of the named workload, after those it already
// has.
func (r *Run) AddFacts(workload string, facts []Fact) error {
	return r.addRows("facts of workload "+workload, workload, len(facts), func(tx *sql.Tx, id int64, i int) error {
		_, err := tx.Exec(`INSERT INTO facts (workload_id, name, value) VALUES (?, ?, ?)`, id, r.text(facts[i].Name), r.text(facts[i].Value))
		return err
	})
}

// AddChecks records read-back checks of the named workload, after those it
// already has. Expected and Found must be finite.
func (r *Run) AddChecks(workload string, checks []Check) error {
	for _, c := range checks {
		if math.IsNaN(c.Expected) || math.IsInf(c.Expected, 0) || math.IsNaN(c.Found) || math.IsInf(c.Found, 0) {
			return fmt.Errorf("cannot add checks of workload %s: check %q is not finite", workload, c.Name)
		}
	}
	return r.addRows("checks of workload "+workload, workload, len(checks), func(tx *sql.Tx, id int64, i int) error {
		c := checks[i]
		_, err := tx.Exec(`INSERT INTO checks (workload_id, name, expected, found, unit, lost, note) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, r.text(c.Name), c.Expected, c.Found, r.text(c.Unit), c.Lost, r.text(c.Note))
		return err
	})
}

// addRows inserts n rows for the named workload in one transaction.
func (r *Run) addRows(what, workload string, n int, insert func(tx *sql.Tx, id int64, i int) error) error {
	if err := r.writable("add " + what); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.workloadID(workload)
	if err == nil {
		err = r.inTx(func(tx *sql.Tx) error {
			for i := range n {
				if err := insert(tx, id, i); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("cannot add %s: %w", what, err)
	}
	return nil
}

// Facts reads every workload's facts by workload name, each in the order
// added. A store without the facts table has none.
func (r *Run) Facts() (map[string][]Fact, error) {
	out := map[string][]Fact{}
	err := r.readTable("facts", `SELECT w.name, f.name, f.value FROM facts f JOIN workloads w ON w.id = f.workload_id
		ORDER BY f.rowid`, func(rows *sql.Rows) error {
		var w string
		var f Fact
		if err := rows.Scan(&w, &f.Name, &f.Value); err != nil {
			return err
		}
		out[w] = append(out[w], f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read facts: %w", err)
	}
	return out, nil
}

// Checks reads every workload's read-back checks by workload name, each in
// the order added. A store without the checks table has none.
func (r *Run) Checks() (map[string][]Check, error) {
	out := map[string][]Check{}
	err := r.readTable("checks", `SELECT w.name, c.name, c.expected, c.found, c.unit, c.lost, c.note
		FROM checks c JOIN workloads w ON w.id = c.workload_id ORDER BY c.rowid`, func(rows *sql.Rows) error {
		var w string
		var c Check
		if err := rows.Scan(&w, &c.Name, &c.Expected, &c.Found, &c.Unit, &c.Lost, &c.Note); err != nil {
			return err
		}
		out[w] = append(out[w], c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read checks: %w", err)
	}
	return out, nil
}

// readTable runs query and calls scan for each row, when table exists.
func (r *Run) readTable(table, query string, scan func(*sql.Rows) error) error {
	return r.read(func(tx *sql.Tx) error {
		if ok, err := hasTable(tx, table); !ok || err != nil {
			return err
		}
		return eachRow(tx, query, nil, scan)
	})
}
