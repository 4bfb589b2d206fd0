package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/self"
	"github.com/perflab/perflab/internal/run"
	"github.com/perflab/perflab/internal/shard"
)

// selfWatch samples a worker's own process every second over its load:
// its CPU, the cores it may use and the Go scheduler's latency.
type selfWatch struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	cpu    []float64
	cores  float64
	sched  float64
}

// watchSelf starts sampling the worker at from (its load's start), until
// stop is called.
func watchSelf(from time.Time) *selfWatch {
	ctx, cancel := context.WithCancel(context.Background())
	s := &selfWatch{cancel: cancel, done: make(chan struct{})}
	src, err := self.New("")
	if err != nil {
		close(s.done)
		return s
	}
	smp := &observe.Sampler{Interval: time.Second, Components: map[string][]observe.Source{run.GeneratorName: {src}},
		Sink: s.add, OnError: func(string, error) {}}
	go func() {
		defer close(s.done)
		t := time.NewTimer(time.Until(from))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_ = smp.Run(ctx)
	}()
	return s
}

func (s *selfWatch) add(_ time.Time, points map[string][]observe.Point) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range points[run.GeneratorName] {
		switch p.Metric {
		case observe.CPUCores:
			s.cpu = append(s.cpu, p.Value)
		case observe.CoresAvailable:
			s.cores = p.Value
		case observe.SchedLatP99Seconds:
			s.sched = max(s.sched, p.Value)
		}
	}
}

// stop takes the last sample and returns the figures and the verdict,
// given the p99 of the worker's open-model dispatch lag.
func (s *selfWatch) stop(lag time.Duration) shard.Self {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	st := analysis.StatOf(s.cpu)
	me := shard.Self{Samples: st.N, CPUP99: st.P99, CPUMax: st.Max, CoresAvailable: s.cores, SchedLatP99: s.sched,
		LagP99: lag.Seconds()}
	if !st.HasP99() {
		me.CPUP99 = st.Max // shown as such in the workers table; no verdict rests on it
	}
	me.ClientBound, me.ClientWhy = selfVerdict(me)
	if limit, ok := self.CPULimit(); me.ClientBound && ok && limit == me.CoresAvailable {
		me.ClientWhy += fmt.Sprintf("; %.3g cores is its CPU limit (a cgroup quota: a pod's limits.cpu)", limit)
	}
	return me
}

// selfVerdict says whether a worker was client-bound by its CPU p99, by
// the rule every verdict follows (analysis.GeneratorLimited): as a single
// process's generator, only with the samples a P99 needs
// (analysis.MinSamplesP99); its dispatch lag is recorded but never a
// reason on its own, and the arrivals it did not issue count in the
// merged workloads' verdict.
func selfVerdict(me shard.Self) (bool, string) {
	if me.Samples < analysis.MinSamplesP99 {
		return false, ""
	}
	why := analysis.CPUBound(me.CPUP99, me.CoresAvailable, "p99")
	return why != "", why
}
