package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/shard"
	"github.com/perflab/perflab/internal/stats"
)

// errAborted is the cause of a worker's load stopped by the coordinator.
var errAborted = errors.New("the coordinator aborted the run")

// phase runs the worker's part of one announced phase and writes its end.
// An error stops the worker (after its end says why).
func (w *Worker) phase(a shard.Announcement) error {
	w.events.Note(fmt.Sprintf("worker %d: phase %d, profile %s of cell %s, from %s", w.index, a.Phase, a.Profile,
		a.CellName, a.StartAt.Format("15:04:05.000")))
	up := shard.NewUploader(w.run, a.Phase, w.index)
	ws, err := w.build(a)
	defer run.CloseDrivers(ws)
	if err != nil {
		return w.finish(up, shard.Detail{Host: w.host}, fmt.Errorf("cannot set up phase %d: %w", a.Phase, err))
	}
	d, err := w.load(a, up, ws)
	return w.finish(up, d, err)
}

// finish writes what is left of the worker's intervals and its end, with
// err as its failure, scrubbed. It returns err, or the store's failure.
func (w *Worker) finish(up *shard.Uploader, d shard.Detail, err error) error {
	var e shard.End
	if err != nil {
		e.Error = w.scrub.String(err.Error())
	}
	d.Scrub(w.scrub)
	detail, jerr := json.Marshal(d)
	if jerr != nil {
		return &run.Failure{Err: fmt.Errorf("cannot encode worker %d's end: %w", w.index, jerr), Code: run.ExitFailed}
	}
	e.Detail = detail
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.kill), shard.StoreTimeout)
	defer cancel()
	if ferr := up.Finish(ctx, e); ferr != nil {
		return &run.Failure{Err: errors.Join(err, ferr), Code: run.ExitFailed,
			Hint: "the worker could not write to the shared store; the coordinator reports its shard lost"}
	}
	switch {
	case err == nil:
		return nil
	case w.stop.Err() != nil:
		return &run.Failure{Err: err, Code: run.ExitInterrupted}
	}
	return &run.Failure{Err: err, Code: run.ExitFailed}
}

// build makes the phase's workloads from the plan, as the coordinator
// made them, with what it resolved of them, each the worker's shard.
func (w *Worker) build(a shard.Announcement) ([]run.Workload, error) {
	vars := make([]plan.Var, len(a.Vars))
	for i, v := range a.Vars {
		vars[i] = plan.Var{Name: v.Name, Value: v.Value}
	}
	inst, err := w.p.Expand(plan.Cell{Index: a.Cell, Name: a.CellName, Vars: vars, Repetition: a.Repetition}, w.b)
	if err != nil {
		return nil, err
	}
	phases, errs := run.Compile(w.p, inst, false)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	i := slices.IndexFunc(phases, func(pp run.Phase) bool { return pp.Profile.Name == a.Profile })
	if i < 0 {
		return nil, fmt.Errorf("the plan has no profile %q", a.Profile)
	}
	ws := slices.Clone(phases[i].Workloads)
	if len(ws) != len(a.Workloads) {
		return nil, fmt.Errorf("the coordinator announced %d workloads of profile %s, the plan has %d", len(a.Workloads), a.Profile, len(ws))
	}
	if err := run.BuildAll(ws); err != nil {
		return ws, err
	}
	for i := range ws {
		if err := w.shardOf(&ws[i], a); err != nil {
			return ws, fmt.Errorf("workload %s: %w", ws[i].Plan.Name, err)
		}
	}
	return ws, nil
}

// shardOf makes pw the worker's shard of the workload: its name in the
// run, the schedule the coordinator resolved, what the coordinator's
// driver handed off, the driver's own split, and the start.
func (w *Worker) shardOf(pw *run.Workload, a shard.Announcement) error {
	res, ok := a.Workloads[pw.Plan.Name]
	if !ok {
		return errors.New("the coordinator did not announce it")
	}
	if err := applyResolved(pw, res); err != nil {
		return err
	}
	if h, ok := pw.Eng.Driver.(driver.Handoff); ok && len(res.Driver) > 0 {
		if err := h.Adopt(res.Driver); err != nil {
			return err
		}
	}
	if s, ok := pw.Eng.Driver.(driver.Sharder); ok {
		if err := s.Shard(w.index, w.n); err != nil {
			return err
		}
	}
	pw.Eng.Name, pw.Desc.Name = res.Name, res.Name
	pw.Eng.StartAt, pw.Eng.Shard = a.StartAt, engine.Shard{Index: w.index, Of: w.n}
	return nil
}

// applyResolved sets a workload's schedule from what the coordinator
// resolved: the rate its driver implied, or the payload size dividing its
// byte rates. Without either, the worker settles it as the coordinator
// would have.
func applyResolved(pw *run.Workload, res shard.Resolved) error {
	switch {
	case res.Rate > 0:
		sw := pw.Plan
		sw.Rate = plan.Rate{PerSecond: res.Rate}
		return run.Schedule(sw, pw.Length, 0, &pw.Eng, &pw.Desc)
	case res.OpBytes > 0:
		return run.Schedule(pw.Plan, pw.Length, res.OpBytes, &pw.Eng, &pw.Desc)
	}
	_, _, err := run.SettleRate(pw)
	return err
}

// load runs the phase's workloads from the announced start, writing their
// intervals to the store every uploadEvery, until their schedule ends,
// the coordinator aborts, a signal comes, or the store fails; then reads
// back and cleans up. The detail says how each workload ended.
func (w *Worker) load(a shard.Announcement, up *shard.Uploader, ws []run.Workload) (shard.Detail, error) {
	stop, cancel := context.WithCancelCause(w.stop)
	defer cancel(nil)
	go w.watchAbort(stop, cancel, a.Phase)
	flushCtx, stopFlush := context.WithCancel(context.Background())
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		if err := up.Every(flushCtx, uploadEvery); err != nil && flushCtx.Err() == nil {
			w.events.Note(fmt.Sprintf("worker %d: stopping: %v", w.index, err))
			cancel(run.Halted(err))
		}
	}()
	me := watchSelf(a.StartAt)
	var lagMu sync.Mutex
	lag := stats.NewHist()
	sink := engine.SinkFunc(func(name string, iv *stats.Interval) {
		scrubInterval(iv, w.scrub)
		lagMu.Lock()
		lag.Merge(iv.Lag)
		lagMu.Unlock()
		up.Interval(name, iv)
	})
	sums, errs := run.RunEngines(stop, w.kill, ws, sink)
	d := shard.Detail{Host: w.host, Self: me.stop(lag.Quantile(0.99))}
	stopFlush()
	<-flushed
	for i, pw := range ws {
		d.Workloads = append(d.Workloads, workloadEnd(pw.Eng.Name, sums[i]))
	}
	state, err := loadOutcome(stop, errs)
	w.afterLoad(&d, ws, state)
	return d, err
}

// loadOutcome is the state of a worker's load and its failure, if any:
// stopped by the coordinator is interrupted, not failed.
func loadOutcome(stop context.Context, errs []error) (string, error) {
	if err := errors.Join(errs...); err != nil {
		return results.StateFailed, err
	}
	cause := context.Cause(stop)
	switch {
	case cause == nil:
		return results.StateCompleted, nil
	case errors.Is(cause, errAborted):
		return results.StateInterrupted, nil
	case run.IsHalted(cause):
		return results.StateFailed, cause
	}
	return results.StateInterrupted, errors.New("stopped by a signal")
}

// watchAbort ends stop with errAborted once the coordinator aborts the
// run or stops the phase.
func (w *Worker) watchAbort(stop context.Context, cancel context.CancelCauseFunc, phase int) {
	t := time.NewTicker(abortPoll)
	defer t.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-t.C:
			_, aborted, err := w.run.Aborted(stop)
			_, stopped, err2 := w.run.PhaseStopped(stop, phase)
			if err == nil && err2 == nil && (aborted || stopped) {
				cancel(errAborted)
				return
			}
		}
	}
}

// afterLoad adds to d each workload's driver facts and read-back, and
// cleans up what the drivers wrote.
func (w *Worker) afterLoad(d *shard.Detail, ws []run.Workload, state string) {
	var wg sync.WaitGroup
	for i, pw := range ws {
		sw := &d.Workloads[i]
		if desc, ok := pw.Eng.Driver.(driver.Describer); ok {
			sw.Facts = desc.Facts()
		}
		v, ok := pw.Eng.Driver.(driver.Verifier)
		switch {
		case !ok:
		case state != results.StateCompleted:
			sw.CheckNote = run.ReadBackSkipped(state)
		case w.n > 1 && isShardVerifier(v):
			rb, err := v.(driver.ShardVerifier).ReadBackState()
			if err != nil {
				sw.Checks = run.SettledChecks(nil, err)
			}
			sw.ReadBack = rb
		default:
			wg.Go(func() { sw.Checks = run.Verify(w.kill, pw, v) })
		}
	}
	wg.Wait()
	w.cleanup(d, ws)
}

func isShardVerifier(v driver.Verifier) bool {
	_, ok := v.(driver.ShardVerifier)
	return ok
}

// cleanup runs each driver's Cleanup, last first, each bounded by
// run.CleanupTimeout and cut short only by a second signal.
func (w *Worker) cleanup(d *shard.Detail, ws []run.Workload) {
	for i := len(ws) - 1; i >= 0; i-- {
		c, ok := ws[i].Eng.Driver.(driver.Cleaner)
		if !ok {
			continue
		}
		if err := run.CleanupOne(w.kill, c, nil); err != nil {
			d.Workloads[i].Cleanup = err.Error()
			w.events.Warn(fmt.Sprintf("worker %d: cannot clean up after workload %s: %s", w.index, ws[i].Eng.Name, d.Workloads[i].Cleanup))
		}
	}
}

// scrubInterval takes the plan's credentials out of an interval's operation
// names and error messages before it leaves the worker: a server may echo
// a token in an error, a URL may hold one.
func scrubInterval(iv *stats.Interval, s *secret.Scrubber) {
	for name, op := range iv.Ops {
		for c, msg := range op.Samples {
			op.Samples[c] = s.String(msg)
		}
		if clean := s.String(name); clean != name {
			delete(iv.Ops, name)
			if o := iv.Ops[clean]; o != nil {
				o.Merge(op)
			} else {
				iv.Ops[clean] = op
			}
		}
	}
}

// workloadEnd is how the engine says a workload of the worker ended, as
// the worker reports it.
func workloadEnd(name string, s engine.Summary) shard.WorkloadEnd {
	return shard.WorkloadEnd{Name: name, Start: s.Start, LoadEnd: s.LoadEnd, End: s.End, Scheduled: s.Scheduled,
		Dropped: s.Dropped, Unissued: s.Unissued, MaxVUs: s.MaxVUs, Interrupted: s.Interrupted,
		WindowStart: s.Window.Start, WindowEnd: s.Window.End, WindowRule: s.Window.Rule}
}
