package cli

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
	"github.com/perflab/perflab/internal/shard"
)

// runShards is runWorkloads for a distributed run: it announces the phase
// to the workers, merges their intervals into the run store as they
// arrive (with the progress line), and records how each workload and each
// worker ended. A worker that failed, or never ended, fails the phase,
// naming it; what the others measured is kept.
func (r *planRun) runShards(ctx context.Context, c plan.Cell, pr plan.Profile, ws []phaseWorkload) ([]engine.Summary, error) {
	d := r.dist
	if d.broken != "" {
		return nil, fmt.Errorf("no phase runs after a failed worker: %s", d.broken)
	}
	a := announcement(d.phase, c, pr, ws, time.Now().Add(startMargin))
	if err := d.run.Announce(ctx, a); err != nil {
		return nil, fmt.Errorf("cannot announce the phase to the workers: %w", err)
	}
	d.phase++
	rate := 0.0
	if len(ws) == 1 {
		rate = ws[0].desc.Rate
	}
	r.progress.Begin(pr.Name, pr.Duration, rate)
	ps := newPhaseShards(d.n, a.StartAt, d.hellos)
	d.last = ps
	r.follow(ctx, a, ps, phaseDeadline(a.StartAt, pr, ws))
	r.progress.End()
	sums := make([]engine.Summary, len(ws))
	for i, w := range ws {
		s, ok := ps.summary(w.desc.Name, w.desc.Model == results.ModelClosed)
		if !ok {
			continue
		}
		sums[i] = s
		if err := r.store.EndWorkload(w.desc.Name, endOf(s, pr.Warmup, "the plan")); err != nil {
			r.sink.fail(err)
		}
		r.addFacts(w.desc.Name, ps.facts(w.desc.Name))
	}
	r.workerRows(c.Index, pr.Name, ps)
	if failed := ps.failed(); len(failed) > 0 {
		d.broken = strings.Join(failed, "; ")
		return sums, errors.New(d.broken)
	}
	return sums, nil
}

// announcement is phase k of the run: the cell, the profile, the start,
// and per workload what the coordinator resolved of it.
func announcement(k int, c plan.Cell, pr plan.Profile, ws []phaseWorkload, start time.Time) shard.Announcement {
	a := shard.Announcement{Phase: k, Cell: c.Index, CellName: c.Name, Repetition: c.Repetition, Profile: pr.Name,
		Warmup: pr.Warmup, StartAt: start, Workloads: map[string]shard.Resolved{}}
	for _, v := range c.Vars {
		a.Vars = append(a.Vars, shard.Var{Name: v.Name, Value: v.Value})
	}
	for _, w := range ws {
		res := w.resolved
		res.Name = w.desc.Name
		res.Detail, _ = json.Marshal(w.desc) // for perflab merge; a results.Workload always encodes
		if h, ok := w.eng.Driver.(driver.Handoff); ok {
			res.Driver = h.Handoff()
		}
		a.Workloads[w.plan.Name] = res
	}
	return a
}

// phaseDeadline is when a worker that has not ended is given up: the
// load, its grace, the read-back and cleanup bounds of its drivers, and
// the margins of the start and of the last writes.
func phaseDeadline(start time.Time, pr plan.Profile, ws []phaseWorkload) time.Time {
	var grace, verify, clean time.Duration
	for _, w := range ws {
		grace = max(grace, w.eng.Grace)
		if _, ok := w.eng.Driver.(driver.Verifier); ok {
			verify = max(verify, verifyTimeout+w.spec.VerifyWait)
		}
		if _, ok := w.eng.Driver.(driver.Cleaner); ok {
			clean += cleanupTimeout
		}
	}
	length := pr.Duration
	for _, w := range ws {
		length = max(length, w.eng.Duration())
	}
	return start.Add(length + grace + verify + clean + storeTimeout + startMargin)
}

// follow reads the workers' parts and ends until every worker ended,
// failed or was given up, merging interval k of every worker into the
// run's interval k as soon as all have delivered it. An interrupt (or a
// crashed component) stops the workers: the run is aborted, or the phase
// stopped, and they get their grace and abortGrace to end.
func (r *planRun) follow(ctx context.Context, a shard.Announcement, ps *phaseShards, deadline time.Time) {
	d := r.dist
	f := shard.NewFollower(d.run, a.Phase, d.n)
	m := shard.NewMerger(d.n)
	t := time.NewTicker(followPoll)
	defer t.Stop()
	stopped, lastErr := false, error(nil)
	for {
		failed := d.opts.launch.failed() // before the poll: what a worker wrote before it died is read
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		got, ended, err := f.Poll(pctx)
		cancel()
		if err != nil && (lastErr == nil || err.Error() != lastErr.Error()) {
			fmt.Fprintf(r.e.stderr, "\nperflab: warning: cannot read the workers' shards: %v\n", err)
		}
		lastErr = err
		for w, ivs := range got {
			ps.count(w, ivs)
			m.Add(w, ivs)
		}
		for _, w := range ended {
			ps.end(w, f.Ends()[w])
			m.End(w)
		}
		r.giveUp(ps, m, results.ShardFailed, func(w int) string { return failed[w] })
		r.mergeReady(m.Ready())
		if allEnded(ps) {
			break
		}
		if !stopped && ctx.Err() != nil {
			stopped = true
			deadline = r.stopWorkers(ctx, a, deadline)
		}
		if time.Now().After(deadline) {
			lost := fmt.Sprintf("never wrote its end (%s parts read)", partsRead(f))
			r.giveUp(ps, m, results.ShardLost, func(int) string { return lost })
			break
		}
		select {
		case <-t.C:
		case <-r.kill.Done():
			r.giveUp(ps, m, results.ShardLost, func(int) string { return "not waited for: stopped at once by a second interrupt" })
		}
	}
	r.mergeReady(m.Rest())
	r.warnSkew(ps, a.StartAt)
}

// giveUp gives up the workers that have not ended and for which why
// gives a reason: each is marked state (failed, lost) with it.
func (r *planRun) giveUp(ps *phaseShards, m *shard.Merger, state string, why func(w int) string) {
	for w := range ps.state {
		reason := why(w)
		if ps.ended(w) || reason == "" {
			continue
		}
		ps.fail(w, state, reason)
		m.End(w)
		fmt.Fprintf(r.e.stderr, "\nperflab: %s %s: %s\n", ps.name(w), state, reason)
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
func (r *planRun) stopWorkers(ctx context.Context, a shard.Announcement, deadline time.Time) time.Time {
	d := r.dist
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	var err error
	if r.stop.Err() != nil {
		_, why := stopped(r.stop)
		err = d.run.PutAbort(wctx, why)
	} else {
		err = d.run.StopPhase(wctx, a.Phase, oneLine(fmt.Sprint(context.Cause(ctx))))
	}
	if err != nil {
		fmt.Fprintf(r.e.stderr, "\nperflab: warning: cannot tell the workers to stop: %v\n", err)
	}
	if by := time.Now().Add(r.maxGrace() + abortGrace); by.Before(deadline) {
		return by
	}
	return deadline
}

func (r *planRun) maxGrace() time.Duration {
	var g time.Duration
	for _, pr := range r.p.Profiles {
		for _, w := range pr.Workloads {
			g = max(g, w.Grace)
		}
	}
	return g
}

// mergeReady writes merged intervals to the run store and the progress line.
func (r *planRun) mergeReady(ivs []shard.WorkloadInterval) {
	for _, iv := range ivs {
		r.sink.Interval(iv.Workload, iv.Interval)
		r.progress.Interval(iv.Workload, iv.Interval)
	}
}

// warnSkew warns of a worker whose load started more than skewWarning
// away from the announced start: its clock, or its wake-up, was off.
func (r *planRun) warnSkew(ps *phaseShards, at time.Time) {
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
				fmt.Fprintf(r.e.stderr, "perflab: warning: %s\n", msg)
				r.event("warning", msg)
			}
		}
	}
}

// shardChecks records the read-back of a distributed phase: the workers'
// checks added up (those a worker could not make unverified, as
// settledChecks has them), with, for a driver that reads back every
// worker's writes at once (driver.ShardVerifier), its check of what they
// acknowledged.
func (r *planRun) shardChecks(ctx context.Context, ws []phaseWorkload, state string) {
	ps := r.dist.last
	if ps == nil {
		return
	}
	for _, w := range ws {
		name := w.desc.Name
		checks, note := ps.checks(name)
		sv, ok := w.eng.Driver.(driver.ShardVerifier)
		if states := ps.readBacks(name); ok && r.dist.n > 1 && state == results.StateCompleted && len(states) > 0 {
			fmt.Fprintf(r.e.stderr, "perflab: read-back checks of %s, over %d workers\n", name, len(states))
			vctx, cancel := context.WithTimeout(ctx, verifyTimeout+w.spec.VerifyWait)
			all, err := sv.VerifyShards(vctx, states)
			cancel()
			checks = append(settledChecks(all, err), checks...)
		}
		switch {
		case len(checks) > 0:
			r.recordChecks(name, checks, nil)
		case note != "":
			r.addFacts(name, []results.Fact{{Name: "read-back", Value: note}})
		}
	}
}
