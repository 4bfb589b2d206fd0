package view

import (
	"fmt"
	"time"
)

// Worker is one worker's part of a phase of a distributed run: what it
// did of the load and whether it, not the system under test, was the
// limit.
type Worker struct {
	Index    int
	Host     string
	State    string // completed, interrupted, failed, lost
	Message  string // why it failed or was lost
	Requests int64
	Rate     float64
	// Its own CPU (cores) over its load, its cores and its dispatch lag
	// p99; HasCPU is false when it never said (it did not end).
	HasCPU        bool
	CPUP99, Cores float64
	LagP99        time.Duration
	ClientBound   bool
	ClientWhy     string
}

// Failed says whether the worker's part is missing or short.
func (w Worker) Failed() bool { return w.State == "failed" || w.State == "lost" }

// Name names the worker in reports: "worker 2 (host-b)".
func (w Worker) Name() string {
	if w.Host != "" {
		return fmt.Sprintf("worker %d (%s)", w.Index, w.Host)
	}
	return fmt.Sprintf("worker %d", w.Index)
}

// ClientBoundWorkers names the workers of p that were client-bound, with
// why: "worker 2 (host-b): its CPU p99 was …".
func (p *Phase) ClientBoundWorkers() []string {
	var out []string
	for _, w := range p.Workers {
		if w.ClientBound {
			out = append(out, w.Name()+": "+w.ClientWhy)
		}
	}
	return out
}
