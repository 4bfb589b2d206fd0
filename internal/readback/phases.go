package readback

import (
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// attachWorkers gives each phase of c the workers of a distributed run
// that made its load, and marks its workloads client-bound when one of
// them was, naming it.
func attachWorkers(c *view.Cell, shards []results.Shard) {
	for _, p := range c.Phases {
		for _, s := range shards {
			if s.Cell != c.Index || s.Profile != p.Profile || p.Implicit {
				continue
			}
			p.Workers = append(p.Workers, view.Worker{Index: s.Index, Host: s.Host, State: s.State, Message: s.Message,
				Requests: s.Requests, Rate: s.Rate, HasCPU: s.HasCPU, CPUP99: s.CPUP99, Cores: s.Cores,
				LagP99: time.Duration(s.LagP99 * float64(time.Second)), ClientBound: s.ClientBound, ClientWhy: s.ClientWhy})
		}
		analysis.MarkWorkersBound(p.Workloads, p.ClientBoundWorkers())
	}
}
