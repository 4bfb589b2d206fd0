package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/target"
)

// planRun is one `perflab run`: the plan, its store and what every cell
// shares.
type planRun struct {
	e          *env
	p          *plan.Plan
	store      *results.Run
	b          plan.Builtins
	matrix     bool // workload names start with their cell's name
	cells      int  // the run's cells, repetitions included
	stop, kill context.Context
	sink       *storeSink
	progress   *report.Progress
	// phases runs a cell's phases once its components are up; nil runs
	// every phase in order (runPhases). A capacity search sets its own.
	phases func(ctx context.Context, c plan.Cell, phases []phasePlan) (state, message string)
	// prom reads the running cell's Prometheus-observed components after
	// each phase; nil when it has none.
	prom *promSampling
	// dist, for a run made by workers, announces the phases to them and
	// merges what they measured; nil: this process makes the load.
	dist *coordinator
}

// running is a component of a cell: started by perflab (proc is set) or
// attached to.
type running struct {
	plan   plan.Component
	proc   *target.Process
	pid    int
	cgroup string // the attach's cgroup directory, resolved
	done   <-chan struct{}
}

// crashError says that a component exited while its cell ran.
type crashError struct {
	name string
	at   time.Time
	how  string
}

func (c *crashError) Error() string {
	return fmt.Sprintf("component %s exited at %s UTC: %s", c.name, c.at.UTC().Format("15:04:05.000"), c.how)
}

// runCell starts the cell's components, runs every profile against them
// and stops them. It returns the cell's final state and message.
func (r *planRun) runCell(c plan.Cell) (state, message string) {
	fmt.Fprintf(r.e.stderr, "perflab: cell %d/%d %s\n", c.Index+1, r.cells, c.Name)
	vars := make([]results.Var, len(c.Vars))
	for i, v := range c.Vars {
		vars[i] = results.Var{Name: v.Name, Value: v.Value}
	}
	if c.Repetition > 0 {
		vars = append(vars, results.Var{Name: results.RepetitionVar, Value: strconv.Itoa(c.Repetition)})
	}
	if err := r.store.AddCell(results.Cell{Index: c.Index, Name: c.Name, Vars: vars}); err != nil {
		r.sink.fail(err)
	}
	state, message = r.cellBody(c)
	if err := r.store.EndCell(c.Index, state, message, time.Now()); err != nil {
		r.sink.fail(err)
	}
	if state != results.StateCompleted {
		fmt.Fprintf(r.e.stderr, "perflab: cell %s %s: %s\n", c.Name, state, message)
	}
	return state, message
}

func (r *planRun) cellBody(c plan.Cell) (string, string) {
	inst, err := r.p.Expand(c, r.b)
	if err != nil {
		return results.StateFailed, err.Error()
	}
	phases, errs := prepareCell(r.p, inst, r.matrix)
	if len(errs) > 0 {
		return results.StateFailed, errors.Join(errs...).Error()
	}
	logDir := r.store.Path(fmt.Sprintf("logs/cell-%d", c.Index))
	comps, startErr := r.startComponents(inst, logDir)
	defer r.stopComponents(c.Index, comps)
	if startErr != nil {
		state := results.StateFailed
		if r.stop.Err() != nil {
			state = results.StateInterrupted
		}
		r.recordComponents(c.Index, comps, nil)
		return state, startErr.Error()
	}
	ctx, crashed := context.WithCancelCause(r.stop)
	defer crashed(nil)
	watchCtx, unwatch := context.WithCancel(context.Background())
	defer unwatch() // before the components are stopped: a stop is no crash
	var promErr error
	if r.prom, promErr = r.startPromSampling(c.Index, comps); promErr != nil {
		r.recordComponents(c.Index, comps, nil)
		return results.StateFailed, promErr.Error()
	}
	sm := r.recordComponents(c.Index, comps, func() { r.watch(watchCtx, c.Index, comps, crashed) })
	run := r.runPhases
	if r.phases != nil {
		run = r.phases
	}
	state, msg := run(ctx, c, phases)
	r.prom.finish() // before the components stop: Prometheus may be one of them
	r.prom = nil
	if sm != nil {
		sm.stop()
	}
	unwatch()
	var crash *crashError
	switch {
	case errors.As(context.Cause(ctx), &crash):
		return results.StateFailed, crash.Error()
	case r.stop.Err() != nil:
		return stopped(r.stop)
	}
	return state, msg
}

// runPhases runs every phase in order until one does not complete.
func (r *planRun) runPhases(ctx context.Context, c plan.Cell, phases []phasePlan) (string, string) {
	state, msg := results.StateCompleted, ""
	for _, pp := range phases {
		if ctx.Err() != nil {
			break
		}
		state, msg = r.runPhase(ctx, c, pp)
		if state != results.StateCompleted {
			break
		}
	}
	return state, msg
}

// startComponents starts or attaches to every component in plan order,
// each ready before the next starts. On error it returns those already
// running, for the caller to stop.
func (r *planRun) startComponents(inst *plan.Instance, logDir string) ([]*running, error) {
	var out []*running
	for _, pc := range inst.Components {
		if r.stop.Err() != nil {
			return out, errors.New("stopped by a signal before every component was ready")
		}
		if pc.Run == nil && pc.Attach == nil { // only read from Prometheus
			out = append(out, &running{plan: pc})
			continue
		}
		if pc.Attach != nil {
			a, err := target.Resolve("", target.Attach{PID: pc.Attach.PID, PIDFile: pc.Attach.PIDFile,
				Process: pc.Attach.Process, Cgroup: pc.Attach.Cgroup})
			if err != nil {
				return out, fmt.Errorf("component %s: %w", pc.Name, err)
			}
			out = append(out, &running{plan: pc, pid: a.PID, cgroup: a.Cgroup})
			continue
		}
		proc, err := target.Start(r.stop, componentSpec(pc, logDir, r.e.scrub))
		if err != nil {
			return out, fmt.Errorf("component %s: %w", pc.Name, err)
		}
		out = append(out, &running{plan: pc, proc: proc, pid: proc.PID(), done: proc.Done()})
		fmt.Fprintf(r.e.stderr, "perflab: started %s (pid %d), waiting until it is ready\n", pc.Name, proc.PID())
		if err := proc.WaitReady(r.stop); err != nil {
			return out, err
		}
	}
	return out, nil
}

// recordComponents adds the cell's components and the generator to the
// store and starts sampling them; then calls started, if any. Without a
// started function (the cell failed before its load) nothing is sampled.
func (r *planRun) recordComponents(cell int, comps []*running, started func()) *sampling {
	interval := r.p.SampleInterval
	obs := []observed{}
	for _, rc := range comps {
		pc := rc.plan
		if r.prom.splits(pc.Name) {
			continue // recorded as its parts, when Prometheus names them
		}
		o := observed{comp: results.Component{Cell: cell, Name: pc.Name, Group: pc.Group, Kind: componentKind(rc), PID: rc.pid,
			MetricsURL: secret.URL(pc.Metrics), DataDirs: pc.DataDirs}}
		if started != nil && pc.Observe != plan.ObservePrometheus {
			o.sources = append(processSources(rc.pid, rc.cgroup), endpointSources(pc.Metrics, pc.MetricNames, pc.DataDirs, interval)...)
		}
		obs = append(obs, o)
	}
	if started == nil {
		for _, o := range obs {
			if err := r.store.AddComponent(o.comp); err != nil {
				r.sink.fail(err)
			}
		}
		return nil
	}
	sm, err := r.e.startSampling(r.store, cell, interval, append(obs, generator(cell)), r.sink)
	if err != nil {
		r.sink.fail(err)
	}
	started()
	return sm
}

// watch reports, once, the first component that exits before ctx ends:
// in the store, on stderr, and as the cause that cancels the cell's load.
func (r *planRun) watch(ctx context.Context, cell int, comps []*running, crashed context.CancelCauseFunc) {
	for _, rc := range comps {
		done := rc.done
		if done == nil && rc.pid == 0 {
			continue // read from Prometheus only: nothing to watch here
		}
		if done == nil {
			done = target.Watch(ctx, rc.pid)
		}
		go func() {
			select {
			case <-ctx.Done():
				return
			case <-done:
			}
			c := &crashError{name: rc.plan.Name, at: time.Now(),
				how: "exited; it was not started by perflab, so its exit status is unknown"}
			if rc.proc != nil {
				x := rc.proc.Exit()
				if x.Stopped {
					return
				}
				c.at, c.how = x.Time, x.String()
				if tail := rc.proc.Tail(5); len(tail) > 0 {
					c.how += "; its last log lines: " + strings.Join(tail, " | ")
				}
			}
			if ctx.Err() != nil {
				return
			}
			if err := r.store.ComponentExited(cell, c.name, c.at, c.how); err != nil {
				r.sink.fail(err)
			}
			fmt.Fprintf(r.e.stderr, "\nperflab: %s\n", c.Error())
			crashed(c)
		}()
	}
}

// stopComponents stops the started components, last started first: SIGTERM,
// then SIGKILL after their stop grace (at once after a second Ctrl-C); and
// records how each ended.
func (r *planRun) stopComponents(cell int, comps []*running) {
	for i := len(comps) - 1; i >= 0; i-- {
		if p := comps[i].proc; p != nil {
			if err := p.Stop(r.kill); err != nil && r.kill.Err() == nil {
				fmt.Fprintf(r.e.stderr, "perflab: warning: cannot stop %s: %v\n", p.Name(), err)
			}
			r.recordStop(cell, comps[i].plan, p.Exit())
		}
	}
}

// recordStop stores how Stop ended a component, if it was still running
// (or left processes behind), and warns when it had to be killed: it may
// not have written out its data.
func (r *planRun) recordStop(cell int, pc plan.Component, x *target.Exit) {
	if x == nil || !x.Stopped && !x.Killed {
		return
	}
	how := x.StopString()
	if x.Killed {
		fmt.Fprintf(r.e.stderr, "perflab: warning: component %s: %s\n", pc.Name, how)
	}
	stop := results.Stop{Time: time.Now(), Grace: pc.Run.StopGrace, Killed: x.Killed, How: how}
	if err := r.store.ComponentStopped(cell, pc.Name, stop); err != nil {
		r.sink.fail(err)
	}
}
