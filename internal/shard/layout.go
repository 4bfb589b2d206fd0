package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Run is one distributed run's part of a store: every key of it begins
// with its id.
type Run struct {
	Store Store
	ID    string
}

// The keys of a run (docs/format/shards.md describes each object).
func (r Run) runKey() string             { return r.ID + "/run.json" }
func (r Run) helloKey(worker int) string { return fmt.Sprintf("%s/workers/%d.json", r.ID, worker) }
func (r Run) startKey(phase int) string  { return fmt.Sprintf("%s/phases/%d/start.json", r.ID, phase) }
func (r Run) shardPrefix(phase, w int) string {
	return fmt.Sprintf("%s/phases/%d/shard-%d/", r.ID, phase, w)
}
func (r Run) partKey(phase, w, seq int) string {
	return fmt.Sprintf("%spart-%06d.json", r.shardPrefix(phase, w), seq)
}
func (r Run) endKey(phase, w int) string { return r.shardPrefix(phase, w) + "end.json" }
func (r Run) abortKey() string           { return r.ID + "/abort.json" }
func (r Run) stopKey(phase int) string   { return fmt.Sprintf("%s/phases/%d/stop.json", r.ID, phase) }
func (r Run) doneKey() string            { return r.ID + "/done.json" }

// Manifest is what the coordinator says of the run before any worker
// starts: how many workers there are and the plan they share.
type Manifest struct {
	Workers int       `json:"workers"`
	Plan    string    `json:"plan"` // the plan's text
	Created time.Time `json:"created"`
	Version string    `json:"version"` // the coordinator's perflab version
	// Repeat and Profiles are the plan's repetitions and the profiles
	// selected (--repeat, --profile), "" for all.
	Repeat   int    `json:"repeat,omitempty"`
	Profiles string `json:"profiles,omitempty"`
	// RunDir is the coordinator's run directory, what {{run_dir}} stands
	// for on every worker.
	RunDir string `json:"run_dir,omitempty"`
	// Name and Meta are the run's name and what its run store records of
	// it besides (the plan as described, the SLO gates), for perflab merge.
	Name string            `json:"name,omitempty"`
	Meta map[string]string `json:"meta,omitempty"`
}

// Hello is what a worker says of itself when it starts.
type Hello struct {
	Index          int       `json:"index"`
	Host           string    `json:"host"`
	PID            int       `json:"pid"`
	CoresAvailable float64   `json:"cores_available"`
	Version        string    `json:"version"`
	Time           time.Time `json:"time"`
}

// Announcement tells the workers to run one phase: which cell and profile
// of the plan, when to start (every worker's engine starts at this instant,
// so that their intervals line up), and per workload what the coordinator
// resolved for it (a rate derived from a byte rate, say).
type Announcement struct {
	Phase      int           `json:"phase"`
	Cell       int           `json:"cell"`
	CellName   string        `json:"cell_name,omitempty"`
	Vars       []Var         `json:"vars,omitempty"`       // the cell's matrix variables
	Repetition int           `json:"repetition,omitempty"` // of a repeated run, from 1
	Profile    string        `json:"profile"`
	Warmup     time.Duration `json:"warmup_ns,omitempty"` // the profile's warm-up, when the plan sets one
	StartAt    time.Time     `json:"start_at"`
	// Workloads are the profile's workloads by their name in the plan.
	Workloads map[string]Resolved `json:"workloads,omitempty"`
	Extra     map[string]string   `json:"extra,omitempty"`
}

// Var is a matrix variable's value in a cell.
type Var struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Resolved is what the coordinator decided of one workload before the
// phase: its name in the run, its rate when the plan left it to the
// driver, the payload size that turned a byte rate into operations, and
// what its driver prepared for the workers' drivers (driver.Handoff).
type Resolved struct {
	Name    string            `json:"name,omitempty"`
	Rate    float64           `json:"rate,omitempty"`     // operations/s a driver.Rater implied: the plan gives no rate
	OpBytes float64           `json:"op_bytes,omitempty"` // bytes per operation dividing the plan's byte rates
	Driver  map[string]string `json:"driver,omitempty"`
	// Detail is what the coordinator records of the workload (its
	// description in the run store), in the form the command running the
	// workers defines, so that the run can be rebuilt from the store alone.
	Detail json.RawMessage `json:"detail,omitempty"`
}

// Abort is the coordinator's request that every worker stop.
type Abort struct {
	Reason string    `json:"reason"`
	Time   time.Time `json:"time"`
}

// Put and get of JSON objects.

func putJSON(ctx context.Context, s Store, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("cannot encode %s: %w", key, err)
	}
	return s.Put(ctx, key, b)
}

// getJSON reads key into v; found is false when it does not exist yet.
func getJSON(ctx context.Context, s Store, key string, v any) (found bool, err error) {
	b, err := s.Get(ctx, key)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("cannot decode %s: %w", key, err)
	}
	return true, nil
}

// PutManifest writes the run's manifest.
func (r Run) PutManifest(ctx context.Context, m Manifest) error {
	return putJSON(ctx, r.Store, r.runKey(), m)
}

// Manifest reads the run's manifest; found is false before it is written.
func (r Run) Manifest(ctx context.Context) (m Manifest, found bool, err error) {
	found, err = getJSON(ctx, r.Store, r.runKey(), &m)
	return m, found, err
}

// PutHello registers a worker.
func (r Run) PutHello(ctx context.Context, h Hello) error {
	return putJSON(ctx, r.Store, r.helloKey(h.Index), h)
}

// Hellos reads every worker that registered, by index.
func (r Run) Hellos(ctx context.Context) (map[int]Hello, error) {
	keys, err := r.Store.List(ctx, r.ID+"/workers/")
	if err != nil {
		return nil, err
	}
	out := map[int]Hello{}
	for _, k := range keys {
		var h Hello
		if ok, err := getJSON(ctx, r.Store, k, &h); err != nil || !ok {
			return nil, err
		}
		out[h.Index] = h
	}
	return out, nil
}

// Announce tells the workers to run a phase.
func (r Run) Announce(ctx context.Context, a Announcement) error {
	return putJSON(ctx, r.Store, r.startKey(a.Phase), a)
}

// Phases is the number of every phase announced, in order.
func (r Run) Phases(ctx context.Context) ([]int, error) {
	keys, err := r.Store.List(ctx, r.ID+"/phases/")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, r.ID+"/phases/")
		num, file, _ := strings.Cut(rest, "/")
		if n, err := strconv.Atoi(num); ok && err == nil && file == "start.json" {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// Announcement reads a phase's announcement; found is false before it is made.
func (r Run) Announcement(ctx context.Context, phase int) (a Announcement, found bool, err error) {
	found, err = getJSON(ctx, r.Store, r.startKey(phase), &a)
	return a, found, err
}

// PutAbort asks every worker to stop.
func (r Run) PutAbort(ctx context.Context, reason string) error {
	return putJSON(ctx, r.Store, r.abortKey(), Abort{Reason: reason, Time: time.Now()})
}

// Aborted reads the coordinator's request to stop, if it made one.
func (r Run) Aborted(ctx context.Context) (a Abort, found bool, err error) {
	found, err = getJSON(ctx, r.Store, r.abortKey(), &a)
	return a, found, err
}

// StopPhase asks every worker to stop its load of one phase (a component
// of the cell crashed); unlike PutAbort, the run goes on.
func (r Run) StopPhase(ctx context.Context, phase int, reason string) error {
	return putJSON(ctx, r.Store, r.stopKey(phase), Abort{Reason: reason, Time: time.Now()})
}

// PhaseStopped reads the coordinator's request to stop a phase, if it made one.
func (r Run) PhaseStopped(ctx context.Context, phase int) (a Abort, found bool, err error) {
	found, err = getJSON(ctx, r.Store, r.stopKey(phase), &a)
	return a, found, err
}

// PutDone tells the workers that no phase follows.
func (r Run) PutDone(ctx context.Context) error {
	return putJSON(ctx, r.Store, r.doneKey(), map[string]time.Time{"time": time.Now()})
}

// Done says whether the coordinator said no phase follows.
func (r Run) Done(ctx context.Context) (bool, error) {
	var v map[string]time.Time
	return getJSON(ctx, r.Store, r.doneKey(), &v)
}
