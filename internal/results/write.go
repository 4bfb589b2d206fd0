package results

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/perflab/perflab/internal/stats"
)

// AddWorkload records a workload's configuration. Names are unique in a run;
// WriteInterval refers to the workload by name.
func (r *Run) AddWorkload(w Workload) error {
	if err := checkWorkload(w); err != nil {
		return fmt.Errorf("cannot add workload %q: %w", w.Name, err)
	}
	if err := r.writable(fmt.Sprintf("add workload %q", w.Name)); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := r.db.Exec(`INSERT INTO workloads (name, driver, model, target, rate, stages,
		vus_min, vus_max, backlog, concurrency, duration_ns, grace_ns, params, cell, profile, short, place)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		w.Name, w.Driver, w.Model, r.text(w.Target), w.Rate, jsonText(w.Stages),
		w.VUsMin, w.VUsMax, w.Backlog, w.Concurrency, int64(w.Duration), int64(w.Grace), r.jsonText(w.Params),
		w.Cell, w.Profile, w.Short, keysText(w.Place))
	if err != nil {
		return fmt.Errorf("cannot add workload %q: %w", w.Name, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("cannot add workload %q: %w", w.Name, err)
	}
	r.ids[w.Name] = id
	return nil
}

func checkWorkload(w Workload) error {
	if w.Name == "" {
		return errors.New("empty name")
	}
	if w.Cell < 0 {
		return fmt.Errorf("cell %d is negative", w.Cell)
	}
	if w.Model != ModelOpen && w.Model != ModelClosed {
		return fmt.Errorf("model %q is not %q or %q", w.Model, ModelOpen, ModelClosed)
	}
	if len(w.Stages) > 0 && !json.Valid(w.Stages) {
		return errors.New("stages are not valid JSON")
	}
	if len(w.Params) > 0 && !json.Valid(w.Params) {
		return errors.New("params are not valid JSON")
	}
	return nil
}

// keysText is a list of param keys as a column value: a JSON array, NULL
// when empty.
func keysText(keys []string) any {
	if len(keys) == 0 {
		return nil
	}
	b, _ := json.Marshal(keys) // a []string always encodes
	return string(b)
}

// jsonText is raw JSON as a column value: NULL when empty.
func jsonText(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return string(m)
}

// jsonText is raw JSON as a column value, scrubbed, or as given if
// scrubbing broke it (a secret inside an escape sequence).
func (r *Run) jsonText(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	if s := r.text(string(m)); json.Valid([]byte(s)) {
		return s
	}
	return string(m)
}

// encodedOp is one operation's row, histograms encoded ahead of the lock.
type encodedOp struct {
	name     string
	st       *stats.OpStats
	hists    [5]sql.NullString // latency, service, ttfb, connect, failed
	measures [stats.NumMeasures]sql.NullString
}

func encodeOps(iv *stats.Interval) ([]encodedOp, error) {
	ops := make([]encodedOp, 0, len(iv.Ops))
	for _, name := range iv.OpNames() {
		st := iv.Ops[name]
		if st == nil {
			continue
		}
		e := encodedOp{name: name, st: st}
		for i, h := range []*stats.Hist{st.Latency, st.Service, st.TTFB, st.Connect, st.Failed} {
			var err error
			if e.hists[i], err = encodeHist(h); err != nil {
				return nil, fmt.Errorf("op %q: %w", name, err)
			}
		}
		if err := encodeMeasures(&e); err != nil {
			return nil, fmt.Errorf("op %q: %w", name, err)
		}
		ops = append(ops, e)
	}
	return ops, nil
}

// encodeHist is a histogram as a column value: NULL when nil or empty.
func encodeHist(h *stats.Hist) (sql.NullString, error) {
	if h == nil || h.Count() == 0 {
		return sql.NullString{}, nil
	}
	b, err := h.Encode()
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// WriteInterval stores one interval of a workload in its own transaction:
// the interval row, a row per operation with its counters and histograms,
// a row per failure class with its count and sample message, and a row per
// measure and counter the driver added. Once it
// returns nil the interval survives the process being killed. It is safe to
// call from several goroutines; histograms are encoded before the lock.
func (r *Run) WriteInterval(workload string, iv *stats.Interval) error {
	if iv == nil {
		return fmt.Errorf("cannot write interval of %q: nil interval", workload)
	}
	if err := r.writable(fmt.Sprintf("write interval %d of %q", iv.Index, workload)); err != nil {
		return err
	}
	lag, err := encodeHist(iv.Lag)
	if err != nil {
		return fmt.Errorf("cannot write interval %d of %q: lag: %w", iv.Index, workload, err)
	}
	ops, err := encodeOps(r.scrubbed(iv)) // the error samples and names are in ops
	if err != nil {
		return fmt.Errorf("cannot write interval %d of %q: %w", iv.Index, workload, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.workloadID(workload)
	if err == nil {
		err = r.inTx(func(tx *sql.Tx) error { return insertInterval(tx, id, iv, lag, ops) })
	}
	if err != nil {
		return fmt.Errorf("cannot write interval %d of %q: %w", iv.Index, workload, err)
	}
	return nil
}

func insertInterval(tx *sql.Tx, id int64, iv *stats.Interval, lag sql.NullString, ops []encodedOp) error {
	_, err := tx.Exec(`INSERT INTO intervals (workload_id, idx, start_ns, end_ns, dropped, vus, lag_hist)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		id, iv.Index, iv.Start.UnixNano(), iv.End.UnixNano(), iv.Dropped, iv.VUs, lag)
	if err != nil || len(ops) == 0 {
		return err
	}
	opStmt, err := tx.Prepare(`INSERT INTO op_intervals (workload_id, idx, op, ok, errors,
		bytes_sent, bytes_recv, latency_hist, service_hist, ttfb_hist, connect_hist, failed_hist)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer opStmt.Close()
	errStmt, err := tx.Prepare(`INSERT INTO op_errors (workload_id, idx, op, class, count, sample)
		VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer errStmt.Close()
	for _, o := range ops {
		st := o.st
		_, err := opStmt.Exec(id, iv.Index, o.name, st.Classes[stats.OK], st.Classes.Errors(),
			st.BytesSent, st.BytesRecv, o.hists[0], o.hists[1], o.hists[2], o.hists[3], o.hists[4])
		if err != nil {
			return fmt.Errorf("op %q: %w", o.name, err)
		}
		for c := stats.OK + 1; c < stats.NumClasses; c++ {
			if st.Classes[c] == 0 {
				continue
			}
			if _, err := errStmt.Exec(id, iv.Index, o.name, c.String(), st.Classes[c], st.Samples[c]); err != nil {
				return fmt.Errorf("op %q class %s: %w", o.name, c, err)
			}
		}
	}
	return insertExtras(tx, id, iv.Index, ops)
}

// MaxSample bounds an error sample as the store keeps it, in bytes. A
// driver keeps more of a message (its own bound is larger), so that the
// scrubber sees a credential whole before the sample is cut.
const MaxSample = 200

// scrubbed is iv with its operations' names and error samples scrubbed,
// then each sample cut to MaxSample; iv itself unchanged (its histograms
// are shared).
func (r *Run) scrubbed(iv *stats.Interval) *stats.Interval {
	out := *iv
	out.Ops = make(map[string]*stats.OpStats, len(iv.Ops))
	for name, st := range iv.Ops {
		c := *st
		for i, sample := range c.Samples {
			c.Samples[i] = shorten(r.text(sample))
		}
		out.Ops[r.text(name)] = &c
	}
	return &out
}

// shorten cuts s to MaxSample bytes, on a character boundary, ending in
// "..." when it was longer.
func shorten(s string) string {
	if len(s) <= MaxSample {
		return s
	}
	cut := MaxSample - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// AddEvent records an event. A zero e.Time means now.
func (r *Run) AddEvent(e Event) error {
	if e.Kind == "" {
		return errors.New("cannot add event: empty kind")
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := r.db.Exec(`INSERT INTO events (time_ns, kind, message) VALUES (?, ?, ?)`,
		e.Time.UnixNano(), e.Kind, r.text(e.Message))
	if err != nil {
		return fmt.Errorf("cannot add event %q: %w", e.Kind, err)
	}
	return nil
}

// workloadID maps a workload name to its id, asking the database when the
// workload was added through another handle. r.mu must be held.
func (r *Run) workloadID(name string) (int64, error) {
	if id, ok := r.ids[name]; ok {
		return id, nil
	}
	id, err := lookupWorkload(r.db, name)
	if err != nil {
		return 0, err
	}
	r.ids[name] = id
	return id, nil
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	QueryRow(query string, args ...any) *sql.Row
}

func lookupWorkload(q querier, name string) (int64, error) {
	var id int64
	err := q.QueryRow(`SELECT id FROM workloads WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("unknown workload %q", name)
	}
	return id, err
}

// inTx runs f in a write transaction (BEGIN IMMEDIATE) and commits it.
func (r *Run) inTx(f func(*sql.Tx) error) error {
	tx, err := r.db.Begin()
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
