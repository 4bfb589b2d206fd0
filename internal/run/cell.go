package run

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/sut"
)

// running is a component of a cell: started by perflab (proc is set) or
// attached to.
type running struct {
	comp   plan.Component
	proc   *sut.Process
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

// Cell is a cell of the run whose components are up, as a Strategy sees
// it: its phases run against them.
type Cell struct {
	plan.Cell
	r    *runner
	prom *promSampling // reads the cell's Prometheus-observed components after each phase; nil when it has none
}

// Record is the run's store, for a strategy that reads what a phase
// measured.
func (c *Cell) Record() *Record { return c.r.rec }

// Events are the run's.
func (c *Cell) Events() Events { return c.r.events }

// runCell starts the cell's components, runs its phases against them
// and stops them. It returns the cell's final state and message.
func (r *runner) runCell(c plan.Cell) (state, message string) {
	implicit := r.job.Plan.Implicit
	if !implicit {
		r.events.Note(fmt.Sprintf("cell %d/%d %s", c.Index+1, r.cells, c.Name))
		vars := make([]results.Var, len(c.Vars))
		for i, v := range c.Vars {
			vars[i] = results.Var{Name: v.Name, Value: v.Value}
		}
		if c.Repetition > 0 {
			vars = append(vars, results.Var{Name: results.RepetitionVar, Value: strconv.Itoa(c.Repetition)})
		}
		if err := r.rec.Store.AddCell(results.Cell{Index: c.Index, Name: c.Name, Vars: vars}); err != nil {
			r.rec.Fail(err)
		}
	}
	state, message = r.cellBody(c)
	if implicit {
		return state, message
	}
	if err := r.rec.Store.EndCell(c.Index, state, message, time.Now()); err != nil {
		r.rec.Fail(err)
	}
	if state != results.StateCompleted {
		r.events.Note(fmt.Sprintf("cell %s %s: %s", c.Name, state, message))
	}
	return state, message
}

// compile is the cell's components and phases: the plan's, expanded for
// the cell.
func (r *runner) compile(c plan.Cell) ([]plan.Component, []Phase, error) {
	inst, err := r.job.Plan.Expand(c, r.job.Builtins)
	if err != nil {
		return nil, nil, err
	}
	phases, errs := Compile(r.job.Plan, inst, r.matrix)
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return inst.Components, phases, nil
}

func (r *runner) cellBody(c plan.Cell) (string, string) {
	components, phases, err := r.compile(c)
	if err != nil {
		return results.StateFailed, err.Error()
	}
	logDir := r.rec.Store.Path(fmt.Sprintf("logs/cell-%d", c.Index))
	comps, startErr := r.startComponents(components, logDir)
	defer r.stopComponents(c.Index, comps)
	if startErr != nil {
		state := results.StateFailed
		if r.stop.Err() != nil {
			state = results.StateInterrupted
		}
		r.recordComponents(c.Index, comps, nil, nil)
		return state, startErr.Error()
	}
	ctx, crashed := context.WithCancelCause(r.stop)
	defer crashed(nil)
	watchCtx, unwatch := context.WithCancel(context.Background())
	defer unwatch() // before the components are stopped: a stop is no crash
	cell := &Cell{Cell: c, r: r}
	var promErr error
	if cell.prom, promErr = r.startPromSampling(c.Index, comps); promErr != nil {
		r.recordComponents(c.Index, comps, nil, nil)
		return results.StateFailed, promErr.Error()
	}
	sm := r.recordComponents(c.Index, comps, cell.prom, func() { r.watch(watchCtx, c.Index, comps, crashed) })
	state, msg := r.strategy.RunPhases(ctx, cell, phases)
	cell.prom.finish() // before the components stop: Prometheus may be one of them
	if sm != nil {
		sm.stop()
	}
	unwatch()
	var crash *crashError
	switch {
	case errors.As(context.Cause(ctx), &crash):
		return results.StateFailed, crash.Error()
	case r.stop.Err() != nil:
		return Stopped(r.stop)
	}
	return state, msg
}

// startComponents starts or attaches to every component in plan order,
// each ready before the next starts. On error it returns those already
// running, for the caller to stop.
func (r *runner) startComponents(components []plan.Component, logDir string) ([]*running, error) {
	var out []*running
	for _, pc := range components {
		if r.stop.Err() != nil {
			return out, errors.New("stopped by a signal before every component was ready")
		}
		if pc.Run == nil && pc.Attach == nil { // only read from Prometheus
			out = append(out, &running{comp: pc})
			continue
		}
		if pc.Attach != nil {
			a, err := sut.Resolve("", sut.Attach{PID: pc.Attach.PID, PIDFile: pc.Attach.PIDFile,
				Process: pc.Attach.Process, Cgroup: pc.Attach.Cgroup})
			if err != nil {
				return out, fmt.Errorf("component %s: %w", pc.Name, err)
			}
			out = append(out, &running{comp: pc, pid: a.PID, cgroup: a.Cgroup})
			continue
		}
		spec := ComponentSpec(pc, logDir, r.scrub)
		if c, ok := r.job.Confine[pc.Name]; ok {
			spec.Limits, spec.Env = c.Limits, append(spec.Env, c.Env...)
		}
		proc, err := sut.Start(r.stop, spec)
		if err != nil {
			return out, fmt.Errorf("component %s: %w", pc.Name, err)
		}
		out = append(out, &running{comp: pc, proc: proc, pid: proc.PID(), done: proc.Done()})
		r.events.Note(fmt.Sprintf("started %s (pid %d), waiting until it is ready", pc.Name, proc.PID()))
		if err := proc.WaitReady(r.stop); err != nil {
			return out, err
		}
	}
	return out, nil
}

// recordComponents adds the cell's components and the generator to the
// store and starts sampling them; then calls started, if any. Without a
// started function (the cell failed before its load) nothing is sampled.
func (r *runner) recordComponents(cell int, comps []*running, prom *promSampling, started func()) *sampling {
	interval := r.job.SampleEvery
	if interval <= 0 { // a job that samples nothing records no component
		if started != nil {
			started()
		}
		return nil
	}
	obs := []observed{}
	for _, rc := range comps {
		pc := rc.comp
		if prom.splits(pc.Name) {
			continue // recorded as its parts, when Prometheus names them
		}
		o := observed{comp: results.Component{Cell: cell, Name: pc.Name, Group: pc.Group, Kind: componentKind(rc), PID: rc.pid,
			MetricsURL: secret.URL(pc.Metrics), DataDirs: pc.DataDirs}}
		if started != nil && pc.Observe != plan.ObservePrometheus {
			o.sources = append(processSources(rc.pid, rc.cgroup), endpointSources(pc, rc.pid, interval)...)
		}
		obs = append(obs, o)
	}
	if started == nil {
		for _, o := range obs {
			if err := r.rec.Store.AddComponent(o.comp); err != nil {
				r.rec.Fail(err)
			}
		}
		return nil
	}
	sm, err := r.startSampling(cell, interval, append(obs, generator(cell)))
	if err != nil {
		r.rec.Fail(err)
	}
	started()
	return sm
}

// watch reports, once, the first component that exits before ctx ends:
// in the store, on stderr, and as the cause that cancels the cell's load.
func (r *runner) watch(ctx context.Context, cell int, comps []*running, crashed context.CancelCauseFunc) {
	for _, rc := range comps {
		done := rc.done
		if done == nil && rc.pid == 0 {
			continue // read from Prometheus only: nothing to watch here
		}
		if done == nil {
			done = sut.Watch(ctx, rc.pid)
		}
		go func() {
			select {
			case <-ctx.Done():
				return
			case <-done:
			}
			c := &crashError{name: rc.comp.Name, at: time.Now(),
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
			if err := r.rec.Store.ComponentExited(cell, c.name, c.at, c.how); err != nil {
				r.rec.Fail(err)
			}
			r.events.Alert(c.Error())
			crashed(c)
		}()
	}
}

// stopComponents stops the started components, last started first: SIGTERM,
// then SIGKILL after their stop grace (at once after a second Ctrl-C); and
// records how each ended.
func (r *runner) stopComponents(cell int, comps []*running) {
	for i := len(comps) - 1; i >= 0; i-- {
		if p := comps[i].proc; p != nil {
			if err := p.Stop(r.kill); err != nil && r.kill.Err() == nil {
				r.events.Warn(fmt.Sprintf("cannot stop %s: %v", p.Name(), err))
			}
			r.recordStop(cell, comps[i].comp, p.Exit())
			r.recordConfinement(cell, p)
		}
	}
}

// recordStop stores how Stop ended a component, if it was still running
// (or left processes behind), and warns when it had to be killed: it may
// not have written out its data.
func (r *runner) recordStop(cell int, pc plan.Component, x *sut.Exit) {
	if x == nil || !x.Stopped && !x.Killed {
		return
	}
	how := x.StopString()
	if x.Killed {
		r.events.Warn(fmt.Sprintf("component %s: %s", pc.Name, how))
	}
	stop := results.Stop{Time: time.Now(), Grace: pc.Run.StopGrace, Killed: x.Killed, How: how}
	if err := r.rec.Store.ComponentStopped(cell, pc.Name, stop); err != nil {
		r.rec.Fail(err)
	}
}

// recordConfinement stores what the kernel counted of a component held to
// a size's limits, as its samples at its stop.
func (r *runner) recordConfinement(cell int, p *sut.Process) {
	c := p.Confinement()
	if c == nil {
		return
	}
	ev, err := p.Evidence()
	if err != nil {
		r.events.Warn(fmt.Sprintf("component %s: cannot read what its cgroups counted: %v", p.Name(), err))
		return
	}
	l := c.Limits()
	samples := []results.Sample{{Metric: observe.ConfinedCPULimit, Value: l.CPU}, {Metric: observe.ConfinedMemoryLimit, Value: float64(l.Memory)},
		{Metric: observe.ConfinedPeriods, Value: float64(ev.Periods)}, {Metric: observe.ConfinedThrottled, Value: float64(ev.Throttled)},
		{Metric: observe.ConfinedStalledSeconds, Value: ev.Stalled.Seconds()}, {Metric: observe.ConfinedOOMKills, Value: float64(ev.OOMKills)}}
	if ev.MemoryPeak >= 0 {
		samples = append(samples, results.Sample{Metric: observe.ConfinedMemoryPeakBytes, Value: float64(ev.MemoryPeak)})
	}
	if err := r.rec.Store.WriteSamples(cell, time.Now(), map[string][]results.Sample{p.Name(): samples}); err != nil {
		r.rec.Fail(err)
	}
}
