package results

import (
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/perflab/perflab/internal/driver"
)

// driverSchema is the tables of what drivers tell about their workloads.
// They are additive to format version 2 (docs/format/results.md): a store
// written before them has neither, and reads as having no facts and no
// checks. The checks' state, late, late_by_ns and reason columns were
// added to version 3 later still: a store without them reads as checks whose state
// follows lost. The rows are driver.Fact and driver.Check as the drivers
// state them; a check's lost column is its State == driver.CheckLost,
// kept for readers of stores older than the state column.
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
	note        TEXT NOT NULL,
	state       TEXT NOT NULL DEFAULT '',
	late        REAL NOT NULL DEFAULT 0,
	late_by_ns  INTEGER NOT NULL DEFAULT 0,
	reason      TEXT NOT NULL DEFAULT ''
);
`

// AddFacts records facts of the named workload, after those it already
// has.
func (r *Run) AddFacts(workload string, facts []driver.Fact) error {
	return r.addRows("facts of workload "+workload, workload, len(facts), func(tx *sql.Tx, id int64, i int) error {
		_, err := tx.Exec(`INSERT INTO facts (workload_id, name, value) VALUES (?, ?, ?)`, id, r.text(facts[i].Name), r.text(facts[i].Value))
		return err
	})
}

// AddChecks records read-back checks of the named workload, after those it
// already has. Expected and Found must be finite.
func (r *Run) AddChecks(workload string, checks []driver.Check) error {
	for _, c := range checks {
		if math.IsNaN(c.Expected) || math.IsInf(c.Expected, 0) || math.IsNaN(c.Found) || math.IsInf(c.Found, 0) ||
			math.IsNaN(c.Late) || math.IsInf(c.Late, 0) {
			return fmt.Errorf("cannot add checks of workload %s: check %q is not finite", workload, c.Name)
		}
	}
	return r.addRows("checks of workload "+workload, workload, len(checks), func(tx *sql.Tx, id int64, i int) error {
		c := checks[i]
		_, err := tx.Exec(`INSERT INTO checks (workload_id, name, expected, found, unit, lost, note, state, late, late_by_ns, reason)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, r.text(c.Name), c.Expected, c.Found, r.text(c.Unit), c.State == driver.CheckLost, r.text(c.Note), c.State, c.Late,
			int64(c.LateBy), r.text(c.Reason))
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
func (r *Run) Facts() (map[string][]driver.Fact, error) {
	out := map[string][]driver.Fact{}
	err := r.readTable("facts", `SELECT w.name, f.name, f.value FROM facts f JOIN workloads w ON w.id = f.workload_id
		ORDER BY f.rowid`, func(rows *sql.Rows) error {
		var w string
		var f driver.Fact
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
// the order added. A store without the checks table has none; one whose
// checks have no state column (or an empty state) reads as lost or ok,
// as its lost column says.
func (r *Run) Checks() (map[string][]driver.Check, error) {
	out := map[string][]driver.Check{}
	err := r.read(func(tx *sql.Tx) error {
		if ok, err := hasTable(tx, "checks"); !ok || err != nil {
			return err
		}
		cols := "c.state, c.late, c.late_by_ns, c.reason"
		if ok, err := hasColumn(tx, "checks", "state"); err != nil {
			return err
		} else if !ok {
			cols = "'', 0, 0, ''"
		}
		return eachRow(tx, `SELECT w.name, c.name, c.expected, c.found, c.unit, c.lost, c.note, `+cols+`
			FROM checks c JOIN workloads w ON w.id = c.workload_id ORDER BY c.rowid`, nil, func(rows *sql.Rows) error {
			var w string
			var c driver.Check
			var lost bool
			var lateBy int64
			if err := rows.Scan(&w, &c.Name, &c.Expected, &c.Found, &c.Unit, &lost, &c.Note, &c.State, &c.Late, &lateBy, &c.Reason); err != nil {
				return err
			}
			c.LateBy = time.Duration(lateBy)
			if c.State == "" {
				c.State = map[bool]string{true: driver.CheckLost, false: driver.CheckOK}[lost]
			}
			out[w] = append(out[w], c)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read checks: %w", err)
	}
	return out, nil
}

// hasColumn reports whether table has the column.
func hasColumn(tx *sql.Tx, table, column string) (bool, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n)
	return n > 0, err
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
