package shard

import (
	"sort"

	"github.com/perflab/perflab/internal/stats"
)

// Merger combines the intervals of N shards into the intervals of one run.
// Every shard's engine started at the same instant with the same interval
// length, so interval k of every shard covers the same second and they
// merge exactly: histograms bucket by bucket, counts summed. Interval k of
// a workload is ready once every shard has delivered its interval k or a
// later one, or has ended (a shard that failed or stopped early delivers
// no more).
type Merger struct {
	n       int
	ended   []bool
	reached map[string][]int // per workload, per shard: the highest index delivered (-1: none)
	pending map[string]map[int]*stats.Interval
	next    map[string]int // per workload: the next index to hand out
	order   []string       // workloads in the order first seen
}

// NewMerger returns a merger of n shards.
func NewMerger(n int) *Merger {
	return &Merger{n: n, ended: make([]bool, n), reached: map[string][]int{},
		pending: map[string]map[int]*stats.Interval{}, next: map[string]int{}}
}

// Add takes intervals shard delivered, in the order its engine closed them.
// The merger owns them from then on.
func (m *Merger) Add(shard int, ivs []WorkloadInterval) {
	for _, iv := range ivs {
		r := m.reachedOf(iv.Workload)
		r[shard] = max(r[shard], iv.Index)
		if iv.Index < m.next[iv.Workload] {
			continue // already handed out: a duplicate delivery
		}
		p := m.pending[iv.Workload]
		if acc := p[iv.Index]; acc != nil {
			mergeInterval(acc, iv.Interval)
		} else {
			p[iv.Index] = iv.Interval
		}
	}
}

// End says shard will deliver nothing more.
func (m *Merger) End(shard int) { m.ended[shard] = true }

func (m *Merger) reachedOf(workload string) []int {
	r := m.reached[workload]
	if r == nil {
		r = make([]int, m.n)
		for i := range r {
			r[i] = -1
		}
		m.reached[workload] = r
		m.pending[workload] = map[int]*stats.Interval{}
		m.order = append(m.order, workload)
	}
	return r
}

// Ready hands out, per workload in index order, every merged interval all
// shards are done with.
func (m *Merger) Ready() []WorkloadInterval {
	return m.take(false)
}

// Rest hands out everything still held, as when every shard has ended or
// the coordinator gives up waiting for one.
func (m *Merger) Rest() []WorkloadInterval {
	return m.take(true)
}

func (m *Merger) take(all bool) []WorkloadInterval {
	var out []WorkloadInterval
	for _, w := range m.order {
		p, r := m.pending[w], m.reached[w]
		idx := make([]int, 0, len(p))
		for i := range p {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			if !all && !m.complete(r, i) {
				break
			}
			out = append(out, WorkloadInterval{Workload: w, Interval: p[i]})
			delete(p, i)
			m.next[w] = i + 1
		}
	}
	return out
}

// complete says whether every shard is past index i or ended.
func (m *Merger) complete(reached []int, i int) bool {
	for s, r := range reached {
		if r < i && !m.ended[s] {
			return false
		}
	}
	return true
}

// mergeInterval adds o into acc exactly: the span is the union, counts
// add, live VUs add (each shard's own), histograms merge.
func mergeInterval(acc, o *stats.Interval) {
	if o.Start.Before(acc.Start) {
		acc.Start = o.Start
	}
	if o.End.After(acc.End) {
		acc.End = o.End
	}
	acc.Dropped += o.Dropped
	acc.VUs += o.VUs
	if acc.Lag == nil {
		acc.Lag = stats.NewHist()
	}
	acc.Lag.Merge(o.Lag)
	if acc.Ops == nil {
		acc.Ops = map[string]*stats.OpStats{}
	}
	for name, st := range o.Ops {
		if d := acc.Ops[name]; d != nil {
			d.Merge(st)
		} else {
			acc.Ops[name] = st
		}
	}
}
