package results

import (
	"database/sql"
	"fmt"
	"slices"

	"github.com/perflab/perflab/internal/stats"
)

// measureSchema is the tables of the measures and counters drivers add to
// an operation (stats.Measure, stats.Counter), one row per operation per
// interval per measure or counter that has a value. They are additive to
// format version 2 (docs/format/results.md): a store written before them
// has neither, and reads as having no measures and no counters.
const measureSchema = `
CREATE TABLE op_measures (
	workload_id INTEGER NOT NULL,
	idx         INTEGER NOT NULL,
	op          TEXT NOT NULL,
	measure     TEXT NOT NULL,
	hist        TEXT NOT NULL,
	PRIMARY KEY (workload_id, idx, op, measure),
	FOREIGN KEY (workload_id, idx, op) REFERENCES op_intervals (workload_id, idx, op)
);
CREATE TABLE op_counters (
	workload_id INTEGER NOT NULL,
	idx         INTEGER NOT NULL,
	op          TEXT NOT NULL,
	counter     TEXT NOT NULL,
	value       INTEGER NOT NULL,
	PRIMARY KEY (workload_id, idx, op, counter),
	FOREIGN KEY (workload_id, idx, op) REFERENCES op_intervals (workload_id, idx, op)
);
`

// encodeMeasures encodes st's measure histograms into e, ahead of the lock.
func encodeMeasures(e *encodedOp) error {
	for m, h := range e.st.Measures {
		var err error
		if e.measures[m], err = encodeHist(h); err != nil {
			return fmt.Errorf("measure %v: %w", stats.Measure(m), err)
		}
	}
	return nil
}

// hasExtras reports whether o has a measure or a counter to store.
func (o *encodedOp) hasExtras() bool {
	for _, h := range o.measures {
		if h.Valid {
			return true
		}
	}
	return o.st.Counters != [stats.NumCounters]int64{}
}

// insertExtras writes the measure and counter rows of the ops that have
// any; an interval of an HTTP workload writes none and prepares nothing.
func insertExtras(tx *sql.Tx, id int64, idx int, ops []encodedOp) error {
	if !slices.ContainsFunc(ops, func(o encodedOp) bool { return o.hasExtras() }) {
		return nil
	}
	mStmt, err := tx.Prepare(`INSERT INTO op_measures (workload_id, idx, op, measure, hist) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer mStmt.Close()
	cStmt, err := tx.Prepare(`INSERT INTO op_counters (workload_id, idx, op, counter, value) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer cStmt.Close()
	for _, o := range ops {
		for m, h := range o.measures {
			if !h.Valid {
				continue
			}
			if _, err := mStmt.Exec(id, idx, o.name, stats.Measure(m).String(), h); err != nil {
				return fmt.Errorf("op %q measure %v: %w", o.name, stats.Measure(m), err)
			}
		}
		for c, v := range o.st.Counters {
			if v == 0 {
				continue
			}
			if _, err := cStmt.Exec(id, idx, o.name, stats.Counter(c).String(), v); err != nil {
				return fmt.Errorf("op %q counter %v: %w", o.name, stats.Counter(c), err)
			}
		}
	}
	return nil
}

// readExtras fills in the measures and counters of the intervals' ops. A
// store without the tables has none; a measure or counter this perflab does
// not know (written by a newer one) is skipped, as the format allows.
func readExtras(tx *sql.Tx, id int64, byIdx map[int]*stats.Interval) error {
	if ok, err := hasTable(tx, "op_measures"); err != nil || !ok {
		return err
	}
	opOf := func(idx int, op string) (*stats.OpStats, error) {
		if iv := byIdx[idx]; iv != nil && iv.Ops[op] != nil {
			return iv.Ops[op], nil
		}
		return nil, fmt.Errorf("measures of op %q in interval %d, which has no op_intervals row", op, idx)
	}
	err := eachRow(tx, `SELECT idx, op, measure, hist FROM op_measures WHERE workload_id = ?`, id, func(rows *sql.Rows) error {
		var k opKey
		var name string
		var text sql.NullString
		if err := rows.Scan(&k.idx, &k.op, &name, &text); err != nil {
			return err
		}
		m, err := stats.ParseMeasure(name)
		if err != nil {
			return nil // a newer perflab's measure
		}
		st, err := opOf(k.idx, k.op)
		if err != nil {
			return err
		}
		if st.Measures[m], err = decodeHist(text); err != nil {
			return fmt.Errorf("interval %d op %q measure %s: %w", k.idx, k.op, name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return eachRow(tx, `SELECT idx, op, counter, value FROM op_counters WHERE workload_id = ?`, id, func(rows *sql.Rows) error {
		var k opKey
		var name string
		var v int64
		if err := rows.Scan(&k.idx, &k.op, &name, &v); err != nil {
			return err
		}
		c, err := stats.ParseCounter(name)
		if err != nil {
			return nil // a newer perflab's counter
		}
		st, err := opOf(k.idx, k.op)
		if err != nil {
			return err
		}
		st.Counters[c] = v
		return nil
	})
}

// hasTable reports whether the database has the table.
func hasTable(tx *sql.Tx, table string) (bool, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&n)
	return n > 0, err
}

// eachRow runs query, with arg unless it is nil, and calls scan for each
// row.
func eachRow(tx *sql.Tx, query string, arg any, scan func(*sql.Rows) error) error {
	var args []any
	if arg != nil {
		args = append(args, arg)
	}
	rows, err := tx.Query(query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
