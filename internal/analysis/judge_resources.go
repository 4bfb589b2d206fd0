package analysis

import (
	"fmt"
	"strings"

	"github.com/perflab/perflab/internal/observe"
)

// GeneratorCPULimit is the share of its available cores at which the
// generator's CPU P99 makes a phase client-bound.
const GeneratorCPULimit = 0.9

// judge adds the warnings a reader needs before trusting the resource
// figures, and decides whether the generator was the limit.
func (r *Resources) judge() {
	if r.Ticks > 0 && r.Ticks < MinSamplesP99 {
		r.warn("only %d sample times in the window: a P99 needs at least %d, so only Max and Avg are shown", r.Ticks, MinSamplesP99)
	}
	for _, c := range r.Components {
		r.judgeComponent(c)
	}
	r.judgeTotal("memory", r.Memory)
	r.judgeTotal("CPU", r.CPU)
	r.judgeGenerator()
}

func (r *Resources) judgeComponent(c ComponentResources) {
	if !c.Exited.IsZero() && !c.Exited.After(r.Window.End) {
		when := "during the window: its figures stop there"
		if !c.Exited.After(r.Window.Start) {
			when = "before the window: it has no figures"
		}
		r.warn("component %s exited at %s UTC (%s), %s", c.Name, c.Exited.UTC().Format("15:04:05"), exitText(c.ExitText), when)
	}
	if c.Kind == KindGenerator || r.Ticks == 0 {
		return
	}
	if len(c.Metrics) == 0 {
		r.warn("component %s has no samples in the window", c.Name)
		return
	}
	if c.MemoryMetric == "" {
		r.warn("component %s has no memory samples in the window; the memory totals leave it out", c.Name)
	}
	if c.CPUMetric == "" {
		r.warn("component %s has no CPU samples in the window; the CPU totals leave it out", c.Name)
	}
	if r.Ticks < MinSamplesP99 {
		return // said once for the whole window
	}
	for _, x := range []struct {
		what string
		s    Stat
	}{{"memory", c.Memory}, {"CPU", c.CPU}} {
		if x.s.N > 0 && !x.s.HasP99() {
			r.warn("component %s has only %d %s samples in the window: no P99, and no P99 for the totals", c.Name, x.s.N, x.what)
		}
	}
}

func exitText(s string) string {
	if s == "" {
		return "no exit status"
	}
	return s
}

// judgeTotal says when the summed series covers fewer sample times than
// its components, e.g. because one exited or missed a scrape.
func (r *Resources) judgeTotal(what string, t Total) {
	if t.Components < 2 || t.Summed.N >= r.Ticks {
		return
	}
	r.warn("the summed %s series has %d of the window's %d sample times: only those at which all %d components have a value",
		what, t.Summed.N, r.Ticks, t.Components)
}

// judgeGenerator marks the phase client-bound when the generator's CPU P99
// reached GeneratorCPULimit of the cores it could use.
func (r *Resources) judgeGenerator() {
	for _, c := range r.Components {
		if c.Kind != KindGenerator {
			continue
		}
		if s, ok := c.Metrics[observe.CoresAvailable]; ok && s.Max > 0 {
			r.CoresAvailable = s.Max
		}
		if !c.CPU.HasP99() || r.CoresAvailable <= 0 {
			return
		}
		if c.CPU.P99 >= GeneratorCPULimit*r.CoresAvailable {
			r.ClientBound = true
			r.warn("client-bound: the generator's CPU P99 was %.3g of the %.3g cores it could use (≥ %.0f %%); it, not the system under test, may have been the limit",
				c.CPU.P99, r.CoresAvailable, 100*GeneratorCPULimit)
		}
		return
	}
}

func (r *Resources) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// MarkClientBound carries a client-bound verdict of the phase's resources
// over to the summaries of the workloads that ran in the phase, with the
// reason, so every report of a workload shows it.
func MarkClientBound(r *Resources, sums []*Summary) {
	if r == nil || !r.ClientBound {
		return
	}
	for _, s := range sums {
		s.ClientBound = true
		s.Warnings = append(s.Warnings, fmt.Sprintf(
			"client-bound: the generator's CPU was at or above %.0f %% of its %.3g cores in this phase; throughput and latency may show its limit, not the target's",
			100*GeneratorCPULimit, r.CoresAvailable))
	}
}

// MarkWorkersBound marks the workloads of a phase made by the workers of
// a distributed run client-bound when any worker was, naming each such
// worker and why (as "worker 2 (host): its CPU p99 was …"): every
// workload's figures include that worker's share.
func MarkWorkersBound(sums []*Summary, workers []string) {
	if len(workers) == 0 {
		return
	}
	for _, s := range sums {
		s.ClientBound = true
		s.Warnings = append(s.Warnings, "client-bound: "+strings.Join(workers, "; ")+
			"; throughput and latency may show that worker's limit, not the target's")
	}
}
