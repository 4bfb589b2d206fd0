// Package results is perflab's run store. One run is one directory holding
// results.db, an SQLite database written as the run goes (each interval is
// committed on its own, so a killed process keeps every completed interval),
// plus whatever files later stages put beside it: report.md, summary.json,
// logs. The format is specified in docs/format/results.md; this package is
// its reference reader and writer.
package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver: pure Go, no cgo
)

// SchemaVersion is the version of the results format this package writes and
// the newest it reads. Readers refuse a newer version; version 1 stores (runs
// without cells, phases, components or samples) and version 2 stores (whose
// latency histograms hold failed operations too) still open and read.
const SchemaVersion = 3

// DBName is the database's file name inside a run directory.
const DBName = "results.db"

// The states of a run. A run whose process was killed stays StateRunning.
const (
	StateRunning     = "running"
	StateCompleted   = "completed"
	StateInterrupted = "interrupted"
	StateFailed      = "failed"
)

// The load models a workload can use.
const (
	ModelOpen   = "open"
	ModelClosed = "closed"
)

// Meta describes the run as a whole.
type Meta struct {
	Name       string
	Tool       string // "perflab <version>"
	Command    string // redacted argv or plan name
	Started    time.Time
	Host       string
	GoMaxProcs int
	// Repeat is how many times every cell of the plan ran (perflab run
	// --repeat): each repetition is a cell of its own with the variable
	// RepetitionVar. 0 or 1: once, and the store has no repeat key.
	Repeat int
	Extra  map[string]string
}

// RepetitionVar is the cell variable that numbers a cell's repetition,
// from 1, in a run whose Meta.Repeat is above 1; it follows the matrix's
// variables.
const RepetitionVar = "repetition"

// Workload describes one stream of load as configured.
type Workload struct {
	Name        string
	Driver      string
	Model       string // ModelOpen or ModelClosed
	Target      string
	Rate        float64         // ops/s of a constant open model; 0 otherwise
	Stages      json.RawMessage // ramping stages, opaque to the store
	VUsMin      int             // open model: VUs started before the first arrival
	VUsMax      int             // open model: the VU cap
	Backlog     int             // open model: arrivals that may wait for a VU at the cap
	Concurrency int             // closed model: number of VUs
	Duration    time.Duration   // configured duration
	Grace       time.Duration   // time in-flight operations may take to finish at the end
	Params      json.RawMessage // driver params, already redacted by the caller
	Cell        int             // index of the matrix cell it ran in; 0 in a run without a plan
	Profile     string          // the plan profile it belongs to; "" in a run without a plan
	Short       string          // display name within its profile, e.g. "get" for "small/get"; "" means Name
	// Place are the params of its driver that say where the system under
	// test is or how to reach it, not what load it gets: a comparison
	// notes a difference in them but is not refused for it. The run
	// records them so that a run read back later needs no driver of
	// this perflab; none in a store written before they were.
	Place []string `json:",omitempty"`
}

// Event is something that happened during the run, e.g. kind "interrupt",
// "error" or "note".
type Event struct {
	Time    time.Time
	Kind    string
	Message string
}

// Status is how the run ended. Ended is zero while the run is running.
type Status struct {
	State    string
	Ended    time.Time
	Message  string
	ExitCode int
}

// Run is one run directory with its open database. Its methods are safe for
// concurrent use; writes are serialised.
type Run struct {
	dir string
	db  *sql.DB

	version int // format version of the database
	// readOnly is set by OpenReadOnly: writes are refused and Close leaves
	// the database as it found it.
	readOnly bool
	// snapshot is the private directory holding the copy OpenReadOnly
	// reads a killed run from; Close removes it. "" when reading in place.
	snapshot string

	mu      sync.Mutex        // serialises writes
	ids     map[string]int64  // workload name → workloads.id; guarded by mu
	comps   map[compKey]int64 // (cell, component name) → components.id; guarded by mu
	metrics map[string]int64  // metric name → metrics.id; guarded by mu
	// lastTick is components.id → t_ns of its last sample written through
	// this handle; guarded by mu.
	lastTick map[int64]int64
	// scrub is applied to every text the run stores; nil stores text as
	// given. See CreateScrubbed.
	scrub func(string) string
}

// text is s as stored: scrubbed.
func (r *Run) text(s string) string {
	if r.scrub == nil {
		return s
	}
	return r.scrub(s)
}

func newRun(dir string, db *sql.DB, version int) *Run {
	return &Run{dir: dir, db: db, version: version, ids: map[string]int64{},
		comps: map[compKey]int64{}, metrics: map[string]int64{}, lastTick: map[int64]int64{}}
}

// maxSuffix bounds the search for a free directory name in Create.
const maxSuffix = 1000

// maxNameLen bounds the sanitised run name in a directory name.
const maxNameLen = 64

// DirName is the directory name of a run called name started at t:
// the name lowercased, every character outside [a-z0-9-_] replaced by '-',
// runs of '-' collapsed, then "-YYYYMMDD-HHMMSS" of t in UTC.
func DirName(name string, t time.Time) string {
	return sanitise(name) + "-" + t.UTC().Format("20060102-150405")
}

func sanitise(name string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			c = '-'
		}
		if c == '-' && (b.Len() == 0 || strings.HasSuffix(b.String(), "-")) {
			continue
		}
		b.WriteRune(c)
	}
	s := b.String()
	if len(s) > maxNameLen { // equivalent mutant: >=, s[:maxNameLen] of a name that long is itself
		s = s[:maxNameLen]
	}
	s = strings.TrimRight(s, "-")
	if s == "" {
		return "run"
	}
	return s
}

// Create makes a new run directory under parent, named DirName(meta.Name,
// meta.Started) with "-2", "-3", … appended if that exists, and creates its
// database with meta and state "running". A zero meta.Started means now.
func Create(parent string, meta Meta) (*Run, error) {
	return CreateScrubbed(parent, meta, nil)
}

// CreateScrubbed is Create with scrub applied to every text the run
// stores, meta's included: messages, error samples, operation names,
// facts, checks, targets, params, cell names and variables, component
// exit and stop texts and metrics URLs, window rules, workers' hosts and
// messages. It is where a caller removes secrets before anything reaches
// the disk; scrub must be safe for concurrent use. Workload, profile and
// component names, which other calls refer to, and histograms are stored
// as given.
func CreateScrubbed(parent string, meta Meta, scrub func(string) string) (*Run, error) {
	meta = scrubbedMeta(meta, scrub)
	dir, err := makeRunDir(parent, DirName(meta.Name, meta.Started))
	if err != nil {
		return nil, err
	}
	return createIn(dir, meta, scrub, true)
}

// CreateScrubbedAt is CreateScrubbed with the run directory dir itself
// instead of a new one under a parent: a directory the caller fixed
// (perflab run --run-dir), which must not exist or be empty, so that a
// run never mixes with another's files.
func CreateScrubbedAt(dir string, meta Meta, scrub func(string) string) (*Run, error) {
	made, err := makeFixedDir(dir)
	if err != nil {
		return nil, err
	}
	meta = scrubbedMeta(meta, scrub)
	return createIn(dir, meta, scrub, made)
}

// scrubbedMeta is meta with its texts scrubbed, started now when it has
// no start.
func scrubbedMeta(meta Meta, scrub func(string) string) Meta {
	if meta.Started.IsZero() {
		meta.Started = time.Now()
	}
	run := &Run{scrub: scrub}
	meta.Name, meta.Command = run.text(meta.Name), run.text(meta.Command)
	if meta.Extra != nil {
		extra := make(map[string]string, len(meta.Extra))
		for k, v := range meta.Extra {
			extra[k] = run.text(v)
		}
		meta.Extra = extra
	}
	return meta
}

// makeFixedDir makes dir, or takes it when it is an empty directory;
// made says it made it.
func makeFixedDir(dir string) (made bool, err error) {
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return false, fmt.Errorf("cannot create results directory: %w", err)
	}
	err = os.Mkdir(dir, 0o755)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("cannot create run directory: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("cannot create run directory: %w", err)
	}
	if len(entries) > 0 {
		return false, fmt.Errorf("cannot create run directory %s: it exists and is not empty (%s …); remove it or name another", dir, entries[0].Name())
	}
	return false, nil
}

// createIn creates the run's database in dir with meta, scrubbed; on a
// failure it removes dir when made says the run made it.
func createIn(dir string, meta Meta, scrub func(string) string, made bool) (*Run, error) {
	db, err := openDB(dir, true)
	if err == nil {
		err = initDB(db, meta)
		if err != nil {
			_ = db.Close()
		}
	}
	if err != nil {
		if made {
			_ = os.RemoveAll(dir) // we made it a moment ago; nothing else is in it
		}
		return nil, fmt.Errorf("cannot create run in %s: %w", dir, err)
	}
	r := newRun(dir, db, SchemaVersion)
	r.scrub = scrub
	return r, nil
}

func makeRunDir(parent, base string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("cannot create results directory: %w", err)
	}
	for i := 1; i <= maxSuffix; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		dir := filepath.Join(parent, name)
		err := os.Mkdir(dir, 0o755) // atomic: two runs never share a directory
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("cannot create run directory: %w", err)
		}
	}
	return "", fmt.Errorf("cannot create run directory: %s and %d suffixed names exist", filepath.Join(parent, base), maxSuffix-1)
}

// Open opens the run in dir, finished or not: a run whose process was killed
// reads back every interval committed before the kill. It refuses a database
// written in a newer format version.
func Open(dir string) (*Run, error) {
	if _, err := os.Stat(filepath.Join(dir, DBName)); err != nil {
		return nil, fmt.Errorf("cannot open run %s: %w", dir, err)
	}
	db, version, err := versioned(openDB(dir, false))
	if err != nil {
		return nil, fmt.Errorf("cannot open run %s: %w", dir, err)
	}
	return newRun(dir, db, version), nil
}

// versioned is db, opened with err, and its format version; a database
// it refuses (checkVersion) is closed.
func versioned(db *sql.DB, err error) (*sql.DB, int, error) {
	if err != nil {
		return nil, 0, err
	}
	version, err := checkVersion(db)
	if err != nil {
		_ = db.Close()
		return nil, 0, err
	}
	return db, version, nil
}

// FormatVersion is the results format version the run's database was
// written in: SchemaVersion for a run made by Create, possibly older for one
// read by Open.
func (r *Run) FormatVersion() int { return r.version }

// openDB opens dir/results.db. Every connection gets synchronous=NORMAL (the
// durability choice the format spec explains), foreign keys, a busy timeout
// for readers in other processes, and BEGIN IMMEDIATE for writes. One
// connection is enough: writes are serialised anyway, and keeping it open
// keeps the WAL attached for the whole run.
func openDB(dir string, create bool) (*sql.DB, error) {
	path, err := filepath.Abs(filepath.Join(dir, DBName))
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("mode", "rw")
	if create {
		q.Set("mode", "rwc")
	}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// SQLite's page cache (2 MiB by default) would fill with the run's
	// pages as the store grows, a generator that grows with its run; a
	// writer that appends an interval a second needs a few pages.
	q.Add("_pragma", "cache_size(-256)")
	q.Set("_txlock", "immediate")
	return openSQLite(path, q)
}

// openSQLite opens the database at the absolute path with the URI
// parameters q and a busy timeout for readers in other processes, on one
// connection, and checks that it answers.
func openSQLite(path string, q url.Values) (*sql.DB, error) {
	q.Add("_pragma", "busy_timeout(10000)")
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path), RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// Dir is the run directory.
func (r *Run) Dir() string { return r.dir }

// Path is the path of a file inside the run directory, e.g. "report.md" or
// "logs/target.log". The name cannot escape the directory ("../x" becomes
// "x"). Path creates nothing.
func (r *Run) Path(name string) string {
	return filepath.Join(r.dir, filepath.Clean(string(filepath.Separator)+name))
}

// Finish records how the run ended. Its transaction is committed with
// synchronous=FULL, which makes the whole run durable against power loss,
// then the WAL is folded into results.db. A zero s.Ended means now.
//
// A store that ran out of room (disk full, the file-size limit) may still
// take the status: when the update fails, the WAL is folded into results.db
// and emptied, and the update is tried once more.
func (r *Run) Finish(s Status) error {
	switch s.State {
	case StateCompleted, StateInterrupted, StateFailed:
	default:
		return fmt.Errorf("cannot finish run: state %q is not %s, %s or %s", s.State, StateCompleted, StateInterrupted, StateFailed)
	}
	if s.Ended.IsZero() {
		s.Ended = time.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx := context.Background()
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("cannot finish run: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = FULL`); err != nil {
		return fmt.Errorf("cannot finish run: %w", err)
	}
	update := func() error {
		_, err := conn.ExecContext(ctx, `UPDATE status SET state = ?, ended_ns = ?, message = ?, exit_code = ? WHERE id = 1`,
			s.State, s.Ended.UnixNano(), r.text(s.Message), s.ExitCode)
		return err
	}
	if err := update(); err != nil {
		if checkpoint(ctx, conn) != nil || update() != nil {
			return fmt.Errorf("cannot finish run: %w", err)
		}
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA synchronous = NORMAL`); err != nil {
		return fmt.Errorf("cannot finish run: %w", err)
	}
	// Best effort: a reader in another process may hold the WAL open, in
	// which case the checkpoint reports busy and the WAL stays until Close.
	// The status is durable either way.
	_ = checkpoint(ctx, conn)
	return nil
}

// checkpoint folds the WAL into results.db and truncates it to nothing.
func checkpoint(ctx context.Context, conn *sql.Conn) error {
	var busy, logFrames, done int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &done); err != nil {
		return err
	}
	if busy != 0 {
		return errors.New("checkpoint: the database is busy")
	}
	return nil
}

// Close closes the database. It is safe to call more than once. Closing does
// not finish the run: a run closed without Finish reads as "running".
//
// A handle that may write first seals the run (see seal), finished or not,
// so a closed run is the one file results.db. A handle of OpenReadOnly
// leaves the run as it found it and removes its private snapshot, if any.
func (r *Run) Close() error {
	if !r.readOnly {
		r.seal()
	}
	err := r.db.Close()
	if r.snapshot != "" {
		_ = os.RemoveAll(r.snapshot)
		r.snapshot = ""
	}
	if err != nil {
		return fmt.Errorf("cannot close run %s: %w", r.dir, err)
	}
	return nil
}

// seal folds the WAL into results.db and switches the database from WAL to
// the rollback journal (journal_mode DELETE), which removes results.db-wal
// and results.db-shm: a sealed run is one self-contained file that readers
// open read-only, from a read-only copy too, without SQLite creating files
// beside it. Best effort, for Close: while another connection has the
// database open (a reader in another process), or when the disk is too
// full for the checkpoint, the run stays in WAL mode, which readers handle
// as well (OpenReadOnly).
func (r *Run) seal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	var mode string
	_ = r.db.QueryRow(`PRAGMA journal_mode = DELETE`).Scan(&mode)
}
