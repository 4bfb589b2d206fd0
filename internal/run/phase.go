package run

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
)

// PhaseRun is a phase of a cell as its Load sees it: its drivers built
// and prepared, its load to be made and recorded.
type PhaseRun struct {
	Cell plan.Cell
	Phase
	r    *runner
	prom *promSampling
}

// Record is the run's store.
func (p *PhaseRun) Record() *Record { return p.r.rec }

// Events are the run's.
func (p *PhaseRun) Events() Events { return p.r.events }

// Stop ends with the run's load (an interrupt, or the store failed); the
// context a Load is given also ends when a component crashed.
func (p *PhaseRun) Stop() context.Context { return p.r.stop }

// Kill ends with a second interrupt: in-flight operations end at once.
func (p *PhaseRun) Kill() context.Context { return p.r.kill }

// Plan is the plan the run runs.
func (p *PhaseRun) Plan() *plan.Plan { return p.r.job.Plan }

// Interval records a workload's interval as it closes and shows it.
func (p *PhaseRun) Interval(workload string, iv *stats.Interval) {
	p.r.rec.Interval(workload, iv)
	if p.r.exp != nil {
		p.r.exp.Interval(p.exportWorkload(workload), iv)
	}
	p.r.events.LoadInterval(workload, iv)
}

// EndWorkload records how a workload's load ended, with its window.
func (p *PhaseRun) EndWorkload(name string, sum engine.Summary) {
	if err := p.r.rec.Store.EndWorkload(name, EndOf(sum, p.Profile.Warmup, p.warmupBy())); err != nil {
		p.r.rec.Fail(err)
	}
	if p.r.exp != nil && !sum.Start.IsZero() {
		p.r.exp.WorkloadEnd(p.exportWorkload(name), sum.Start, sum.LoadEnd, sum.Unissued)
	}
}

// warmupBy says who set the profile's warm-up, in the window's rule: the
// user, with perflab http's --warmup, or the plan.
func (p *PhaseRun) warmupBy() string {
	if p.Profile.Pos("warmup").Flag != "" {
		return "the user"
	}
	return "the plan"
}

// rate is the target rate the progress line shows: only when the phase
// has one workload.
func (p *PhaseRun) rate() float64 {
	if len(p.Workloads) == 1 {
		return p.Workloads[0].Desc.Rate
	}
	return 0
}

// RunPhase runs one phase of the cell: every workload at once, each in
// its goroutine, until the profile's schedule ends or ctx is cancelled
// (Ctrl-C, or a component crashed: ctx's cause says which). It records
// the phase with its steady-state window and returns its state.
func (c *Cell) RunPhase(ctx context.Context, ph Phase) (string, string) {
	r, pr := c.r, ph.Profile
	implicit := r.job.Plan.Implicit
	if !implicit {
		r.events.Note(fmt.Sprintf("profile %s (%v, %s)", pr.Name, pr.Duration, Plural(len(ph.Workloads), "workload")))
		if err := r.rec.Store.AddPhase(results.Phase{Cell: c.Index, Profile: pr.Name, Start: time.Now(), Warmup: pr.Warmup}); err != nil {
			r.rec.Fail(err)
		}
	}
	p := &PhaseRun{Cell: c.Cell, Phase: ph, r: r, prom: c.prom}
	var runErr error
	p.Workloads, runErr = r.buildDrivers(ph)
	defer CloseDrivers(p.Workloads)
	defer r.cleanup(p.Workloads) // after the read-back, before the drivers close
	var sums []engine.Summary
	if runErr == nil {
		if runErr = r.prepare(ctx, p.Workloads); runErr == nil {
			sums, runErr = r.load.Run(ctx, p)
		}
		r.load.Facts(p)
	}
	state, msg := results.StateCompleted, ""
	var crash *crashError
	switch {
	case errors.As(context.Cause(ctx), &crash):
		state, msg = results.StateFailed, crash.Error()
	case r.stop.Err() != nil:
		state, msg = Stopped(r.stop)
	case runErr != nil:
		state, msg = results.StateFailed, runErr.Error()
	}
	if sums != nil { // the load ran
		r.load.ReadBack(ctx, p, state)
	}
	if !implicit {
		p.end(sums, state, msg)
	}
	return state, msg
}

// CloseDrivers closes the drivers of ws that were built.
func CloseDrivers(ws []Workload) {
	for _, w := range ws {
		if c, ok := w.Eng.Driver.(driver.Closer); ok {
			c.Close()
		}
	}
}

// localLoad is the load made by this process's engines.
type localLoad struct{}

var _ Load = localLoad{}

func (localLoad) Open(context.Context, *Record, *plan.Plan) error { return nil }
func (localLoad) Broken() string                                  { return "" }
func (localLoad) Close(bool, bool)                                {}

// Run runs the phase's workloads concurrently and records how each ended.
func (localLoad) Run(ctx context.Context, p *PhaseRun) ([]engine.Summary, error) {
	p.r.events.LoadBegin(p.Profile.Name, p.Profile.Duration, p.rate())
	sums, errs := RunEngines(ctx, p.r.kill, p.Workloads, engine.SinkFunc(p.Interval))
	p.r.events.LoadEnd()
	for i, w := range p.Workloads {
		if errs[i] == nil {
			p.EndWorkload(w.Eng.Name, sums[i])
		}
	}
	return sums, errors.Join(errs...)
}

// Facts records what each workload's driver tells about it, once its
// load has ended.
func (localLoad) Facts(p *PhaseRun) {
	for _, w := range p.Workloads {
		if d, ok := w.Eng.Driver.(driver.Describer); ok {
			p.r.rec.Facts(w.Desc.Name, d.Facts())
		}
	}
}

// ReadBack runs Verify of every workload whose driver has one (readBack).
func (localLoad) ReadBack(ctx context.Context, p *PhaseRun, state string) {
	p.r.readBack(ctx, p.Workloads, state)
}

// RunEngines runs ws concurrently into sink until their schedules end or
// stop does; kill ends in-flight operations at once.
func RunEngines(stop, kill context.Context, ws []Workload, sink engine.Sink) ([]engine.Summary, []error) {
	files := openFilesReserve
	for _, w := range ws {
		files += w.Eng.MaxVUs()
	}
	ReserveFiles(files)
	sums := make([]engine.Summary, len(ws))
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i := range ws {
		wg.Go(func() { sums[i], errs[i] = engine.Run(stop, kill, ws[i].Eng, sink) })
	}
	wg.Wait()
	return sums, errs
}

// EndOf is how a workload ended, with its window: the engine's, or from the
// end of a warm-up set by whom (the user, the plan) to the end of load.
func EndOf(sum engine.Summary, warmup time.Duration, by string) results.WorkloadEnd {
	w := sum.Window
	if warmup > 0 {
		w = engine.Window{Start: sum.Start.Add(warmup), End: sum.LoadEnd, Rule: fmt.Sprintf("warm-up of %v set by %s, to the end of load", warmup, by)}
	}
	return results.WorkloadEnd{Start: sum.Start, LoadEnd: sum.LoadEnd, End: sum.End, Scheduled: sum.Scheduled,
		Dropped: sum.Dropped, Unissued: sum.Unissued, MaxVUs: sum.MaxVUs, Interrupted: sum.Interrupted,
		WindowStart: w.Start, WindowEnd: w.End, WindowRule: w.Rule}
}

// end records the phase's end and its steady-state window.
func (p *PhaseRun) end(sums []engine.Summary, state, msg string) {
	pr := p.Profile
	row := results.Phase{Cell: p.Cell.Index, Profile: pr.Name, State: state, Message: msg, LoadEnd: time.Now()}
	w, ok := PhaseWindow(pr.Warmup, sums)
	if ok {
		row.LoadEnd, row.WindowStart, row.WindowEnd, row.WindowRule = w.LoadEnd, w.Start, w.End, w.Rule
	}
	if err := p.r.rec.Store.EndPhase(row); err != nil {
		p.r.rec.Fail(err)
	}
	if ok && w.End.After(w.Start) {
		p.prom.phaseEnded(pr.Name, w.Start, w.End)
	}
}

type Window struct {
	engine.Window
	LoadEnd time.Time
}

// PhaseWindow is the window a phase's resource figures are taken over:
// from the end of the plan's warm-up, counted from the moment the load
// started (after the drivers' preparation; in a distributed run, the
// announced instant), or without one from the moment every workload was
// in its steady state, to the moment the first left it.
func PhaseWindow(warmup time.Duration, sums []engine.Summary) (Window, bool) {
	var w Window
	var start time.Time
	for _, s := range sums {
		if s.Start.IsZero() {
			continue
		}
		if start.IsZero() || s.Start.Before(start) {
			start = s.Start
		}
		if s.LoadEnd.After(w.LoadEnd) {
			w.LoadEnd = s.LoadEnd
		}
		if w.Start.IsZero() || s.Window.Start.After(w.Start) {
			w.Start = s.Window.Start
		}
		if w.End.IsZero() || s.Window.End.Before(w.End) {
			w.End = s.Window.End
		}
	}
	if w.LoadEnd.IsZero() {
		return w, false
	}
	w.Rule = "from the moment every workload was in its steady state to the moment the first one left it"
	if len(sums) == 1 {
		w.Rule = "the workload's steady-state window: " + sums[0].Window.Rule
	}
	if warmup > 0 {
		w.Start, w.End = start.Add(warmup), w.LoadEnd
		w.Rule = fmt.Sprintf("warm-up of %v set by the plan, to the end of the load", warmup)
	}
	return w, true
}
