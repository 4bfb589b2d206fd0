package results

import (
	"database/sql"
	"fmt"
)

// shardSchema is the table of the workers of a distributed run, one row
// per worker per phase. It is additive to format version 3
// (docs/format/results.md): a store written before it, or a run that was
// not distributed, reads as having no shards.
const shardSchema = `
CREATE TABLE shards (
	cell         INTEGER NOT NULL,
	profile      TEXT NOT NULL,
	idx          INTEGER NOT NULL,
	host         TEXT NOT NULL,
	state        TEXT NOT NULL,
	message      TEXT NOT NULL,
	requests     INTEGER NOT NULL,
	rate         REAL NOT NULL,
	cpu_p99      REAL,
	cpu_max      REAL,
	cores        REAL,
	lag_p99_s    REAL,
	client_bound INTEGER NOT NULL,
	client_why   TEXT NOT NULL,
	PRIMARY KEY (cell, profile, idx)
);
`

// The states of a shard.
const (
	ShardCompleted   = "completed"   // it ran its part of the phase and wrote its end
	ShardInterrupted = "interrupted" // it was stopped (Ctrl-C, the run aborted) and wrote its end
	ShardFailed      = "failed"      // it wrote an end with an error, or its process or pod failed
	ShardLost        = "lost"        // it never wrote its end: what it wrote until then is kept
)

// Shard is one worker's part of one phase of a distributed run.
type Shard struct {
	Cell     int
	Profile  string
	Index    int
	Host     string
	State    string
	Message  string  // why it failed or was lost; "" when it completed
	Requests int64   // operations it recorded
	Rate     float64 // operations per second over its load
	// The worker's own CPU (cores), the cores it could use and the p99 of
	// its open-model workloads' dispatch lag (seconds); HasCPU is false
	// when it sent none (it never ended).
	HasCPU         bool
	CPUP99, CPUMax float64
	Cores          float64
	LagP99         float64
	ClientBound    bool
	ClientWhy      string
}

// AddShard records one worker's part of a phase.
func (r *Run) AddShard(s Shard) error {
	what := fmt.Sprintf("add worker %d of phase %q of cell %d", s.Index, s.Profile, s.Cell)
	if err := r.writable(what); err != nil {
		return err
	}
	var cpuP99, cpuMax, cores, lag sql.NullFloat64
	if s.HasCPU {
		cpuP99, cpuMax, cores = sql.NullFloat64{Float64: s.CPUP99, Valid: true},
			sql.NullFloat64{Float64: s.CPUMax, Valid: true}, sql.NullFloat64{Float64: s.Cores, Valid: true}
		lag = sql.NullFloat64{Float64: s.LagP99, Valid: true}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := r.db.Exec(`INSERT INTO shards (cell, profile, idx, host, state, message, requests, rate,
		cpu_p99, cpu_max, cores, lag_p99_s, client_bound, client_why) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.Cell, s.Profile, s.Index, r.text(s.Host), s.State, r.text(s.Message), s.Requests, s.Rate, cpuP99, cpuMax, cores, lag,
		s.ClientBound, r.text(s.ClientWhy))
	if err != nil {
		return fmt.Errorf("cannot %s: %w", what, err)
	}
	return nil
}

// Shards reads every worker's part of every phase, by phase in the order
// they were added and by worker. A store without the table has none.
func (r *Run) Shards() ([]Shard, error) {
	var out []Shard
	err := r.readTable("shards", `SELECT cell, profile, idx, host, state, message, requests, rate,
		cpu_p99, cpu_max, cores, lag_p99_s, client_bound, client_why FROM shards ORDER BY rowid`, func(rows *sql.Rows) error {
		var s Shard
		var cpuP99, cpuMax, cores, lag sql.NullFloat64
		if err := rows.Scan(&s.Cell, &s.Profile, &s.Index, &s.Host, &s.State, &s.Message, &s.Requests, &s.Rate,
			&cpuP99, &cpuMax, &cores, &lag, &s.ClientBound, &s.ClientWhy); err != nil {
			return err
		}
		s.HasCPU = cpuP99.Valid
		s.CPUP99, s.CPUMax, s.Cores, s.LagP99 = cpuP99.Float64, cpuMax.Float64, cores.Float64, lag.Float64
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read shards: %w", err)
	}
	return out, nil
}
