package fleet

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/engine"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/shard"
)

// phaseShards is what the coordinator (or perflab merge) knows of every
// worker's part of one phase: the ends they wrote, the failures of those
// that did not, and what their intervals held.
type phaseShards struct {
	startAt  time.Time
	hosts    []string
	ends     []*shard.End
	details  []*shard.Detail
	state    []string // per worker: a results.Shard… state once known
	why      []string
	requests []int64
	lastEnd  []time.Time // the end of the last interval delivered
}

func newPhaseShards(n int, startAt time.Time, hosts map[int]shard.Hello) *phaseShards {
	ps := &phaseShards{startAt: startAt, hosts: make([]string, n), ends: make([]*shard.End, n),
		details: make([]*shard.Detail, n), state: make([]string, n), why: make([]string, n),
		requests: make([]int64, n), lastEnd: make([]time.Time, n)}
	for i, h := range hosts {
		if i >= 0 && i < n {
			ps.hosts[i] = h.Host
		}
	}
	return ps
}

// count takes note of the intervals worker w delivered, before the merger
// takes them.
func (ps *phaseShards) count(w int, ivs []shard.WorkloadInterval) {
	for _, iv := range ivs {
		for _, op := range iv.Ops {
			ps.requests[w] += op.Classes.Total()
		}
		if iv.End.After(ps.lastEnd[w]) {
			ps.lastEnd[w] = iv.End
		}
	}
}

// end takes worker w's end: completed, interrupted, or failed with the
// error it wrote. A detail that cannot be read fails the shard.
func (ps *phaseShards) end(w int, e *shard.End) {
	ps.ends[w] = e
	if len(e.Detail) > 0 {
		var d shard.Detail
		if err := json.Unmarshal(e.Detail, &d); err != nil {
			ps.state[w], ps.why[w] = results.ShardFailed, fmt.Sprintf("its end cannot be read: %v", err)
			return
		}
		ps.details[w] = &d
		if d.Host != "" {
			ps.hosts[w] = d.Host
		}
	}
	switch {
	case e.Error != "":
		ps.state[w], ps.why[w] = results.ShardFailed, e.Error
	case ps.interrupted(w):
		ps.state[w] = results.ShardInterrupted
	default:
		ps.state[w] = results.ShardCompleted
	}
}

func (ps *phaseShards) interrupted(w int) bool {
	if d := ps.details[w]; d != nil {
		for _, sw := range d.Workloads {
			if sw.Interrupted {
				return true
			}
		}
	}
	return false
}

// fail marks worker w failed (state ShardFailed) or lost, unless it ended.
func (ps *phaseShards) fail(w int, state, why string) {
	if ps.state[w] == "" {
		ps.state[w], ps.why[w] = state, why
	}
}

// explain adds why to the reason of failed (or lost) worker w, unless
// the reason says it already.
func (ps *phaseShards) explain(w int, why string) {
	if w < 0 || w >= len(ps.state) || (ps.state[w] != results.ShardFailed && ps.state[w] != results.ShardLost) ||
		strings.Contains(ps.why[w], why) {
		return
	}
	ps.why[w] += "; " + why
}

// ended says whether worker w's state is known.
func (ps *phaseShards) ended(w int) bool { return ps.state[w] != "" }

// failed is every worker that failed or was lost, as "worker 2 (host):
// why".
func (ps *phaseShards) failed() []string {
	var out []string
	for w, st := range ps.state {
		if st == results.ShardFailed || st == results.ShardLost {
			out = append(out, ps.name(w)+": "+ps.why[w])
		}
	}
	return out
}

func (ps *phaseShards) name(w int) string {
	if ps.hosts[w] != "" {
		return fmt.Sprintf("worker %d (%s)", w, ps.hosts[w])
	}
	return fmt.Sprintf("worker %d", w)
}

// workload is every ended worker's end of the named workload.
func (ps *phaseShards) workload(name string) []shard.WorkloadEnd {
	var out []shard.WorkloadEnd
	for _, d := range ps.details {
		if d == nil {
			continue
		}
		for _, sw := range d.Workloads {
			if sw.Name == name && !sw.Start.IsZero() {
				out = append(out, sw)
			}
		}
	}
	return out
}

// summary is how the named workload ended over every worker that said:
// arrivals scheduled, dropped and not issued, and VUs, added up, the last
// load end, and the window: of a closed model, the span every worker was
// in its steady state; of an open model, from the latest worker's start
// of it to the end of the load (the last worker's: a worker whose load
// ended a moment later closed its last whole interval that moment later).
// ok is false when no worker said.
func (ps *phaseShards) summary(name string, closed bool) (engine.Summary, bool) {
	sws := ps.workload(name)
	if len(sws) == 0 {
		return engine.Summary{}, false
	}
	s := engine.Summary{Start: sws[0].Start, Window: engine.Window{Start: sws[0].WindowStart, End: sws[0].WindowEnd}}
	for _, sw := range sws {
		if sw.Start.Before(s.Start) {
			s.Start = sw.Start
		}
		s.LoadEnd, s.End = later(s.LoadEnd, sw.LoadEnd), later(s.End, sw.End)
		s.Scheduled += sw.Scheduled
		s.Dropped += sw.Dropped
		s.Unissued += sw.Unissued
		s.MaxVUs += sw.MaxVUs
		s.Interrupted = s.Interrupted || sw.Interrupted
		s.Window.Start = later(s.Window.Start, sw.WindowStart)
		if closed && sw.WindowEnd.Before(s.Window.End) || !closed && sw.WindowEnd.After(s.Window.End) {
			s.Window.End = sw.WindowEnd
		}
	}
	s.Window.Rule = sws[0].WindowRule + ", on every worker"
	if !s.Window.End.After(s.Window.Start) {
		s.Window = engine.Window{Start: s.Start, End: s.LoadEnd, Rule: "the whole load: the workers' steady states did not overlap"}
	}
	return s, true
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// facts is the named workload's driver facts: the first worker's, and,
// for a fact whose value differs between workers, one per worker.
func (ps *phaseShards) facts(name string) []driver.Fact {
	values := map[string][]string{}
	var order []string
	var ws []int
	for w, d := range ps.details {
		for _, sw := range workloadOf(d, name) {
			ws = append(ws, w)
			for _, f := range sw.Facts {
				if values[f.Name] == nil {
					order = append(order, f.Name)
				}
				values[f.Name] = append(values[f.Name], f.Value)
			}
		}
	}
	var out []driver.Fact
	for _, n := range order {
		vs := values[n]
		if same(vs) && len(vs) == len(ws) {
			out = append(out, driver.Fact{Name: n, Value: vs[0]})
			continue
		}
		for i, v := range vs {
			out = append(out, driver.Fact{Name: fmt.Sprintf("%s (worker %d)", n, ws[i]), Value: v})
		}
	}
	return out
}

func workloadOf(d *shard.Detail, name string) []shard.WorkloadEnd {
	if d == nil {
		return nil
	}
	for _, sw := range d.Workloads {
		if sw.Name == name {
			return []shard.WorkloadEnd{sw}
		}
	}
	return nil
}

func same(vs []string) bool {
	for _, v := range vs {
		if v != vs[0] {
			return false
		}
	}
	return true
}

// checks adds up the named workload's read-back checks over the workers,
// by check name: what each acknowledged, found and found late. The merged
// check is in the worst state a worker's was in (lost, then unverified,
// then late), naming the workers. A lost one is short by exactly what the
// losing workers missed: another worker's finding more than it
// acknowledged makes up no loss, and a worker that could not check adds
// none (its data is unknown, and the note names it). note says why there are none when no
// worker checked.
func (ps *phaseShards) checks(name string) (out []driver.Check, note string) {
	idx := map[string]int{}
	var said [][]string // per check: what workers said of a check not ok
	var short []float64 // per check: what the workers that lost data missed
	for w, d := range ps.details {
		for _, sw := range workloadOf(d, name) {
			if sw.CheckNote != "" && note == "" {
				note = sw.CheckNote
			}
			for _, c := range sw.Checks {
				i, ok := idx[c.Name]
				if !ok {
					i = len(out)
					idx[c.Name] = i
					out = append(out, driver.Check{Name: c.Name, Unit: c.Unit, State: driver.CheckOK})
					said, short = append(said, nil), append(short, 0)
				}
				m := &out[i]
				m.Expected += c.Expected
				m.Found += c.Found
				m.Late += c.Late
				m.LateBy = max(m.LateBy, c.LateBy)
				if checkRank(c.State) > checkRank(m.State) {
					m.State = c.State
				}
				switch c.State {
				case driver.CheckLost:
					said[i], short[i] = append(said[i], fmt.Sprintf("worker %d: %s", w, c.Note)), short[i]+max(c.Expected-c.Found, 0)
				case driver.CheckUnverified:
					said[i] = append(said[i], fmt.Sprintf("worker %d: unverified: %s", w, c.Reason))
				}
			}
		}
	}
	for i := range out {
		out[i].Note = "the workers' read-backs added up"
		if len(said[i]) > 0 {
			out[i].Note += "; " + strings.Join(said[i], "; ")
		}
		if out[i].State == driver.CheckUnverified {
			out[i].Reason = strings.Join(said[i], "; ")
		}
		if out[i].State == driver.CheckLost {
			// What the losing workers missed, no more: an unverified
			// worker's data is unknown (its note says so), not lost.
			out[i].Found = out[i].Expected - short[i]
		}
	}
	return out, note
}

// checkRank orders the states of a check from the best to the worst.
func checkRank(state string) int {
	switch state {
	case driver.CheckLost:
		return 3
	case driver.CheckUnverified:
		return 2
	case driver.CheckLate:
		return 1
	}
	return 0
}

// readBacks is what every ended worker's driver.ShardVerifier acknowledged
// of the named workload.
func (ps *phaseShards) readBacks(name string) [][]byte {
	var out [][]byte
	for _, d := range ps.details {
		for _, sw := range workloadOf(d, name) {
			if len(sw.ReadBack) > 0 {
				out = append(out, sw.ReadBack)
			}
		}
	}
	return out
}

// rows are the shards table's rows of the phase.
func (ps *phaseShards) rows(cell int, profile string) []results.Shard {
	out := make([]results.Shard, len(ps.state))
	for w := range out {
		s := results.Shard{Cell: cell, Profile: profile, Index: w, Host: ps.hosts[w], State: ps.state[w],
			Message: ps.why[w], Requests: ps.requests[w]}
		if s.State == "" {
			s.State, s.Message = results.ShardLost, "never wrote its end"
		}
		end := ps.lastEnd[w]
		if d := ps.details[w]; d != nil {
			for _, sw := range d.Workloads {
				end = later(end, sw.LoadEnd)
			}
			me := d.Self
			s.HasCPU, s.CPUP99, s.CPUMax, s.Cores, s.LagP99 = me.Samples > 0, me.CPUP99, me.CPUMax, me.CoresAvailable, me.LagP99
			s.ClientBound, s.ClientWhy = me.ClientBound, me.ClientWhy
		}
		if secs := end.Sub(ps.startAt).Seconds(); secs > 0 {
			s.Rate = float64(s.Requests) / secs
		}
		out[w] = s
	}
	return out
}
