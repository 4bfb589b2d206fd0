package results

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/stats"
)

// schemaV1 is version 1 of the format exactly as perflab 0.1.0 wrote it, so
// the tests can make a store as an older perflab left it.
const schemaV1 = `
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
	params      TEXT
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
	window_rule     TEXT NOT NULL
);
CREATE TABLE events (
	id      INTEGER PRIMARY KEY,
	time_ns INTEGER NOT NULL,
	kind    TEXT NOT NULL,
	message TEXT NOT NULL
);
`

// createV1 writes a version 1 store in dir: one finished workload with two
// intervals of 10 "GET /" operations (one a timeout in interval 1), its end,
// and one event.
func createV1(t *testing.T, dir string) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, DBName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := testStart.UnixNano()
	s := int64(time.Second)
	stmts := []string{
		schemaV1,
		`INSERT INTO meta (key, value) VALUES ('schema_version', '1'), ('name', 'old'),
			('started', '2026-11-21T17:24:00.123456789Z'), ('gomaxprocs', '4')`,
		`INSERT INTO status (id, state, ended_ns, message, exit_code) VALUES (1, 'completed', ?, '', 0)`,
		`INSERT INTO workloads (id, name, driver, model, target, rate, vus_min, vus_max, backlog, concurrency,
			duration_ns, grace_ns) VALUES (1, 'load', 'http', 'open', 'GET http://x', 10, 1, 5, 0, 0, ?, 0)`,
		`INSERT INTO intervals (workload_id, idx, start_ns, end_ns, dropped, vus) VALUES (1, 0, ?, ?, 0, 1), (1, 1, ?, ?, 2, 1)`,
		`INSERT INTO op_intervals (workload_id, idx, op, ok, errors, bytes_sent, bytes_recv)
			VALUES (1, 0, 'GET /', 10, 0, 0, 100), (1, 1, 'GET /', 9, 1, 0, 90)`,
		`INSERT INTO op_errors (workload_id, idx, op, class, count, sample) VALUES (1, 1, 'GET /', 'timeout', 1, 'deadline')`,
		`INSERT INTO workload_ends VALUES (1, ?, ?, ?, 20, 2, 1, 0, ?, ?, 'test window')`,
		`INSERT INTO events (time_ns, kind, message) VALUES (?, 'note', 'hello')`,
	}
	args := [][]any{nil, nil, {t0 + 3*s}, {2 * s}, {t0, t0 + s, t0 + s, t0 + 2*s}, nil, nil,
		{t0, t0 + 2*s, t0 + 2*s, t0, t0 + 2*s}, {t0}}
	for i, q := range stmts {
		if _, err := db.Exec(q, args[i]...); err != nil {
			t.Fatalf("statement %d: %v", i, err)
		}
	}
}

// TestOpenVersion1 reads a store written in format version 1: everything it
// holds reads as before, and the tables it lacks read as empty.
func TestOpenVersion1(t *testing.T) {
	dir := t.TempDir()
	createV1(t, dir)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.FormatVersion() != 1 {
		t.Errorf("FormatVersion() = %d, want 1", r.FormatVersion())
	}
	ws, err := r.Workloads()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[0].Name != "load" || ws[0].Cell != 0 || ws[0].Profile != "" || ws[0].Short != "" || ws[0].Rate != 10 {
		t.Errorf("workloads = %+v", ws)
	}
	ivs, err := r.Intervals("load")
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 2 || ivs[1].Dropped != 2 || ivs[1].Ops["GET /"].Classes.Errors() != 1 {
		t.Errorf("intervals = %+v", ivs)
	}
	if ivs[0].Ops["GET /"].Mixed || !ivs[1].Ops["GET /"].Mixed || ivs[1].Ops["GET /"].Failed != nil {
		t.Error("a version 1 interval with failures must read as Mixed, without a failed histogram; one without as not Mixed")
	}
	ends, err := r.WorkloadEnds()
	if err != nil || ends["load"].WindowRule != "test window" {
		t.Errorf("ends = %+v, %v", ends, err)
	}
	checkEmptyV2(t, r)
	if err := r.AddCell(Cell{Index: 0, Name: "x"}); err == nil || !strings.Contains(err.Error(), "format version 1") {
		t.Errorf("AddCell on a version 1 store: err = %v", err)
	}
	if err := r.AddWorkload(Workload{Name: "new", Model: ModelOpen}); err == nil {
		t.Error("AddWorkload on a version 1 store succeeded")
	}
}

func checkEmptyV2(t *testing.T, r *Run) {
	t.Helper()
	if cs, err := r.Cells(); err != nil || len(cs) != 0 {
		t.Errorf("Cells() = %v, %v; want none", cs, err)
	}
	if ps, err := r.Phases(); err != nil || len(ps) != 0 {
		t.Errorf("Phases() = %v, %v; want none", ps, err)
	}
	if cs, err := r.Components(0); err != nil || len(cs) != 0 {
		t.Errorf("Components(0) = %v, %v; want none", cs, err)
	}
	if s, err := r.Samples(0); err != nil || len(s) != 0 {
		t.Errorf("Samples(0) = %v, %v; want none", s, err)
	}
}

// TestNewRunHasNoCells checks that a version 2 run without a plan reads like
// a version 1 run: no cells, phases, components or samples.
func TestNewRunHasNoCells(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.FormatVersion() != SchemaVersion {
		t.Errorf("FormatVersion() = %d, want %d", r.FormatVersion(), SchemaVersion)
	}
	checkEmptyV2(t, r)
}

// TestNoMeasureTables reads a version 2 store written before op_measures
// and op_counters were added: its intervals read as before, with no
// measures and no counters. A measure or counter written by a newer
// perflab is skipped.
func TestNoMeasureTables(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.AddWorkload(testWorkloads[0]); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteInterval("ingest", testInterval(0)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO op_measures (workload_id, idx, op, measure, hist) SELECT workload_id, idx, op, 'queue_wait', hist FROM op_measures WHERE measure = 'ttft'`,
		`INSERT INTO op_counters (workload_id, idx, op, counter, value) VALUES (1, 0, 'chat', 'cached_tokens', 5)`,
	} {
		if _, err := r.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	ivs, err := r.Intervals("ingest")
	if err != nil || len(ivs) != 1 {
		t.Fatalf("with a newer perflab's measure and counter: %v, %d intervals", err, len(ivs))
	}
	checkInterval(t, ivs[0], testInterval(0))

	if _, err := r.db.Exec(`DROP TABLE op_measures; DROP TABLE op_counters`); err != nil {
		t.Fatal(err)
	}
	ivs, err = r.Intervals("ingest")
	if err != nil || len(ivs) != 1 {
		t.Fatalf("without the tables: %v, %d intervals", err, len(ivs))
	}
	want := testInterval(0)
	want.Ops["chat"].Measures = [stats.NumMeasures]*stats.Hist{}
	want.Ops["chat"].Counters = [stats.NumCounters]int64{}
	checkInterval(t, ivs[0], want)
}

// TestOpenVersion2 reads a store written in format version 2, whose
// latency histograms hold failed operations too and which has no
// failed_hist: the histograms read as they were stored, an operation that
// failed in an interval is marked Mixed (its latency is of every request),
// one that did not is not, and perflab refuses to add intervals to it.
func TestOpenVersion2(t *testing.T) {
	r, err := Create(t.TempDir(), testMeta())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddCell(Cell{Index: 0, Name: "only", Started: testStart}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddPhase(Phase{Profile: "small", Start: testStart}); err != nil {
		t.Fatal(err)
	}
	addComponents(t, r, 0, "target")
	if err := r.AddWorkload(testWorkloads[0]); err != nil {
		t.Fatal(err)
	}
	old := testInterval(1)
	get := old.Ops["GET /"]
	get.Latency, get.Failed = get.AllLatency(), nil // as version 2 recorded it
	if err := r.WriteInterval("ingest", old); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`ALTER TABLE op_intervals DROP COLUMN failed_hist`,
		`UPDATE meta SET value = '2' WHERE key = 'schema_version'`,
	} {
		if _, err := r.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	if r, err = Open(r.Dir()); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.FormatVersion() != 2 {
		t.Errorf("FormatVersion() = %d, want 2", r.FormatVersion())
	}
	// a version 2 store has cells, phases and components (issue 18)
	cells, err := r.Cells()
	if err != nil || len(cells) != 1 || cells[0].Name != "only" {
		t.Errorf("Cells() = %+v, %v; want the one cell", cells, err)
	}
	phases, err := r.Phases()
	if err != nil || len(phases) != 1 || phases[0].Profile != "small" {
		t.Errorf("Phases() = %+v, %v; want the one phase", phases, err)
	}
	if comps, err := r.Components(0); err != nil || len(comps) != 1 || comps[0].Name != "target" {
		t.Errorf("Components(0) = %+v, %v; want the target", comps, err)
	}
	ivs, err := r.Intervals("ingest")
	if err != nil || len(ivs) != 1 {
		t.Fatalf("Intervals: %v, %d intervals", err, len(ivs))
	}
	get.Mixed = true
	checkInterval(t, ivs[0], old)
	if n := ivs[0].Ops["GET /"].Latency.Count(); n != 101 {
		t.Errorf("GET / latency holds %d values, want every one of the 101 requests", n)
	}
	if err := r.WriteInterval("ingest", testInterval(2)); err == nil || !strings.Contains(err.Error(), "format version 2") {
		t.Errorf("WriteInterval on a version 2 store: err = %v", err)
	}
}
