package readback

import (
	"os"
	"time"

	"github.com/prometheus/procfs"

	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// The windows of a workload and a phase that have not ended, as a killed
// run leaves them, and as a run still going has them.
const (
	killedRule      = "run killed: recorded intervals after the first"
	liveRule        = "run in progress: recorded intervals after the first"
	phaseKilledRule = "the phase did not end (run killed): the span of its workloads' windows"
	phaseLiveRule   = "the phase has not ended yet: the span of its workloads' windows"
	endedRule       = "the workload did not end (its load failed): recorded intervals after the first"
	phaseEndedRule  = "the phase did not end (its load failed): the span of its workloads' windows"
)

// markInProgress says of a run whose perflab is still running, and of its
// cells, phases and workloads that have not ended, that they are in
// progress, not killed.
func markInProgress(r *view.Run) {
	r.InProgress = true
	for _, s := range r.Workloads {
		if s.Window.Rule == killedRule {
			s.Window.Rule = liveRule
		}
	}
	for _, c := range r.Cells {
		c.InProgress = c.State == results.StateRunning
		for _, p := range c.Phases {
			p.InProgress = p.State == results.StateRunning
			if p.Window.Rule == phaseKilledRule {
				p.Window.Rule = phaseLiveRule
			}
		}
	}
}

// Final is a run read back at its end by the process that made it: not
// in progress (its perflab is alive, but done), and a workload or phase
// that did not end said to have failed, not to have been killed.
func Final(r *view.Run) {
	r.InProgress = false
	for _, s := range r.Workloads {
		if s.Window.Rule == killedRule || s.Window.Rule == liveRule {
			s.Window.Rule = endedRule
		}
	}
	for _, c := range r.Cells {
		c.InProgress = false
		for _, p := range c.Phases {
			p.InProgress = false
			if p.Window.Rule == phaseKilledRule || p.Window.Rule == phaseLiveRule {
				p.Window.Rule = phaseEndedRule
			}
		}
	}
}

// runIsLive reports whether the perflab process that writes the run is
// still running: the generator component's process, on this host, started
// before the run (a PID used again since has started after it).
func runIsLive(store *results.Run, meta results.Meta) bool {
	if host, _ := os.Hostname(); host == "" || host != meta.Host {
		return false
	}
	cells, err := store.Cells()
	if err != nil {
		return false
	}
	indexes := []int{0}
	for _, c := range cells {
		indexes = append(indexes, c.Index)
	}
	for _, i := range indexes {
		comps, err := store.Components(i)
		if err != nil {
			return false
		}
		for _, c := range comps {
			if c.Kind == results.KindGenerator && c.PID > 0 {
				return startedBy(c.PID, meta.Started)
			}
		}
	}
	return false
}

// startedBy reports whether process pid is alive and started by t (within
// the second /proc's start time is rounded to).
func startedBy(pid int, t time.Time) bool {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return false
	}
	st, err := p.Stat()
	if err != nil || st.State == "Z" {
		return false
	}
	start, err := st.StartTime()
	if err != nil {
		return false
	}
	return start <= float64(t.UnixNano())/1e9+1
}
