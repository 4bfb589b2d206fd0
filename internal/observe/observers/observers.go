// Package observers is every observer a component may have besides its
// process tree, cgroup and /metrics, in one list: the run makes their
// sources, analysis sums up the metrics they declare and the reports show
// them from their declarations. Adding a source is its package, which
// implements observe.Observer, and one line in All.
package observers

import (
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/disk"
)

// All is every observer, in the order a component's sources are sampled
// and its tables are shown. Tests may add one for their duration.
var All = []observe.Observer{
	disk.Observer{},
}

// Metrics is every metric the observers declare, in their order.
func Metrics() []observe.Metric {
	var out []observe.Metric
	for _, o := range All {
		out = append(out, o.Metrics()...)
	}
	return out
}

// Sources are the sources of c, one per observer that has something of c
// to sample.
func Sources(c observe.Component) []observe.Source {
	var out []observe.Source
	for _, o := range All {
		if s := o.Source(c); s != nil {
			out = append(out, s)
		}
	}
	return out
}
