package results

import (
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Sample is one measured value of a component at one sample time; the metric
// names are those of internal/observe (cpu_cores, rss_bytes, metric:<name>, …).
type Sample struct {
	Metric string
	Value  float64
}

// TimePoint is one value of a series.
type TimePoint struct {
	T time.Time
	V float64
}

// samplesPerStmt bounds the rows of one multi-row INSERT (5 parameters each)
// well below SQLite's parameter limit.
const samplesPerStmt = 200

// WriteSamples stores one sample tick of a cell: points maps a component
// name (added with AddComponent) to its values at t. The tick is one
// transaction: once WriteSamples returns nil it survives the process being
// killed, and a tick is never partly stored. Non-finite values (NaN, ±Inf)
// are not stored. A metric twice for one component in one tick is an error,
// and so is a tick not later than the component's previous one (through this
// handle): (component, metric, time) is unique and series are in time order.
func (r *Run) WriteSamples(cell int, t time.Time, points map[string][]Sample) error {
	what := fmt.Sprintf("write samples of cell %d at %s", cell, t.UTC().Format(time.RFC3339Nano))
	if err := r.writable(what); err != nil {
		return err
	}
	names := make([]string, 0, len(points))
	for name := range points {
		names = append(names, name)
	}
	slices.Sort(names)
	r.mu.Lock()
	defer r.mu.Unlock()
	rows, newMetrics, err := r.sampleRows(cell, t, names, points)
	if err == nil && len(rows) > 0 { // equivalent mutant: >= 0, no rows insert nothing
		err = r.inTx(func(tx *sql.Tx) error { return r.insertSamples(tx, cell, newMetrics, rows) })
	}
	if err != nil {
		for _, m := range newMetrics {
			delete(r.metrics, m) // their ids were not committed
		}
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	for _, row := range rows {
		r.lastTick[row.comp] = row.t
	}
	return nil
}

// sampleRow is one samples row; metric is resolved to an id in the
// transaction when it is new.
type sampleRow struct {
	comp   int64
	metric string
	t      int64
	v      float64
}

// sampleRows resolves component ids and checks the tick. It reserves an id
// for each metric name not yet in the metrics table and returns those names.
// r.mu must be held.
func (r *Run) sampleRows(cell int, t time.Time, names []string, points map[string][]Sample) ([]sampleRow, []string, error) {
	var rows []sampleRow
	var newMetrics []string
	ns := t.UnixNano()
	for _, name := range names {
		id, err := r.componentID(cell, name)
		if err != nil {
			return nil, newMetrics, err
		}
		if last, ok := r.lastTick[id]; ok && ns <= last {
			return nil, newMetrics, fmt.Errorf("component %q: a tick at %s is not after its previous one at %s",
				name, t.UTC().Format(time.RFC3339Nano), time.Unix(0, last).UTC().Format(time.RFC3339Nano))
		}
		seen := make(map[string]bool, len(points[name]))
		for _, s := range points[name] {
			if seen[s.Metric] {
				return nil, newMetrics, fmt.Errorf("component %q: metric %q given twice", name, s.Metric)
			}
			seen[s.Metric] = true
			if s.Metric == "" {
				return nil, newMetrics, fmt.Errorf("component %q: empty metric name", name)
			}
			if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
				continue
			}
			if _, ok := r.metrics[s.Metric]; !ok {
				r.metrics[s.Metric] = 0 // resolved in insertSamples
				newMetrics = append(newMetrics, s.Metric)
			}
			rows = append(rows, sampleRow{comp: id, metric: s.Metric, t: ns, v: s.Value})
		}
	}
	return rows, newMetrics, nil
}

// resolveMetrics adds the new metric names to the metrics table and fills in
// their ids in r.metrics. r.mu must be held.
func (r *Run) resolveMetrics(tx *sql.Tx, newMetrics []string) error {
	for _, m := range newMetrics {
		if _, err := tx.Exec(`INSERT OR IGNORE INTO metrics (name) VALUES (?)`, m); err != nil {
			return fmt.Errorf("metric %q: %w", m, err)
		}
		var id int64
		if err := tx.QueryRow(`SELECT id FROM metrics WHERE name = ?`, m).Scan(&id); err != nil {
			return fmt.Errorf("metric %q: %w", m, err)
		}
		r.metrics[m] = id
	}
	return nil
}

// insertSamples writes rows in multi-row INSERTs of up to samplesPerStmt
// rows: one statement per tick instead of one per value. r.mu must be held.
func (r *Run) insertSamples(tx *sql.Tx, cell int, newMetrics []string, rows []sampleRow) error {
	if err := r.resolveMetrics(tx, newMetrics); err != nil {
		return err
	}
	for len(rows) > 0 {
		n := min(len(rows), samplesPerStmt)
		var q strings.Builder
		q.WriteString(`INSERT INTO samples (cell, component_id, metric_id, t_ns, value) VALUES `)
		args := make([]any, 0, 4*n) // equivalent mutants: a capacity
		for i, s := range rows[:n] {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?)")
			args = append(args, cell, s.comp, r.metrics[s.metric], s.t, s.v)
		}
		if _, err := tx.Exec(q.String(), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// Samples reads every sample of a cell: component name → metric name →
// points in time order. A version 1 store, or a cell without samples, gives
// an empty map.
func (r *Run) Samples(cell int) (map[string]map[string][]TimePoint, error) {
	out := map[string]map[string][]TimePoint{}
	if r.version < 2 {
		return out, nil
	}
	err := r.read(func(tx *sql.Tx) error {
		comps, err := idNames(tx, `SELECT id, name FROM components WHERE cell = ?`, cell)
		if err != nil {
			return err
		}
		metrics, err := idNames(tx, `SELECT id, name FROM metrics`, nil)
		if err != nil {
			return err
		}
		return readSamples(tx, cell, comps, metrics, out)
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read samples of cell %d: %w", cell, err)
	}
	return out, nil
}

// readSamples reads a cell's samples in insertion order (time order, as
// ticks are written) through the cell index, without a sort, and groups them
// into series; a series written out of time order is sorted afterwards.
func readSamples(tx *sql.Tx, cell int, comps, metrics map[int64]string, out map[string]map[string][]TimePoint) error {
	type key struct{ comp, metric int64 }
	series := map[key][]TimePoint{}
	err := eachRow(tx, `SELECT component_id, metric_id, t_ns, value FROM samples WHERE cell = ? ORDER BY rowid`, cell, func(rows *sql.Rows) error {
		var k key
		var ns int64
		var v float64
		if err := rows.Scan(&k.comp, &k.metric, &ns, &v); err != nil {
			return err
		}
		series[k] = append(series[k], TimePoint{T: time.Unix(0, ns).UTC(), V: v})
		return nil
	})
	if err != nil {
		return err
	}
	for k, ps := range series {
		c, ok := comps[k.comp]
		m, ok2 := metrics[k.metric]
		if !ok || !ok2 {
			return fmt.Errorf("samples of component id %d, metric id %d: no such component in cell %d or no such metric", k.comp, k.metric, cell)
		}
		if !slices.IsSortedFunc(ps, byTime) {
			slices.SortStableFunc(ps, byTime)
		}
		if out[c] == nil {
			out[c] = map[string][]TimePoint{}
		}
		out[c][m] = ps
	}
	return nil
}

func byTime(a, b TimePoint) int { return a.T.Compare(b.T) }

// idNames reads (id, name) pairs; query takes arg unless it is nil.
func idNames(tx *sql.Tx, query string, arg any) (map[int64]string, error) {
	out := map[int64]string{}
	err := eachRow(tx, query, arg, func(rows *sql.Rows) error {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		out[id] = name
		return nil
	})
	return out, err
}
