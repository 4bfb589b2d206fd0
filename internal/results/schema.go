package results

import (
	"database/sql"
	"fmt"
	"strconv"
	"time"
)

// schema is version 3 of the format; docs/format/results.md describes every
// column. Times are integer nanoseconds since the Unix epoch (UTC), sizes are
// bytes, histograms are base64 HdrHistogram V2 (compressed) text in
// microseconds, NULL for an empty histogram.
const schema = `
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE status (
	id        INTEGER PRIMARY KEY CHECK (id = 1),
	state     TEXT NOT NULL,
	ended_ns  INTEGER,
	message   TEXT NOT NULL DEFAULT '',
	exit_code INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE workloads (
	id          INTEGER PRIMARY KEY,
	name        TEXT NOT NULL UNIQUE,
	driver      TEXT NOT NULL,
	model       TEXT NOT NULL,
	target      TEXT NOT NULL,
	rate        REAL NOT NULL,
	stages      TEXT,
	vus_min     INTEGER NOT NULL,
	vus_max     INTEGER NOT NULL,
	backlog     INTEGER NOT NULL,
	concurrency INTEGER NOT NULL,
	duration_ns INTEGER NOT NULL,
	grace_ns    INTEGER NOT NULL,
	params      TEXT,
	cell        INTEGER NOT NULL DEFAULT 0,
	profile     TEXT NOT NULL DEFAULT '',
	short       TEXT NOT NULL DEFAULT '',
	place       TEXT
);
CREATE TABLE intervals (
	workload_id INTEGER NOT NULL REFERENCES workloads (id),
	idx         INTEGER NOT NULL,
	start_ns    INTEGER NOT NULL,
	end_ns      INTEGER NOT NULL,
	dropped     INTEGER NOT NULL,
	vus         INTEGER NOT NULL,
	lag_hist    TEXT,
	PRIMARY KEY (workload_id, idx)
);
CREATE TABLE op_intervals (
	workload_id  INTEGER NOT NULL,
	idx          INTEGER NOT NULL,
	op           TEXT NOT NULL,
	ok           INTEGER NOT NULL,
	errors       INTEGER NOT NULL,
	bytes_sent   INTEGER NOT NULL,
	bytes_recv   INTEGER NOT NULL,
	latency_hist TEXT,
	service_hist TEXT,
	ttfb_hist    TEXT,
	connect_hist TEXT,
	failed_hist  TEXT,
	PRIMARY KEY (workload_id, idx, op),
	FOREIGN KEY (workload_id, idx) REFERENCES intervals (workload_id, idx)
);
CREATE TABLE op_errors (
	workload_id INTEGER NOT NULL,
	idx         INTEGER NOT NULL,
	op          TEXT NOT NULL,
	class       TEXT NOT NULL,
	count       INTEGER NOT NULL,
	sample      TEXT NOT NULL,
	PRIMARY KEY (workload_id, idx, op, class),
	FOREIGN KEY (workload_id, idx, op) REFERENCES op_intervals (workload_id, idx, op)
);
CREATE TABLE workload_ends (
	workload_id     INTEGER PRIMARY KEY REFERENCES workloads (id),
	start_ns        INTEGER NOT NULL,
	load_end_ns     INTEGER NOT NULL,
	end_ns          INTEGER NOT NULL,
	scheduled       INTEGER NOT NULL,
	dropped         INTEGER NOT NULL,
	max_vus         INTEGER NOT NULL,
	interrupted     INTEGER NOT NULL,
	window_start_ns INTEGER NOT NULL,
	window_end_ns   INTEGER NOT NULL,
	window_rule     TEXT NOT NULL,
	unissued        INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE events (
	id      INTEGER PRIMARY KEY,
	time_ns INTEGER NOT NULL,
	kind    TEXT NOT NULL,
	message TEXT NOT NULL
);
CREATE TABLE cells (
	idx        INTEGER PRIMARY KEY,
	name       TEXT NOT NULL,
	state      TEXT NOT NULL,
	message    TEXT NOT NULL DEFAULT '',
	started_ns INTEGER NOT NULL,
	ended_ns   INTEGER
);
CREATE TABLE cell_vars (
	cell  INTEGER NOT NULL REFERENCES cells (idx),
	pos   INTEGER NOT NULL,
	name  TEXT NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (cell, pos)
);
CREATE TABLE phases (
	id              INTEGER PRIMARY KEY,
	cell            INTEGER NOT NULL,
	profile         TEXT NOT NULL,
	start_ns        INTEGER NOT NULL,
	warmup_ns       INTEGER NOT NULL,
	load_end_ns     INTEGER,
	window_start_ns INTEGER,
	window_end_ns   INTEGER,
	window_rule     TEXT NOT NULL DEFAULT '',
	state           TEXT NOT NULL,
	message         TEXT NOT NULL DEFAULT '',
	UNIQUE (cell, profile)
);
CREATE TABLE components (
	id          INTEGER PRIMARY KEY,
	cell        INTEGER NOT NULL,
	name        TEXT NOT NULL,
	group_name  TEXT NOT NULL DEFAULT '',
	kind        TEXT NOT NULL,
	pid         INTEGER NOT NULL DEFAULT 0,
	metrics_url TEXT NOT NULL DEFAULT '',
	data_dirs   TEXT,
	exited_ns   INTEGER,
	exit_text   TEXT NOT NULL DEFAULT '',
	UNIQUE (cell, name)
);
CREATE TABLE metrics (
	id   INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);
CREATE TABLE samples (
	cell         INTEGER NOT NULL,
	component_id INTEGER NOT NULL REFERENCES components (id),
	metric_id    INTEGER NOT NULL REFERENCES metrics (id),
	t_ns         INTEGER NOT NULL,
	value        REAL NOT NULL
);
CREATE INDEX samples_cell ON samples (cell);
`

// The meta keys (the same in every version). Meta.Extra entries are stored as
// metaExtraPrefix + key.
const (
	metaSchemaVersion = "schema_version"
	metaName          = "name"
	metaTool          = "tool"
	metaCommand       = "command"
	metaStarted       = "started"
	metaHost          = "host"
	metaGoMaxProcs    = "gomaxprocs"
	metaRepeat        = "repeat" // added to version 2; only when above 1
	metaExtraPrefix   = "extra."
)

// initDB switches a new database to WAL and creates the schema, the meta
// rows and the "running" status in one transaction.
func initDB(db *sql.DB, meta Meta) error {
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return fmt.Errorf("cannot set WAL mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("cannot set WAL mode: journal mode is %q", mode)
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.Exec(schema + driverSchema + measureSchema + phaseWarningSchema + stopSchema + shardSchema); err != nil {
		return fmt.Errorf("cannot create schema: %w", err)
	}
	for k, v := range metaRows(meta) {
		if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, k, v); err != nil {
			return fmt.Errorf("cannot write meta %s: %w", k, err)
		}
	}
	if _, err := tx.Exec(`INSERT INTO status (id, state) VALUES (1, ?)`, StateRunning); err != nil {
		return fmt.Errorf("cannot write status: %w", err)
	}
	return tx.Commit()
}

func metaRows(m Meta) map[string]string {
	rows := map[string]string{
		metaSchemaVersion: strconv.Itoa(SchemaVersion),
		metaName:          m.Name,
		metaTool:          m.Tool,
		metaCommand:       m.Command,
		metaStarted:       m.Started.UTC().Format(time.RFC3339Nano),
		metaHost:          m.Host,
		metaGoMaxProcs:    strconv.Itoa(m.GoMaxProcs),
	}
	if m.Repeat > 1 {
		rows[metaRepeat] = strconv.Itoa(m.Repeat)
	}
	for k, v := range m.Extra {
		rows[metaExtraPrefix+k] = v
	}
	return rows
}

// checkVersion returns the format version of db. It refuses a database that
// is not a results store or that was written in a newer format version than
// this package reads.
func checkVersion(db *sql.DB) (int, error) {
	var v string
	err := db.QueryRow(`SELECT value FROM meta WHERE key = ?`, metaSchemaVersion).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("not a perflab results database (no %s): %w", metaSchemaVersion, err)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("not a perflab results database: invalid %s %q", metaSchemaVersion, v)
	}
	if n > SchemaVersion {
		return 0, fmt.Errorf("results format version %d is newer than this perflab reads (version %d); use a newer perflab", n, SchemaVersion)
	}
	return n, nil
}

// writable refuses writes to a run opened read-only, and to a store of an
// older format version: perflab reads version 1 and 2 runs but writes only
// the current version.
func (r *Run) writable(what string) error {
	if r.readOnly {
		return fmt.Errorf("cannot %s: the run is open read-only", what)
	}
	if r.version != SchemaVersion {
		return fmt.Errorf("cannot %s: the run is in results format version %d and perflab writes only version %d", what, r.version, SchemaVersion)
	}
	return nil
}
