package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/shard"
)

// merger rebuilds a run store from a shared store, phase by phase.
type merger struct {
	rec    *run.Record
	rs     *results.Run
	run    shard.Run
	n      int
	hellos map[int]shard.Hello
	cell   *results.Cell // the cell being rebuilt
	state  string        // … its state so far
	msg    string
}

// Merge rebuilds every phase of run into rs; failed names the cells
// whose workers failed.
func Merge(ctx context.Context, rec *run.Record, sr shard.Run, n int) ([]string, error) {
	hellos, err := sr.Hellos(ctx)
	if err != nil {
		return nil, err
	}
	phases, err := sr.Phases(ctx)
	if err != nil {
		return nil, err
	}
	mg := &merger{rec: rec, rs: rec.Store, run: sr, n: n, hellos: hellos}
	var failed []string
	for _, k := range phases {
		a, _, err := sr.Announcement(ctx, k)
		if err != nil {
			return failed, err
		}
		if mg.cell == nil || mg.cell.Index != a.Cell {
			failed = mg.endCell(failed)
			mg.startCell(a)
		}
		if err := mg.phase(ctx, a); err != nil {
			return failed, err
		}
	}
	return mg.endCell(failed), nil
}

func (mg *merger) startCell(a shard.Announcement) {
	c := results.Cell{Index: a.Cell, Name: a.CellName, Started: a.StartAt}
	for _, v := range a.Vars {
		c.Vars = append(c.Vars, results.Var{Name: v.Name, Value: v.Value})
	}
	if a.Repetition > 0 {
		c.Vars = append(c.Vars, results.Var{Name: results.RepetitionVar, Value: strconv.Itoa(a.Repetition)})
	}
	if err := mg.rs.AddCell(c); err != nil {
		mg.rec.Fail(err)
	}
	mg.cell, mg.state, mg.msg = &c, results.StateCompleted, ""
}

// endCell records the cell's end: failed when a phase's workers failed.
func (mg *merger) endCell(failed []string) []string {
	if mg.cell == nil {
		return failed
	}
	if err := mg.rs.EndCell(mg.cell.Index, mg.state, mg.msg, time.Time{}); err != nil {
		mg.rec.Fail(err)
	}
	if mg.state == results.StateFailed {
		failed = append(failed, fmt.Sprintf("cell %s: %s", mg.cell.Name, mg.msg))
	}
	return failed
}

// phase rebuilds one phase: its workloads as the coordinator described
// them, every part its workers wrote, merged, and their ends.
func (mg *merger) phase(ctx context.Context, a shard.Announcement) error {
	if err := mg.rs.AddPhase(results.Phase{Cell: a.Cell, Profile: a.Profile, Start: a.StartAt, Warmup: a.Warmup}); err != nil {
		return err
	}
	names := make([]string, 0, len(a.Workloads))
	closed := map[string]bool{}
	for short, res := range a.Workloads {
		var w results.Workload
		if err := json.Unmarshal(res.Detail, &w); err != nil {
			return fmt.Errorf("cannot read workload %s of phase %d: %w", short, a.Phase, err)
		}
		if err := mg.rs.AddWorkload(w); err != nil {
			return err
		}
		names = append(names, w.Name)
		closed[w.Name] = w.Model == results.ModelClosed
	}
	sort.Strings(names)
	ps, err := mg.read(ctx, a)
	if err != nil {
		return err
	}
	sums := mg.ends(a, ps, names, closed)
	state, msg := results.StateCompleted, ""
	switch failed := ps.failed(); {
	case len(failed) > 0:
		state, msg = results.StateFailed, strings.Join(failed, "; ")
	case anyInterrupted(ps):
		state, msg = results.StateInterrupted, "the coordinator stopped the workers"
	}
	p := results.Phase{Cell: a.Cell, Profile: a.Profile, State: state, Message: msg, LoadEnd: time.Now()}
	if w, ok := run.PhaseWindow(a.Warmup, sums); ok {
		p.LoadEnd, p.WindowStart, p.WindowEnd, p.WindowRule = w.LoadEnd, w.Start, w.End, w.Rule
	}
	if state != results.StateCompleted && mg.state == results.StateCompleted {
		mg.state, mg.msg = state, msg
	}
	return mg.rs.EndPhase(p)
}

// read reads every part and end the workers wrote of the phase and writes
// the merged intervals; a worker without an end is lost.
func (mg *merger) read(ctx context.Context, a shard.Announcement) (*phaseShards, error) {
	f := shard.NewFollower(mg.run, a.Phase, mg.n)
	m := shard.NewMerger(mg.n)
	ps := newPhaseShards(mg.n, a.StartAt, mg.hellos)
	got, ended, err := f.Poll(ctx)
	if err != nil {
		return nil, err
	}
	for w, ivs := range got {
		ps.count(w, ivs)
		m.Add(w, ivs)
	}
	for _, w := range ended {
		ps.end(w, f.Ends()[w])
	}
	for w := range mg.n {
		ps.fail(w, results.ShardLost, fmt.Sprintf("never wrote its end (%d parts read)", f.Parts()[w]))
	}
	for _, iv := range m.Rest() {
		mg.rec.Interval(iv.Workload, iv.Interval)
	}
	return ps, nil
}

// ends records how each workload ended over the workers, their facts and
// checks, and a row per worker; it returns the workloads' summaries.
func (mg *merger) ends(a shard.Announcement, ps *phaseShards, names []string, closed map[string]bool) []engine.Summary {
	var sums []engine.Summary
	for _, name := range names {
		s, ok := ps.summary(name, closed[name])
		if !ok {
			continue
		}
		sums = append(sums, s)
		fail := func(err error) {
			if err != nil {
				mg.rec.Fail(err)
			}
		}
		fail(mg.rs.EndWorkload(name, run.EndOf(s, a.Warmup, "the plan")))
		fail(mg.rs.AddFacts(name, ps.facts(name)))
		checks, note := ps.checks(name)
		if len(ps.readBacks(name)) > 0 {
			note = "not redone by perflab merge: the coordinator reads back every worker's writes at once"
		}
		if len(checks) > 0 { // a worker's own, or one it could not make
			fail(mg.rs.AddChecks(name, checks))
		}
		if note != "" {
			fail(mg.rs.AddFacts(name, []driver.Fact{{Name: "read-back", Value: note}}))
		}
	}
	for _, row := range ps.rows(a.Cell, a.Profile) {
		if err := mg.rs.AddShard(row); err != nil {
			mg.rec.Fail(err)
		}
	}
	return sums
}

func anyInterrupted(ps *phaseShards) bool {
	for _, st := range ps.state {
		if st == results.ShardInterrupted {
			return true
		}
	}
	return false
}
