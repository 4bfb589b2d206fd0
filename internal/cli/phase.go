package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
)

// runPhase runs one profile in a cell: every workload at once, each in its
// goroutine, until the profile's schedule ends or ctx is cancelled (Ctrl-C,
// or a component crashed: ctx's cause says which). It records the phase
// with its steady-state window and returns its state.
func (r *planRun) runPhase(ctx context.Context, c plan.Cell, pp phasePlan) (string, string) {
	pr := pp.profile
	fmt.Fprintf(r.e.stderr, "perflab: profile %s (%v, %s)\n", pr.Name, pr.Duration, plural(len(pp.workloads), "workload"))
	start := time.Now()
	if err := r.store.AddPhase(results.Phase{Cell: c.Index, Profile: pr.Name, Start: start, Warmup: pr.Warmup}); err != nil {
		r.sink.fail(err)
	}
	ws, runErr := r.buildDrivers(pp)
	defer closeDrivers(ws)
	defer r.cleanup(ws) // after the read-back, before the drivers close
	var sums []engine.Summary
	if runErr == nil {
		runErr = r.prepare(ctx, ws)
		switch {
		case runErr == nil && r.dist != nil:
			sums, runErr = r.runShards(ctx, c, pr, ws)
		case runErr == nil:
			sums, runErr = r.runWorkloads(ctx, pr, ws)
		}
		if r.dist == nil { // a distributed run's facts are the workers', with their ends
			r.recordFacts(ws)
		}
	}
	state, msg := results.StateCompleted, ""
	var crash *crashError
	switch {
	case errors.As(context.Cause(ctx), &crash):
		state, msg = results.StateFailed, crash.Error()
	case r.stop.Err() != nil:
		state, msg = stopped(r.stop)
	case runErr != nil:
		state, msg = results.StateFailed, runErr.Error()
	}
	switch {
	case sums != nil && r.dist != nil: // the workers' load ran
		r.shardChecks(ctx, ws, state)
	case sums != nil: // the load ran
		r.readBack(ctx, ws, state)
	}
	r.endPhase(c, pr, sums, state, msg)
	return state, msg
}

func closeDrivers(ws []phaseWorkload) {
	for _, w := range ws {
		if c, ok := w.eng.Driver.(driver.Closer); ok {
			c.Close()
		}
	}
}

// runWorkloads runs ws concurrently and records how each ended.
func (r *planRun) runWorkloads(ctx context.Context, pr plan.Profile, ws []phaseWorkload) ([]engine.Summary, error) {
	rate := 0.0 // a target rate on the progress line only when it is one workload's
	if len(ws) == 1 {
		rate = ws[0].desc.Rate
	}
	r.progress.Begin(pr.Name, pr.Duration, rate)
	sink := engine.SinkFunc(func(name string, iv *stats.Interval) {
		r.sink.Interval(name, iv)
		r.progress.Interval(name, iv)
	})
	sums, errs := runEngines(ctx, r.kill, ws, sink)
	r.progress.End()
	for i, w := range ws {
		if errs[i] != nil {
			continue
		}
		if err := r.store.EndWorkload(w.eng.Name, endOf(sums[i], pr.Warmup, "the plan")); err != nil {
			r.sink.fail(err)
		}
	}
	return sums, errors.Join(errs...)
}

// endPhase records the phase's end and its steady-state window.
func (r *planRun) endPhase(c plan.Cell, pr plan.Profile, sums []engine.Summary, state, msg string) {
	p := results.Phase{Cell: c.Index, Profile: pr.Name, State: state, Message: msg, LoadEnd: time.Now()}
	w, ok := phaseWindow(pr.Warmup, sums)
	if ok {
		p.LoadEnd, p.WindowStart, p.WindowEnd, p.WindowRule = w.loadEnd, w.Start, w.End, w.Rule
	}
	if err := r.store.EndPhase(p); err != nil {
		r.sink.fail(err)
	}
	if ok && w.End.After(w.Start) {
		r.prom.phaseEnded(pr.Name, w.Start, w.End)
	}
}

type window struct {
	engine.Window
	loadEnd time.Time
}

// phaseWindow is the window a phase's resource figures are taken over:
// from the end of the plan's warm-up, counted from the moment the load
// started (after the drivers' preparation; in a distributed run, the
// announced instant), or without one from the moment every workload was
// in its steady state, to the moment the first left it.
func phaseWindow(warmup time.Duration, sums []engine.Summary) (window, bool) {
	var w window
	var start time.Time
	for _, s := range sums {
		if s.Start.IsZero() {
			continue
		}
		if start.IsZero() || s.Start.Before(start) {
			start = s.Start
		}
		if s.LoadEnd.After(w.loadEnd) {
			w.loadEnd = s.LoadEnd
		}
		if w.Start.IsZero() || s.Window.Start.After(w.Start) {
			w.Start = s.Window.Start
		}
		if w.End.IsZero() || s.Window.End.Before(w.End) {
			w.End = s.Window.End
		}
	}
	if w.loadEnd.IsZero() {
		return w, false
	}
	w.Rule = "from the moment every workload was in its steady state to the moment the first one left it"
	if len(sums) == 1 {
		w.Rule = "the workload's steady-state window: " + sums[0].Window.Rule
	}
	if warmup > 0 {
		w.Start, w.End = start.Add(warmup), w.loadEnd
		w.Rule = fmt.Sprintf("warm-up of %v set by the plan, to the end of the load", warmup)
	}
	return w, true
}

// plural is "1 workload", "2 workloads".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
