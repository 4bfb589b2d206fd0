package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/shard"
)

// Run makes a phase's load with the workers: it announces the phase
// to the workers, merges their intervals into the run store as they
// arrive (with the progress line), and records how each workload and each
// worker ended. A worker that failed, or never ended, fails the phase,
// naming it; what the others measured is kept.
func (d *Coordinator) Run(ctx context.Context, ph *run.PhaseRun) ([]engine.Summary, error) {
	if d.broken != "" {
		return nil, fmt.Errorf("no phase runs after a failed worker: %s", d.broken)
	}
	pr, ws := ph.Profile, ph.Workloads
	a := announcement(d.phase, ph.Cell, pr, ws, time.Now().Add(startMargin))
	if err := d.run.Announce(ctx, a); err != nil {
		return nil, fmt.Errorf("cannot announce the phase to the workers: %w", err)
	}
	d.phase++
	rate := 0.0
	if len(ws) == 1 {
		rate = ws[0].Desc.Rate
	}
	ph.Events().LoadBegin(pr.Name, pr.Duration, rate)
	ps := newPhaseShards(d.n, a.StartAt, d.hellos)
	d.last = ps
	d.follow(ctx, ph, a, ps, phaseDeadline(a.StartAt, pr, ws))
	d.explain(ps)
	ph.Events().LoadEnd()
	sums := make([]engine.Summary, len(ws))
	for i, w := range ws {
		s, ok := ps.summary(w.Desc.Name, w.Desc.Model == results.ModelClosed)
		if !ok {
			continue
		}
		sums[i] = s
		ph.EndWorkload(w.Desc.Name, s)
		ph.Record().Facts(w.Desc.Name, ps.facts(w.Desc.Name))
	}
	for _, row := range ps.rows(ph.Cell.Index, pr.Name) {
		if err := ph.Record().Store.AddShard(row); err != nil {
			ph.Record().Fail(err)
		}
	}
	if failed := ps.failed(); len(failed) > 0 {
		d.broken = strings.Join(failed, "; ")
		if d.storeErr != nil { // what failed the workers, most likely: say it first
			d.broken = fmt.Sprintf("the shared store %s has failed since %s UTC (%v); the workers stopped: %s",
				d.run.Store.Where(), d.storeSince.UTC().Format("15:04:05"), d.storeErr, d.broken)
		}
		return sums, errors.New(d.broken)
	}
	return sums, nil
}

// refresher is a Launcher that can look at its workers at once, rather
// than at its next poll.
type refresher interface{ Refresh(ctx context.Context) }

// explain adds to each failed worker's reason what a launcher that
// watches more than processes knows of it (its pod was OOMKilled, deleted,
// stopped at the Job's deadline): a worker stopped by a signal knows only
// that.
func (d *Coordinator) explain(ps *phaseShards) {
	r, ok := d.opts.Launch.(refresher)
	if !ok || len(ps.failed()) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shard.StoreTimeout)
	r.Refresh(ctx)
	cancel()
	for w, why := range d.opts.Launch.Failed() {
		ps.explain(w, why)
	}
}

// storeFailing keeps the error of the coordinator's last read of the
// shared store, and since when it has failed; a read that succeeds clears
// them.
func (d *Coordinator) storeFailing(err error) {
	switch {
	case err == nil:
		d.storeErr = nil
	case d.storeErr == nil:
		d.storeErr, d.storeSince = err, time.Now()
	default:
		d.storeErr = err
	}
}

// Facts records nothing: a distributed run's facts are the workers', with
// their ends (Run).
func (d *Coordinator) Facts(*run.PhaseRun) {}

// announcement is phase k of the run: the cell, the profile, the start,
// and per workload what the coordinator resolved of it.
func announcement(k int, c plan.Cell, pr plan.Profile, ws []run.Workload, start time.Time) shard.Announcement {
	a := shard.Announcement{Phase: k, Cell: c.Index, CellName: c.Name, Repetition: c.Repetition, Profile: pr.Name,
		Warmup: pr.Warmup, StartAt: start, Workloads: map[string]shard.Resolved{}}
	for _, v := range c.Vars {
		a.Vars = append(a.Vars, shard.Var{Name: v.Name, Value: v.Value})
	}
	for _, w := range ws {
		res := w.Resolved
		res.Name = w.Desc.Name
		res.Detail, _ = json.Marshal(w.Desc) // for perflab merge; a results.Workload always encodes
		if h, ok := w.Eng.Driver.(driver.Handoff); ok {
			res.Driver = h.Handoff()
		}
		a.Workloads[w.Plan.Name] = res
	}
	return a
}

// phaseDeadline is when a worker that has not ended is given up: the
// load, its grace, the read-back and cleanup bounds of its drivers, and
// the margins of the start and of the last writes.
func phaseDeadline(start time.Time, pr plan.Profile, ws []run.Workload) time.Time {
	var grace, verify, clean time.Duration
	for _, w := range ws {
		grace = max(grace, w.Eng.Grace)
		if _, ok := w.Eng.Driver.(driver.Verifier); ok {
			verify = max(verify, run.VerifyTimeout+w.Spec.VerifyWait)
		}
		if _, ok := w.Eng.Driver.(driver.Cleaner); ok {
			clean += run.CleanupTimeout
		}
	}
	length := pr.Duration
	for _, w := range ws {
		length = max(length, w.Eng.Duration())
	}
	return start.Add(length + grace + verify + clean + shard.StoreTimeout + startMargin)
}

// follow reads the workers' parts and ends until every worker ended,
// failed or was given up, merging interval k of every worker into the
// run's interval k as soon as all have delivered it. An interrupt (or a
// crashed component) stops the workers: the run is aborted, or the phase
// stopped, and they get their grace and abortGrace to end.
func (d *Coordinator) follow(ctx context.Context, ph *run.PhaseRun, a shard.Announcement, ps *phaseShards, deadline time.Time) {
	f := shard.NewFollower(d.run, a.Phase, d.n)
	m := shard.NewMerger(d.n)
	t := time.NewTicker(followPoll)
	defer t.Stop()
	stopped, lastErr := false, error(nil)
	for {
		failed := d.opts.Launch.Failed() // before the poll: what a worker wrote before it died is read
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shard.StoreTimeout)
		got, ended, err := f.Poll(pctx)
		cancel()
		if err != nil && (lastErr == nil || err.Error() != lastErr.Error()) {
			ph.Events().Alert(fmt.Sprintf("warning: cannot read the workers' shards: %v", err))
		}
		d.storeFailing(err)
		lastErr = err
		for w, ivs := range got {
			ps.count(w, ivs)
			m.Add(w, ivs)
		}
		for _, w := range ended {
			ps.end(w, f.Ends()[w])
			m.End(w)
		}
		d.giveUp(ph, ps, m, results.ShardFailed, func(w int) string { return failed[w] })
		mergeReady(ph, m.Ready())
		if allEnded(ps) {
			break
		}
		if !stopped && ctx.Err() != nil {
			stopped = true
			deadline = d.stopWorkers(ctx, ph, a, deadline)
		}
		if time.Now().After(deadline) {
			lost := fmt.Sprintf("never wrote its end (%s parts read)", partsRead(f))
			d.giveUp(ph, ps, m, results.ShardLost, func(int) string { return lost })
			break
		}
		select {
		case <-t.C:
		case <-ph.Kill().Done():
			d.giveUp(ph, ps, m, results.ShardLost, func(int) string { return "not waited for: stopped at once by a second interrupt" })
		}
	}
	mergeReady(ph, m.Rest())
	warnSkew(ph, ps, a.StartAt)
}

// giveUp gives up the workers that have not ended and for which why
// gives a reason: each is marked state (failed, lost) with it.
func (d *Coordinator) giveUp(ph *run.PhaseRun, ps *phaseShards, m *shard.Merger, state string, why func(w int) string) {
	for w := range ps.state {
		reason := why(w)
		if ps.ended(w) || reason == "" {
			continue
		}
		ps.fail(w, state, reason)
		m.End(w)
		ph.Events().Alert(fmt.Sprintf("%s %s: %s", ps.name(w), state, reason))
	}
}

func allEnded(ps *phaseShards) bool {
	for w := range ps.state {
		if !ps.ended(w) {
			return false
		}
	}
	return true
}

func partsRead(f *shard.Follower) string {
	var parts []string
	for _, n := range f.Parts() {
		parts = append(parts, fmt.Sprint(n))
	}
	return strings.Join(parts, "/")
}

// stopWorkers tells the workers to stop: the whole run on an interrupt
// or a failed run store (they exit after this phase), saying which; this
// phase alone when a component crashed (the next cell may run). It
// returns how long they get.
func (d *Coordinator) stopWorkers(ctx context.Context, ph *run.PhaseRun, a shard.Announcement, deadline time.Time) time.Time {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shard.StoreTimeout)
	defer cancel()
	var err error
	if ph.Stop().Err() != nil {
		_, why := run.Stopped(ph.Stop())
		err = d.run.PutAbort(wctx, why)
	} else {
		err = d.run.StopPhase(wctx, a.Phase, run.OneLine(fmt.Sprint(context.Cause(ctx))))
	}
	if err != nil {
		ph.Events().Alert(fmt.Sprintf("warning: cannot tell the workers to stop: %v", err))
	}
	if by := time.Now().Add(maxGrace(ph.Plan()) + abortGrace); by.Before(deadline) {
		return by
	}
	return deadline
}

// maxGrace is the longest grace of p's workloads.
func maxGrace(p *plan.Plan) time.Duration {
	var g time.Duration
	for _, pr := range p.Profiles {
		for _, w := range pr.Workloads {
			g = max(g, w.Grace)
		}
	}
	return g
}

// mergeReady writes merged intervals to the run store and the progress line.
func mergeReady(ph *run.PhaseRun, ivs []shard.WorkloadInterval) {
	for _, iv := range ivs {
		ph.Interval(iv.Workload, iv.Interval)
	}
}

// warnSkew warns of a worker whose load started more than skewWarning
// away from the announced start: its clock, or its wake-up, was off.
func warnSkew(ph *run.PhaseRun, ps *phaseShards, at time.Time) {
	for w, d := range ps.details {
		if d == nil {
			continue
		}
		for _, sw := range d.Workloads {
			if sw.Start.IsZero() || sw.Start.Equal(at) {
				continue
			}
			off := sw.Start.Sub(at)
			if off > skewWarning || off < -skewWarning {
				msg := fmt.Sprintf("%s started %s %v away from the announced start: check its clock (NTP)", ps.name(w), sw.Name, off.Round(time.Millisecond))
				ph.Events().Warn(msg)
				ph.Record().Event("warning", msg)
			}
		}
	}
}

// ReadBack records the read-back of a distributed phase: the workers'
// checks added up (those a worker could not make unverified, as
// settledChecks has them), with, for a driver that reads back every
// worker's writes at once (driver.ShardVerifier), its check of what they
// acknowledged.
func (d *Coordinator) ReadBack(ctx context.Context, ph *run.PhaseRun, state string) {
	d.readBack(ctx, ph.Record(), ph.Workloads, state)
}

func (d *Coordinator) readBack(ctx context.Context, rec *run.Record, ws []run.Workload, state string) {
	ps := d.last
	if ps == nil {
		return
	}
	for _, w := range ws {
		name := w.Desc.Name
		checks, note := ps.checks(name)
		sv, ok := w.Eng.Driver.(driver.ShardVerifier)
		if states := ps.readBacks(name); ok && d.n > 1 && state == results.StateCompleted && len(states) > 0 {
			rec.Events().Note(fmt.Sprintf("read-back checks of %s, over %d workers", name, len(states)))
			vctx, cancel := context.WithTimeout(ctx, run.VerifyTimeout+w.Spec.VerifyWait)
			all, err := sv.VerifyShards(vctx, states)
			cancel()
			checks = append(run.SettledChecks(all, err), checks...)
		}
		switch {
		case len(checks) > 0:
			rec.Checks(name, checks, nil)
		case note != "":
			rec.Facts(name, []driver.Fact{{Name: "read-back", Value: note}})
		}
	}
}
