package results

import (
	"database/sql"
	"fmt"
	"time"
)

// WorkloadEnd is what the engine knew of a workload when it ended: its
// timeline, the arrivals it scheduled and dropped, and the steady-state
// window reports use. A workload without one was cut short by a kill.
type WorkloadEnd struct {
	Start       time.Time
	LoadEnd     time.Time // the schedule stopped issuing operations
	End         time.Time // the last in-flight operation ended
	Scheduled   uint64    // arrivals the open model's dispatcher issued
	Dropped     uint64    // arrivals not served, Unissued included
	Unissued    uint64    // arrivals due that the dispatcher had not issued when the schedule ended
	MaxVUs      int
	Interrupted bool
	WindowStart time.Time
	WindowEnd   time.Time
	WindowRule  string
}

// EndWorkload records how workload name ended.
func (r *Run) EndWorkload(name string, e WorkloadEnd) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.ids[name]
	if !ok {
		return fmt.Errorf("cannot end workload %q: no such workload", name)
	}
	_, err := r.db.Exec(`INSERT INTO workload_ends (workload_id, start_ns, load_end_ns, end_ns, scheduled,
		dropped, max_vus, interrupted, window_start_ns, window_end_ns, window_rule, unissued)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		id, e.Start.UnixNano(), e.LoadEnd.UnixNano(), e.End.UnixNano(), int64(e.Scheduled), int64(e.Dropped),
		e.MaxVUs, e.Interrupted, e.WindowStart.UnixNano(), e.WindowEnd.UnixNano(), r.text(e.WindowRule), int64(e.Unissued))
	if err != nil {
		return fmt.Errorf("cannot end workload %q: %w", name, err)
	}
	return nil
}

// WorkloadEnds reads the recorded ends by workload name.
func (r *Run) WorkloadEnds() (map[string]WorkloadEnd, error) {
	out := map[string]WorkloadEnd{}
	err := r.read(func(tx *sql.Tx) error {
		unissued := "0" // a store written before the column has no unissued arrivals recorded
		if ok, err := hasColumn(tx, "workload_ends", "unissued"); err != nil {
			return err
		} else if ok {
			unissued = "e.unissued"
		}
		rows, err := tx.Query(`SELECT w.name, e.start_ns, e.load_end_ns, e.end_ns, e.scheduled, e.dropped,
			e.max_vus, e.interrupted, e.window_start_ns, e.window_end_ns, e.window_rule, ` + unissued + `
			FROM workload_ends e JOIN workloads w ON w.id = e.workload_id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var e WorkloadEnd
			var start, loadEnd, end, ws, we, sched, dropped, unissued int64
			if err := rows.Scan(&name, &start, &loadEnd, &end, &sched, &dropped, &e.MaxVUs, &e.Interrupted,
				&ws, &we, &e.WindowRule, &unissued); err != nil {
				return err
			}
			e.Unissued = uint64(unissued)
			e.Start, e.LoadEnd, e.End = time.Unix(0, start), time.Unix(0, loadEnd), time.Unix(0, end)
			e.WindowStart, e.WindowEnd = time.Unix(0, ws), time.Unix(0, we)
			e.Scheduled, e.Dropped = uint64(sched), uint64(dropped)
			out[name] = e
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read workload ends: %w", err)
	}
	return out, nil
}
