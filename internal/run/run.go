package run

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/perflab/perflab/internal/driver/registry"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/export"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/sut"
	"github.com/perflab/perflab/internal/view"
)

// Job is one run: a plan's cells (perflab run, search, k8s run, demo,
// and perflab http, whose plan is implicit: built from its flags).
type Job struct {
	// Out is the parent directory of the run directory; Meta what the run
	// records of itself (name, command, repetitions, extras).
	Out  string
	Meta results.Meta
	// Dir, when set, is the run directory itself instead of a new one
	// under Out: it must not exist or be empty (perflab run --run-dir).
	Dir string
	// Plan is the plan to run, checked; Builtins its template values,
	// whose RunDir Run sets to the run directory.
	Plan     *plan.Plan
	Builtins plan.Builtins
	// SampleEvery is how often the components and the generator are
	// sampled; 0 samples nothing. A plan's is its sample interval.
	SampleEvery time.Duration
	// Strategy runs each cell's phases; nil runs every phase in order.
	Strategy Strategy
	// Load makes each phase's load; nil makes it in this process.
	Load Load
	// Scrub takes the run's secrets out of everything it stores and of the
	// components' logs; nil keeps text as it is.
	Scrub func(string) string
	// Export is where the run's measurements are sent as it makes them
	// (internal/export): its intervals, the generator's and the
	// components' samples.
	Export []export.Target
	// Files writes the report files of the ended run into its directory
	// and names those it wrote (report.WriteFiles, and a search's own);
	// nil writes none.
	Files func(dir string, rep *view.Run) ([]string, error)
	// Confine holds the components perflab starts, by name, to a size's
	// limits (perflab size --verify), with Env added to their
	// environment (GOMEMLIMIT); what the kernel counted of each is
	// recorded as its samples as it stops (observe.Confined*).
	Confine map[string]Confinement
	// Intervals, when set, is where the run's intervals go instead of its
	// store (tests: a writer that fails).
	Intervals func(*results.Run) IntervalWriter
	Events    Events
}

// Confinement is a component's limits in a verification run, and what
// its environment gains.
type Confinement struct {
	Limits sut.Limits
	Env    []string
}

// Strategy runs the phases of a cell once its components are up.
type Strategy interface {
	RunPhases(ctx context.Context, c *Cell, phases []Phase) (state, message string)
}

// InOrder runs every phase of a cell in order, until one does not complete.
type InOrder struct{}

// RunPhases implements Strategy.
func (InOrder) RunPhases(ctx context.Context, c *Cell, phases []Phase) (string, string) {
	state, msg := results.StateCompleted, ""
	for _, ph := range phases {
		if ctx.Err() != nil {
			break
		}
		if state, msg = c.RunPhase(ctx, ph); state != results.StateCompleted {
			break
		}
	}
	return state, msg
}

// Load makes the load of a run's phases: in this process (the default),
// or by the workers of a distributed run (internal/fleet).
type Load interface {
	// Open readies the load before the first cell: the workers started
	// and registered. After a failed Open, Broken says why.
	Open(ctx context.Context, rec *Record, p *plan.Plan) error
	// Broken says why no further phase can run ("" while one can).
	Broken() string
	// Run makes the load of a phase whose drivers are built and prepared,
	// records how each workload ended and what its driver told, and
	// returns the workloads' summaries (nil when no load ran).
	Run(ctx context.Context, ph *PhaseRun) ([]engine.Summary, error)
	// Facts records what the phase's drivers told of their workloads,
	// once their load ended (or their preparation failed).
	Facts(ph *PhaseRun)
	// ReadBack checks what the phase's workloads wrote, once its load
	// ended in state.
	ReadBack(ctx context.Context, ph *PhaseRun, state string)
	// Close ends the load at the end of the run, interrupted or not; kill
	// when a second interrupt came.
	Close(interrupted, kill bool)
}

// runner is one Run: the job, its store and what every cell shares.
type runner struct {
	job        Job
	rec        *Record
	events     Events
	stop, kill context.Context
	cells      int // the run's cells, repetitions included
	matrix     bool
	load       Load
	strategy   Strategy
	scrub      func(string) string
	exp        *export.Set // nil without exports
	cellNames  []string    // by cell index, for the exports' labels
}

// Run runs the job until it ends or stop does (a first interrupt: no new
// load, the report is written); kill ends in-flight operations at once (a
// second one). It returns the run's directory and report; the error, a
// *Failure, says why the run did not succeed.
func Run(stop, kill context.Context, job Job) (*Result, error) {
	if job.Events == nil {
		job.Events = Discard{}
	}
	rec, err := createRecord(&job)
	if err != nil {
		return nil, err
	}
	defer rec.Store.Close()
	stop = rec.Halting(stop)
	r := &runner{job: job, rec: rec, events: job.Events, stop: stop, kill: kill, load: job.Load, strategy: job.Strategy,
		scrub: job.Scrub}
	if r.load == nil {
		r.load = localLoad{}
	}
	if r.strategy == nil {
		r.strategy = InOrder{}
	}
	cells := r.cellList()
	r.cells, r.matrix = len(cells), len(cells) > 1
	for _, c := range cells {
		r.cellNames = append(r.cellNames, c.Name)
	}
	if err := r.startExport(); err != nil {
		return nil, err
	}
	var failedCells []string
	if err := r.load.Open(stop, rec, job.Plan); err != nil {
		failedCells = append(failedCells, "the workers: "+OneLine(err.Error()))
	}
	defer func() { r.load.Close(stop.Err() != nil, kill.Err() != nil) }()
	for _, c := range cells {
		if stop.Err() != nil || r.load.Broken() != "" {
			break
		}
		if state, msg := r.runCell(c); state == results.StateFailed {
			failedCells = append(failedCells, fmt.Sprintf("cell %s: %s", c.Name, OneLine(msg)))
		}
	}
	r.closeExport()
	f, _ := r.strategy.(Finisher)
	return rec.Finish(func(rep *view.Run) (results.Status, error) {
		return JudgePlan(rep, stop.Err() != nil, rec.Err(), failedCells)
	}, f, job.Files)
}

// createRecord creates the run's store: for a plan, with the plan
// (secrets masked) and its file in the meta's extras, and the run
// directory, absolute because components run in the plan's directory, as
// {{run_dir}}.
func createRecord(job *Job) (*Record, error) {
	described, err := registry.DescribedPlan(job.Plan)
	if err != nil {
		return nil, failed(err, "")
	}
	if job.Meta.Extra == nil {
		job.Meta.Extra = map[string]string{}
	}
	job.Meta.Extra["plan"] = described
	if job.Plan.File != "" {
		job.Meta.Extra["plan_file"] = job.Plan.File
	}
	create := Create
	out := job.Out
	if job.Dir != "" {
		create, out = CreateAt, job.Dir
	}
	rec, err := create(out, job.Meta, job.Scrub, job.Events)
	if err != nil {
		return nil, err
	}
	if job.Intervals != nil {
		rec.SetIntervals(job.Intervals(rec.Store))
	}
	if job.Builtins.RunDir, err = filepath.Abs(rec.Store.Dir()); err != nil {
		rec.Store.Close()
		return nil, failed(fmt.Errorf("cannot locate the run directory: %w", err), "")
	}
	return rec, nil
}

// cellList is the cells the job runs: the plan's, repetitions included,
// or an implicit plan's one cell, which has no name.
func (r *runner) cellList() []plan.Cell {
	if r.job.Plan.Implicit {
		return []plan.Cell{{}}
	}
	return r.job.Plan.RunCells(r.job.Plan.Repeat)
}
