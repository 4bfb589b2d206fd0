package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// read runs f in a read transaction, so the queries of one call see one
// snapshot even while a writer, in this process or another, adds intervals.
func (r *Run) read(f func(*sql.Tx) error) error {
	tx, err := r.db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return f(tx)
}

// Meta reads the run's description. Unknown meta keys are ignored.
func (r *Run) Meta() (Meta, error) {
	kv := map[string]string{}
	err := r.read(func(tx *sql.Tx) error {
		rows, err := tx.Query(`SELECT key, value FROM meta`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				return err
			}
			kv[k] = v
		}
		return rows.Err()
	})
	if err != nil {
		return Meta{}, fmt.Errorf("cannot read meta: %w", err)
	}
	m, err := parseMeta(kv)
	if err != nil {
		return Meta{}, fmt.Errorf("cannot read meta: %w", err)
	}
	return m, nil
}

func parseMeta(kv map[string]string) (Meta, error) {
	m := Meta{Name: kv[metaName], Tool: kv[metaTool], Command: kv[metaCommand], Host: kv[metaHost]}
	if s := kv[metaStarted]; s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return Meta{}, fmt.Errorf("invalid %s %q: %w", metaStarted, s, err)
		}
		m.Started = t.UTC()
	}
	if s := kv[metaGoMaxProcs]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return Meta{}, fmt.Errorf("invalid %s %q: %w", metaGoMaxProcs, s, err)
		}
		m.GoMaxProcs = n
	}
	if s := kv[metaRepeat]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return Meta{}, fmt.Errorf("invalid %s %q: want a whole number of 1 or more", metaRepeat, s)
		}
		m.Repeat = n
	}
	for k, v := range kv {
		if name, ok := strings.CutPrefix(k, metaExtraPrefix); ok {
			if m.Extra == nil {
				m.Extra = map[string]string{}
			}
			m.Extra[name] = v
		}
	}
	return m, nil
}

// Status reads how the run ended. A run whose process was killed reads as
// "running" with a zero Ended; callers treat that as incomplete.
func (r *Run) Status() (Status, error) {
	var s Status
	var ended sql.NullInt64
	err := r.db.QueryRow(`SELECT state, ended_ns, message, exit_code FROM status WHERE id = 1`).
		Scan(&s.State, &ended, &s.Message, &s.ExitCode)
	if err != nil {
		return Status{}, fmt.Errorf("cannot read status: %w", err)
	}
	if ended.Valid {
		s.Ended = time.Unix(0, ended.Int64).UTC()
	}
	return s, nil
}

// Workloads reads the workloads in the order they were added.
func (r *Run) Workloads() ([]Workload, error) {
	var out []Workload
	err := r.read(func(tx *sql.Tx) error {
		cols, err := workloadColumns(tx, r.version)
		if err != nil {
			return err
		}
		rows, err := tx.Query(`SELECT name, driver, model, target, rate, stages, vus_min, vus_max,
			backlog, concurrency, duration_ns, grace_ns, params, ` + cols + ` FROM workloads ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var w Workload
			var stages, params, place sql.NullString
			var dur, grace int64
			err := rows.Scan(&w.Name, &w.Driver, &w.Model, &w.Target, &w.Rate, &stages, &w.VUsMin,
				&w.VUsMax, &w.Backlog, &w.Concurrency, &dur, &grace, &params, &w.Cell, &w.Profile, &w.Short, &place)
			if err != nil {
				return err
			}
			w.Duration, w.Grace = time.Duration(dur), time.Duration(grace)
			w.Stages, w.Params = rawJSON(stages), rawJSON(params)
			if place.Valid {
				if err := json.Unmarshal([]byte(place.String), &w.Place); err != nil {
					return fmt.Errorf("workload %q: place keys: %w", w.Name, err)
				}
			}
			out = append(out, w)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read workloads: %w", err)
	}
	return out, nil
}

// workloadColumns are the columns of a workloads row after params, in
// the format version of the store: version 1 has no cell, profile or
// short (every workload is in cell 0), and a store written before place
// was added to version 3 has no place keys.
func workloadColumns(tx *sql.Tx, version int) (string, error) {
	if version < 2 {
		return "0, '', '', NULL", nil
	}
	ok, err := hasColumn(tx, "workloads", "place")
	if !ok || err != nil {
		return "cell, profile, short, NULL", err
	}
	return "cell, profile, short, place", nil
}

func rawJSON(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

// Events reads the events in the order they were added.
func (r *Run) Events() ([]Event, error) {
	var out []Event
	err := r.read(func(tx *sql.Tx) error {
		rows, err := tx.Query(`SELECT time_ns, kind, message FROM events ORDER BY id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e Event
			var ns int64
			if err := rows.Scan(&ns, &e.Kind, &e.Message); err != nil {
				return err
			}
			e.Time = time.Unix(0, ns).UTC()
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read events: %w", err)
	}
	return out, nil
}

// Intervals reads a workload's intervals in index order with every histogram
// decoded; a histogram stored as NULL reads as an empty one, never nil, but
// a measure an operation has no value of, and the failed operations'
// latency of an operation that did not fail, read as nil, as they were
// recorded.
func (r *Run) Intervals(workload string) ([]*stats.Interval, error) {
	var out []*stats.Interval
	err := r.read(func(tx *sql.Tx) error {
		id, err := lookupWorkload(tx, workload)
		if err != nil {
			return err
		}
		if out, err = readIntervals(tx, id); err != nil {
			return err
		}
		byIdx := make(map[int]*stats.Interval, len(out))
		for _, iv := range out {
			byIdx[iv.Index] = iv
		}
		want, err := readOps(tx, id, byIdx, r.version)
		if err != nil {
			return err
		}
		if err := readErrors(tx, id, byIdx); err != nil {
			return err
		}
		if err := readExtras(tx, id, byIdx); err != nil {
			return err
		}
		return checkErrorCounts(byIdx, want)
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read intervals of %q: %w", workload, err)
	}
	return out, nil
}

func readIntervals(tx *sql.Tx, id int64) ([]*stats.Interval, error) {
	rows, err := tx.Query(`SELECT idx, start_ns, end_ns, dropped, vus, lag_hist
		FROM intervals WHERE workload_id = ? ORDER BY idx`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*stats.Interval
	for rows.Next() {
		iv := &stats.Interval{Ops: map[string]*stats.OpStats{}}
		var start, end int64
		var lag sql.NullString
		if err := rows.Scan(&iv.Index, &start, &end, &iv.Dropped, &iv.VUs, &lag); err != nil {
			return nil, err
		}
		iv.Start, iv.End = time.Unix(0, start).UTC(), time.Unix(0, end).UTC()
		if iv.Lag, err = decodeHist(lag); err != nil {
			return nil, fmt.Errorf("interval %d: lag: %w", iv.Index, err)
		}
		out = append(out, iv)
	}
	return out, rows.Err()
}

type opKey struct {
	idx int
	op  string
}

// readOps fills in each interval's operations and returns the errors column
// of each, for checkErrorCounts. A store older than version 3 has no
// failed_hist: its latency histograms hold every operation, and an
// operation that failed in the interval is marked Mixed.
func readOps(tx *sql.Tx, id int64, byIdx map[int]*stats.Interval, version int) (map[opKey]int64, error) {
	failed := "failed_hist"
	if version < 3 {
		failed = "NULL"
	}
	rows, err := tx.Query(`SELECT idx, op, ok, errors, bytes_sent, bytes_recv,
		latency_hist, service_hist, ttfb_hist, connect_hist, `+failed+`
		FROM op_intervals WHERE workload_id = ? ORDER BY idx, op`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	want := map[opKey]int64{}
	for rows.Next() {
		var k opKey
		var nerr int64
		var h [5]sql.NullString
		st := &stats.OpStats{}
		err := rows.Scan(&k.idx, &k.op, &st.Classes[stats.OK], &nerr, &st.BytesSent, &st.BytesRecv,
			&h[0], &h[1], &h[2], &h[3], &h[4])
		if err != nil {
			return nil, err
		}
		iv := byIdx[k.idx]
		if iv == nil {
			return nil, fmt.Errorf("op %q in interval %d, which has no intervals row", k.op, k.idx)
		}
		st.Mixed = version < 3 && nerr > 0
		for i, dst := range []**stats.Hist{&st.Latency, &st.Service, &st.TTFB, &st.Connect} {
			if *dst, err = decodeHist(h[i]); err != nil {
				return nil, fmt.Errorf("interval %d op %q: %w", k.idx, k.op, err)
			}
		}
		if h[4].Valid { // NULL: nothing failed, and Failed stays nil as recorded
			if st.Failed, err = decodeHist(h[4]); err != nil {
				return nil, fmt.Errorf("interval %d op %q: failed: %w", k.idx, k.op, err)
			}
		}
		iv.Ops[k.op] = st
		want[k] = nerr
	}
	return want, rows.Err()
}

func readErrors(tx *sql.Tx, id int64, byIdx map[int]*stats.Interval) error {
	rows, err := tx.Query(`SELECT idx, op, class, count, sample
		FROM op_errors WHERE workload_id = ?`, id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k opKey
		var class, sample string
		var n int64
		if err := rows.Scan(&k.idx, &k.op, &class, &n, &sample); err != nil {
			return err
		}
		c, err := stats.ParseClass(class)
		if err != nil || c == stats.OK {
			return fmt.Errorf("interval %d op %q: invalid error class %q", k.idx, k.op, class)
		}
		var st *stats.OpStats
		if iv := byIdx[k.idx]; iv != nil {
			st = iv.Ops[k.op]
		}
		if st == nil {
			return fmt.Errorf("errors of op %q in interval %d, which has no op_intervals row", k.op, k.idx)
		}
		st.Classes[c], st.Samples[c] = n, sample
	}
	return rows.Err()
}

// checkErrorCounts checks op_intervals.errors against the op_errors rows it
// summarises, so a damaged or misread store fails loudly.
func checkErrorCounts(byIdx map[int]*stats.Interval, want map[opKey]int64) error {
	for k, n := range want {
		if got := byIdx[k.idx].Ops[k.op].Classes.Errors(); got != n {
			return fmt.Errorf("interval %d op %q: errors is %d but op_errors sum to %d", k.idx, k.op, n, got)
		}
	}
	return nil
}

// decodeHist reads a histogram column: NULL is an empty histogram, with no
// counts until something is merged into it.
func decodeHist(s sql.NullString) (*stats.Hist, error) {
	if !s.Valid {
		return stats.EmptyHist(), nil
	}
	return stats.DecodeHist([]byte(s.String))
}
