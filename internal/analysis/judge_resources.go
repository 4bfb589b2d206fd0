package analysis

import (
	"fmt"
	"maps"
	"slices"
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
	r.judgeMissing(c)
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
// its components, e.g. because one exited or missed a scrape. Components
// sampled at different times (local ticks beside a Prometheus step) are
// summed at the times of the sparsest, which is what it is held to, less
// one at each end of the window (where the nearest value of another
// component may fall outside it).
func (r *Resources) judgeTotal(what string, t Total) {
	if t.grid > 0 {
		if t.Components >= 2 && t.Summed.N < t.grid-2 {
			r.warn("the summed %s series has %d of the %d sample times of its most sparsely sampled component: only those at which all %d components have a value near",
				what, t.Summed.N, t.grid, t.Components)
		}
		return
	}
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
		if !c.CPU.HasP99() {
			return
		}
		if why := CPUBound(c.CPU.P99, r.CoresAvailable, "P99"); why != "" {
			r.ClientBound, r.GeneratorCPU = true, c.CPU.P99
			r.warn("client-bound: %s; the generator, not the system under test, may have been the limit", why)
		}
		return
	}
}

func (r *Resources) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// judgeMissing warns of a component's metrics that have fewer samples
// than the window has sample times: a source that did not answer in
// time (a /metrics that timed out) leaves them out, and the figures are
// of the samples it gave, not of the window. A rate has one sample fewer
// than its counter; a component read from Prometheus has its own steps.
func (r *Resources) judgeMissing(c ComponentResources) {
	if c.Kind != "run" && c.Kind != "attach" || !c.Exited.IsZero() && !c.Exited.After(r.Window.End) {
		return // an exit in the window is said, and explains its end
	}
	var short []string
	for _, m := range slices.Sorted(maps.Keys(c.Metrics)) {
		if n := c.Metrics[m].N; n > 0 && n < r.Ticks-1 && float64(n) < MissingLimit*float64(r.Ticks) {
			short = append(short, fmt.Sprintf("%s %d", m, n))
		}
	}
	if len(short) > 0 {
		r.warn("component %s has fewer samples than the window's %d sample times (%s): the others are missing, its source did not answer in time, and those figures are of the samples it has",
			c.Name, r.Ticks, strings.Join(short, ", "))
	}
}

// MissingLimit is the share of the window's sample times a metric must
// have for its missing ones to go unremarked.
const MissingLimit = 0.95
