package cli

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
	"github.com/perflab/perflab/internal/secret"
	"github.com/perflab/perflab/internal/shard"
	"github.com/perflab/perflab/internal/stats"
)

// storeTimeout bounds a worker's last writes: its remaining intervals and
// its end.
const storeTimeout = 30 * time.Second

// errAborted is the cause of a worker's load stopped by the coordinator.
var errAborted = errors.New("the coordinator aborted the run")

// phase runs the worker's part of one announced phase and writes its end.
// An error stops the worker (after its end says why).
func (w *worker) phase(a shard.Announcement) error {
	fmt.Fprintf(w.e.stderr, "perflab: worker %d: phase %d, profile %s of cell %s, from %s\n", w.index, a.Phase, a.Profile,
		a.CellName, a.StartAt.Format("15:04:05.000"))
	up := shard.NewUploader(w.run, a.Phase, w.index)
	ws, err := w.build(a)
	defer closeDrivers(ws)
	if err != nil {
		return w.finish(up, shardDetail{Host: w.host}, fmt.Errorf("cannot set up phase %d: %w", a.Phase, err))
	}
	d, err := w.load(a, up, ws)
	return w.finish(up, d, err)
}

// finish writes what is left of the worker's intervals and its end, with
// err as its failure, scrubbed. It returns err, or the store's failure.
func (w *worker) finish(up *shard.Uploader, d shardDetail, err error) error {
	var e shard.End
	if err != nil {
		e.Error = w.scrub.String(err.Error())
	}
	d.scrub(w.scrub)
	detail, jerr := json.Marshal(d)
	if jerr != nil {
		return &runError{err: fmt.Errorf("cannot encode worker %d's end: %w", w.index, jerr), code: ExitFailed}
	}
	e.Detail = detail
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.kill), storeTimeout)
	defer cancel()
	if ferr := up.Finish(ctx, e); ferr != nil {
		return &runError{err: errors.Join(err, ferr), code: ExitFailed,
			hint: "the worker could not write to the shared store; the coordinator reports its shard lost"}
	}
	switch {
	case err == nil:
		return nil
	case w.stop.Err() != nil:
		return &runError{err: err, code: ExitInterrupted}
	}
	return &runError{err: err, code: ExitFailed}
}

// build makes the phase's workloads from the plan, as the coordinator
// made them, with what it resolved of them, each the worker's shard.
func (w *worker) build(a shard.Announcement) ([]phaseWorkload, error) {
	vars := make([]plan.Var, len(a.Vars))
	for i, v := range a.Vars {
		vars[i] = plan.Var{Name: v.Name, Value: v.Value}
	}
	inst, err := w.p.Expand(plan.Cell{Index: a.Cell, Name: a.CellName, Vars: vars, Repetition: a.Repetition}, w.b)
	if err != nil {
		return nil, err
	}
	phases, errs := prepareCell(w.p, inst, false)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	i := slices.IndexFunc(phases, func(pp phasePlan) bool { return pp.profile.Name == a.Profile })
	if i < 0 {
		return nil, fmt.Errorf("the plan has no profile %q", a.Profile)
	}
	ws := slices.Clone(phases[i].workloads)
	if len(ws) != len(a.Workloads) {
		return nil, fmt.Errorf("the coordinator announced %d workloads of profile %s, the plan has %d", len(a.Workloads), a.Profile, len(ws))
	}
	if err := buildAll(ws); err != nil {
		return ws, err
	}
	for i := range ws {
		if err := w.shardOf(&ws[i], a); err != nil {
			return ws, fmt.Errorf("workload %s: %w", ws[i].plan.Name, err)
		}
	}
	return ws, nil
}

// shardOf makes pw the worker's shard of the workload: its name in the
// run, the schedule the coordinator resolved, what the coordinator's
// driver handed off, the driver's own split, and the start.
func (w *worker) shardOf(pw *phaseWorkload, a shard.Announcement) error {
	res, ok := a.Workloads[pw.plan.Name]
	if !ok {
		return errors.New("the coordinator did not announce it")
	}
	if err := applyResolved(pw, res); err != nil {
		return err
	}
	if h, ok := pw.eng.Driver.(driver.Handoff); ok && len(res.Driver) > 0 {
		if err := h.Adopt(res.Driver); err != nil {
			return err
		}
	}
	if s, ok := pw.eng.Driver.(driver.Sharder); ok {
		if err := s.Shard(w.index, w.n); err != nil {
			return err
		}
	}
	pw.eng.Name, pw.desc.Name = res.Name, res.Name
	pw.eng.StartAt, pw.eng.Shard = a.StartAt, engine.Shard{Index: w.index, Of: w.n}
	return nil
}

// applyResolved sets a workload's schedule from what the coordinator
// resolved: the rate its driver implied, or the payload size dividing its
// byte rates. Without either, the worker settles it as the coordinator
// would have.
func applyResolved(pw *phaseWorkload, res shard.Resolved) error {
	switch {
	case res.Rate > 0:
		sw := pw.plan
		sw.Rate = plan.Rate{PerSecond: res.Rate}
		return schedule(sw, pw.length, 0, &pw.eng, &pw.desc)
	case res.OpBytes > 0:
		return schedule(pw.plan, pw.length, res.OpBytes, &pw.eng, &pw.desc)
	}
	_, _, err := settleRate(pw)
	return err
}

// load runs the phase's workloads from the announced start, writing their
// intervals to the store every uploadEvery, until their schedule ends,
// the coordinator aborts, a signal comes, or the store fails; then reads
// back and cleans up. The detail says how each workload ended.
func (w *worker) load(a shard.Announcement, up *shard.Uploader, ws []phaseWorkload) (shardDetail, error) {
	stop, cancel := context.WithCancelCause(w.stop)
	defer cancel(nil)
	go w.watchAbort(stop, cancel, a.Phase)
	flushCtx, stopFlush := context.WithCancel(context.Background())
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		if err := up.Every(flushCtx, uploadEvery); err != nil && flushCtx.Err() == nil {
			fmt.Fprintf(w.e.stderr, "perflab: worker %d: stopping: %v\n", w.index, err)
			cancel(&storeHalted{err: err})
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
	sums, errs := runEngines(stop, w.kill, ws, sink)
	d := shardDetail{Host: w.host, Self: me.stop(lag.Quantile(0.99))}
	stopFlush()
	<-flushed
	for i, pw := range ws {
		d.Workloads = append(d.Workloads, shardWorkloadOf(pw.eng.Name, sums[i]))
	}
	state, err := loadOutcome(stop, errs)
	w.afterLoad(&d, ws, state)
	return d, err
}

// runEngines runs ws concurrently into sink until their schedules end or
// stop does.
func runEngines(stop, kill context.Context, ws []phaseWorkload, sink engine.Sink) ([]engine.Summary, []error) {
	sums := make([]engine.Summary, len(ws))
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i := range ws {
		wg.Go(func() { sums[i], errs[i] = engine.Run(stop, kill, ws[i].eng, sink) })
	}
	wg.Wait()
	return sums, errs
}

// loadOutcome is the state of a worker's load and its failure, if any:
// stopped by the coordinator is interrupted, not failed.
func loadOutcome(stop context.Context, errs []error) (string, error) {
	if err := errors.Join(errs...); err != nil {
		return results.StateFailed, err
	}
	cause := context.Cause(stop)
	var h *storeHalted
	switch {
	case cause == nil:
		return results.StateCompleted, nil
	case errors.Is(cause, errAborted):
		return results.StateInterrupted, nil
	case errors.As(cause, &h):
		return results.StateFailed, h
	}
	return results.StateInterrupted, errors.New("stopped by a signal")
}

// watchAbort ends stop with errAborted once the coordinator aborts the
// run or stops the phase.
func (w *worker) watchAbort(stop context.Context, cancel context.CancelCauseFunc, phase int) {
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
func (w *worker) afterLoad(d *shardDetail, ws []phaseWorkload, state string) {
	var wg sync.WaitGroup
	for i, pw := range ws {
		sw := &d.Workloads[i]
		if desc, ok := pw.eng.Driver.(driver.Describer); ok {
			sw.Facts = factsToWire(desc.Facts())
		}
		v, ok := pw.eng.Driver.(driver.Verifier)
		switch {
		case !ok:
		case state != results.StateCompleted:
			sw.CheckNote = readBackSkipped(state)
		case w.n > 1 && isShardVerifier(v):
			rb, err := v.(driver.ShardVerifier).ReadBackState()
			if err != nil {
				sw.Checks = checksToWire(settledChecks(nil, err))
			}
			sw.ReadBack = rb
		default:
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(w.kill, verifyTimeout+pw.spec.verifyWait)
				defer cancel()
				checks, err := v.Verify(ctx)
				sw.Checks = checksToWire(settledChecks(checks, err))
			})
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
// cleanupTimeout and cut short only by a second signal.
func (w *worker) cleanup(d *shardDetail, ws []phaseWorkload) {
	for i := len(ws) - 1; i >= 0; i-- {
		c, ok := ws[i].eng.Driver.(driver.Cleaner)
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(w.kill, cleanupTimeout)
		err := c.Cleanup(ctx, nil)
		cancel()
		if err != nil {
			d.Workloads[i].Cleanup = err.Error()
			fmt.Fprintf(w.e.stderr, "perflab: worker %d: warning: cannot clean up after workload %s: %s\n", w.index, ws[i].eng.Name, d.Workloads[i].Cleanup)
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
