package readback

import (
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
)

// PhaseResources are the resource figures of the phase that ran profile;
// nil when it has none.
func PhaseResources(rep *report.Run, profile string) *analysis.Resources {
	for _, c := range rep.Cells {
		for _, p := range c.Phases {
			if p.Profile == profile {
				return p.Resources
			}
		}
	}
	return nil
}

// attachWorkers gives each phase of c the workers of a distributed run
// that made its load, and marks its workloads client-bound when one of
// them was, naming it.
func attachWorkers(c *report.Cell, shards []results.Shard) {
	for _, p := range c.Phases {
		for _, s := range shards {
			if s.Cell != c.Index || s.Profile != p.Profile || p.Implicit {
				continue
			}
			p.Workers = append(p.Workers, report.Worker{Index: s.Index, Host: s.Host, State: s.State, Message: s.Message,
				Requests: s.Requests, Rate: s.Rate, HasCPU: s.HasCPU, CPUP99: s.CPUP99, Cores: s.Cores,
				LagP99: time.Duration(s.LagP99 * float64(time.Second)), ClientBound: s.ClientBound, ClientWhy: s.ClientWhy})
		}
		analysis.MarkWorkersBound(p.Workloads, p.ClientBoundWorkers())
	}
}
